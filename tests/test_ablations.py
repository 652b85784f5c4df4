"""Tests for the ablation runner: each variant changes what it says, runs are repeatable."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from transformer_course.ablations import DEFAULT_ABLATIONS, Ablation, run_ablations
from transformer_course.model import TransformerConfig
from transformer_course.tasks import TaskConfig, sample_task
from transformer_course.training import TrainConfig

TASK = TaskConfig("reverse", num_symbols=4, min_len=2, max_len=4)
MODEL = TransformerConfig(TASK.vocab_size, TASK.vocab_size, d_model=16, num_heads=2,
                          num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.0,
                          max_len=12)
TRAIN = TrainConfig(steps=12, batch_size=16, warmup=5, lr_scale=0.5, eval_every=4)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
    bad = Ablation("typo", "not a dict", train_changes=[("steps", 3)])
    with pytest.raises(TypeError, match="train_changes"):
        run_ablations(TASK, MODEL, TRAIN, held_out, [bad])
    with pytest.raises(ValueError, match="seeds"):
        run_ablations(TASK, MODEL, TRAIN, held_out, seeds=())
