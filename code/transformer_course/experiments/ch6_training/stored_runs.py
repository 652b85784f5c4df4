"""Runs too slow for every build of chapter 6, stored as data, and what the chapter reads off them.

All of them train the copy recipe (``recipes.COPY_TASK``, ``recipes.small_model``,
``recipes.FAST_TRAINING``) from seeds 0, 1 and 2 (``SEEDS``; the sweep also from
``SELECTION_SEEDS``) with the budget and stopping rule of chapter 6's comparisons (``BUDGET``
steps, stop at the first check with every validation sequence right), and score greedy
decoding on the test set.

- ``uniform_lengths.csv``: training lengths drawn uniformly (the third departure of
  ``recipes.RECIPE_DEPARTURES`` undone); one row per seed (steps until every validation
  sequence was right, empty if never; greedy sequence and token accuracy on the test set).
- ``ablation_sweep.csv`` (``selected_sweep``): every ablation of
  ``ablations.DEFAULT_ABLATIONS`` (the baseline included) and the first two departures, each at
  the recipe's learning rate times every factor of ``ablations.LR_FACTORS``, from the seeds of
  ``SELECTION_SEEDS`` (role "selection"), extended by ``extend_sweep``'s rule where a variant
  did best at the edge; and from ``SEEDS`` (role "report") at every factor of ``LR_FACTORS``
  and at the factor chosen on the selection seeds (``ablations.best_rates``), so that
  ``ablations.chosen_rates`` reports seeds that played no part in choosing their rate. One
  row per role, variant, factor and seed: "role", then ``ablations.run_lr_sweep``'s columns.
- ``warmup_runs.csv``: the copy recipe with and without warm-up at its own peak rate and at the
  paper's peak rate (``recipes.paper_peak``); one row per setting and seed, with the training
  loss at every step (space-separated; the recipe with warm-up stops at its first check with
  every validation sequence right, the others run the whole budget) and the test accuracy.

Each command writes its data file and, beside it, the record of the environment that made it
(``<stem>.environment.json``, ``transformer_course.stored.record_environment``); the registry
of stored studies (``transformer_course.stored.STUDIES``) names them ``ch6-uniform-lengths``,
``ch6-ablation-sweep`` and ``ch6-warmup-runs``.

Regenerate them (on one thread: about 10 s, 7 min and 30 s) with

    python -m transformer_course.experiments.ch6_training.stored_runs uniform-lengths
    python -m transformer_course.experiments.ch6_training.stored_runs ablation-sweep
    python -m transformer_course.experiments.ch6_training.stored_runs warmup

Each command ends by checking what chapter 6 says about its study on the new data
(:func:`ablation_sweep_claims`, :func:`uniform_lengths_claims`, :func:`warmup_runs_claims`, named
by the registry). The numbers the chapter quotes are read off the studies here, once, by the
functions both the page and those checks call (:func:`read_sweep` and :func:`sweep_numbers`,
:func:`uniform_numbers`, :func:`warmup_numbers`).

The chapter trains one run of a study again here and there. On another CPU such a run is a new
draw of the stored one, not a replay, so the page never compares the two: it shows its run beside
the same run's draws in the stored study ``calibration`` (:func:`steps_beside_draws`,
:func:`span_text`, :func:`steps_span_text`).
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd
import torch

from transformer_course import calibration
from transformer_course.core.loss import loss_floor
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    record_environment,
    study,
)

from . import recipes
from .ablations import (
    DEFAULT_ABLATIONS,
    LR_FACTORS,
    Ablation,
    best_rates,
    chosen_rates,
    run_ablations,
    run_lr_sweep,
)

UNIFORM_LENGTHS = declare(__file__, "ch6-uniform-lengths", (6,), "uniform_lengths.csv",
                          "about 10 CPU-seconds", args="uniform-lengths",
                          claims="uniform_lengths_claims")
ABLATION_SWEEP = declare(__file__, "ch6-ablation-sweep", (6,), "ablation_sweep.csv",
                         "about 7 CPU-minutes", args="ablation-sweep",
                         claims="ablation_sweep_claims")
WARMUP_RUNS = declare(__file__, "ch6-warmup-runs", (6,), "warmup_runs.csv", "about 1 CPU-minute",
                      args="warmup", claims="warmup_runs_claims")
COLUMNS = ["seed", "first_step_at_target", "sequence_accuracy", "token_accuracy"]
SEEDS = (0, 1, 2)  # the seeds every table reports
SELECTION_SEEDS = (3, 4, 5)  # the seeds that choose each variant's learning rate
BUDGET = 150  # chapter 6's budget of steps for every comparison with the recipe
SWEPT = DEFAULT_ABLATIONS + recipes.RECIPE_DEPARTURES[:2]  # every variant the sweep trains
MAX_EXTENSIONS = 2  # at most this many factors added beyond either end of LR_FACTORS
WARMUP_SETTINGS = ("recipe's peak, warm-up", "recipe's peak, no warm-up",
                   "paper's peak, warm-up", "paper's peak, no warm-up")


def comparison_setup() -> tuple:
    """The copy task, its validation and test sets, the model and the budgeted recipe."""
    task = recipes.COPY_TASK
    validation, test = recipes.held_out_split(task)
    budget = replace(recipes.FAST_TRAINING, steps=BUDGET)
    return task, validation, test, recipes.small_model(task), budget


def uniform_lengths(seeds: tuple[int, ...] = SEEDS) -> pd.DataFrame:
    """Train the copy recipe with uniform training lengths on ``seeds``; one row per seed."""
    task, validation, test, model, budget = comparison_setup()
    runs = run_ablations(task, model, budget, validation, recipes.RECIPE_DEPARTURES[2:],
                         seeds=seeds, test=test)
    return runs[COLUMNS].reset_index(drop=True)


def stored_uniform_lengths() -> pd.DataFrame:
    """The stored rows of :func:`uniform_lengths` (see the module's docstring)."""
    return UNIFORM_LENGTHS.load()


def ablation_sweep(variants: Sequence[Ablation] = SWEPT, factors: Sequence[float] = LR_FACTORS,
                   seeds: tuple[int, ...] = SEEDS) -> pd.DataFrame:
    """``ablations.run_lr_sweep`` of ``variants`` on the copy recipe (no extension)."""
    task, validation, test, model, budget = comparison_setup()
    return run_lr_sweep(task, model, budget, validation, variants, factors=factors,
                        seeds=seeds, test=test)


def edge_factor(runs: pd.DataFrame) -> float | None:
    """The next factor to try for one variant's sweep (its selection runs), or None.

    The rule: if the best factor (``ablations.best_rates``) is the lowest tried, try half of
    it; if the highest, twice it; but only where its seeds got every validation sequence right
    (median), and at most ``MAX_EXTENSIONS`` beyond ``LR_FACTORS``.
    """
    tried = sorted(runs["lr_factor"].unique())
    best = best_rates(runs)
    if math.isinf(statistics.median(best["first_step_at_target"].fillna(math.inf))):
        return None
    extra = len([f for f in tried if f not in LR_FACTORS])
    factor = best["lr_factor"].iloc[0]
    if extra >= MAX_EXTENSIONS or tried[0] < factor < tried[-1]:
        return None
    return factor / 2 if factor == tried[0] else factor * 2


def extend_sweep(sweep: pd.DataFrame, variants: Sequence[Ablation] = SWEPT,
                 seeds: tuple[int, ...] = SELECTION_SEEDS) -> pd.DataFrame:
    """``sweep`` (runs on ``seeds``) with each variant's extra factors (:func:`edge_factor`)
    trained on ``seeds`` and added; each variant's runs in order of factor and seed."""
    parts = []
    for variant in variants:
        runs = sweep[sweep["variant"] == variant.name]
        while (factor := edge_factor(runs)) is not None:
            runs = pd.concat([runs, ablation_sweep([variant], (factor,), seeds)],
                             ignore_index=True)
        parts.append(runs.sort_values(["lr_factor", "seed"], kind="stable"))
    return pd.concat(parts, ignore_index=True)


def with_chosen_factors(selection: pd.DataFrame, report: pd.DataFrame,
                        variants: Sequence[Ablation] = SWEPT) -> pd.DataFrame:
    """``report`` (runs on ``SEEDS``) with the runs on ``SEEDS`` it lacks at each variant's
    factor chosen on ``selection`` (``ablations.best_rates``) trained and added; each
    variant's runs in order of factor and seed."""
    chosen = best_rates(selection).groupby("variant", sort=False)["lr_factor"].first()
    parts = []
    for variant in variants:
        runs = report[report["variant"] == variant.name]
        factor = chosen[variant.name]
        if factor not in set(runs["lr_factor"]):
            runs = pd.concat([runs, ablation_sweep([variant], (factor,))], ignore_index=True)
        parts.append(runs.sort_values(["lr_factor", "seed"], kind="stable"))
    return pd.concat(parts, ignore_index=True)


def with_roles(selection: pd.DataFrame, report: pd.DataFrame) -> pd.DataFrame:
    """The stored table: ``selection``'s rows, then ``report``'s, each marked in a first
    column "role" ("selection" or "report")."""
    return pd.concat([selection.assign(role="selection"), report.assign(role="report")],
                     ignore_index=True)[["role", *selection.columns]]


def selected_sweep(variants: Sequence[Ablation] = SWEPT) -> pd.DataFrame:
    """The study ``ch6-ablation-sweep`` (see the module's docstring): the sweep on
    ``SELECTION_SEEDS``, extended (:func:`extend_sweep`), and on ``SEEDS`` at every factor of
    ``LR_FACTORS`` and each variant's chosen one (:func:`with_chosen_factors`)."""
    selection = extend_sweep(ablation_sweep(variants, seeds=SELECTION_SEEDS), variants)
    report = with_chosen_factors(selection, ablation_sweep(variants), variants)
    return with_roles(selection, report)


def stored_ablation_sweep() -> pd.DataFrame:
    """The stored rows of :func:`selected_sweep` (see the module's docstring)."""
    return ABLATION_SWEEP.load()


def warmup_runs(settings: Sequence[str] = WARMUP_SETTINGS,
                seeds: tuple[int, ...] = SEEDS) -> pd.DataFrame:
    """The copy recipe at the recipe's or the paper's peak, with or without warm-up, within the
    budget (the recipe's stopping rule applies); one row per setting and seed, "losses" the
    list of the loss at every step."""
    known = {f"{peak} peak, {warmup}" for peak in ("recipe's", "paper's")
             for warmup in ("warm-up", "no warm-up")}
    if isinstance(settings, str) or not set(settings) <= known:
        raise ValueError(f"settings must be a sequence of {sorted(known)}; got {settings!r}")
    task, validation, test, model, budget = comparison_setup()
    rows = []
    for setting in settings:
        config = budget if setting.startswith("recipe's") else recipes.paper_peak(model, budget)
        variant = Ablation(setting, setting, train_changes={
            "use_warmup": not setting.endswith("no warm-up")})
        runs = run_ablations(task, model, config, validation, [variant], seeds=seeds,
                             test=test, keep_losses=True)
        rows.append(runs.rename(columns={"variant": "setting"})[
            ["setting", *COLUMNS, "losses"]])
    return pd.concat(rows, ignore_index=True)


def stored_warmup_runs() -> pd.DataFrame:
    """The stored rows of :func:`warmup_runs` (the CSV keeps each run's losses as one
    space-separated string; here they are lists of floats again)."""
    runs = WARMUP_RUNS.load()
    runs["losses"] = [[float(x) for x in text.split()] for text in runs["losses"]]
    return runs


# What chapter 6 reads off the stored studies: the numbers its prose glues, computed once here,
# and the sentences it says about them (data claims), checked on the same numbers.

RECIPE = "baseline"  # the recipe's row in the sweep
DEPARTURE_KEYS = {"beta": "beta_1 = 0.9", "drop": "P_drop = 0.1"}  # glue key -> variant
VARIANT_KEYS = {"nopos": "no positional encoding", "warmup": "no warm-up",
                "scale": "no sqrt(d_k) scaling", "smooth": "no label smoothing",
                "prenorm": "pre-norm"}
NO_POSITIONS = VARIANT_KEYS["nopos"]


@dataclass(frozen=True)
class SweepReading:
    """The stored sweep (study ``ch6-ablation-sweep``) as chapter 6 reads it."""

    runs: pd.DataFrame  # every stored run
    selection: pd.DataFrame  # seeds 3-5, which choose each variant's rate
    report: pd.DataFrame  # seeds 0-2, which the page reports
    best: pd.DataFrame  # the reported seeds at each variant's chosen rate (chosen_rates)
    best_factor: pd.Series  # variant -> its chosen factor on the recipe's rate
    fewest: pd.DataFrame  # seed x variant: fewest steps at any rate (inf: never)
    recipe_steps: pd.Series  # seed -> the recipe's steps at its own rate
    accuracy: pd.DataFrame  # (factor, seed) x variant: test sequences right (%)
    at_recipe_rate: pd.DataFrame  # the reported runs at factor 1


def read_sweep(runs: pd.DataFrame | None = None) -> SweepReading:
    """The stored sweep ``runs`` (default: the study's file) read as chapter 6 reads it."""
    runs = stored_ablation_sweep() if runs is None else runs
    selection = runs[runs["role"] == "selection"]
    report = runs[runs["role"] == "report"]
    best = chosen_rates(selection, report)
    best_factor = best.groupby("variant", sort=False)["lr_factor"].first()
    fewest = report.pivot_table(index="seed", columns="variant",
                                values="first_step_at_target", aggfunc="min")
    fewest = fewest.reindex(columns=best_factor.index).fillna(math.inf)
    at_recipe_rate = report[report["lr_factor"] == 1]
    recipe = at_recipe_rate[at_recipe_rate["variant"] == RECIPE]
    accuracy = 100 * report.pivot_table(index=["lr_factor", "seed"], columns="variant",
                                        values="sequence_accuracy")
    return SweepReading(runs, selection, report, best, best_factor, fewest,
                        recipe.set_index("seed")["first_step_at_target"], accuracy,
                        at_recipe_rate)


def per_seed_text(steps: pd.Series) -> str:
    """Steps per seed as prose: "130, 110 and never" (never: not within the budget)."""
    words = [f"{s:g}" if math.isfinite(s) else "never" for s in steps.fillna(math.inf)]
    return ", ".join(words[:-1]) + " and " + words[-1]


def share_text(percent: float, bound: str, subject: str) -> str:
    """A bound on the share of test sequences some runs got right, as a reader says it.
    ``bound`` "least": ``subject`` ("each") "got every test sequence right", else "got at least
    97.5% of the test sequences right"; "most": ``subject`` ("no run") "got a single test
    sequence right", else "got more than 97.5% of the test sequences right"."""
    if bound == "least":
        return (f"{subject} got every test sequence right" if percent == 100
                else f"{subject} got at least {percent:.1f}% of the test sequences right")
    return (f"{subject} got a single test sequence right" if percent == 0
            else f"{subject} got more than {percent:.1f}% of the test sequences right")


def steps_by_rate(sweep: pd.DataFrame, rows: dict[str, str]) -> pd.DataFrame:
    """The steps each reported seed needed to get every validation sequence right, one row per
    variant (``rows``: the sweep's name -> the name to show) and one column per rate (the factor
    on the recipe's rate); a cell lists the seeds in order, "–" where one never got there within
    the budget. ``sweep``: the stored sweep's report rows."""
    chosen = sweep[sweep["variant"].isin(list(rows))].sort_values("seed")
    cells = chosen.groupby(["variant", "lr_factor"])["first_step_at_target"].agg(
        lambda steps: ", ".join("–" if math.isnan(s) else f"{s:g}" for s in steps))
    table = cells.unstack("lr_factor").reindex(list(rows)).rename(index=rows)
    table.columns = [f"{factor:g} × the rate" for factor in table.columns]
    return table.rename_axis(index=None, columns=None)


def _median_steps(runs: pd.DataFrame) -> float:
    """The median steps of ``runs``, a run that never got there counting as infinitely many."""
    return statistics.median(runs["first_step_at_target"].fillna(math.inf).tolist())


def sweep_numbers(reading: SweepReading, budget: int = BUDGET) -> dict[str, float | str]:
    """Every number (and every phrase chosen by the data) chapter 6 glues from the stored
    sweep, by glue key; numbers are floats, phrases strings."""
    r = reading
    best, report = r.best, r.report
    numbers: dict[str, float | str] = {"ch6-sweep-runs": len(r.runs)}
    for i, factor in enumerate(sorted(r.runs["lr_factor"].unique())):
        numbers[f"ch6-sweep-f{i + 1}"] = factor
    numbers["ch6-base-best-factor"] = r.best_factor[RECIPE]
    numbers["ch6-sweep-base-min"] = r.recipe_steps.min()
    numbers["ch6-sweep-base-max"] = r.recipe_steps.max()
    numbers["ch6-sweep-base-spread"] = r.recipe_steps.max() - r.recipe_steps.min()
    reached = report.groupby("variant", sort=False)["first_step_at_target"].count()
    for key, name in DEPARTURE_KEYS.items():
        numbers[f"ch6-dep-{key}-reached"] = reached[name]
        numbers[f"ch6-dep-{key}-acc"] = 100 * best[best["variant"] == name][
            "sequence_accuracy"].median()
    numbers["ch6-dep-runs-each"] = len(report[report["variant"] == DEPARTURE_KEYS["beta"]])
    numbers["ch6-base-acc"] = 100 * best[best["variant"] == RECIPE]["sequence_accuracy"].median()
    numbers["ch6-abl-base-median"] = best[best["variant"] == RECIPE][
        "first_step_at_target"].median()
    numbers["ch6-abl-base-fewest"] = per_seed_text(r.recipe_steps)
    for key, name in VARIANT_KEYS.items():
        at_best = best[best["variant"] == name]
        median = _median_steps(at_best)
        numbers[f"ch6-abl-{key}-factor"] = r.best_factor[name]
        numbers[f"ch6-abl-{key}-median"] = (f"{median:g}" if math.isfinite(median)
                                            else f"more than {budget}")
        numbers[f"ch6-abl-{key}-finished"] = at_best["first_step_at_target"].count()
        numbers[f"ch6-abl-{key}-best-min"] = 100 * at_best["sequence_accuracy"].min()
        at_ours = r.at_recipe_rate[r.at_recipe_rate["variant"] == name]
        numbers[f"ch6-abl-{key}-old-finished"] = at_ours["first_step_at_target"].count()
        numbers[f"ch6-abl-{key}-fewest"] = per_seed_text(r.fewest[name])
    for seed, steps in r.recipe_steps.items():
        numbers[f"ch6-abl-base-{seed}"] = steps
    numbers["ch6-abl-nopos-max"] = r.accuracy[NO_POSITIONS].max()
    numbers["ch6-abl-untuned"] = len(_untuned(r.selection))
    numbers["ch6-abl-warmup-max"] = r.accuracy.loc[1.0, "no warm-up"].max()
    numbers["ch6-abl-warmup-peak-median"] = r.accuracy.loc[1.0, "no warm-up"].median()
    scale_old = r.at_recipe_rate[r.at_recipe_rate["variant"] == "no sqrt(d_k) scaling"]
    numbers["ch6-abl-scale-old-min"] = 100 * scale_old["sequence_accuracy"].min()
    numbers["ch6-abl-scale-old-max"] = 100 * scale_old["sequence_accuracy"].max()
    numbers["ch6-abl-scale-double-max"] = r.accuracy.loc[2.0, "no sqrt(d_k) scaling"].max()
    numbers["ch6-abl-scale-half-min"] = r.accuracy.loc[0.5, "no sqrt(d_k) scaling"].min()
    pre = best[best["variant"] == "pre-norm"].set_index("seed")["first_step_at_target"]
    numbers["ch6-abl-prenorm-steps"] = per_seed_text(pre)
    for key, name in (("prenorm", "pre-norm"), ("base", RECIPE)):
        chosen = r.selection[(r.selection["variant"] == name)
                             & (r.selection["lr_factor"] == r.best_factor[name])]
        numbers[f"ch6-abl-{key}-sel-median"] = _median_steps(chosen)
    numbers["ch6-abl-double-base-max"] = r.accuracy.loc[2.0, RECIPE].max()
    numbers["ch6-abl-double-pre-min"] = r.accuracy.loc[2.0, "pre-norm"].min()
    numbers["ch6-abl-double-pre-text"] = share_text(numbers["ch6-abl-double-pre-min"], "least",
                                                    "each")
    numbers["ch6-abl-double-base-text"] = share_text(numbers["ch6-abl-double-base-max"], "most",
                                                     "no run")
    numbers["ch6-abl-scale-double-text"] = share_text(numbers["ch6-abl-scale-double-max"], "most",
                                                      "no run")
    same_symbols = 100 * best[best["variant"] == NO_POSITIONS]["same_symbols"]
    numbers["ch6-nopos-bag-min"] = same_symbols.min()
    numbers["ch6-nopos-bag-max"] = same_symbols.max()
    numbers["ch6-nopos-best-max"] = r.accuracy.loc[r.best_factor[NO_POSITIONS], NO_POSITIONS].max()
    return {key: value if isinstance(value, str) else _plain(value)
            for key, value in numbers.items()}


def _untuned(selection: pd.DataFrame) -> list[str]:
    """The variants whose median selection seed finished at no rate: for them the rule's tie
    keeps factor 1, the recipe's rate, rather than a rate the data chose."""
    return [name for name, group in selection.groupby("variant", sort=False)
            if all(math.isinf(_median_steps(runs)) for _, runs in group.groupby("lr_factor"))]


def _plain(value: float) -> int | float:
    """A float, or an int where it is a whole number: a count quoted without a format shows as
    "12 runs", not "12.0 runs"."""
    number = float(value)
    return int(number) if number.is_integer() else number


def ablation_sweep_claims() -> list[DataClaim]:
    """What chapter 6 says about the stored sweep (study ``ch6-ablation-sweep``), checked on it."""
    r = read_sweep()
    n = sweep_numbers(r)
    best, report, fewest, recipe_steps = r.best, r.report, r.fewest, r.recipe_steps
    eval_every = recipes.FAST_TRAINING.eval_every
    tried = best.groupby("variant", sort=False)["factors_tried"].first()
    finished = best.groupby("variant", sort=False)["first_step_at_target"].median().notna()
    claims = [
        data_claim("no variant needed a factor beyond the four",
                   sorted(r.runs["lr_factor"].unique()) == sorted(LR_FACTORS),
                   factors=sorted(r.runs["lr_factor"].unique())),
        data_claim("no variant that finished did best at an end of its sweep",
                   all(tried[name][0] < factor < tried[name][-1] or not finished[name]
                       for name, factor in r.best_factor.items()),
                   best_factor=r.best_factor.to_dict()),
        data_claim("the budget is a few checks (at least two) more than the recipe's slowest "
                   "seed", recipe_steps.max() + 2 * eval_every <= BUDGET,
                   slowest=recipe_steps.max(), budget=BUDGET),
    ]
    for key, name in DEPARTURE_KEYS.items():
        at_best = best[best["variant"] == name]
        runs_each = len(report[report["variant"] == name])
        claims += [
            data_claim(f"{name}: at every rate tried, every seed slower than the recipe's",
                       (fewest[name] > recipe_steps).all(), fewest=fewest[name].tolist(),
                       recipe=recipe_steps.tolist()),
            data_claim(f"{name}: \"only\" a quarter of its runs at most finished",
                       n[f"ch6-dep-{key}-reached"] <= runs_each / 4,
                       reached=n[f"ch6-dep-{key}-reached"], runs=runs_each),
            data_claim(f"{name}: at its best rate, the median seed never finished",
                       math.isinf(_median_steps(at_best)),
                       steps=at_best["first_step_at_target"].tolist()),
            data_claim(f"{name}: gets most test sequences right (median above 85%)",
                       n[f"ch6-dep-{key}-acc"] > 85, median=n[f"ch6-dep-{key}-acc"]),
        ]
    warmup = r.at_recipe_rate[r.at_recipe_rate["variant"] == "no warm-up"]
    scale_old = r.at_recipe_rate[r.at_recipe_rate["variant"] == "no sqrt(d_k) scaling"]
    scale_selection = r.selection[r.selection["variant"] == "no sqrt(d_k) scaling"]
    scale_medians = {factor: _median_steps(runs)
                     for factor, runs in scale_selection.groupby("lr_factor")}
    pre = best[best["variant"] == "pre-norm"].set_index("seed")["first_step_at_target"]
    untuned = _untuned(r.selection)
    doubled, doubled_selection = (runs[runs["lr_factor"] == 2].pivot(
        index="seed", columns="variant", values="first_step_at_target")
        for runs in (report, r.selection))
    claims += [
        data_claim("without positions no seed finished at any rate",
                   fewest[NO_POSITIONS].map(math.isinf).all(),
                   fewest=fewest[NO_POSITIONS].tolist()),
        data_claim("without positions no reported run got 10% of the test sequences right",
                   n["ch6-abl-nopos-max"] < 10, most=n["ch6-abl-nopos-max"]),
        data_claim("without positions, far more right bags than right sequences (above 40% "
                   "and 5x), every seed",
                   n["ch6-nopos-bag-min"] > max(40, 5 * n["ch6-nopos-best-max"]),
                   same_symbols=n["ch6-nopos-bag-min"], right_order=n["ch6-nopos-best-max"]),
        data_claim("no warm-up at the recipe's peak: no seed finished, the median seed "
                   "below 10%", warmup["first_step_at_target"].isna().all()
                   and n["ch6-abl-warmup-peak-median"] < 10,
                   median=n["ch6-abl-warmup-peak-median"]),
        data_claim("no warm-up does best at a lower rate", r.best_factor["no warm-up"] < 1,
                   factor=r.best_factor["no warm-up"]),
        data_claim("every other variant keeps the recipe's rate",
                   (r.best_factor.drop("no warm-up") == 1).all(),
                   factors=r.best_factor.to_dict()),
        data_claim("no warm-up: fewer seeds finished at the recipe's rate than at its best",
                   n["ch6-abl-warmup-old-finished"] < n["ch6-abl-warmup-finished"],
                   at_recipe_rate=n["ch6-abl-warmup-old-finished"],
                   at_best=n["ch6-abl-warmup-finished"]),
        data_claim("no warm-up: slower than the recipe in the median seed",
                   fewest["no warm-up"].median() > recipe_steps.median(),
                   fewest=fewest["no warm-up"].tolist(), recipe=recipe_steps.tolist()),
        data_claim("no scaling: at no rate the median selection seed finished, so it keeps "
                   "the recipe's rate", all(math.isinf(m) for m in scale_medians.values())
                   and r.best_factor["no sqrt(d_k) scaling"] == 1, medians=scale_medians),
        data_claim("no scaling: at the recipe's rate some seeds finished, not all",
                   0 < scale_old["first_step_at_target"].count() < len(scale_old),
                   steps=scale_old["first_step_at_target"].tolist()),
        data_claim("no scaling: at no rate any seed as fast as the recipe",
                   (fewest["no sqrt(d_k) scaling"] > recipe_steps).all(),
                   fewest=fewest["no sqrt(d_k) scaling"].tolist(), recipe=recipe_steps.tolist()),
        data_claim("no scaling: at twice the rate no run above 1%, at half every run above 99%",
                   n["ch6-abl-scale-double-max"] < 1 and n["ch6-abl-scale-half-min"] > 99,
                   double=n["ch6-abl-scale-double-max"], half=n["ch6-abl-scale-half-min"]),
        data_claim("every variant whose median selection seed finished at no rate keeps the "
                   "recipe's rate; no label smoothing is one of them",
                   all(r.best_factor[name] == 1 for name in untuned)
                   and "no label smoothing" in untuned,
                   untuned=untuned),
        data_claim("without label smoothing no seed as fast as the recipe at any rate",
                   (fewest["no label smoothing"] > recipe_steps).all(),
                   fewest=fewest["no label smoothing"].tolist(), recipe=recipe_steps.tolist()),
        data_claim("pre-norm: every seed slower than the recipe",
                   (pre.fillna(math.inf) > recipe_steps).all(), pre=pre.tolist(),
                   recipe=recipe_steps.tolist()),
        data_claim("pre-norm: faster than the recipe in the median selection seed",
                   n["ch6-abl-prenorm-sel-median"] < n["ch6-abl-base-sel-median"],
                   pre_norm=n["ch6-abl-prenorm-sel-median"],
                   recipe=n["ch6-abl-base-sel-median"]),
        data_claim("at twice the rate every reported pre-norm seed finished, not every "
                   "selection seed, and no post-norm seed of the six",
                   doubled["pre-norm"].notna().all() and doubled[RECIPE].isna().all()
                   and not doubled_selection["pre-norm"].notna().all()
                   and doubled_selection[RECIPE].isna().all(),
                   pre_norm=doubled["pre-norm"].tolist(), post_norm=doubled[RECIPE].tolist(),
                   selection_pre_norm=doubled_selection["pre-norm"].tolist(),
                   selection_post_norm=doubled_selection[RECIPE].tolist()),
    ]
    return claims


def uniform_numbers(uniform: pd.DataFrame, recipe_steps: pd.Series) -> dict[str, float | str]:
    """What chapter 6 glues from the stored uniform-length runs (study ``ch6-uniform-lengths``)
    set beside the recipe's runs of the stored sweep (``recipe_steps``, seed -> steps): each
    seed's steps, the worst test score, and the verdict in words ("never fewer, and at most 20
    more"), chosen by the data."""
    steps = uniform.set_index("seed")["first_step_at_target"]
    extra = (steps - recipe_steps).loc[list(recipe_steps.index)]
    numbers: dict[str, float | str] = {f"ch6-uniform-steps-{seed}": float(steps[seed])
                                       for seed in recipe_steps.index}
    numbers["ch6-uniform-test-min"] = float(100 * uniform["sequence_accuracy"].min())
    counts = {"more": int((extra > 0).sum()), "fewer": int((extra < 0).sum()),
              "the same": int((extra == 0).sum())}
    by = {"more": extra.max(), "fewer": -extra.min()}
    if counts["fewer"] == 0:
        verdict = f"never fewer, and at most {extra.max():g} more"
    else:
        parts = [f"{word} for {count} of the three" + (f" (by at most {by[word]:g})"
                                                      if word in by else "")
                 for word, count in counts.items() if count]
        verdict = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    numbers["ch6-uniform-verdict"] = verdict
    return numbers


def uniform_lengths_claims() -> list[DataClaim]:
    """What chapter 6 says about the stored uniform-length runs (study ``ch6-uniform-lengths``),
    beside the recipe's runs of the stored sweep, checked on both."""
    uniform = stored_uniform_lengths()
    recipe_steps = read_sweep().recipe_steps
    steps = uniform.set_index("seed")["first_step_at_target"]
    extra = (steps - recipe_steps).loc[list(recipe_steps.index)]
    spread = recipe_steps.max() - recipe_steps.min()
    made_on = {name: (study(name).environment()["cpu"], study(name).environment()["torch"])
               for name in ("ch6-uniform-lengths", "ch6-ablation-sweep")}
    return [
        data_claim("the uniform-length runs and the sweep were made on the same machine",
                   len(set(made_on.values())) == 1, made_on=made_on),
        data_claim("with uniform lengths every seed finished", steps.notna().all(),
                   steps=steps.tolist()),
        data_claim("the uniform runs differ from the recipe's by no more than a check or two "
                   "beyond the seeds' own spread",
                   extra.abs().max() <= spread + 2 * recipes.FAST_TRAINING.eval_every,
                   extra=extra.tolist(), spread=spread),
    ]


def final_losses(runs: pd.DataFrame, setting: str) -> pd.Series:
    """The last training loss of each seed's run of ``setting`` (rows of
    :func:`warmup_runs`), by seed."""
    chosen = runs[runs["setting"] == setting]
    return pd.Series([losses[-1] for losses in chosen["losses"]], index=chosen["seed"].tolist())


def warmup_numbers(runs: pd.DataFrame) -> dict[str, float]:
    """What chapter 6 glues from the stored warm-up runs (study ``ch6-warmup-runs``): medians
    over the seeds of the final loss and of the test tokens right at the paper's peak, the
    most test sequences any run there got right, the median final loss at the recipe's peak
    without warm-up, and the loss of a uniform guess over the copy task's ids."""
    paper = runs[runs["setting"].str.startswith("paper's")].set_index(["setting", "seed"])
    tokens = 100 * paper["token_accuracy"]
    return {
        "ch6-wu-paper-with": float(final_losses(runs, "paper's peak, warm-up").median()),
        "ch6-wu-paper-without": float(final_losses(runs, "paper's peak, no warm-up").median()),
        "ch6-wu-paper-with-tok": float(tokens.loc["paper's peak, warm-up"].median()),
        "ch6-wu-paper-without-tok": float(tokens.loc["paper's peak, no warm-up"].median()),
        "ch6-wu-paper-seq-max": float(100 * paper["sequence_accuracy"].max()),
        "ch6-wu-ours-without": float(final_losses(runs, "recipe's peak, no warm-up").median()),
        "ch6-uniform-loss": math.log(recipes.COPY_TASK.vocab_size),
    }


def warmup_runs_claims() -> list[DataClaim]:
    """What chapter 6 says about the stored warm-up runs (study ``ch6-warmup-runs``), checked
    on them."""
    runs = stored_warmup_runs()
    n = warmup_numbers(runs)
    whole = runs[runs["setting"] != "recipe's peak, warm-up"]  # the recipe stops when right
    with_warmup = final_losses(runs, "paper's peak, warm-up")
    without = final_losses(runs, "paper's peak, no warm-up")
    tokens = runs[runs["setting"].str.startswith("paper's")].set_index(
        ["setting", "seed"])["token_accuracy"]
    floor = loss_floor(recipes.COPY_TASK.vocab_size, recipes.FAST_TRAINING.label_smoothing)
    stuck = n["ch6-wu-ours-without"]
    return [
        data_claim("the runs without the stopping rule's success ran the whole budget",
                   all(len(losses) == BUDGET for losses in whole["losses"]),
                   lengths=[len(losses) for losses in whole["losses"]]),
        data_claim("at the paper's peak, without warm-up the final loss is lower for every "
                   "seed", (without < with_warmup).all(), without=without.tolist(),
                   with_warmup=with_warmup.tolist()),
        data_claim("... and more test tokens right for every seed",
                   (tokens.loc["paper's peak, no warm-up"]
                    > tokens.loc["paper's peak, warm-up"]).all(), tokens=tokens.tolist()),
        data_claim("at the paper's peak no run gets 2% of the test sequences right",
                   n["ch6-wu-paper-seq-max"] < 2, most=n["ch6-wu-paper-seq-max"]),
        data_claim("at the recipe's peak without warm-up the median final loss is nearer a "
                   "uniform guess than the floor",
                   abs(stuck - n["ch6-uniform-loss"]) < abs(stuck - floor) / 2,
                   median=stuck, uniform=n["ch6-uniform-loss"], floor=floor),
    ]


# This page's run beside the same statistic's calibrated draws (the stored study
# ``calibration``): what chapter 6 shows where no bound holds for every draw, claiming nothing.


def calibrated_values(key: str) -> list[float]:
    """The values the statistic ``key`` took in the calibration's runs (this CPU and the
    simulated others; NaN: a run that never got there), or none where it was never calibrated."""
    entry = calibration.statistic(key)
    return [] if entry is None else list(entry.values)


def steps_text(steps: float | None, budget: int = BUDGET) -> str:
    """A run's steps to every validation sequence right as a page says them: "130", or "more
    than 150" for a run that did not get there within ``budget``."""
    if steps is None or not math.isfinite(steps) or steps > budget:
        return f"more than {budget}"
    return f"{steps:g}"


def steps_span_text(key: str, budget: int = BUDGET) -> str:
    """The calibrated span of a statistic of steps as words: "from 110 steps to more than 150"
    (a run that did not get there within ``budget`` counting as more); "not yet calibrated"
    where the calibration has no value of it."""
    values = calibrated_values(key)
    if not values:
        return "not yet calibrated"
    inside = [v for v in values if math.isfinite(v) and v <= budget]
    lowest = steps_text(min(inside), budget) if inside else f"more than {budget}"
    highest = (steps_text(max(inside), budget) if len(inside) == len(values)
               else f"more than {budget}")
    return f"{lowest} steps" if lowest == highest else f"from {lowest} steps to {highest}"


def steps_beside_draws(rows: dict[str, tuple[str, float | None]],
                       budget: int = BUDGET) -> pd.DataFrame:
    """Runs' steps to every validation sequence right beside their calibrated draws: one row per
    ``label -> (key, this run's steps)``, the column "this page" and, for each check at which a
    calibrated run stopped, how many stopped there ("more than <budget>": not within the budget).
    """
    checks = sorted({v for key, _ in rows.values() for v in calibrated_values(key)
                     if math.isfinite(v) and v <= budget})
    late = f"more than {budget}"
    table = []
    for label, (key, steps) in rows.items():
        values = calibrated_values(key)
        row: dict[str, str | int] = {"run": label, "this page": steps_text(steps, budget)}
        for check in checks:
            row[f"{check:g}"] = sum(v == check for v in values)
        row[late] = sum(not (math.isfinite(v) and v <= budget) for v in values)
        table.append(row)
    return pd.DataFrame(table)


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("uniform-lengths", "ablation-sweep", "warmup"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if args.what == "uniform-lengths":
        target, table = UNIFORM_LENGTHS, uniform_lengths()
    elif args.what == "ablation-sweep":
        target, table = ABLATION_SWEEP, selected_sweep()
    else:
        target, table = WARMUP_RUNS, warmup_runs()
        table["losses"] = [" ".join(f"{x:.6f}" for x in run) for run in table["losses"]]
    table.to_csv(target.path, index=False, float_format="%.6f")
    record_environment(target.path)
    print(target.path.read_text()[:4000])
    check_data_claims(target.name)  # what chapter 6 says about it still holds on the new data


if __name__ == "__main__":
    _main()
