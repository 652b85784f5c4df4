"""Does pre-norm train without warm-up, and post-norm not? (Xiong et al., 2020.) A trained test.

Regenerate the stored sweep (``norm_warmup.csv``, 96 runs, about 27 CPU-minutes on one thread,
``--jobs 2`` halves the wall time)::

    python -m transformer_course.experiments.ch5_full_model.norm_warmup --jobs 2

A 6 + 6-layer model (width 32) learns chapter 6's reversal task four ways: pre-norm and
post-norm, each with and without warm-up. The schedule is the same in all: linear warm-up over
the first quarter of the budget (or, without warm-up, the peak rate held from step 1), then
linear decay to zero. Adam with the paper's betas and epsilon, label smoothing 0.1, no dropout.
A run is scored by its held-out sequence accuracy (teacher-forced exact match on chapter 6's 500
validation pairs) at the end of the budget.

Each variant is compared at its own best peak rate, chosen on other seeds than the ones
reported: every variant runs at every rate of :data:`PEAK_LRS` with the
:data:`SELECTION_SEEDS` (rows with ``role`` "selection"); :func:`best_rates` picks each
variant's rate from those rows; the :data:`SEEDS` then run at that rate only (``role``
"report"), and those are the runs the chapter compares.

Training is deterministic on one machine; another CPU may round differently, so the sweep is a
stored study (``ch5-norm-warmup`` in :mod:`transformer_course.stored`), written with a record of
the machine that made it (``norm_warmup.environment.json``). What chapter 5 says about it is
computed once, by :func:`findings`, for the page's numbers and for the study's data claims
(:func:`data_claims`, checked in pytest and by :func:`main` after writing). The page also re-runs
the first :data:`PREFIX` steps of one stored run (:data:`REPLAYED`, :func:`replay`): on another
CPU that is a new draw, not a replay, so its loss is checked against :data:`REPLAY_BOUNDS`, which
contain its calibrated draws (the stored study ``calibration``), and so is the stored run's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig
from transformer_course.experiments.ch6_training import recipes, task_training
from transformer_course.notebook import set_threads
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    load,
    record_environment,
)

STUDY = declare(__file__, "ch5-norm-warmup", (5,), "norm_warmup.csv", "about 27 CPU-minutes",
                args="--jobs 2")
COLUMNS = ("role", "variant", "peak_lr", "seed", "accuracy", "final_loss", "max_loss",
           "prefix_loss")
PREFIX = 20  # the build replays this many first steps of one stored run (see :func:`replay`)
SELECTION_SEEDS = (3, 4, 5)  # every rate: these choose each variant's rate
SEEDS = (0, 1, 2)  # the chosen rate only: these are compared
PEAK_LRS = (5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2)  # factors of two


@dataclass(frozen=True)
class Variant:
    """One way to train: where LayerNorm sits, and whether the rate warms up."""

    name: str
    norm_first: bool
    warmup: bool


VARIANTS = (Variant("pre-norm, no warm-up", True, False),
            Variant("pre-norm, warm-up", True, True),
            Variant("post-norm, warm-up", False, True),
            Variant("post-norm, no warm-up", False, False))
# The stored run whose first PREFIX steps chapter 5 re-runs (variant, peak rate, seed), and the
# range its training loss at step PREFIX lies in: on this CPU and on every simulated other one of
# the calibration (claim ch5-warm-replay-loss), and in the stored run.
REPLAYED = (VARIANTS[3], 4e-3, 3)
REPLAY_BOUNDS = (2.43, 2.46)
FAILED = 5.0  # % of held-out sequences: a rate whose median is below this has failed
LEARNED = 99.0  # %: a run at or above this has learned the task


@dataclass(frozen=True)
class StudyConfig:
    """The model and budget of every run."""

    num_layers: int = 6  # N, in the encoder and in the decoder
    d_model: int = 32
    num_heads: int = 4
    d_ff: int = 128
    steps: int = 300
    warmup_fraction: float = 0.25  # of the budget
    batch_size: int = 64


def run(variant: Variant, peak_lr: float, seed: int, config: StudyConfig = StudyConfig(),
        *, steps: int | None = None, role: str = "report") -> dict[str, object]:
    """Train one model and score it.

    Args:
        steps: stop after this many steps of the run (its schedule unchanged; at most
            ``config.steps``); None: the whole budget.
        role: "selection" or "report", kept in the row.

    Returns:
        a row with the :data:`COLUMNS`: held-out sequence accuracy (%) at the end, the mean
        training loss over the last 20 steps, the largest training loss after step 10 (a
        spike there means training blew up), and the training loss of step :data:`PREFIX`.
    """
    task = recipes.REVERSE_TASK
    validation, test = recipes.held_out_split(task)
    V = task.vocab_size
    model_config = TransformerConfig(
        V, V, d_model=config.d_model, num_heads=config.num_heads,
        num_encoder_layers=config.num_layers, num_decoder_layers=config.num_layers,
        d_ff=config.d_ff, dropout=0.0, max_len=2 * task.max_len + 2,
        norm_first=variant.norm_first)
    training = TrainConfig(
        steps=config.steps if steps is None else steps, batch_size=config.batch_size,
        warmup=round(config.warmup_fraction * config.steps), peak_lr=peak_lr, decay="linear",
        use_warmup=variant.warmup, eval_every=config.steps if steps is None else steps,
        target_accuracy=None,
        stop_early=False, seed=seed)
    _, result = task_training.train_on_task(task, model_config, training, validation,
                                            exclude=test)
    losses = result.losses
    return {"role": role, "variant": variant.name, "peak_lr": peak_lr, "seed": seed,
            "accuracy": round(100 * result.evaluations[-1].metrics.sequence_accuracy, 2),
            "final_loss": round(sum(losses[-20:]) / 20, 4),
            "max_loss": round(max(losses[10:]), 4),
            "prefix_loss": round(losses[PREFIX - 1], 4) if len(losses) >= PREFIX else None}


def best_rates(table: pd.DataFrame) -> dict[str, float]:
    """Each variant's peak rate with the highest median accuracy over its "selection" rows;
    ties go to the lower median final loss."""
    selection = table[table["role"] == "selection"]
    cells = selection.groupby(["variant", "peak_lr"])[["accuracy", "final_loss"]].median()
    ranked = cells.assign(loss=-cells["final_loss"]).sort_values(["accuracy", "loss"])
    return {variant: float(rows.index[-1][1])
            for variant, rows in ranked.groupby(level="variant", sort=False)}


def _run_row(args: tuple[Variant, float, int, StudyConfig, str]) -> dict[str, object]:
    variant, lr, seed, config, role = args
    return run(variant, lr, seed, config, role=role)


def sweep(variants: Sequence[Variant] = VARIANTS, peak_lrs: Sequence[float] = PEAK_LRS,
          config: StudyConfig = StudyConfig(), *, jobs: int = 1,
          progress: bool = False) -> pd.DataFrame:
    """Every variant at every rate with the :data:`SELECTION_SEEDS`, then at its
    :func:`best_rates` rate with the :data:`SEEDS` (about 17 CPU s a run); ``jobs`` runs
    that many at once, each on one thread; ``progress`` prints each row as it comes."""
    def runs(cells: list[tuple[Variant, float, int, StudyConfig, str]]) -> list[dict]:
        with ProcessPoolExecutor(jobs, initializer=set_threads, initargs=(1,)) as pool:
            rows = []
            for row in pool.map(_run_row, cells):
                rows.append(row)
                if progress:
                    print(row, file=sys.stderr, flush=True)
            return rows

    selection = runs([(v, lr, s, config, "selection") for v in variants for lr in peak_lrs
                      for s in SELECTION_SEEDS])
    chosen = best_rates(pd.DataFrame(selection, columns=list(COLUMNS)))
    report = runs([(v, chosen[v.name], s, config, "report") for v in variants for s in SEEDS])
    return pd.DataFrame(selection + report, columns=list(COLUMNS))


def replay(variant: Variant, peak_lr: float, seed: int, config: StudyConfig = StudyConfig(),
           ) -> float:
    """The training loss at step :data:`PREFIX` of one run, replayed from the start: a few
    seconds instead of the run's half-minute. The rates of the warm-up steps do not depend on
    the budget, so while :data:`PREFIX` is within the warm-up these steps are the run's."""
    if PREFIX > round(config.warmup_fraction * config.steps):
        raise ValueError(f"config must warm up for at least the {PREFIX} replayed steps; got "
                         f"{round(config.warmup_fraction * config.steps)} warm-up steps")
    return run(variant, peak_lr, seed, config, steps=PREFIX)["prefix_loss"]


def stored(path: Path = STUDY.path) -> pd.DataFrame:
    """The stored sweep (see the module's docstring for the command that regenerates it)."""
    return load(path)


@dataclass(frozen=True)
class Findings:
    """What chapter 5 reads off the sweep: per variant, the chosen rate, the median accuracy of
    the selection seeds at every rate, and the reported seeds' worst, best and median loss."""

    chosen: dict[str, float]  # variant -> its chosen peak rate
    grid: pd.Series  # (variant, peak rate) -> median accuracy (%) of the selection seeds
    worst: pd.Series  # variant -> the worst reported seed's accuracy (%) at the chosen rate
    best: pd.Series  # variant -> the best reported seed's accuracy (%)
    loss: pd.Series  # variant -> the reported seeds' median final loss
    replayed_loss: float | None  # the stored loss at step PREFIX of the REPLAYED run

    @property
    def rates(self) -> list[float]:
        """The grid's peak rates, lowest first."""
        return sorted({rate for _, rate in self.grid.index})

    def fails_from(self, variant: str) -> float | None:
        """The lowest rate above ``variant``'s chosen one whose median accuracy is below
        :data:`FAILED` %, or None where every higher rate still learns something."""
        return min((r for r in self.rates
                    if r > self.chosen[variant] and self.grid[variant, r] < FAILED),
                   default=None)


def findings(table: pd.DataFrame) -> Findings:
    """The :class:`Findings` of a sweep (the rows :func:`sweep` writes)."""
    selection = table[table["role"] == "selection"]
    report = table[table["role"] == "report"].groupby("variant")
    variant, peak_lr, seed = REPLAYED
    replayed = table.loc[(table["variant"] == variant.name) & (table["peak_lr"] == peak_lr)
                         & (table["seed"] == seed) & (table["role"] == "selection"),
                         "prefix_loss"]
    return Findings(chosen=best_rates(table),
                    grid=selection.groupby(["variant", "peak_lr"])["accuracy"].median(),
                    worst=report["accuracy"].min(), best=report["accuracy"].max(),
                    loss=report["final_loss"].median(),
                    replayed_loss=float(replayed.item()) if len(replayed) == 1 else None)


def data_claims(path: Path = STUDY.path) -> list[DataClaim]:
    """What chapter 5 says about the stored sweep (study ``ch5-norm-warmup``), checked on it."""
    found = findings(stored(path))
    rates = found.rates
    pre, pre_warm, warm, cold = (v.name for v in VARIANTS)
    fails = {v: found.fails_from(v) for v in (pre, cold)}
    low, high = REPLAY_BOUNDS
    return [
        data_claim("every variant's chosen rate lies inside the grid",
                   all(rates[0] < r < rates[-1] for r in found.chosen.values()),
                   chosen=found.chosen),
        data_claim(f"at its chosen rate every pre-norm seed learns the task (at least "
                   f"{LEARNED:g} %)", min(found.worst[pre], found.worst[pre_warm]) >= LEARNED,
                   worst=found.worst.to_dict()),
        data_claim("post-norm with warm-up stays far behind (every seed below 50 %)",
                   found.best[warm] < 50, best=found.best[warm]),
        data_claim("warm-up helps the paper's layers in every seed: post-norm's worst seed with "
                   "warm-up beats its best seed without",
                   found.worst[warm] > found.best[cold], worst_with=found.worst[warm],
                   best_without=found.best[cold]),
        *(data_claim(f"{variant} fails (median below {FAILED:g} %) at every rate from "
                     f"{fails[variant]} up", fails[variant] is not None
                     and all(found.grid[variant, r] < FAILED for r in rates
                             if r >= fails[variant]), fails_from=fails[variant])
          for variant in (pre, cold)),
        data_claim(f"pre-norm with warm-up still learns at the top rate (median at least "
                   f"{LEARNED:g} %)", found.grid[pre_warm, rates[-1]] >= LEARNED,
                   median=found.grid[pre_warm, rates[-1]]),
        data_claim("warm-up moves the failing rates up for both placements",
                   None not in fails.values()
                   and all(found.grid[pre_warm, r] >= LEARNED for r in rates
                           if r >= fails[pre])
                   and found.grid[warm, fails[cold]] > found.grid[cold, fails[cold]],
                   fails_from=fails),
        data_claim(f"the stored run's loss at step {PREFIX} lies in the replay's range, "
                   f"{low} to {high}", found.replayed_loss is not None
                   and low <= found.replayed_loss <= high, stored=found.replayed_loss),
    ]


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per variant (rows): the median accuracy (%) of the selection seeds at each peak rate,
    the chosen rate's in bold, then the reported seeds' median and, in brackets, their worst
    and best at it; as Markdown text."""
    selection = table[table["role"] == "selection"]
    medians = selection.groupby(["variant", "peak_lr"], sort=False)["accuracy"].median()
    chosen = best_rates(table)
    cells = pd.Series([f"**{v:.1f}**" if lr == chosen[variant] else f"{v:.1f}"
                       for (variant, lr), v in medians.items()], index=medians.index)
    out = cells.unstack()
    out.columns = [f"{lr:g}" for lr in out.columns]
    report = table[table["role"] == "report"].groupby("variant")["accuracy"]
    median, worst, best = report.median(), report.min(), report.max()
    out[f"seeds {SEEDS[0]}–{SEEDS[-1]}"] = [f"{median[v]:.1f} ({worst[v]:.1f}–{best[v]:.1f})"
                                           for v in out.index]
    out.index.name = None
    return out.loc[[v.name for v in VARIANTS if v.name in out.index]]


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: recompute the sweep and write ``norm_warmup.csv``."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.experiments.ch5_full_model.norm_warmup",
        description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STUDY.path, help="file to write")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once, one thread each")
    args = parser.parse_args(argv)
    set_threads(1)
    start = time.perf_counter()
    sweep(jobs=args.jobs, progress=True).to_csv(args.out, index=False)
    record_environment(args.out)
    print(f"{time.perf_counter() - start:.0f} s, written to {args.out}", file=sys.stderr)
    if args.out.resolve() == STUDY.path.resolve():
        check_data_claims("ch5-norm-warmup")  # what chapter 5 says about it still holds


if __name__ == "__main__":
    main()
