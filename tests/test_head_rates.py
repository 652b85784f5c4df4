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


def test_the_summary_reads_best_rates_and_median_steps_off_a_sweep() -> None:
    rows = [(1, 1e-3, [300, 320, 900]), (1, 1e-2, [310, 330, 340]),
            (2, 1e-3, [200, 210, 220]), (2, 1e-2, [100, 150, 200])]
    table = pd.DataFrame([{"heads": h, "peak_lr": lr, "seed": s, "steps_to_learn": n,
                           "final_loss": 0.1}
                          for h, lr, steps in rows for s, n in enumerate(steps)])
    rates = hr.summary(table)
    assert rates.rates == (1e-3, 1e-2) and rates.best == {1: 1e-3, 2: 1e-2}
    assert (rates.best_steps(1), rates.best_steps(2)) == (320, 150)
    shown = rates.table()
    assert list(shown.index) == ["1 head", "2 heads"] and list(shown.columns) == ["0.001", "0.01"]
    assert shown.loc["2 heads", "0.001"] == 210


def test_what_the_page_says_about_the_stored_sweep_holds() -> None:
    claims = hr.data_claims()
    assert claims and all(c.holds for c in claims), [str(c) for c in claims if not c.holds]


def test_a_sweep_where_one_head_does_best_at_the_edge_fails_the_page(tmp_path) -> None:
    table = hr.stored()
    table.loc[(table["heads"] == 1) & (table["peak_lr"] == min(hr.RATES)), "steps_to_learn"] = 30
    changed = tmp_path / "head_rates.csv"
    table.to_csv(changed, index=False)
    failing = [c.text for c in hr.data_claims(changed) if not c.holds]
    assert any("inside the grid" in text for text in failing)
    assert any("rate the chapter trains" in text for text in failing)
