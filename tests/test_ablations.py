"""Tests for the ablation runner: each variant changes what it says, runs are repeatable."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID
from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig
from transformer_course.experiments.ch6_training.ablations import (
    DEFAULT_ABLATIONS,
    TABLE3_ROWS,
    Ablation,
    ablation_row,
    ablation_summary,
    best_rates,
    chosen_rates,
    fair_summary,
    order_free_accuracy,
    run_ablations,
    run_lr_sweep,
    sweep_table,
)
from transformer_course.experiments.ch6_training.task_training import train_on_task
from transformer_course.experiments.ch6_training.tasks import (
    TaskConfig,
    TaskData,
    sample_task,
    sequence_keys,
)
from transformer_course.paper import TABLE3

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


def test_runs_stop_on_validation_and_score_on_test(held_out, monkeypatch):
    import transformer_course.experiments.ch6_training.task_training as training

    validation, test = held_out, sample_task(TASK, 30, torch.Generator().manual_seed(8),
                                             unique=True)
    excluded = []

    def spy(*args, exclude=None, **kwargs):
        excluded.append(exclude)
        return training_batches(*args, exclude=exclude, **kwargs)

    training_batches = training.task_batches
    monkeypatch.setattr(training, "task_batches", spy)
    table = run_ablations(TASK, MODEL, TRAIN, validation, DEFAULT_ABLATIONS[:1], test=test,
                          keep_losses=True)
    keys = set(sequence_keys(test.src, TASK.vocab_size).tolist())
    assert keys <= set(excluded[0].tolist())  # the stream never draws a test pair
    model, result = train_on_task(TASK, MODEL, TRAIN, validation, exclude=test)
    row = ablation_row("baseline", 0, model, result, test)
    assert table["sequence_accuracy"][0] == row["sequence_accuracy"]
    assert table["cross_entropy"][0] == row["cross_entropy"]  # scored on test, not validation
    assert ablation_row("baseline", 0, model, result, validation)["cross_entropy"] != \
        row["cross_entropy"]
    assert table["losses"][0] == result.losses and len(result.losses) == result.steps


def test_summary_rows_by_hand():
    nan = float("nan")
    runs = pd.DataFrame({
        "variant": ["baseline"] * 3 + ["no label smoothing"] * 3 + ["slow"] * 3,
        "seed": [0, 1, 2] * 3,
        "first_step_at_target": [100, 110, 110, 150, nan, 120, nan, nan, 140],
        "sequence_accuracy": [1.0, 0.997, 1.0, 0.99, 0.5, 1.0, 0.1, 0.2, 1.0]})
    table = ablation_summary(runs, budget=150)
    assert table["variant"].tolist() == ["baseline", "no label smoothing", "slow"]
    steps = table["steps to 100% (seed 0, 1, 2)"].tolist()
    assert steps == ["100, 110, 110", "150, > 150, 120", "> 150, > 150, 140"]
    assert table["median steps"].tolist() == ["110", "150", "> 150"]
    assert table["test sequences right (%)"].tolist() == [
        "100.0 (99.7–100.0)", "99.0 (50.0–100.0)", "20.0 (10.0–100.0)"]
    paper = table["the paper's Table 3 (PPL, BLEU)"].tolist()
    base, smoothing = TABLE3["base"], TABLE3["eps_ls = 0"]
    assert paper[0] == f"base: {base.perplexity:.2f}, {base.bleu:.1f}"
    assert paper[1] == f"(D) {smoothing.changes}: {smoothing.perplexity:.2f}, {smoothing.bleu:.1f}"
    assert paper[2] == ""


def test_paper_rows_make_the_variants_change():
    # each variant is quoted beside the Table 3 row that makes the same change
    quoted = {name: TABLE3[key].changes for name, key in TABLE3_ROWS.items()}
    assert quoted == {"baseline": "none", "P_drop = 0.1": "P_drop = 0.0",
                      "no label smoothing": "eps_ls = 0.0",
                      "learned positions": "positional embedding instead of sinusoids",
                      "one head": "h = 1, d_k = d_v = 512"}


def test_lr_sweep_scales_the_rate_and_matches_run_ablations_at_factor_one(held_out):
    variants = [DEFAULT_ABLATIONS[0], DEFAULT_ABLATIONS[4]]  # baseline, no warm-up
    sweep = run_lr_sweep(TASK, MODEL, TRAIN, held_out, variants, factors=(0.5, 1.0))
    assert sweep[["variant", "lr_factor"]].values.tolist() == [
        ["baseline", 0.5], ["baseline", 1.0], ["no warm-up", 0.5], ["no warm-up", 1.0]]
    recipe_peak = TRAIN.learning_rate(TRAIN.warmup, MODEL.d_model)
    assert sweep["peak_lr"].tolist() == pytest.approx([recipe_peak / 2, recipe_peak] * 2)
    plain = run_ablations(TASK, MODEL, TRAIN, held_out, variants, keep_outputs=True)
    at_one = sweep[sweep["lr_factor"] == 1.0].reset_index(drop=True)
    for name in ("sequence_accuracy", "cross_entropy", "steps"):
        assert at_one[name].tolist() == plain[name].tolist()
    bags = [order_free_accuracy(out, held_out) for out in plain["outputs"]]
    assert at_one["same_symbols"].tolist() == [bag for _, bag in bags]
    halved = sweep[sweep["lr_factor"] == 0.5]["cross_entropy"].tolist()
    assert halved != at_one["cross_entropy"].tolist()  # the rate really changed
    with pytest.raises(ValueError, match="factors"):
        run_lr_sweep(TASK, MODEL, TRAIN, held_out, variants, factors=(0.0,))


def _sweep(rows: list[tuple[str, float, int, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["variant", "lr_factor", "seed", "first_step_at_target",
                                       "sequence_accuracy"]).assign(
        peak_lr=lambda d: 0.02 * d["lr_factor"])


def test_best_rate_is_fewest_median_steps_then_nearest_one():
    nan = float("nan")
    sweep = _sweep([
        # "a": x0.5 has the fewest median steps (one seed never got there: counts as inf)
        ("a", 0.5, 0, 90, 1.0), ("a", 0.5, 1, 100, 1.0), ("a", 0.5, 2, nan, 0.9),
        ("a", 1.0, 0, 110, 1.0), ("a", 1.0, 1, 120, 1.0), ("a", 1.0, 2, 110, 1.0),
        # "b": never there at either rate; x2 is more accurate, but x1 is nearer 1
        ("b", 1.0, 0, nan, 0.1), ("b", 1.0, 1, nan, 0.2), ("b", 1.0, 2, nan, 0.1),
        ("b", 2.0, 0, nan, 0.3), ("b", 2.0, 1, nan, 0.3), ("b", 2.0, 2, nan, 0.1),
        # "c": a tie in steps; x0.5 is nearer 1, though x1/4 is more accurate
        ("c", 0.25, 0, 100, 1.0), ("c", 0.5, 0, 100, 0.9),
        # "d": best inside the factors tried
        ("d", 0.5, 0, 130, 1.0), ("d", 1.0, 0, 120, 1.0), ("d", 2.0, 0, nan, 0.5),
        # "e": x1/2 and x2 tie and are as near 1: the lower wins
        ("e", 0.5, 0, 100, 0.5), ("e", 2.0, 0, 100, 1.0)])
    best = best_rates(sweep)
    chosen = {"a": 0.5, "b": 1.0, "c": 0.5, "d": 1.0, "e": 0.5}
    assert best.groupby("variant", sort=False)["lr_factor"].first().to_dict() == chosen
    assert best[best["variant"] == "a"]["seed"].tolist() == [0, 1, 2]
    assert best["factors_tried"].iloc[0] == (0.5, 1.0)
    # the test scores play no part: any other accuracies, the same choice
    for accuracy in (0.0, sweep["sequence_accuracy"][::-1].to_numpy()):
        again = best_rates(sweep.assign(sequence_accuracy=accuracy))
        assert again.groupby("variant", sort=False)["lr_factor"].first().to_dict() == chosen
    table = fair_summary(best, budget=150)
    assert table["variant"].tolist() == ["a", "b", "c", "d", "e"]
    assert table["best rate"].tolist() == ["× 1/2, edge", "× 1, edge", "× 1/2, edge", "× 1",
                                           "× 1/2, edge"]
    assert table["steps to 100%"].tolist() == ["100 (90 to > 150)", "> 150", "100", "120",
                                               "100"]
    assert table["test sequences right (%)"].tolist() == [
        "100.0 (90.0–100.0)", "10.0 (10.0–20.0)", "90.0", "100.0", "50.0"]
    grid = sweep_table(sweep, budget=150)
    assert list(grid.columns) == ["variant", "× 1/4", "× 1/2", "× 1", "× 2"]
    assert grid.values.tolist() == [["a", "", "100", "110", ""], ["b", "", "", "> 150", "> 150"],
                                    ["c", "100", "100", "", ""], ["d", "", "130", "120", "> 150"],
                                    ["e", "", "100", "", "100"]]


def test_chosen_rates_choose_on_the_selection_seeds_and_report_the_others():
    nan = float("nan")
    # on the selection seeds (3, 4, 5) x1/2 wins; on the reported seeds (0, 1, 2) x1 would
    selection = _sweep([("v", f, s, steps, 1.0)
                        for f, steps in ((0.5, 100), (1.0, 120), (2.0, nan))
                        for s in (3, 4, 5)])
    report = _sweep([("v", f, s, steps, acc)
                     for f, steps, acc in ((0.5, 130, 0.9), (1.0, 90, 1.0), (2.0, nan, 0.1))
                     for s in (0, 1, 2)])
    assert best_rates(report)["lr_factor"].iloc[0] == 1.0
    best = chosen_rates(selection, report)
    assert best["lr_factor"].tolist() == [0.5] * 3
    assert best["seed"].tolist() == [0, 1, 2]  # the reported seeds' runs, not the selection's
    assert best["first_step_at_target"].tolist() == [130] * 3
    assert best["factors_tried"].tolist() == [(0.5, 1.0, 2.0)] * 3
    table = fair_summary(best, budget=150)
    assert table[["best rate", "steps to 100%", "test sequences right (%)"]].values.tolist() == [
        ["× 1/2, edge", "130", "90.0"]]
    # the reported seeds' test scores do not move the choice either
    again = chosen_rates(selection, report.assign(sequence_accuracy=1.0 - report["lr_factor"]))
    assert again["lr_factor"].tolist() == [0.5] * 3
    with pytest.raises(ValueError, match="chosen factor 0.5"):
        chosen_rates(selection, report[report["lr_factor"] != 0.5])
