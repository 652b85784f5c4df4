"""Runs too slow for every build of chapter 6, stored as data: the build re-runs one of each.

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
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from transformer_course.stored import record_environment

from . import recipes
from .ablations import (
    DEFAULT_ABLATIONS,
    LR_FACTORS,
    Ablation,
    best_rates,
    run_ablations,
    run_lr_sweep,
)

UNIFORM_LENGTHS = Path(__file__).with_name("uniform_lengths.csv")
ABLATION_SWEEP = Path(__file__).with_name("ablation_sweep.csv")
WARMUP_RUNS = Path(__file__).with_name("warmup_runs.csv")
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
    return pd.read_csv(UNIFORM_LENGTHS)


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
    return pd.read_csv(ABLATION_SWEEP)


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
    runs = pd.read_csv(WARMUP_RUNS)
    runs["losses"] = [[float(x) for x in text.split()] for text in runs["losses"]]
    return runs


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("uniform-lengths", "ablation-sweep", "warmup"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if args.what == "uniform-lengths":
        path, table = UNIFORM_LENGTHS, uniform_lengths()
    elif args.what == "ablation-sweep":
        path, table = ABLATION_SWEEP, selected_sweep()
    else:
        path, table = WARMUP_RUNS, warmup_runs()
        table["losses"] = [" ".join(f"{x:.6f}" for x in run) for run in table["losses"]]
    table.to_csv(path, index=False, float_format="%.6f")
    record_environment(path)
    print(path.read_text()[:4000])


if __name__ == "__main__":
    _main()
