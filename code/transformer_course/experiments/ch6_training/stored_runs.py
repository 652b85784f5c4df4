"""Runs too slow for every build of chapter 6, stored as data: the build re-runs one of them.

``uniform_lengths.csv``: the copy recipe with training lengths drawn uniformly (the third
departure of ``recipes.RECIPE_DEPARTURES`` undone), seeds 0, 1 and 2, with the budget and
stopping rule of chapter 6's comparisons; one row per seed (steps until every validation
sequence was right, empty if never; greedy sequence and token accuracy on the test set).
Regenerate it (about half a minute on one thread) with

    python -m transformer_course.experiments.ch6_training.stored_runs
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from . import recipes
from .ablations import run_ablations

UNIFORM_LENGTHS = Path(__file__).with_name("uniform_lengths.csv")
COLUMNS = ["seed", "first_step_at_target", "sequence_accuracy", "token_accuracy"]
SEEDS = (0, 1, 2)
BUDGET = 150  # chapter 6's budget of steps for every comparison with the recipe


def uniform_lengths(seeds: tuple[int, ...] = SEEDS) -> pd.DataFrame:
    """Train the copy recipe with uniform training lengths on ``seeds``; one row per seed."""
    task = recipes.COPY_TASK
    validation, test = recipes.held_out_split(task)
    budget = replace(recipes.FAST_TRAINING, steps=BUDGET)
    runs = run_ablations(task, recipes.small_model(task), budget, validation,
                         recipes.RECIPE_DEPARTURES[2:], seeds=seeds, test=test)
    return runs[COLUMNS].reset_index(drop=True)


def stored_uniform_lengths() -> pd.DataFrame:
    """The stored rows of :func:`uniform_lengths` (see the module's docstring)."""
    return pd.read_csv(UNIFORM_LENGTHS)


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    uniform_lengths().to_csv(UNIFORM_LENGTHS, index=False, float_format="%.6f")
    print(UNIFORM_LENGTHS.read_text())
