"""Tests for chapter 6's stored runs (experiments/ch6_training/stored_runs.py): the stored data is
what the module says it stores (chapter 6 replays one run of each and compares what it quotes),
and the rule that extends a sweep past its ends."""

from __future__ import annotations

import pandas as pd
import pytest

from transformer_course.experiments.ch6_training import recipes
from transformer_course.experiments.ch6_training.ablations import LR_FACTORS, best_rates
from transformer_course.experiments.ch6_training.stored_runs import (
    BUDGET,
    COLUMNS,
    SEEDS,
    SWEPT,
    WARMUP_SETTINGS,
    edge_factor,
    stored_ablation_sweep,
    stored_uniform_lengths,
    stored_warmup_runs,
    warmup_runs,
)


def _check_runs(stored: pd.DataFrame) -> None:
    steps = stored["first_step_at_target"].dropna()
    every = recipes.FAST_TRAINING.eval_every
    assert ((steps > 0) & (steps <= BUDGET) & (steps % every == 0)).all()  # checks fall there
    for name in ("sequence_accuracy", "token_accuracy"):
        assert stored[name].between(0, 1).all()
    assert (stored["token_accuracy"] >= stored["sequence_accuracy"]).all()


def test_stored_uniform_lengths_hold_one_run_per_seed_within_the_budget():
    stored = stored_uniform_lengths()
    assert list(stored.columns) == COLUMNS
    assert tuple(stored["seed"]) == SEEDS
    _check_runs(stored)


def test_stored_sweep_holds_every_variant_factor_and_seed():
    sweep = stored_ablation_sweep()
    assert list(sweep["variant"].unique()) == [v.name for v in SWEPT]
    for _, runs in sweep.groupby("variant", sort=False):
        assert set(LR_FACTORS) <= set(runs["lr_factor"])  # extensions only add factors
        for _, at_rate in runs.groupby("lr_factor"):
            assert tuple(at_rate["seed"]) == SEEDS
            assert at_rate["peak_lr"].nunique() == 1
        # the peak is proportional to the factor
        ratio = runs["peak_lr"] / runs["lr_factor"]
        assert ratio.max() == pytest.approx(ratio.min(), rel=1e-4)
        assert edge_factor(runs) is None  # the stored sweep needs no further factor
    _check_runs(sweep)
    stopped = sweep["first_step_at_target"].notna()
    assert (sweep["steps"][stopped] == sweep["first_step_at_target"][stopped]).all()
    assert (sweep["steps"][~stopped] == BUDGET).all()
    assert (sweep["same_symbols"] <= sweep["right_length"]).all()
    assert (sweep["sequence_accuracy"] <= sweep["same_symbols"] + 1e-9).all()


def test_stored_warmup_runs_have_a_loss_for_every_step():
    runs = stored_warmup_runs()
    assert list(runs.columns) == ["setting", *COLUMNS, "losses"]
    assert list(runs["setting"].unique()) == list(WARMUP_SETTINGS)
    for _, group in runs.groupby("setting"):
        assert tuple(group["seed"]) == SEEDS
    # a run has a loss for every step it ran: the whole budget, or up to the check at which it
    # got every validation sequence right (the recipe's stopping rule)
    for steps, losses in zip(runs["first_step_at_target"], runs["losses"], strict=True):
        assert len(losses) == (BUDGET if pd.isna(steps) else steps)
    _check_runs(runs)


def test_warmup_runs_refuse_an_unknown_setting():
    with pytest.raises(ValueError, match="settings"):
        warmup_runs(["paper's peak, no warmup"])
    with pytest.raises(ValueError, match="settings"):
        warmup_runs("paper's peak, warm-up")  # a string, not a sequence of them


def _runs(by_factor: dict[float, list[float]]) -> pd.DataFrame:
    rows = [("v", factor, seed, steps, 1.0) for factor, seeds in by_factor.items()
            for seed, steps in enumerate(seeds)]
    return pd.DataFrame(rows, columns=["variant", "lr_factor", "seed", "first_step_at_target",
                                       "sequence_accuracy"])


def test_edge_factor_extends_past_a_finished_best_at_either_end_at_most_twice():
    nan = float("nan")
    inside = {0.25: [nan] * 3, 0.5: [120] * 3, 1.0: [100] * 3, 2.0: [nan] * 3}
    assert edge_factor(_runs(inside)) is None
    low = {0.25: [90] * 3, 0.5: [100] * 3, 1.0: [110] * 3, 2.0: [nan] * 3}
    assert edge_factor(_runs(low)) == 0.125
    high = {0.25: [nan] * 3, 0.5: [nan] * 3, 1.0: [120] * 3, 2.0: [100] * 3}
    assert edge_factor(_runs(high)) == 4.0
    never = {factor: [nan] * 3 for factor in LR_FACTORS}  # nothing finished: no extension
    assert edge_factor(_runs(never)) is None
    twice = {0.0625: [70] * 3, 0.125: [80] * 3, **low}  # two extensions already
    assert best_rates(_runs(twice))["lr_factor"].iloc[0] == 0.0625
    assert edge_factor(_runs(twice)) is None
