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
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from transformer_course.experiments.ch3_multi_head_attention import head_specialisation as hs
from transformer_course.notebook import set_threads
from transformer_course.stored import record_environment

STORED = Path(__file__).with_name("head_rates.csv")
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


def stored() -> pd.DataFrame:
    """The stored sweep (see the module's docstring for the command that regenerates it)."""
    return pd.read_csv(STORED)


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: recompute the sweep and write ``head_rates.csv``."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.experiments.ch3_multi_head_attention.head_rates",
        description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STORED, help="file to write")
    args = parser.parse_args(argv)
    set_threads(1)
    torch.use_deterministic_algorithms(True)
    table = sweep()
    table.to_csv(args.out, index=False)
    record_environment(args.out)
    print(table.groupby(["heads", "peak_lr"])["steps_to_learn"].median(), file=sys.stderr)
    print(f"best rates {best_rates(table)}, written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
