"""Ablations: retrain with one ingredient removed or changed, same seeds and budget, and measure.

Each variant changes the baseline's model configuration or training configuration in one place,
trains from the same seeds with the same budget of steps (stopping early, if the baseline's
configuration says so, once every validation sequence is right), and is scored by greedy decoding
on a test set that neither training nor stopping looked at. A run trained elsewhere (the
chapter's baseline, say) is measured the same way by :func:`ablation_row`, so it need not be
trained twice; :func:`ablation_summary` turns the runs into one row per variant, beside the
paper's own measurement of the same change where its Table 3 has one (``TABLE3_ROWS``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import torch
from torch import nn

from transformer_course.core.batching import EOS_ID, PAD_ID, Batch, make_batch
from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig, TrainResult, evaluate
from transformer_course.paper import TABLE3, Table3Row

from .task_training import decode_and_score, train_on_task
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


TABLE3_ROWS = {  # our variant -> the key of the paper's Table 3 row that makes the same change
    "baseline": "base",
    # The paper removed its dropout; our recipe has none, so its variant adds the paper's.
    "P_drop = 0.1": "P_drop = 0",
    "no label smoothing": "eps_ls = 0",
    "learned positions": "learned positions",
    "one head": "h = 1",
}


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
    if batch is None:
        batch = make_batch(held_out.src, held_out.tgt)
    decoded, outputs = decode_and_score(model, batch)  # outputs capped by the sources
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


def run_ablations(task: TaskConfig, model_config: TransformerConfig, train_config: TrainConfig,
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


LR_FACTORS = (0.25, 0.5, 1.0, 2.0)  # each variant's learning-rate sweep: the baseline's times these


def scaled_rate(config: TrainConfig, factor: float) -> TrainConfig:
    """``config`` with its whole learning-rate schedule (and so its peak) times ``factor``."""
    if config.peak_lr is None:
        return replace(config, lr_scale=config.lr_scale * factor)
    return replace(config, peak_lr=config.peak_lr * factor)


def run_lr_sweep(task: TaskConfig, model_config: TransformerConfig, train_config: TrainConfig,
                 held_out: TaskData, ablations: Sequence[Ablation] = DEFAULT_ABLATIONS, *,
                 factors: Sequence[float] = LR_FACTORS, seeds: Sequence[int] = (0,),
                 test: TaskData | None = None) -> pd.DataFrame:
    """:func:`run_ablations` for every variant at every learning rate of a small sweep.

    Each variant trains from every seed with the baseline's schedule times each of ``factors``
    (the variant's own changes still apply: without warm-up, the scaled peak is held from
    step 1), so that a variant which wants another step size is not judged at the baseline's.

    Args:
        task, model_config, train_config, held_out, ablations, seeds, test: as for
            :func:`run_ablations`. factors: the multiples of the baseline's rate to try.

    Returns:
        one row per variant, factor and seed, in that order: the columns of
        :func:`run_ablations` (without "seconds") with "lr_factor" and "peak_lr" (the peak the
        schedule reaches) after "variant", and "right_length" and "same_symbols", what
        :func:`order_free_accuracy` finds in the greedy outputs on the test pairs.
    """
    if not factors or any(not isinstance(f, (int, float)) or f <= 0 for f in factors):
        raise ValueError(f"factors must be positive numbers; got {factors!r}")
    scored = held_out if test is None else test
    frames = []
    for ablation in ablations:
        for factor in factors:
            config = scaled_rate(train_config, factor)
            runs = run_ablations(task, model_config, config, held_out, [ablation],
                                 seeds=seeds, keep_outputs=True, test=test)
            order_free = [order_free_accuracy(out, scored) for out in runs.pop("outputs")]
            runs.insert(1, "lr_factor", float(factor))
            peak = replace(config, **ablation.train_changes).learning_rate(
                config.warmup, model_config.d_model)
            runs.insert(2, "peak_lr", peak)
            runs["right_length"] = [length for length, _ in order_free]
            runs["same_symbols"] = [bag for _, bag in order_free]
            frames.append(runs.drop(columns="seconds"))
    return pd.concat(frames, ignore_index=True)


def best_rates(sweep: pd.DataFrame) -> pd.DataFrame:
    """The runs of :func:`run_lr_sweep` at each variant's best learning rate, one row per seed.

    The rule: the factor whose seeds reach every validation sequence in the fewest steps
    (median over the seeds, a run that never did counting as infinitely many); ties go to the
    factor nearer the baseline's rate (1), then to the lower. Only the validation steps of the
    rows given decide: the test scores play no part. The result keeps the sweep's columns and
    adds "factors_tried" (the variant's factors, as a sorted tuple).
    """
    rows = []
    for _, group in sweep.groupby("variant", sort=False):
        scores = []
        for factor, runs in group.groupby("lr_factor"):
            steps = runs["first_step_at_target"].fillna(math.inf)
            scores.append((statistics.median(steps.tolist()), abs(math.log(factor)), factor))
        best = min(scores)[-1]
        chosen = group[group["lr_factor"] == best].copy()
        chosen["factors_tried"] = [tuple(sorted(group["lr_factor"].unique()))] * len(chosen)
        rows.append(chosen)
    return pd.concat(rows, ignore_index=True)


def chosen_rates(selection: pd.DataFrame, report: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``report`` at the factor :func:`best_rates` chooses for each variant on the
    runs of ``selection`` (other seeds of the same sweep), one row per reported seed.

    So the seeds reported played no part in choosing their rate. The result has ``report``'s
    columns and "factors_tried" (the factors of the variant's selection runs), in the order of
    the variants in ``selection``.

    Raises:
        ValueError: if ``report`` has no run of a variant at the factor chosen for it.
    """
    rows = []
    for _, best in best_rates(selection).groupby("variant", sort=False):
        variant, factor = best["variant"].iloc[0], best["lr_factor"].iloc[0]
        at_best = report[(report["variant"] == variant) & (report["lr_factor"] == factor)]
        if at_best.empty:
            raise ValueError(f"report has no run of {variant!r} at the chosen factor {factor:g}")
        rows.append(at_best.assign(factors_tried=[best["factors_tried"].iloc[0]] * len(at_best)))
    return pd.concat(rows, ignore_index=True)


def _factor_label(factor: float) -> str:
    """2.0 -> "× 2", 0.25 -> "× 1/4"."""
    if factor >= 1:
        return f"× {factor:g}"
    return f"× 1/{1 / factor:g}"


def fair_summary(best: pd.DataFrame, budget: int,
                 paper: Mapping[str, str] = TABLE3_ROWS) -> pd.DataFrame:
    """One row per variant of the runs at each variant's best rate (:func:`chosen_rates` or
    :func:`best_rates`), in their order, for the page.

    Returns:
        columns "variant", "best rate" (its factor on the baseline's, "× 1/2", with ", edge"
        where that is the highest or lowest factor tried), "steps to 100%" (median and
        range over the seeds, "> budget" for runs that never got there), "test sequences right
        (%)" (median and range) and "the paper's Table 3 (PPL, BLEU)" as in
        :func:`ablation_summary`.
    """
    rows = []
    for variant, group in best.groupby("variant", sort=False):
        factor, tried = group["lr_factor"].iloc[0], group["factors_tried"].iloc[0]
        edge = ", edge" if factor in (tried[0], tried[-1]) else ""
        steps = sorted(group["first_step_at_target"].fillna(math.inf).tolist())
        row = TABLE3[paper[variant]] if variant in paper else None
        rows.append({
            "variant": variant,
            "best rate": f"{_factor_label(factor)}{edge}",
            "steps to 100%": _steps_range(steps, budget),
            "test sequences right (%)": _median_range((100 * group["sequence_accuracy"]).tolist()),
            "the paper's Table 3 (PPL, BLEU)":
                "" if row is None else f"{_label(row)}: {row.perplexity:.2f}, {row.bleu:.1f}",
        })
    return pd.DataFrame(rows)


def _steps_range(steps: list[float], budget: int) -> str:
    """Median and range of step counts, infinity written "> budget": "110 (100 to 130)"."""
    def text(value: float) -> str:
        return f"> {budget}" if math.isinf(value) else f"{value:g}"

    low, mid, high = min(steps), statistics.median(steps), max(steps)
    return text(mid) if low == high else f"{text(mid)} ({text(low)} to {text(high)})"


def sweep_table(sweep: pd.DataFrame, budget: int) -> pd.DataFrame:
    """The whole sweep, one row per variant and one column per factor: the median steps to
    every validation sequence right over the seeds ("> budget": not within the budget for at
    least half of them; "": not tried)."""
    factors = sorted(sweep["lr_factor"].unique())
    rows = []
    for variant, group in sweep.groupby("variant", sort=False):
        row = {"variant": variant}
        for factor in factors:
            runs = group[group["lr_factor"] == factor]
            if runs.empty:
                row[_factor_label(factor)] = ""
                continue
            median = statistics.median(runs["first_step_at_target"].fillna(math.inf).tolist())
            row[_factor_label(factor)] = f"> {budget}" if math.isinf(median) else f"{median:g}"
        rows.append(row)
    return pd.DataFrame(rows)


def ablation_summary(runs: pd.DataFrame, budget: int,
                     paper: Mapping[str, str] = TABLE3_ROWS) -> pd.DataFrame:
    """One row per variant of :func:`run_ablations`' runs, in their order, for the page.

    Args:
        runs: the runs (at least the columns variant, seed, first_step_at_target and
            sequence_accuracy). budget: the runs' budget of steps, named where one was not
            enough. paper: variant name -> key of ``paper.TABLE3`` ("" where it has none).

    Returns:
        columns "variant", "steps to 100% (seed 0, 1, ...)" (steps per seed, "> budget" for a
        run that never got there), "median steps", "test sequences right (%)" (median and range
        over the seeds) and "the paper's Table 3 (PPL, BLEU)".
    """
    seeds = sorted(runs["seed"].unique().tolist())
    rows = []
    for variant, group in runs.groupby("variant", sort=False):
        by_seed = group.set_index("seed")
        steps = [by_seed.loc[s, "first_step_at_target"] for s in seeds]
        reached = [math.inf if math.isnan(s) else s for s in steps]
        median = statistics.median(reached)
        accuracy = 100 * by_seed["sequence_accuracy"]
        row = TABLE3[paper[variant]] if variant in paper else None
        rows.append({
            "variant": variant,
            f"steps to 100% (seed {', '.join(map(str, seeds))})":
                ", ".join(f"> {budget}" if math.isinf(s) else str(int(s)) for s in reached),
            "median steps": f"> {budget}" if math.isinf(median) else f"{median:g}",
            "test sequences right (%)": _median_range(accuracy.tolist()),
            "the paper's Table 3 (PPL, BLEU)":
                "" if row is None else f"{_label(row)}: {row.perplexity:.2f}, {row.bleu:.1f}",
        })
    return pd.DataFrame(rows)


def _label(row: Table3Row) -> str:
    """A Table 3 row as the page names it: "base", or "(D) P_drop = 0.0"."""
    return row.row if row.changes == "none" else f"{row.row} {row.changes}"


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
