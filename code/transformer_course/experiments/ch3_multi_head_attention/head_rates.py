"""One head against two, each at its own learning rate: a stored study for chapter 3.

Chapter 3 trains one head of width d_model and two heads of width d_model / 2 on the
previous-plus-marked task at one constant learning rate. Whether one head is slower at that rate
only, or at any rate, needs each at its own best rate, chosen on other seeds than the ones the
chapter compares. This sweep trains both at every rate of :data:`RATES` with the
:data:`SELECTION_SEEDS` (the chapter reports seeds 0-7) and records, per run, the first step at
which the mean batch accuracy of :data:`WINDOW` steps reaches :data:`THRESHOLD` (the budget + 1
when it never does) and the mean loss of the last :data:`WINDOW` steps. Regenerate
``head_rates.csv`` (about 1 CPU-minute) with::

    python -m transformer_course.experiments.ch3_multi_head_attention.head_rates
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import torch

from transformer_course.experiments.ch3_multi_head_attention import head_specialisation as hs
from transformer_course.notebook import set_threads
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    load,
    record_environment,
)

STUDY = declare(__file__, "ch3-head-rates", (3,), "head_rates.csv", "about 1 CPU-minute")
COLUMNS = ("heads", "peak_lr", "seed", "steps_to_learn", "final_loss")
RATES = (1.25e-3, 2.5e-3, 5e-3, 1e-2, 2e-2)  # factors of two around the chapter's 5e-3
SELECTION_SEEDS = (8, 9, 10, 11)
THRESHOLD, WINDOW = 0.95, 25  # as the chapter's "learned"
TASK, CONFIG = hs.LookupTask(), hs.LookupConfig()  # the chapter's


def sweep(task: hs.LookupTask = TASK, config: hs.LookupConfig = CONFIG,
          rates: Sequence[float] = RATES, seeds: Sequence[int] = SELECTION_SEEDS,
          ) -> pd.DataFrame:
    """One row per number of heads (1, 2), rate and seed: steps to learn and final loss."""
    rows = []
    for heads in (1, 2):
        for lr in rates:
            run = replace(config, num_heads=heads, training=replace(config.training, peak_lr=lr))
            _, losses, accuracies = hs.train_lookup_models(task, run, seeds)
            for seed, loss, accuracy in zip(seeds, losses, accuracies, strict=True):
                step = hs.first_step_reaching(accuracy, THRESHOLD, WINDOW)
                rows.append({"heads": heads, "peak_lr": lr, "seed": seed,
                             "steps_to_learn": run.training.steps + 1 if step is None else step,
                             "final_loss": round(float(loss[-WINDOW:].mean()), 4)})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def best_rates(table: pd.DataFrame) -> dict[int, float]:
    """Per number of heads, the rate with the fewest median steps to learn; ties go to the lower
    median final loss."""
    cells = table.groupby(["heads", "peak_lr"])[["steps_to_learn", "final_loss"]].median()
    ranked = cells.sort_values(["steps_to_learn", "final_loss"])
    return {int(heads): float(rows.index[0][1])
            for heads, rows in ranked.groupby(level="heads", sort=False)}


def stored(path: Path = STUDY.path) -> pd.DataFrame:
    """The stored sweep (see the module's docstring for the command that regenerates it)."""
    return load(path)


@dataclass(frozen=True)
class RatesSummary:
    """What chapter 3 reads from a sweep: the rates tried, each model's best rate, and the median
    steps to learn of every model and rate."""

    rates: tuple[float, ...]  # the grid, ascending
    best: dict[int, float]  # number of heads -> its best rate (:func:`best_rates`)
    steps: pd.Series  # median steps to learn, indexed by (heads, peak_lr)

    def best_steps(self, heads: int) -> float:
        """The median steps to learn of the model with ``heads`` heads at its own best rate."""
        return float(self.steps[heads, self.best[heads]])

    def table(self) -> pd.DataFrame:
        """The median steps as the page shows them: one row per model, one column per rate."""
        shown = self.steps.unstack("peak_lr")
        shown.columns = [f"{lr:g}" for lr in shown.columns]
        shown.index = [f"{h} head{'s' * (h > 1)}" for h in shown.index]
        return shown


def summary(table: pd.DataFrame) -> RatesSummary:
    """The :class:`RatesSummary` of the sweep ``table`` (as :func:`sweep` returns it)."""
    return RatesSummary(rates=tuple(sorted(table["peak_lr"].unique())), best=best_rates(table),
                        steps=table.groupby(["heads", "peak_lr"])["steps_to_learn"].median())


def data_claims(path: Path = STUDY.path) -> list[DataClaim]:
    """What chapter 3 says about the stored sweep (study ``ch3-head-rates``), checked on it."""
    table = stored(path)
    rates = summary(table)
    one, two = rates.best[1], rates.best[2]
    return [
        data_claim("the sweep trains both models at every rate of the grid from every selection "
                   "seed", set(zip(table["heads"], table["peak_lr"], table["seed"], strict=True))
                   == {(h, lr, s) for h in (1, 2) for lr in RATES for s in SELECTION_SEEDS}
                   and len(table) == 2 * len(RATES) * len(SELECTION_SEEDS), rows=len(table)),
        data_claim("each model's best rate lies inside the grid (not at its edge)",
                   all(rates.rates[0] < r < rates.rates[-1] for r in rates.best.values()),
                   best=rates.best),
        data_claim("one head's best rate is the rate the chapter trains both models at",
                   one == CONFIG.training.peak_lr, one_head=one,
                   chapter=CONFIG.training.peak_lr),
        data_claim("two heads do best at another rate than one head, and at their own best "
                   "rates two heads learn sooner than one (median steps)",
                   rates.steps[2, two] < rates.steps[2, one] < rates.steps[1, one],
                   two=rates.best_steps(2), two_at_one_rate=float(rates.steps[2, one]),
                   one=rates.best_steps(1)),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: recompute the sweep, write ``head_rates.csv`` and its environment record,
    and check what chapter 3 says about it (:func:`data_claims`)."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.experiments.ch3_multi_head_attention.head_rates",
        description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STUDY.path, help="file to write")
    args = parser.parse_args(argv)
    set_threads(1)
    torch.use_deterministic_algorithms(True)
    table = sweep()
    table.to_csv(args.out, index=False)
    record_environment(args.out)
    print(table.groupby(["heads", "peak_lr"])["steps_to_learn"].median(), file=sys.stderr)
    print(f"best rates {best_rates(table)}, written to {args.out}", file=sys.stderr)
    if args.out.resolve() == STUDY.path.resolve():
        check_data_claims("ch3-head-rates")  # what the page says about it still holds
    else:  # a sweep written elsewhere: say which of the page's sentences it would not bear out
        for failing in (c for c in data_claims(args.out) if not c.holds):
            print(f"the page's sentence does not hold on {args.out}: {failing}", file=sys.stderr)


if __name__ == "__main__":
    main()
