"""Figures for the multi-head attention chapter. Each function returns a Figure; none shows it."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..checks import check_array, check_positive_int


def split_heads_figure(q: np.ndarray, num_heads: int) -> Figure:
    """One sequence's projected queries (T, d_model), then the same numbers as h (T, d_k) blocks.

    Args:
        q: (T, d_model) projected queries of one sequence. num_heads: h, which must divide d_model.
    """
    check_array("q", q, kind=np.ndarray, ndim=2, shape="(T, d_model)", floating=True)
    check_positive_int("num_heads", num_heads)
    T, d_model = q.shape
    if d_model % num_heads:
        raise ValueError(f"q's d_model must be divisible by num_heads={num_heads}; "
                         f"got shape {q.shape}")
    d_k = d_model // num_heads
    limit = float(np.abs(q).max()) or 1.0
    fig, axes = plt.subplots(1, num_heads + 1, figsize=(2.2 + 1.3 * (num_heads + 1), 2.8),
                             width_ratios=[num_heads] + [1] * num_heads)
    style = dict(cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    axes[0].imshow(q, **style)
    for i in range(1, num_heads):
        axes[0].axvline(i * d_k - 0.5, color="black", lw=1.5)
    axes[0].set(title=f"Q = X W^Q  ({T} x {d_model})", xlabel="feature", ylabel="position t")
    for i, ax in enumerate(axes[1:]):
        ax.imshow(q[:, i * d_k:(i + 1) * d_k], **style)
        ax.set(title=f"head {i + 1}  ({T} x {d_k})", xlabel="feature", yticks=[])
    for ax in axes:
        ax.grid(False)
    return fig


def head_maps_figure(untrained: np.ndarray, trained: np.ndarray, labels: Sequence[str],
                     anchor: int) -> Figure:
    """Each head's attention map on one sequence, before and after training.

    Args:
        untrained, trained: (h, T, T) weights of the same sequence. labels: T token labels.
        anchor: the marked position (outlined); the previous-token cells are dotted.
    """
    check_array("untrained", untrained, kind=np.ndarray, ndim=3, shape="(h, T, T)", floating=True)
    check_array("trained", trained, kind=np.ndarray, ndim=3, shape="(h, T, T)", floating=True)
    if untrained.shape != trained.shape or trained.shape[1] != trained.shape[2]:
        raise ValueError(f"untrained and trained must share one shape (h, T, T); got "
                         f"{untrained.shape} and {trained.shape}")
    h, T, _ = trained.shape
    if len(labels) != T:
        raise ValueError(f"labels must hold T={T} strings; got {len(labels)}")
    if isinstance(anchor, bool) or not isinstance(anchor, int | np.integer) or not 0 <= anchor < T:
        raise ValueError(f"anchor must be a position in [0, {T - 1}]; got {anchor!r}")
    fig, axes = plt.subplots(2, h, figsize=(3.1 * h + 0.6, 6.0), squeeze=False,
                             layout="constrained")
    for row, (name, maps) in enumerate((("untrained", untrained), ("trained", trained))):
        for i in range(h):
            ax = axes[row, i]
            image = ax.imshow(maps[i], cmap="viridis", vmin=0.0, vmax=1.0)
            ax.scatter(np.arange(T - 1), np.arange(1, T), s=6, color="white", marker=".")
            ax.add_patch(Rectangle((anchor - 0.5, -0.5), 1, T, fill=False, ec="tab:red", lw=1.5))
            ax.set(title=f"head {i + 1}, {name}", xticks=range(T), yticks=range(T))
            ax.set_xticklabels(labels, fontsize=7, rotation=90)
            ax.set_yticklabels(labels, fontsize=7)
            ax.set_xlabel("key (attended to)", fontsize=8)
            ax.set_ylabel("query", fontsize=8)
            ax.grid(False)
    fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    return fig


def training_curve_figure(losses: Sequence[float], accuracies: Sequence[float],
                          window: int = 25) -> Figure:
    """Training loss and batch accuracy per step, with a moving average over ``window`` steps."""
    check_positive_int("window", window)
    losses, accuracies = np.asarray(losses, dtype=float), np.asarray(accuracies, dtype=float)
    if losses.ndim != 1 or losses.shape != accuracies.shape or losses.size < window:
        raise ValueError(f"losses and accuracies must be 1-D, of one length, at least window="
                         f"{window}; got shapes {losses.shape} and {accuracies.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.0))
    kernel = np.ones(window) / window
    steps = np.arange(1, losses.size + 1)
    for ax, values, name in ((axes[0], losses, "cross-entropy loss"),
                             (axes[1], accuracies, "batch accuracy")):
        ax.plot(steps, values, color="0.75", lw=0.8, label="per step")
        ax.plot(steps[window - 1:], np.convolve(values, kernel, mode="valid"), lw=1.8,
                label=f"mean of {window} steps")
        ax.set(xlabel="training step", ylabel=name)
    axes[1].set_ylim(0, 1.02)
    axes[1].legend(loc="lower right", fontsize=8)
    return fig
