"""Tests for ch5_full_model.norm_warmup: pre-norm and post-norm trained with and without warm-up."""

from __future__ import annotations

import pandas as pd
import pytest

from transformer_course.experiments.ch5_full_model import norm_warmup as nw

TINY = nw.StudyConfig(num_layers=1, d_model=16, num_heads=2, d_ff=32, steps=nw.PREFIX + 10,
                      warmup_fraction=1.0, batch_size=16)  # the replayed steps are warm-up
POST_COLD = next(v for v in nw.VARIANTS if not v.norm_first and not v.warmup)
POST_WARM = next(v for v in nw.VARIANTS if not v.norm_first and v.warmup)


@pytest.fixture(scope="module")
def tiny_rows() -> dict[str, dict]:
    return {v.name: nw.run(v, 2e-3, 0, TINY) for v in (POST_COLD, POST_WARM)}


def test_a_run_gives_one_row_of_the_columns(tiny_rows) -> None:
    row = tiny_rows[POST_COLD.name]
    assert tuple(row) == nw.COLUMNS
    assert 0 <= row["accuracy"] <= 100 and row["max_loss"] >= row["final_loss"] > 0


def test_replaying_the_first_steps_reproduces_the_run(tiny_rows) -> None:
    assert nw.replay(POST_COLD, 2e-3, 0, TINY) == tiny_rows[POST_COLD.name]["prefix_loss"]


def test_warm_up_changes_the_first_steps(tiny_rows) -> None:
    # the same seed and data: only the rates of the first steps differ
    assert tiny_rows[POST_COLD.name]["prefix_loss"] != tiny_rows[POST_WARM.name]["prefix_loss"]


def test_the_summary_has_a_row_per_variant_and_a_column_per_rate() -> None:
    rows = [{"variant": v.name, "peak_lr": lr, "seed": s, "accuracy": 10.0 * s + lr * 1000}
            for v in nw.VARIANTS for lr in (1e-3, 2e-3) for s in (0, 1, 2)]
    table = nw.summary(pd.DataFrame(rows))
    assert list(table.index) == [v.name for v in nw.VARIANTS]
    assert list(table.columns) == ["peak 0.001", "peak 0.002"]
    assert table.iloc[0, 1] == "12.0 (worst 2.0)"  # median of 2, 12, 22; worst 2


def test_the_stored_sweep_holds_every_variant_rate_and_seed() -> None:
    table = nw.stored()
    assert tuple(table.columns) == nw.COLUMNS
    cells = set(zip(table["variant"], table["peak_lr"], table["seed"], strict=True))
    assert cells == {(v.name, lr, s) for v in nw.VARIANTS for lr in nw.PEAK_LRS
                     for s in nw.SEEDS}


def test_replay_refuses_a_study_whose_warm_up_ends_before_the_replayed_steps() -> None:
    short = nw.StudyConfig(num_layers=1, d_model=16, num_heads=2, d_ff=32, steps=40,
                           warmup_fraction=0.25, batch_size=16)  # 10 warm-up steps < PREFIX
    with pytest.raises(ValueError, match="config"):
        nw.replay(POST_COLD, 2e-3, 0, short)
