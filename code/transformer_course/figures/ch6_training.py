"""Figures for the training chapter: schedule, label smoothing, masks, curves, attention maps,
accuracy against length, and the first steps with and without warm-up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from transformer_course.core.batching import Batch
from transformer_course.core.loss import smoothed_targets
from transformer_course.core.training import TrainConfig, TrainResult

from .style import ATTENTION_CMAP, MASK_CMAP, colour, colours


def plot_lr_schedules(d_model: int, warmups: Sequence[int], steps: int,
                      scale: float = 1.0) -> Figure:
    """The paper's learning rate against the step, one curve per warm-up length."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    x = np.arange(1, steps + 1)
    palette = colours(f"warmup = {warmup}" for warmup in warmups)
    for warmup in warmups:
        config = TrainConfig(warmup=warmup, lr_scale=scale)
        ax.plot(x, [config.learning_rate(int(s), d_model) for s in x],
                color=palette[f"warmup = {warmup}"], label=f"warmup = {warmup}")
        ax.plot([warmup], [config.learning_rate(warmup, d_model)], "o", color="0.2", ms=3)
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.set_title(f"d_model = {d_model}" + (f", scale {scale:g}" if scale != 1 else ""))
    ax.legend()
    return fig


def plot_label_smoothing_targets(vocab_size: int, label: int, epsilons: Sequence[float],
                            names: Sequence[str] | None = None) -> Figure:
    """Bar charts of the target distribution q for one label, one panel per epsilon."""
    fig, axes = plt.subplots(1, len(epsilons), figsize=(3.3 * len(epsilons), 3.0), sharey=True,
                             squeeze=False)
    for ax, eps in zip(axes[0], epsilons, strict=True):
        q = smoothed_targets(torch.tensor([label]), vocab_size, eps)[0].numpy()
        colors = ["C1" if k == label else "C0" for k in range(vocab_size)]
        ax.bar(np.arange(vocab_size), q, color=colors)
        ax.set_title(f"eps = {eps:g}")
        labels = list(names) if names is not None else [str(k) for k in range(vocab_size)]
        ax.set_xticks(np.arange(vocab_size), labels, rotation=90, fontsize=7)
        ax.set_yscale("log")
    axes[0, 0].set_ylabel("target probability q(k)")
    return fig


def plot_training_curves(result: TrainResult, floor: float | None = None,
                    title: str = "") -> Figure:
    """Training loss per step (left) and held-out accuracies at each check (right)."""
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(7.6, 3.2))
    steps = np.arange(1, result.steps + 1)
    ax_loss.plot(steps, result.losses, lw=1, color=colour("training"))
    if floor is not None:
        ax_loss.axhline(floor, color="0.3", ls="--", lw=1, label="smallest possible")
        ax_loss.legend()
    ax_loss.set_xlabel("step")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_yscale("log")
    checks = [e.step for e in result.evaluations]
    ax_acc.plot(checks, [e.metrics.token_accuracy for e in result.evaluations], "o-", ms=3,
                color=colour("token"), label="token")
    ax_acc.plot(checks, [e.metrics.sequence_accuracy for e in result.evaluations], "s-", ms=3,
                color=colour("whole sequence"), label="whole sequence")
    ax_acc.set_ylim(-0.03, 1.03)
    ax_acc.set_xlabel("step")
    ax_acc.set_ylabel("held-out accuracy")
    ax_acc.legend(loc="lower right")
    if title:
        fig.suptitle(title)
    return fig


def plot_batch_masks(batch: Batch, index: int = 0, src_labels: Sequence[str] = (),
                     tgt_labels: Sequence[str] = ()) -> Figure:
    """The source padding mask and the target causal-and-padding mask of one batch row, their
    axes labelled with the row's tokens where given (``src_labels``: S source tokens,
    ``tgt_labels``: T decoder-input tokens)."""
    src = batch.src_mask[index]  # (1, S)
    tgt = batch.tgt_mask[index]  # (T, T)
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.4, 3.8),
                               gridspec_kw={"width_ratios": [src.shape[-1], tgt.shape[-1]]},
                               layout="constrained")
    for ax, mask, title in ((a, src, "source mask (1, S)"), (b, tgt, "target mask (T, T)")):
        ax.imshow(mask.numpy(), cmap=MASK_CMAP, vmin=0, vmax=1.4, aspect="equal")
        ax.set_title(title, fontsize=9)
        ax.grid(False)
    a.set_xlabel("key (source token)")
    b.set_xlabel("key (decoder input)")
    b.set_ylabel("query (decoder input)")
    a.set_yticks([0], ["every query"], fontsize=7)
    if src_labels:
        a.set_xticks(range(len(src_labels)), src_labels, fontsize=7, rotation=90)
    if tgt_labels:
        b.set_xticks(range(len(tgt_labels)), tgt_labels, fontsize=7, rotation=90)
        b.set_yticks(range(len(tgt_labels)), tgt_labels, fontsize=7)
    return fig


def plot_attention_heads(weights: torch.Tensor, query_labels: Sequence[str],
                    key_labels: Sequence[str], title: str = "") -> Figure:
    """Heatmaps of one example's attention weights, one panel per head.

    Args:
        weights: (h, T_q, T_k) attention weights of one example.
        query_labels: T_q tick labels (rows). key_labels: T_k tick labels (columns).
    """
    h, T_q, T_k = weights.shape
    fig, axes = plt.subplots(1, h, figsize=(2.9 * h + 0.6, 3.2), squeeze=False,
                             layout="constrained")
    for i, ax in enumerate(axes[0]):
        image = ax.imshow(weights[i].numpy(), cmap=ATTENTION_CMAP, vmin=0, vmax=1)
        ax.set_title(f"head {i + 1}", fontsize=9)
        ax.set_xticks(range(T_k), key_labels, fontsize=7, rotation=90)
        ax.set_yticks(range(T_q), query_labels if i == 0 else [], fontsize=7)
        ax.grid(False)
        ax.set_xlabel("source (key)")
    axes[0, 0].set_ylabel("output position (query)")
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="weight")
    if title:
        fig.suptitle(title)
    return fig


def plot_length_generalisation(by_length: Sequence[pd.DataFrame],
                               by_position: Sequence[np.ndarray], trained_max_len: int,
                               chance: float) -> Figure:
    """Left: whole-sequence accuracy against length. Right: accuracy at each output position of
    sequences longer than any trained on. One line per model (e.g. per seed).

    Args:
        by_length: one ``experiments.ch6_training.generalisation.accuracy_by_length`` table
            per model.
        by_position: one (L,) array per model, the accuracy at output positions 1 .. L.
        trained_max_len: the longest length trained on (shaded up to it). chance: 1 / symbols.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.6, 3.1), sharey=True)
    palette = colours(f"seed {index}" for index in range(len(by_length)))
    for index, (table, accuracy) in enumerate(zip(by_length, by_position, strict=True)):
        seed = f"seed {index}"
        style = {"color": palette[seed], "ms": 3, "lw": 1.2, "label": seed}
        left.plot(table["length"], table["sequence accuracy"], "o-", **style)
        right.plot(np.arange(1, len(accuracy) + 1), accuracy, "o-", **style)
    for ax, xlabel in ((left, "sequence length"), (right, "output position")):
        ax.axvspan(0.5, trained_max_len + 0.5, color="0.9", zorder=0)
        ax.set_xlim(left=0.5)
        ax.set_xlabel(f"{xlabel} (shaded: trained)")
    right.axhline(chance, color="0.4", ls=":", lw=1, label="chance")
    left.set_title("whole sequences right", fontsize=10)
    right.set_title("symbols right, longer sequences", fontsize=10)
    left.set_ylabel("test accuracy")
    left.set_ylim(-0.03, 1.03)
    right.legend(loc="upper right", fontsize="small")
    return fig


def plot_warmup_losses(curves: Mapping[str, Sequence[Sequence[float]]], steps: int) -> Figure:
    """Training loss over the first ``steps`` steps: per setting, the median over runs (line)
    and their range (band).

    Args:
        curves: setting name -> one loss sequence per run (seeds); runs may be shorter than
            ``steps`` (stopped early), the band then covers the runs still going.
        steps: how many steps to draw.
    """
    fig, ax = plt.subplots(figsize=(6.8, 3.4))
    styles = ("-", "--", "-", "--")
    # One colour per peak ("recipe's peak, warm-up" and "recipe's peak, no warm-up" share
    # "recipe's peak"'s); names without that form are paired in order, as the settings are.
    peaks = [name.split(",")[0] if "," in name else f"pair {index // 2}"
             for index, name in enumerate(curves)]
    palette = colours(peaks)
    for index, (name, runs) in enumerate(curves.items()):
        width = min(steps, max(len(run) for run in runs))
        table = np.full((len(runs), width), np.nan)
        for row, run in enumerate(runs):
            values = np.asarray(run[:width], dtype=float)
            table[row, : len(values)] = values
        x = np.arange(1, width + 1)
        color = palette[peaks[index]]
        ax.plot(x, np.nanmedian(table, axis=0), ls=styles[index % 4], color=color, lw=1.5,
                label=name)
        ax.fill_between(x, np.nanmin(table, axis=0), np.nanmax(table, axis=0), color=color,
                        alpha=0.15, lw=0)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    return fig
