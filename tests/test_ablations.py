"""Tests for the ablation runner: each variant changes what it says, runs are repeatable."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID
from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig
from transformer_course.experiments.ch6_training.ablations import (
    DEFAULT_ABLATIONS,
    Ablation,
    ablation_row,
    order_free_accuracy,
    random_order_token_accuracy,
    run_ablations,
)
from transformer_course.experiments.ch6_training.task_training import train_on_task
from transformer_course.experiments.ch6_training.tasks import TaskConfig, TaskData, sample_task

TASK = TaskConfig("reverse", num_symbols=4, min_len=2, max_len=4)
MODEL = TransformerConfig(TASK.vocab_size, TASK.vocab_size, d_model=16, num_heads=2,
                          num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.0,
                          max_len=12)
TRAIN = TrainConfig(steps=12, batch_size=16, warmup=5, lr_scale=0.5, eval_every=4)



@pytest.fixture(scope="module")
def held_out():
    return sample_task(TASK, 40, torch.Generator().manual_seed(7), unique=True)


def test_default_ablations_cover_the_issue_list():
    names = [a.name for a in DEFAULT_ABLATIONS]
    assert names[0] == "baseline" and len(set(names)) == len(names) == 6
    changed = {k: v for a in DEFAULT_ABLATIONS for k, v in
               {**a.model_changes, **a.train_changes}.items()}
    assert changed == {"positional": "none", "scaled_attention": False, "norm_first": True,
                       "use_warmup": False, "label_smoothing": 0.0}


def test_runs_are_repeatable_and_variants_differ(held_out):
    variants = DEFAULT_ABLATIONS[:2]
    first = run_ablations(TASK, MODEL, TRAIN, held_out, variants, seeds=(0, 1))
    again = run_ablations(TASK, MODEL, TRAIN, held_out, variants, seeds=(0, 1))
    assert list(first.columns) == ["variant", "seed", "sequence_accuracy", "token_accuracy",
                                   "cross_entropy", "first_step_at_target", "steps",
                                   "seconds"]
    assert len(first) == 4 and first["seed"].tolist() == [0, 1, 0, 1]
    pd.testing.assert_frame_equal(first.drop(columns="seconds"), again.drop(columns="seconds"))
    base, no_pos = first["cross_entropy"][:2].tolist(), first["cross_entropy"][2:].tolist()
    assert base != no_pos  # the variant really trained a different model
    assert first["cross_entropy"][0] != first["cross_entropy"][1]  # seeds differ
    assert ((first["token_accuracy"] >= 0) & (first["token_accuracy"] <= 1)).all()
    assert all(math.isnan(x) or x > 0 for x in first["first_step_at_target"])
    assert (first["steps"] == TRAIN.steps).all()  # nobody reached 100% in 12 steps


def test_a_training_change_is_applied(held_out):
    slow = Ablation("tiny rate", "lr scale 1e-6", train_changes={"lr_scale": 1e-6})
    table = run_ablations(TASK, MODEL, TRAIN, held_out, [DEFAULT_ABLATIONS[0], slow])
    # With almost no learning rate the model stays near its initial loss.
    assert table["cross_entropy"][1] > table["cross_entropy"][0]


def test_a_task_change_is_applied(held_out):
    # task_changes edit the TaskConfig the training stream samples from (here: the lengths).
    long = Ablation("long sequences", "lengths drawn with P(n) ~ n^4",
                    task_changes={"length_power": 4.0})
    table = run_ablations(TASK, MODEL, TRAIN, held_out, [DEFAULT_ABLATIONS[0], long])
    assert table["variant"].tolist() == ["baseline", "long sequences"]
    assert table["cross_entropy"][1] != table["cross_entropy"][0]  # other batches, other model
    model, result = train_on_task(TaskConfig("reverse", num_symbols=4, min_len=2, max_len=4,
                                             length_power=4.0), MODEL, TRAIN, held_out)
    assert ablation_row("long sequences", 0, model, result, held_out)["cross_entropy"] == \
        table["cross_entropy"][1]


def test_bad_input(held_out):
    with pytest.raises(TypeError, match="model_config"):
        run_ablations(TASK, {}, TRAIN, held_out)
    with pytest.raises(TypeError, match="train_config"):
        run_ablations(TASK, MODEL, {}, held_out)
    with pytest.raises(TypeError, match="held_out"):
        run_ablations(TASK, MODEL, TRAIN, held_out.src)
    with pytest.raises(ValueError, match="ablations"):
        run_ablations(TASK, MODEL, TRAIN, held_out, [])
    with pytest.raises(TypeError, match=r"ablations\[0\]"):
        run_ablations(TASK, MODEL, TRAIN, held_out, ["baseline"])
    bad = Ablation("typo", "misspelt field", model_changes={"postional": "none"})
    with pytest.raises(ValueError, match="postional"):
        run_ablations(TASK, MODEL, TRAIN, held_out, [bad])
    bad = Ablation("typo", "misspelt field", task_changes={"lenght_power": 2.0})
    with pytest.raises(ValueError, match=r"ablations\[0\]\.task_changes names unknown TaskConfig "
                                         r"fields: \['lenght_power'\]"):
        run_ablations(TASK, MODEL, TRAIN, held_out, [bad])
    bad = Ablation("typo", "not a dict", train_changes=[("steps", 3)])
    with pytest.raises(TypeError, match="train_changes"):
        run_ablations(TASK, MODEL, TRAIN, held_out, [bad])
    with pytest.raises(ValueError, match="seeds"):
        run_ablations(TASK, MODEL, TRAIN, held_out, seeds=())


def test_a_run_trained_elsewhere_gives_the_same_row(held_out):
    """ablation_row on a separately trained baseline equals run_ablations' own baseline row."""
    table = run_ablations(TASK, MODEL, TRAIN, held_out, DEFAULT_ABLATIONS[:1], keep_outputs=True)
    model, result = train_on_task(TASK, MODEL, TRAIN, held_out)
    row = ablation_row("baseline", 0, model, result, held_out, keep_outputs=True)
    assert list(table.columns) == list(row) and list(row)[-1] == "outputs"
    for name, value in row.items():
        if name == "outputs":
            assert torch.equal(value, table[name][0]) and value.shape[0] == len(held_out)
        elif name != "seconds":
            assert value == table[name][0] or (value != value and table[name][0] != table[name][0])
    with pytest.raises(TypeError, match="result"):
        ablation_row("baseline", 0, model, None, held_out)
    with pytest.raises(TypeError, match="held_out"):
        ablation_row("baseline", 0, model, result, held_out.src)
    with pytest.raises(TypeError, match="variant"):
        ablation_row(0, 0, model, result, held_out)


def _pairs() -> TaskData:
    # Targets "a b c", "a a", "d": ids 3.. are the symbols, 0 pads.
    tgt = torch.tensor([[3, 4, 5], [3, 3, 0], [6, 0, 0]])
    return TaskData(tgt.clone(), tgt, torch.tensor([3, 2, 1]))


def test_order_free_accuracy_counts_length_and_bag():
    data = _pairs()
    B, E = BOS_ID, EOS_ID
    exact = torch.tensor([[B, 3, 4, 5, E], [B, 3, 3, E, 0], [B, 6, E, 0, 0]])
    assert order_free_accuracy(exact, data) == (1.0, 1.0)
    shuffled = torch.tensor([[B, 5, 3, 4, E], [B, 3, 3, E, 0], [B, 6, E, 0, 0]])
    assert order_free_accuracy(shuffled, data) == (1.0, 1.0)  # order is ignored
    # Row 0: right length, wrong bag. Row 1: a symbol too many. Row 2: never ends.
    wrong = torch.tensor([[B, 3, 3, 5, E], [B, 3, 3, 3, E], [B, 6, 6, 6, 6]])
    assert order_free_accuracy(wrong, data) == (1 / 3, 0.0)
    # Tokens after the first EOS do not count.
    late = torch.tensor([[B, 4, 5, 3, E], [B, 3, 3, E, 7], [B, 6, E, 3, E]])
    assert order_free_accuracy(late, data) == (1.0, 1.0)


def test_order_free_accuracy_rejects_bad_input():
    data = _pairs()
    with pytest.raises(ValueError, match="outputs"):
        order_free_accuracy(torch.zeros(2, 5, dtype=torch.long), data)
    with pytest.raises(ValueError, match="outputs"):
        order_free_accuracy(torch.zeros(3, 5), data)
    with pytest.raises(ValueError, match="outputs"):
        order_free_accuracy(-torch.ones(3, 5, dtype=torch.long), data)
    with pytest.raises(ValueError, match="outputs"):
        order_free_accuracy(torch.zeros(3, 5, 1, dtype=torch.long), data)
    with pytest.raises(TypeError, match="data"):
        order_free_accuracy(torch.zeros(3, 5, dtype=torch.long), data.tgt)


def test_random_order_token_accuracy_matches_enumerating_every_order():
    data = _pairs()  # "a b c", "a a", "d"
    right, labels = 0, 0
    for row, n in zip(data.tgt.tolist(), data.lengths.tolist(), strict=True):
        symbols = row[:n]
        orders = list(itertools.permutations(symbols))
        hits = sum(sum(a == b for a, b in zip(order, symbols, strict=True)) for order in orders)
        right += hits / len(orders) + 1  # + 1: the EOS label is right
        labels += n + 1
    assert random_order_token_accuracy(data) == pytest.approx(right / labels, abs=1e-12)
    # (1 + 1) / 4 for "a b c", (2 + 1) / 3 for "a a", (1 + 1) / 2 for "d": 7 right of 9 labels.
    assert random_order_token_accuracy(data) == pytest.approx(7 / 9, abs=1e-12)
    with pytest.raises(TypeError, match="data"):
        random_order_token_accuracy(data.tgt)
    empty = TaskData(data.src[:, :0], data.tgt[:, :0], torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="data"):
        random_order_token_accuracy(empty)
