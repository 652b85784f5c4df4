"""Tests for chapter 6's stored runs (experiments/ch6_training/stored_runs.py): the stored data is
what the module says it stores (the build re-runs one seed against it)."""

from __future__ import annotations

from transformer_course.experiments.ch6_training import recipes
from transformer_course.experiments.ch6_training.stored_runs import (
    BUDGET,
    COLUMNS,
    SEEDS,
    stored_uniform_lengths,
)


def test_stored_uniform_lengths_hold_one_run_per_seed_within_the_budget():
    stored = stored_uniform_lengths()
    assert list(stored.columns) == COLUMNS
    assert tuple(stored["seed"]) == SEEDS
    steps = stored["first_step_at_target"].dropna()
    every = recipes.FAST_TRAINING.eval_every
    assert ((steps > 0) & (steps <= BUDGET) & (steps % every == 0)).all()  # checks fall there
    for name in ("sequence_accuracy", "token_accuracy"):
        assert stored[name].between(0, 1).all()
    assert (stored["token_accuracy"] >= stored["sequence_accuracy"]).all()
