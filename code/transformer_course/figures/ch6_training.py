"""Figures for the training chapter: schedule, label smoothing, masks, curves, attention maps."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from transformer_course.core.batching import Batch
from transformer_course.core.checks import check_array, check_instance, check_positive_int
from transformer_course.core.loss import smoothed_targets
from transformer_course.core.training import TrainConfig, TrainResult


def plot_lr_schedules(d_model: int, warmups: Sequence[int], steps: int,
                      scale: float = 1.0) -> Figure:
    """The paper's learning rate against the step, one curve per warm-up length."""
    check_positive_int("steps", steps)
    if not warmups:
        raise ValueError("warmups must hold at least one warm-up length")
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    x = np.arange(1, steps + 1)
    for warmup in warmups:
        config = TrainConfig(warmup=warmup, lr_scale=scale)
        ax.plot(x, [config.learning_rate(int(s), d_model) for s in x],
                label=f"warmup = {warmup}")
        ax.plot([warmup], [config.learning_rate(warmup, d_model)], "o", color="0.2", ms=3)
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.set_title(f"d_model = {d_model}" + (f", scale {scale:g}" if scale != 1 else ""))
    ax.legend()
    return fig


def plot_label_smoothing_targets(vocab_size: int, label: int, epsilons: Sequence[float],
                            names: Sequence[str] | None = None) -> Figure:
    """Bar charts of the target distribution q for one label, one panel per epsilon."""
    check_positive_int("vocab_size", vocab_size)
    if not epsilons:
        raise ValueError("epsilons must hold at least one value")
    if names is not None and len(names) != vocab_size:
        raise ValueError(f"names must have vocab_size={vocab_size} entries; got {len(names)}")
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
    check_instance("result", result, TrainResult)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(7.6, 3.2))
    steps = np.arange(1, result.steps + 1)
    ax_loss.plot(steps, result.losses, lw=1)
    if floor is not None:
        ax_loss.axhline(floor, color="0.3", ls="--", lw=1, label="smallest possible")
        ax_loss.legend()
    ax_loss.set_xlabel("step")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_yscale("log")
    checks = [e.step for e in result.evaluations]
    ax_acc.plot(checks, [e.metrics.token_accuracy for e in result.evaluations], "o-", ms=3,
                label="token")
    ax_acc.plot(checks, [e.metrics.sequence_accuracy for e in result.evaluations], "s-", ms=3,
                label="whole sequence")
    ax_acc.set_ylim(-0.03, 1.03)
    ax_acc.set_xlabel("step")
    ax_acc.set_ylabel("held-out accuracy")
    ax_acc.legend(loc="lower right")
    if title:
        fig.suptitle(title)
    return fig


def plot_batch_masks(batch: Batch, index: int = 0) -> Figure:
    """The source padding mask and the target causal-and-padding mask of one batch row."""
    check_instance("batch", batch, Batch)
    if not 0 <= index < len(batch):
        raise ValueError(f"index must lie in [0, {len(batch)}); got {index}")
    src = batch.src_mask[index]  # (1, S)
    tgt = batch.tgt_mask[index]  # (T, T)
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.0, 3.2),
                               gridspec_kw={"width_ratios": [src.shape[-1], tgt.shape[-1]]})
    for ax, mask, title in ((a, src, "source mask (1, S)"), (b, tgt, "target mask (T, T)")):
        ax.imshow(mask.numpy(), cmap="Greys", vmin=0, vmax=1.4, aspect="equal")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("key position")
        ax.grid(False)
    a.set_yticks([])
    b.set_ylabel("query position")
    return fig


def plot_attention_heads(weights: torch.Tensor, query_labels: Sequence[str],
                    key_labels: Sequence[str], title: str = "") -> Figure:
    """Heatmaps of one example's attention weights, one panel per head.

    Args:
        weights: (h, T_q, T_k) attention weights of one example.
        query_labels: T_q tick labels (rows). key_labels: T_k tick labels (columns).
    """
    check_array("weights", weights, kind=torch.Tensor, ndim=3, shape="(h, T_q, T_k)",
                floating=True)
    h, T_q, T_k = weights.shape
    if len(query_labels) != T_q or len(key_labels) != T_k:
        raise ValueError(f"query_labels and key_labels must have {T_q} and {T_k} entries; got "
                         f"{len(query_labels)} and {len(key_labels)}")
    fig, axes = plt.subplots(1, h, figsize=(2.9 * h + 0.6, 3.2), squeeze=False,
                             layout="constrained")
    for i, ax in enumerate(axes[0]):
        image = ax.imshow(weights[i].numpy(), cmap="viridis", vmin=0, vmax=1)
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
