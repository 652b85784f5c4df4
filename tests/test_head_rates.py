"""Tests for ch3_multi_head_attention.head_rates: one head against two, each at its own rate."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from transformer_course.experiments.ch3_multi_head_attention import head_rates as hr
from transformer_course.experiments.ch3_multi_head_attention import head_specialisation as hs


def test_a_small_sweep_has_a_row_per_model_rate_and_seed() -> None:
    config = replace(hs.LookupConfig(d_model=8, hidden=8),
                     training=replace(hs.TRAINING, steps=30, batch_size=8))
    table = hr.sweep(hs.LookupTask(num_values=3, seq_len=4), config, rates=(1e-3, 1e-1),
                     seeds=(0, 1))
    assert tuple(table.columns) == hr.COLUMNS
    assert set(zip(table["heads"], table["peak_lr"], table["seed"], strict=True)) == {
        (h, lr, s) for h in (1, 2) for lr in (1e-3, 1e-1) for s in (0, 1)}
    assert table["steps_to_learn"].between(hr.WINDOW, 31).all()
    assert (table["final_loss"] > 0).all()


def test_the_best_rate_has_the_fewest_median_steps_and_ties_go_to_the_lower_loss() -> None:
    rows = [(1, 1e-3, [300, 320, 900]), (1, 1e-2, [310, 330, 340]),
            (2, 1e-3, [200, 200, 200]), (2, 1e-2, [200, 200, 200])]
    table = pd.DataFrame([{"heads": h, "peak_lr": lr, "seed": s, "steps_to_learn": n,
                           "final_loss": 0.1 if lr == 1e-2 else 0.2}
                          for h, lr, steps in rows for s, n in enumerate(steps)])
    assert hr.best_rates(table) == {1: 1e-3, 2: 1e-2}  # medians 320 < 330; a tie at 200


def test_the_stored_sweep_holds_both_models_at_every_rate_and_selection_seed() -> None:
    table = hr.stored()
    assert tuple(table.columns) == hr.COLUMNS
    assert set(zip(table["heads"], table["peak_lr"], table["seed"], strict=True)) == {
        (h, lr, s) for h in (1, 2) for lr in hr.RATES for s in hr.SELECTION_SEEDS}
