"""Tests for chapter 6's stored runs (experiments/ch6_training/stored_runs.py): the stored data is
what the module says it stores, the rule that extends a sweep past its ends, the sweep's design
(rates chosen on the selection seeds, the reported seeds run at them), the numbers chapter 6
reads off the studies, and how it shows a live run beside its calibrated draws."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from transformer_course.experiments.ch6_training import recipes, stored_runs
from transformer_course.experiments.ch6_training.ablations import (
    LR_FACTORS,
    best_rates,
    chosen_rates,
)
from transformer_course.experiments.ch6_training.stored_runs import (
    BUDGET,
    COLUMNS,
    SEEDS,
    SELECTION_SEEDS,
    SWEPT,
    WARMUP_SETTINGS,
    edge_factor,
    per_seed_text,
    read_sweep,
    selected_sweep,
    share_text,
    steps_beside_draws,
    steps_by_rate,
    steps_span_text,
    steps_text,
    stored_ablation_sweep,
    stored_uniform_lengths,
    stored_warmup_runs,
    sweep_numbers,
    uniform_numbers,
    warmup_numbers,
    warmup_runs,
    with_chosen_factors,
)

SWEEP_COLUMNS = ["variant", "lr_factor", "peak_lr", "seed", "sequence_accuracy",
                 "token_accuracy", "cross_entropy", "first_step_at_target", "steps",
                 "right_length", "same_symbols"]  # ablations.run_lr_sweep's


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


def test_stored_sweep_holds_the_selection_grid_and_the_reported_seeds_at_each_choice():
    stored = stored_ablation_sweep()
    assert list(stored.columns) == ["role", *SWEEP_COLUMNS]
    assert list(stored["role"].unique()) == ["selection", "report"]
    selection = stored[stored["role"] == "selection"]
    report = stored[stored["role"] == "report"]
    names = [v.name for v in SWEPT]
    assert list(selection["variant"].unique()) == list(report["variant"].unique()) == names
    chosen = best_rates(selection).groupby("variant")["lr_factor"].first()
    for role, seeds in (("selection", SELECTION_SEEDS), ("report", SEEDS)):
        for name, runs in stored[stored["role"] == role].groupby("variant", sort=False):
            factors = set(runs["lr_factor"])
            assert set(LR_FACTORS) <= factors  # every factor of the grid
            if role == "selection":
                assert edge_factor(runs) is None  # the stored sweep needs no further factor
            else:  # the grid, and the factor chosen on the selection seeds
                assert chosen[name] in factors <= set(LR_FACTORS) | {chosen[name]}
            for _, at_rate in runs.groupby("lr_factor"):
                assert tuple(at_rate["seed"]) == seeds
                assert at_rate["peak_lr"].nunique() == 1
            # the peak is proportional to the factor
            ratio = runs["peak_lr"] / runs["lr_factor"]
            assert ratio.max() == pytest.approx(ratio.min(), rel=1e-4)
    best = chosen_rates(selection, report)  # what chapter 6 reports
    assert list(best["variant"].unique()) == names
    assert (best["lr_factor"] == best["variant"].map(chosen)).all()
    assert (best.groupby("variant")["seed"].apply(tuple) == SEEDS).all()
    _check_runs(stored)
    stopped = stored["first_step_at_target"].notna()
    assert (stored["steps"][stopped] == stored["first_step_at_target"][stopped]).all()
    assert (stored["steps"][~stopped] == BUDGET).all()
    assert (stored["same_symbols"] <= stored["right_length"]).all()
    assert (stored["sequence_accuracy"] <= stored["same_symbols"] + 1e-9).all()


def test_selected_sweep_chooses_on_the_selection_seeds_and_trains_the_reported_there(
        monkeypatch):
    # stand-in runs: steps grow with the distance (in factors of 2) from a variant's fastest
    # factor, which differs between the selection seeds and the reported ones
    fastest = {SWEPT[0].name: {"selection": 0.5, "report": 1.0},  # the report's would be x1
               SWEPT[1].name: {"selection": 0.125, "report": 0.25}}  # below the grid
    calls = []

    def runs(variants, factors=LR_FACTORS, seeds=SEEDS):
        calls.append(([v.name for v in variants], tuple(factors), tuple(seeds)))
        return pd.DataFrame([
            {"variant": v.name, "lr_factor": float(f), "peak_lr": 0.01 * f, "seed": s,
             "first_step_at_target": 100 + 10 * abs(math.log2(f / fastest[v.name][
                 "selection" if s in SELECTION_SEEDS else "report"])),
             "sequence_accuracy": 1.0}
            for v in variants for f in factors for s in seeds])

    monkeypatch.setattr(stored_runs, "ablation_sweep", runs)
    table = selected_sweep(SWEPT[:2])
    selection = table[table["role"] == "selection"]
    report = table[table["role"] == "report"]
    assert set(selection["seed"]) == set(SELECTION_SEEDS) and set(report["seed"]) == set(SEEDS)
    factors = {(role, name): sorted(set(runs["lr_factor"]))
               for (role, name), runs in table.groupby(["role", "variant"])}
    first, second = SWEPT[0].name, SWEPT[1].name
    assert factors["selection", first] == factors["report", first] == sorted(LR_FACTORS)
    # the lower edge won: two factors below the grid tried, the first of them chosen
    assert factors["selection", second] == [0.0625, 0.125, *LR_FACTORS]
    assert factors["report", second] == [0.125, *LR_FACTORS]
    best = chosen_rates(selection, report)
    assert best.groupby("variant", sort=False)["lr_factor"].first().to_dict() == {
        first: 0.5, second: 0.125}  # not x1, where the reported seeds were fastest
    assert best["seed"].tolist() == [*SEEDS, *SEEDS]
    # given reported runs, only the missing chosen factor is trained
    calls.clear()
    given = report[report["lr_factor"] != 0.125].drop(columns="role")
    again = with_chosen_factors(selection.drop(columns="role"), given, SWEPT[:2])
    assert calls == [([second], (0.125,), SEEDS)]
    assert again.equals(report.drop(columns="role").reset_index(drop=True))


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


def test_the_numbers_chapter_6_glues_are_read_off_the_stored_studies():
    reading = read_sweep()
    numbers = sweep_numbers(reading)
    assert numbers["ch6-sweep-runs"] == len(stored_ablation_sweep())
    assert [numbers[f"ch6-sweep-f{i}"] for i in (1, 2, 3, 4)] == sorted(LR_FACTORS)
    assert numbers["ch6-sweep-base-spread"] == (numbers["ch6-sweep-base-max"]
                                                - numbers["ch6-sweep-base-min"])
    assert tuple(reading.recipe_steps.index) == SEEDS
    assert all(isinstance(v, str) or type(v) is (int if float(v).is_integer() else float)
               for v in numbers.values())  # a whole number is an int: "12 runs", not "12.0"
    uniform = uniform_numbers(stored_uniform_lengths(), reading.recipe_steps)
    assert {f"ch6-uniform-steps-{seed}" for seed in SEEDS} < set(uniform)
    warm = warmup_numbers(stored_warmup_runs())
    assert warm["ch6-uniform-loss"] == pytest.approx(math.log(recipes.COPY_TASK.vocab_size))


def test_the_uniform_verdict_is_worded_by_the_data():
    recipe = pd.Series([100.0, 110.0, 120.0], index=[0, 1, 2])

    def verdict(steps: list[float]) -> str:
        uniform = pd.DataFrame({"seed": [0, 1, 2], "first_step_at_target": steps,
                                "sequence_accuracy": [1.0, 1.0, 0.99]})
        return uniform_numbers(uniform, recipe)["ch6-uniform-verdict"]

    assert verdict([110, 110, 130]) == "never fewer, and at most 10 more"
    assert verdict([90, 110, 120]) == ("fewer for 1 of the three (by at most 10) and "
                                       "the same for 2 of the three")
    assert per_seed_text(pd.Series([130.0, float("nan"), 110.0])) == "130, never and 110"


def test_a_share_at_its_limit_is_said_in_words():
    assert share_text(100.0, "least", "each") == "each got every test sequence right"
    assert share_text(0.0, "most", "no run") == "no run got a single test sequence right"
    assert "97.5%" in share_text(97.5, "least", "each")
    assert "more than 2.5%" in share_text(2.5, "most", "no run")


def test_steps_by_rate_has_a_row_per_variant_and_a_cell_per_rate_listing_each_seed():
    nan = float("nan")
    sweep = pd.DataFrame({"variant": ["a"] * 4 + ["b"] * 4, "lr_factor": [1.0, 1.0, 2.0, 2.0] * 2,
                          "seed": [1, 0] * 4,
                          "first_step_at_target": [120.0, 90.0, nan, 100.0, nan, nan, 80.0, 70.0]})
    table = steps_by_rate(sweep, {"b": "B", "a": "A"})
    assert list(table.index) == ["B", "A"] and len(table.columns) == 2
    assert table.loc["A"].tolist() == ["90, 120", "100, –"]  # seeds in order; – never
    assert table.loc["B"].tolist() == ["–, –", "70, 80"]


def test_a_live_run_is_shown_beside_its_calibrated_draws(monkeypatch):
    nan = float("nan")
    draws = {"a": [110.0, 120.0, 120.0, nan], "b": [90.0, 200.0]}
    monkeypatch.setattr(stored_runs, "calibrated_values", lambda key: draws.get(key, []))
    assert steps_text(130.0) == "130" and steps_text(None) == f"more than {BUDGET}"
    assert steps_text(nan) == steps_text(BUDGET + 10) == f"more than {BUDGET}"
    assert steps_span_text("a") == f"from 110 steps to more than {BUDGET}"
    assert steps_span_text("missing") == "not yet calibrated"
    table = steps_beside_draws({"first": ("a", 120.0), "second": ("b", nan)})
    assert list(table.columns) == ["run", "this page", "90", "110", "120",
                                   f"more than {BUDGET}"]
    assert table.iloc[0, 1:].tolist() == ["120", 0, 1, 2, 1]
    assert table.iloc[1, 1:].tolist() == [f"more than {BUDGET}", 1, 0, 0, 1]
