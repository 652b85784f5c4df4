"""Figures for the multi-head attention chapter. Each function returns a Figure; none shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .style import ATTENTION_CMAP, SIGNED_CMAP, colours


def plot_split_heads(q: np.ndarray, num_heads: int) -> Figure:
    """One sequence's projected queries (T, d_model), then the same numbers as h (T, d_k) blocks.

    Args:
        q: (T, d_model) projected queries of one sequence. num_heads: h, which must divide d_model.
    """
    T, d_model = q.shape
    d_k = d_model // num_heads
    limit = float(np.abs(q).max()) or 1.0
    fig, axes = plt.subplots(1, num_heads + 1, figsize=(2.2 + 1.3 * (num_heads + 1), 2.8),
                             width_ratios=[num_heads] + [1] * num_heads)
    style = dict(cmap=SIGNED_CMAP, vmin=-limit, vmax=limit, aspect="auto")
    axes[0].imshow(q, **style)
    for i in range(1, num_heads):
        axes[0].axvline(i * d_k - 0.5, color="black", lw=1.5)
    axes[0].set(title=f"$Q = XW^Q$  ({T} x {d_model})", xlabel="feature", ylabel="position t")
    for i, ax in enumerate(axes[1:]):
        ax.imshow(q[:, i * d_k:(i + 1) * d_k], **style)
        ax.set(title=f"head {i + 1}  ({T} x {d_k})", xlabel="feature", yticks=[])
    for ax in axes:
        ax.grid(False)
    return fig


def plot_head_maps(rows: Mapping[str, np.ndarray], labels: Sequence[str], anchor: int) -> Figure:
    """Each head's attention map on one sequence, one row of panels per model.

    Args:
        rows: row title -> (h, T, T) weights of the same sequence; h may differ between rows.
        labels: T token labels. anchor: the marked position (outlined in red); the
            previous-token cells (t, t - 1) are dotted.
    """
    T = len(labels)
    h_max = max(maps.shape[0] for maps in rows.values())
    fig, axes = plt.subplots(len(rows), h_max, figsize=(3.0 * h_max + 0.8, 3.0 * len(rows)),
                             squeeze=False, layout="constrained")
    for r, (title, maps) in enumerate(rows.items()):
        for i in range(h_max):
            ax = axes[r, i]
            if i >= maps.shape[0]:
                ax.axis("off")
                continue
            image = ax.imshow(maps[i], cmap=ATTENTION_CMAP, vmin=0.0, vmax=1.0)
            # white dots, outlined so that they show on the bright cells too
            ax.scatter(np.arange(T - 1), np.arange(1, T), s=9, color="white", marker="o",
                       edgecolors="black", linewidths=0.4)
            ax.add_patch(Rectangle((anchor - 0.5, -0.5), 1, T, fill=False, ec="tab:red", lw=1.5))
            ax.set_title(f"{title}: head {i + 1}", fontsize=9)
            ax.set_xticks(range(T), labels, fontsize=7, rotation=90)
            ax.set_yticks(range(T), labels, fontsize=7)
            ax.set_xlabel("key (attended to)", fontsize=8)
            ax.set_ylabel("query", fontsize=8)
            ax.grid(False)
    fig.colorbar(image, ax=axes, shrink=0.5, label="attention weight")
    return fig


def plot_lookup_training(runs: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                          window: int = 25) -> Figure:
    """Training loss (log scale) and batch accuracy per step, one line per run.

    Args:
        runs: label -> (losses, accuracies), one value per training step.
        window: the lines are moving averages over this many steps.
    """
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.0))
    kernel = np.ones(window) / window
    palette = colours(runs)
    for label, (losses, accuracies) in runs.items():
        losses, accuracies = np.asarray(losses, dtype=float), np.asarray(accuracies, dtype=float)
        steps = np.arange(window, losses.size + 1)
        style = {"lw": 1.8, "color": palette[label], "label": label}
        axes[0].plot(steps, np.convolve(losses, kernel, mode="valid"), **style)
        axes[1].plot(steps, np.convolve(accuracies, kernel, mode="valid"), **style)
    axes[0].set(xlabel="training step", ylabel="cross-entropy loss", yscale="log")
    axes[1].set(xlabel="training step", ylabel="batch accuracy", ylim=(0, 1.02))
    axes[1].legend(loc="lower right", fontsize=8, title=f"mean of {window} steps",
                   title_fontsize=8)
    return fig


def plot_multihead_flow(num_heads: int = 2) -> Figure:
    """Multi-head attention as a diagram: project, split into heads, attend, concatenate, project.
    Up to 8 heads are drawn legibly.

    Each head's slice of the features has its own colour, from the projections to the concatenation.
    """
    colours = plt.get_cmap("tab10").colors
    fig, ax = plt.subplots(figsize=(9.0, 3.6))
    ax.set(xlim=(0, 10.4), ylim=(-0.2, 4.2))
    ax.axis("off")

    def bar(x, y, width, label, split=True, note=""):
        pieces = num_heads if split else 1
        for i in range(pieces):
            ax.add_patch(Rectangle((x + i * width / pieces, y), width / pieces, 0.42,
                                   facecolor=colours[i] if split else "0.9", edgecolor="0.2",
                                   lw=0.8, alpha=0.8 if split else 1.0))
        ax.text(x + width / 2, y + 0.62, label, ha="center", fontsize=8.5)
        if note:
            ax.text(x + width / 2, y - 0.22, note, ha="center", fontsize=7, color="0.35")

    def arrow(x0, y0, x1, y1, colour="0.4"):
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 0.9})

    bar(0.1, 1.8, 1.3, "$X$", split=False, note="(B, T, d_model)")
    for row, name in enumerate(("V", "K", "Q")):
        y = 0.6 + 1.2 * row
        bar(2.2, y, 1.5, f"${name} = XW^{name}$", note="(B, T, d_model)")
        arrow(1.45, 2.0, 2.15, y + 0.21)
    step = 3.6 / num_heads
    for i in range(num_heads):
        y = 3.5 - (i + 0.5) * step
        ax.add_patch(Rectangle((4.5, y), 2.3, 0.42, facecolor=colours[i], edgecolor="0.2",
                               lw=0.8, alpha=0.8))
        ax.text(5.65, y + 0.21, f"Attention$(Q_{i + 1}, K_{i + 1}, V_{i + 1})$", ha="center",
                va="center", fontsize=8)
        for row in range(3):  # each head reads its own slice of Q, K and V
            arrow(3.75, 0.81 + 1.2 * row, 4.45, y + 0.21, colours[i])
        arrow(6.85, y + 0.21, 7.25, 2.0)
    ax.text(5.65, 3.75, "h heads, each (B, T, d_k): split, attend", ha="center", fontsize=7.5,
            color="0.35")
    bar(7.3, 1.8, 1.3, "concatenate", note="(B, T, h · d_v)")
    arrow(8.65, 2.0, 9.05, 2.0)
    bar(9.1, 1.8, 1.2, "$\\cdot\\, W^O$", split=False, note="(B, T, d_model)")
    return fig
