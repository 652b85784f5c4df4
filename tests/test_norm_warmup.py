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


def _rows(role: str, cells: dict[tuple[str, float], list[float]],
          loss: float = 1.0) -> list[dict]:
    return [{"role": role, "variant": v, "peak_lr": lr, "seed": s, "accuracy": a,
             "final_loss": loss} for (v, lr), accuracies in cells.items()
            for s, a in enumerate(accuracies)]


def test_the_best_rate_is_chosen_on_the_selection_rows_alone() -> None:
    pre, post = nw.VARIANTS[0].name, nw.VARIANTS[2].name
    table = pd.DataFrame(
        _rows("selection", {(pre, 1e-3): [10, 50, 60], (pre, 2e-3): [40, 45, 90],
                            (post, 1e-3): [5, 6, 7], (post, 2e-3): [1, 2, 3]})
        + _rows("report", {(pre, 1e-3): [99, 99, 99], (post, 2e-3): [99, 99, 99]}))
    assert nw.best_rates(table) == {pre: 1e-3, post: 1e-3}  # medians 50 > 45, 6 > 2


def test_a_tie_in_accuracy_goes_to_the_lower_loss() -> None:
    pre = nw.VARIANTS[0].name
    table = pd.DataFrame(_rows("selection", {(pre, 1e-3): [100, 100, 100]}, loss=0.6)
                         + _rows("selection", {(pre, 2e-3): [100, 100, 100]}, loss=0.5))
    assert nw.best_rates(table) == {pre: 2e-3}


def test_the_summary_marks_the_chosen_rate_and_gives_the_reported_seeds() -> None:
    names = [v.name for v in nw.VARIANTS]
    table = pd.DataFrame(
        _rows("selection", {(v, lr): [lr * 1e4 + i, 0, 100] for i, v in enumerate(names)
                            for lr in (1e-3, 2e-3)})
        + _rows("report", {(v, 2e-3): [2.0, 12.0, 22.0] for v in names}))
    summary = nw.summary(table)
    assert list(summary.index) == names
    assert list(summary.columns) == ["0.001", "0.002", "seeds 0–2"]
    assert summary.loc[names[1], "0.001"] == "11.0"  # median of 11, 0, 100
    assert (summary["0.002"] == [f"**{20 + i}.0**" for i in range(len(names))]).all()  # chosen
    assert (summary.iloc[:, -1] == "12.0 (2.0–22.0)").all()  # median (worst–best)


def test_the_stored_sweep_holds_the_grid_and_the_reported_seeds_at_the_chosen_rates() -> None:
    table = nw.stored()
    assert tuple(table.columns) == nw.COLUMNS
    cells = set(zip(table["role"], table["variant"], table["peak_lr"], table["seed"],
                    strict=True))
    chosen = nw.best_rates(table)
    assert cells == ({("selection", v.name, lr, s) for v in nw.VARIANTS for lr in nw.PEAK_LRS
                      for s in nw.SELECTION_SEEDS}
                     | {("report", v.name, chosen[v.name], s) for v in nw.VARIANTS
                        for s in nw.SEEDS})
    assert not set(nw.SEEDS) & set(nw.SELECTION_SEEDS)


def test_findings_give_each_variants_first_failing_rate_above_its_chosen_one() -> None:
    pre, post = nw.VARIANTS[0].name, nw.VARIANTS[3].name
    table = pd.DataFrame(
        _rows("selection", {(pre, 1e-3): [90, 95, 99], (pre, 2e-3): [3, 4, 60],
                            (pre, 4e-3): [1, 2, 0], (post, 1e-3): [40, 50, 60],
                            (post, 2e-3): [30, 30, 30], (post, 4e-3): [10, 20, 6]})
        + _rows("report", {(pre, 1e-3): [99, 100, 98], (post, 1e-3): [45, 55, 65]})
    ).assign(prefix_loss=2.0)  # seeds 0-2 only: not the replayed run (seed 3)
    found = nw.findings(table)
    assert found.chosen == {pre: 1e-3, post: 1e-3} and found.rates == [1e-3, 2e-3, 4e-3]
    assert found.fails_from(pre) == 2e-3  # median 4 < 5
    assert found.fails_from(post) is None  # every higher rate still learns something
    assert (found.worst[pre], found.best[post]) == (98, 65)
    assert found.replayed_loss is None  # no row for the replayed run


def test_the_replayed_run_is_a_stored_selection_run_whose_replayed_steps_are_warm_up() -> None:
    variant, peak_lr, seed = nw.REPLAYED
    assert variant in nw.VARIANTS and peak_lr in nw.PEAK_LRS and seed in nw.SELECTION_SEEDS
    config = nw.StudyConfig()
    assert nw.PREFIX <= round(config.warmup_fraction * config.steps)
    low, high = nw.REPLAY_BOUNDS
    assert low < nw.findings(nw.stored()).replayed_loss < high


def test_the_data_claims_fail_on_a_sweep_that_does_not_bear_the_page_out(tmp_path) -> None:
    table = nw.stored()
    pre_warm = nw.VARIANTS[1].name
    table.loc[table["variant"] == pre_warm, "accuracy"] = 0.0  # now it learns nothing
    path = tmp_path / "sweep.csv"
    table.to_csv(path, index=False)
    failing = [c.text for c in nw.data_claims(path) if not c.holds]
    assert any("every pre-norm seed" in text for text in failing)
    assert all(c.holds for c in nw.data_claims())


def test_replay_refuses_a_study_whose_warm_up_ends_before_the_replayed_steps() -> None:
    short = nw.StudyConfig(num_layers=1, d_model=16, num_heads=2, d_ff=32, steps=40,
                           warmup_fraction=0.25, batch_size=16)  # 10 warm-up steps < PREFIX
    with pytest.raises(ValueError, match="config"):
        nw.replay(POST_COLD, 2e-3, 0, short)
