"""Tests for experiments.ch2_scaled_dot_product_attention.lr_sweep."""

import dataclasses
from dataclasses import replace

import pandas as pd
import pytest
import torch

from transformer_course.experiments.ch2_scaled_dot_product_attention import lr_sweep
from transformer_course.experiments.ch2_scaled_dot_product_attention.score_functions import (
    TRAINING,
    ScoreComparisonConfig,
)

TINY = ScoreComparisonConfig(widths=(4, 8), num_seeds=2, eval_size=16,
                             training=replace(TRAINING, steps=5, batch_size=4))


def test_a_cell_rerun_equals_its_rows_in_the_sweep():
    config = replace(TINY, widths=(8,), scores=("dot-product", "additive"))
    sweep = lr_sweep.run_sweep(config, learning_rates=(1e-3, 1e-2))
    assert len(sweep) == 2 * 2 * config.num_seeds
    cell = lr_sweep.sweep_cell("dot-product", 8, 1e-2, config)
    rows = sweep.query("score == 'dot-product' and d_k == 8 and lr == 1e-2")
    assert cell.equals(rows.reset_index(drop=True))


def _two_halves(cells):
    """Rows of a sweep at d_k = 8 from {score: {lr: (reported accs, selection accs,
    reported loss, selection loss)}}: seeds 0-3 and 4-7, four accuracies each."""
    return pd.DataFrame([
        {"d_k": 8, "score": score, "lr": lr, "seed": seed, "accuracy": acc, "loss": loss}
        for score, by_lr in cells.items() for lr, (rep, sel, rep_loss, sel_loss) in by_lr.items()
        for seeds, accs, loss in ((range(4), rep, rep_loss), (range(4, 8), sel, sel_loss))
        for seed, acc in zip(seeds, accs, strict=True)])


# "a": 1e-2 wins on seeds 0-3 (and over all 8), 1e-1 on seeds 4-7. "b": both rates solve seeds
# 4-7, 1e-1 with the lower loss there, while seeds 0-3 (and all 8) favour 1e-2.
HALVES = _two_halves({
    "a": {1e-2: ((1.0, 1.0, 1.0, 1.0), (0.6, 0.6, 0.6, 0.6), 1.0, 1.0),
          1e-1: ((0.5, 0.6, 0.6, 0.7), (0.75, 0.75, 0.75, 0.75), 1.0, 1.0)},
    "b": {1e-2: ((0.99, 0.995, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0), 0.1, 0.5),
          1e-1: ((0.1, 0.1, 0.2, 0.2), (1.0, 1.0, 1.0, 1.0), 0.9, 0.2)}})


def test_the_seed_sets_split_the_sweeps_seeds():
    selection, reported = set(lr_sweep.SELECTION_SEEDS), set(lr_sweep.REPORTED_SEEDS)
    assert not selection & reported
    assert selection | reported == set(range(lr_sweep.SWEEP.num_seeds))


def test_best_of_sweep_chooses_the_rate_on_the_selection_seeds_only():
    best = lr_sweep.best_of_sweep(HALVES).set_index("score")
    assert best.loc["a", "best_lr"] == 1e-1  # not 1e-2, which wins on the reported seeds
    assert best.loc["b", "best_lr"] == 1e-1  # tie on accuracy: the selection seeds' loss


def test_best_of_sweep_reports_only_the_reported_seeds():
    best = lr_sweep.best_of_sweep(HALVES).set_index("score")
    assert best.loc["a", "median"] == 0.6  # seeds 0-3 at 1e-1; seeds 4-7 there have 0.75
    assert (best.loc["a", "worst"], best.loc["a", "best"]) == (0.5, 0.7)
    assert best.loc["a", "median_at_1e-2"] == 1.0
    assert best.loc["b", "median"] == pytest.approx(0.15)
    assert best.loc["b", "median_at_1e-2"] == pytest.approx(0.9975)
    # rates with a median of 99 % over the reported seeds ("b": only 1e-2; over seeds 4-7: both)
    assert (best.loc["a", "rates_at_99"], best.loc["b", "rates_at_99"]) == (1, 1)


def test_best_of_sweep_takes_the_seed_sets_it_is_given():
    best = lr_sweep.best_of_sweep(HALVES, selection_seeds=(0, 1, 2, 3),
                                  reported_seeds=(4, 5, 6, 7)).set_index("score")
    assert best.loc["a", "best_lr"] == 1e-2 and best.loc["a", "median"] == 0.6
    assert best.loc["b", "best_lr"] == 1e-2 and best.loc["b", "rates_at_99"] == 2
    with pytest.raises(ValueError, match="no rows"):
        lr_sweep.best_of_sweep(HALVES, selection_seeds=(9,))


def test_reparametrised_unscaled_model_follows_the_scaled_one():
    config = replace(TINY, widths=(16,), training=replace(TINY.training, steps=8))
    pair = lr_sweep.adam_equivalence(16, 1e-2, config)
    gap = (pair["scaled"] - pair["unscaled, reparametrised"]).abs() / pair["scaled"]
    assert gap.max() < 1e-3 and pair["scaled"].iloc[-1] != pair["scaled"].iloc[0]


def test_the_stored_sweep_is_complete():
    sweep = lr_sweep.stored_sweep()
    config = lr_sweep.SWEEP
    cells = sweep.groupby(["score", "d_k", "lr"])["seed"].apply(sorted)
    assert len(cells) == len(config.scores) * len(config.widths) * len(lr_sweep.LEARNING_RATES)
    assert all(seeds == list(range(config.num_seeds)) for seeds in cells)
    assert set(sweep["lr"]) == set(lr_sweep.LEARNING_RATES)
    assert sweep["accuracy"].between(0, 1).all()


def test_the_stored_sweep_records_where_it_was_made():
    from transformer_course.stored import study

    record = study("ch2-lr-sweep")
    assert record.path == lr_sweep.STUDY.path
    env = record.environment()
    assert env["recorded"] and env["threads"] == 1  # main() runs the sweep on one thread
    assert {"cpu", "cpu_capability", "torch", "numpy"} <= set(env)


def test_read_sweep_quotes_best_of_sweep_and_the_runs_at_one_rate():
    sweep = lr_sweep.stored_sweep()
    reading = lr_sweep.read_sweep(sweep)
    best = lr_sweep.best_of_sweep(sweep)
    assert reading.best.equals(best)
    assert reading.medians.equals(best.pivot(index="d_k", columns="score", values="median"))
    at_1e2 = sweep[sweep["lr"] == TRAINING.peak_lr]
    assert reading.accuracy.loc[64, "additive"] == at_1e2.query(
        "d_k == 64 and score == 'additive'")["accuracy"].median()
    assert (reading.closed == 1 - reading.gap_best / reading.gap_fixed).all()
    # the gaps are measured to additive attention's best median, never below its chosen rate's
    assert (reading.additive_plateau >= reading.medians["additive"]).all()
    assert (reading.gap_best == reading.additive_plateau - reading.medians["dot-product"]).all()
    assert (reading.small, reading.large) == (min(lr_sweep.SWEEP.widths),
                                              max(lr_sweep.SWEEP.widths))
    with pytest.raises(ValueError, match="no runs"):
        lr_sweep.at_rate(sweep, 0.5)


def test_the_replayed_cell_is_the_unscaled_model_at_the_widest_width_and_its_rate():
    best = lr_sweep.best_of_sweep(lr_sweep.stored_sweep())
    score, d_k, lr = lr_sweep.replayed_cell(best)
    row = best.query("score == 'dot-product' and d_k == @d_k")
    assert (score, d_k) == ("dot-product", max(lr_sweep.SWEEP.widths))
    assert lr == row["best_lr"].item()


def test_main_checks_what_the_page_says_about_the_new_sweep(tmp_path, monkeypatch):
    checked = []
    monkeypatch.setattr(lr_sweep, "run_sweep", lr_sweep.stored_sweep)
    monkeypatch.setattr(lr_sweep, "STUDY", dataclasses.replace(lr_sweep.STUDY,
                                                            path=tmp_path / "lr_sweep.csv"))
    monkeypatch.setattr(lr_sweep, "check_data_claims", checked.append)
    deterministic, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    try:
        lr_sweep.main()
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)
    assert checked == ["ch2-lr-sweep"]
    assert (tmp_path / "lr_sweep.environment.json").is_file()
