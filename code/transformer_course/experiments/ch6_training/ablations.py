"""Ablations: retrain with one ingredient removed or changed, same seeds and budget, and measure.

Each variant changes the baseline's model configuration or training configuration in one place,
trains from the same seeds with the same budget of steps (stopping early, if the baseline's
configuration says so, once every validation sequence is right), and is scored by greedy decoding
on a test set that neither training nor stopping looked at. A run trained elsewhere (the
chapter's baseline, say) is measured the same way by :func:`ablation_row`, so it need not be
trained twice; :func:`ablation_summary` turns the runs into one row per variant, beside the
paper's own measurement of the same change where its Table 3 has one (``PAPER_ROWS``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd
import torch
from torch import nn

from transformer_course.core.batching import EOS_ID, PAD_ID, Batch, make_batch
from transformer_course.core.checks import check_array, check_instance, check_positive_int
from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig, TrainResult, evaluate, evaluate_decoding

from .task_training import train_on_task
from .tasks import TaskConfig, TaskData


@dataclass(frozen=True)
class Ablation:
    """One variant: a name, what it changes, and the changed fields of the two configurations."""

    name: str  # short label for the table
    description: str  # what changes, in words
    model_changes: dict[str, Any] = field(default_factory=dict)  # TransformerConfig fields
    train_changes: dict[str, Any] = field(default_factory=dict)  # TrainConfig fields
    task_changes: dict[str, Any] = field(default_factory=dict)  # TaskConfig fields (sampling)


DEFAULT_ABLATIONS = (
    Ablation("baseline", "the recipe unchanged"),
    Ablation("no positional encoding", "nothing added to the embeddings",
             model_changes={"positional": "none"}),
    Ablation("no sqrt(d_k) scaling", "scores Q K^T without the 1/sqrt(d_k) factor",
             model_changes={"scaled_attention": False}),
    Ablation("pre-norm", "LayerNorm inside each residual branch (the baseline is post-norm)",
             model_changes={"norm_first": True}),
    Ablation("no warm-up", "start at the peak learning rate, then the same decay",
             train_changes={"use_warmup": False}),
    Ablation("no label smoothing", "plain cross-entropy (eps_ls = 0)",
             train_changes={"label_smoothing": 0.0}),
)


@dataclass(frozen=True)
class PaperRow:
    """One row of the paper's Table 3: English-German development set (newstest2013)."""

    row: str  # the row as the table labels it
    perplexity: float  # per word-piece
    bleu: float


PAPER_BASE = PaperRow("base", 4.92, 25.8)  # the base model every row of Table 3 changes
PAPER_ROWS = {  # our variant -> the row of Table 3 that makes the same change
    "baseline": PAPER_BASE,
    # The paper removed its dropout; our recipe has none, so its variant adds the paper's.
    "P_drop = 0.1": PaperRow("(D) P_drop = 0", 5.77, 24.6),
    "no label smoothing": PaperRow("(D) eps_ls = 0", 4.67, 25.3),
    "learned positions": PaperRow("(E) learned positional embedding", 4.92, 25.7),
    "one head": PaperRow("(A) h = 1", 5.29, 24.9),
}


def _check_changes(name: str, changes: Any, config: Any) -> None:
    if not isinstance(changes, dict):
        raise TypeError(f"{name} must be a dict of field names to values; "
                        f"got {type(changes).__name__}")
    known = {f.name for f in fields(config)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise ValueError(f"{name} names unknown {type(config).__name__} fields: {unknown}")


def ablation_row(variant: str, seed: int, model: nn.Module, result: TrainResult,
                 held_out: TaskData, *, keep_outputs: bool = False,
                 keep_losses: bool = False, batch: Batch | None = None) -> dict[str, Any]:
    """One row of :func:`run_ablations`'s table for a trained model and its training record.

    Args:
        variant: the row's name. seed: the run's seed. model: the trained model.
        result: its :class:`TrainResult`. held_out: the held-out pairs to decode and score.
        keep_outputs: also store the (n, L) greedy outputs under "outputs".
        keep_losses: also store the training loss at every step under "losses".
        batch: ``make_batch(held_out.src, held_out.tgt)``, if already built.
    """
    check_instance("variant", variant, str)
    check_instance("result", result, TrainResult)
    check_instance("held_out", held_out, TaskData)
    if batch is None:
        batch = make_batch(held_out.src, held_out.tgt)
    decoded, outputs = evaluate_decoding(model, batch)
    row: dict[str, Any] = {
        "variant": variant,
        "seed": seed,
        "sequence_accuracy": decoded.sequence_accuracy,
        "token_accuracy": decoded.token_accuracy,
        "cross_entropy": evaluate(model, batch, epsilon=0.0).loss,
        "first_step_at_target": (float("nan") if result.reached_step is None
                                 else result.reached_step),
        "steps": result.steps,
        "seconds": result.seconds,
    }
    if keep_outputs:
        row["outputs"] = outputs
    if keep_losses:
        row["losses"] = result.losses
    return row


def run_ablations(task: TaskConfig, model_config: Any, train_config: TrainConfig,
                  held_out: TaskData, ablations: Sequence[Ablation] = DEFAULT_ABLATIONS, *,
                  seeds: Sequence[int] = (0,), keep_outputs: bool = False,
                  keep_losses: bool = False, test: TaskData | None = None) -> pd.DataFrame:
    """Train every variant on every seed, stopping on ``held_out``, and measure it on ``test``.

    Args:
        task: the task. model_config: the baseline ``TransformerConfig``.
        train_config: the baseline training (its ``steps`` is every variant's budget, its
            ``stop_early`` and ``target_accuracy`` decide whether runs stop on success).
        held_out: the validation pairs, checked during training (never drawn for training).
        ablations: the variants. seeds: one run per variant and seed.
        keep_outputs: add a column "outputs" with each run's (n, L) greedy outputs.
        keep_losses: add a column "losses" with each run's training loss at every step.
        test: the pairs the runs are scored on (never drawn for training either); None: score
            on ``held_out``.

    Returns:
        one row per run: variant, seed, greedy sequence and token accuracy and teacher-forced
        cross-entropy (no smoothing, so variants compare) on the test pairs at the end of the
        run, the first check at ``train_config.target_accuracy`` (NaN if never), steps taken,
        and the training seconds (see :func:`ablation_row`).
    """
    check_instance("model_config", model_config, TransformerConfig)
    check_instance("train_config", train_config, TrainConfig)
    check_instance("held_out", held_out, TaskData)
    check_instance("test", test, (TaskData, type(None)), "TaskData or None")
    if isinstance(ablations, Ablation) or not ablations:
        raise ValueError("ablations must be a non-empty sequence of Ablation")
    for i, ablation in enumerate(ablations):
        if not isinstance(ablation, Ablation):
            raise TypeError(f"ablations[{i}] must be an Ablation; got {type(ablation).__name__}")
        _check_changes(f"ablations[{i}].model_changes", ablation.model_changes, model_config)
        _check_changes(f"ablations[{i}].train_changes", ablation.train_changes, train_config)
        _check_changes(f"ablations[{i}].task_changes", ablation.task_changes, task)
    if isinstance(seeds, int) or not seeds:
        raise ValueError(f"seeds must be a non-empty sequence of ints; got {seeds!r}")
    scored = held_out if test is None else test
    batch = make_batch(scored.src, scored.tgt)
    rows = []
    for ablation in ablations:
        model_cfg = replace(model_config, **ablation.model_changes)
        task_cfg = replace(task, **ablation.task_changes)
        for seed in seeds:
            cfg = replace(train_config, seed=seed, verbose=False, **ablation.train_changes)
            model, result = train_on_task(task_cfg, model_cfg, cfg, held_out, exclude=test)
            rows.append(ablation_row(ablation.name, seed, model, result, scored,
                                     keep_outputs=keep_outputs, keep_losses=keep_losses,
                                     batch=batch))
    return pd.DataFrame(rows)


def ablation_summary(runs: pd.DataFrame, budget: int,
                     paper: Mapping[str, PaperRow] = PAPER_ROWS) -> pd.DataFrame:
    """One row per variant of :func:`run_ablations`' runs, in their order, for the page.

    Args:
        runs: the runs (at least the columns variant, seed, first_step_at_target and
            sequence_accuracy). budget: the runs' budget of steps, named where one was not
            enough. paper: the paper's rows, by variant name ("" where it has none).

    Returns:
        columns "variant", "steps to 100% (seed 0, 1, ...)" (steps per seed, "> budget" for a
        run that never got there), "median steps", "test sequences right (%)" (median and range
        over the seeds) and "the paper's Table 3 (PPL, BLEU)".
    """
    check_instance("runs", runs, pd.DataFrame)
    check_positive_int("budget", budget)
    needed = {"variant", "seed", "first_step_at_target", "sequence_accuracy"}
    if missing := sorted(needed - set(runs.columns)):
        raise ValueError(f"runs must have the columns of run_ablations; missing {missing}")
    if runs.empty:
        raise ValueError("runs must hold at least one run")
    seeds = sorted(runs["seed"].unique().tolist())
    rows = []
    for variant, group in runs.groupby("variant", sort=False):
        by_seed = group.set_index("seed")
        if sorted(by_seed.index.tolist()) != seeds:
            raise ValueError(f"runs must hold every seed {seeds} once for each variant; "
                             f"{variant!r} has {sorted(by_seed.index.tolist())}")
        steps = [by_seed.loc[s, "first_step_at_target"] for s in seeds]
        reached = [math.inf if math.isnan(s) else s for s in steps]
        median = statistics.median(reached)
        accuracy = 100 * by_seed["sequence_accuracy"]
        row = paper.get(variant)
        rows.append({
            "variant": variant,
            f"steps to 100% (seed {', '.join(map(str, seeds))})":
                ", ".join(f"> {budget}" if math.isinf(s) else str(int(s)) for s in reached),
            "median steps": f"> {budget}" if math.isinf(median) else f"{median:g}",
            "test sequences right (%)": _median_range(accuracy.tolist()),
            "the paper's Table 3 (PPL, BLEU)":
                "" if row is None else f"{row.row}: {row.perplexity:.2f}, {row.bleu:.1f}",
        })
    return pd.DataFrame(rows)


def _median_range(values: list[float]) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{mid:.1f}" if low == high else f"{mid:.1f} ({low:.1f}–{high:.1f})"


def order_free_accuracy(outputs: torch.Tensor, data: TaskData, *, eos_id: int = EOS_ID,
                        pad_id: int = PAD_ID) -> tuple[float, float]:
    """What an output gets right when order is ignored: its length, and its symbols as a bag.

    Args:
        outputs: (n, L) decoded ids in the decoders' format (BOS first, EOS, then padding).
        data: the n pairs decoded; their targets are the reference.

    Returns:
        (fraction of outputs whose first EOS follows exactly as many tokens as the target has,
        fraction whose tokens before that EOS are the target's symbols in some order).
    """
    check_array("outputs", outputs, kind=torch.Tensor, ndim=2, shape="(n, L)")
    check_instance("data", data, TaskData)
    if outputs.is_floating_point() or outputs.dtype == torch.bool or (
            outputs.numel() and int(outputs.min()) < 0):
        raise ValueError(f"outputs must hold non-negative integer ids; got dtype {outputs.dtype}")
    if outputs.shape[0] != len(data) or outputs.shape[1] < 2:
        raise ValueError(f"outputs must have shape ({len(data)}, L >= 2), one row per pair; "
                         f"got {tuple(outputs.shape)}")
    body = outputs[:, 1:].long()  # (n, L - 1), BOS dropped
    is_eos = body == eos_id
    first_eos = torch.where(is_eos.any(dim=1), is_eos.long().argmax(dim=1), -1)  # (n,)
    right_length = first_eos == data.lengths
    before_eos = torch.arange(body.shape[1])[None, :] < first_eos[:, None]  # (n, L - 1)
    vocab = int(max(int(body.max()), int(data.tgt.max()))) + 1
    said = _counts(body.masked_fill(~before_eos, pad_id), vocab, pad_id)  # (n, vocab)
    wanted = _counts(data.tgt.long(), vocab, pad_id)  # (n, vocab)
    same_bag = right_length & (said == wanted).all(dim=1)
    return right_length.double().mean().item(), same_bag.double().mean().item()


def _counts(tokens: torch.Tensor, vocab: int, pad_id: int) -> torch.Tensor:
    """(n, vocab) occurrences of each id per row of (n, L) ``tokens``, padding not counted."""
    counts = torch.zeros(tokens.shape[0], vocab, dtype=torch.long)
    counts.scatter_add_(1, tokens, torch.ones_like(tokens))
    counts[:, pad_id] = 0
    return counts
