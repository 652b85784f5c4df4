"""Figures of chapter 1, "Why attention": one function per figure, each returns a Figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from transformer_course.core.checks import check_instance, check_positive_int
from transformer_course.experiments.ch1_why_attention.recurrence import GradientDecay

HIGHLIGHT = "C3"  # the path from the first input to the last output
FAINT = "0.75"


def _arrow(ax, start, end, *, color=FAINT, width=1.0, z=1) -> None:
    ax.annotate("", xy=end, xytext=start, zorder=z,
                arrowprops={"arrowstyle": "-|>", "color": color, "lw": width,
                            "shrinkA": 9, "shrinkB": 9, "mutation_scale": 9})


def _nodes(ax, xs, y, labels, *, marker, color="white") -> None:
    ax.scatter(xs, np.full(len(xs), y), s=520, marker=marker, facecolor=color,
               edgecolor="0.2", zorder=3)
    for x, label in zip(xs, labels, strict=True):
        ax.text(x, y, label, ha="center", va="center", fontsize=10, zorder=4)


def plot_information_flow(n: int = 6) -> Figure:
    """What reaches what: a recurrent chain beside all-to-all self-attention, n positions each."""
    check_positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be at least 2 to draw a path between positions; got {n}")
    fig, (rnn_ax, att_ax) = plt.subplots(1, 2, figsize=(8.0, 3.3))
    xs = np.arange(n, dtype=float)
    inputs = [f"$x_{{{i + 1}}}$" for i in range(n)]
    for ax in (rnn_ax, att_ax):
        ax.set_xlim(-0.7, n - 0.3)
        ax.set_ylim(-0.25, 1.5)
        ax.axis("off")

    for i in range(n):  # recurrent: x_i -> h_i and h_{i-1} -> h_i
        _arrow(rnn_ax, (xs[i], 0), (xs[i], 1), color=HIGHLIGHT if i == 0 else FAINT,
               width=2 if i == 0 else 1)
        if i:
            _arrow(rnn_ax, (xs[i - 1], 1), (xs[i], 1), color=HIGHLIGHT, width=2)
    _nodes(rnn_ax, xs, 0, inputs, marker="o")
    _nodes(rnn_ax, xs, 1, [f"$h_{{{i + 1}}}$" for i in range(n)], marker="s", color="0.92")
    rnn_ax.text((n - 1) / 2, 1.38, f"$x_1$ reaches $h_{{{n}}}$ through {n - 1} steps, "
                f"each through the same fixed-size state", ha="center", fontsize=8.5,
                color=HIGHLIGHT)
    rnn_ax.set_title("Recurrent layer: a chain of n - 1 steps", fontsize=11)

    for i in range(n):  # attention: every input feeds every output
        for j in range(n):
            if (i, j) != (n - 1, 0):
                _arrow(att_ax, (xs[j], 0), (xs[i], 1), width=0.6)
    _arrow(att_ax, (xs[0], 0), (xs[n - 1], 1), color=HIGHLIGHT, width=2, z=2)
    _nodes(att_ax, xs, 0, inputs, marker="o")
    _nodes(att_ax, xs, 1, [f"$y_{{{i + 1}}}$" for i in range(n)], marker="o", color="0.92")
    att_ax.text((n - 1) / 2, 1.38, f"$x_1$ reaches $y_{{{n}}}$ in one step; so does every pair",
                ha="center", fontsize=8.5, color=HIGHLIGHT)
    att_ax.set_title("Self-attention layer: every pair in one step", fontsize=11)
    return fig


def _check_frame(name: str, df: object, columns: set[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame; got {type(df).__name__}")
    missing = columns - set(df.columns)
    if missing or df.empty:
        raise ValueError(f"{name} must be a non-empty DataFrame with columns {sorted(columns)}; "
                         f"missing {sorted(missing)}")


def plot_forward_times(times: pd.DataFrame) -> Figure:
    """Median forward time against sequence length, one line per layer, min-max as a band.

    Args:
        times: the DataFrame of ``complexity.time_forward_by_length``.
    """
    _check_frame("times", times, {"length", "layer", "median_s", "min_s", "max_s"})
    fig, ax = plt.subplots()
    for name, rows in times.groupby("layer", sort=False):
        rows = rows.sort_values("length")
        line, = ax.plot(rows["length"], rows["median_s"] * 1e3, marker="o", label=name)
        ax.fill_between(rows["length"], rows["min_s"] * 1e3, rows["max_s"] * 1e3,
                        color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length n (positions)")
    ax.set_ylabel("forward time (ms, median)")
    ax.set_title("One layer's forward pass on this CPU")
    ax.legend(fontsize=8)
    return fig


def plot_gradient_decay(result: GradientDecay) -> Figure:
    """Gradient norm reaching an input against its distance from the last position (log scale).

    Lines are geometric means over seeds; bands span the smallest to the largest seed.
    """
    check_instance("result", result, GradientDecay)
    fig, ax = plt.subplots()
    for name, norms in (("recurrent (ElmanRNN)", result.recurrent),
                        ("self-attention (MultiHeadAttention)", result.attention)):
        mean = np.exp(np.log(norms).mean(axis=0))
        line, = ax.plot(result.distances, mean, label=name)
        ax.fill_between(result.distances, norms.min(axis=0), norms.max(axis=0),
                        color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_yscale("log")
    ax.set_xlabel("distance from the last position (positions)")
    ax.set_ylabel(r"$\|\partial y_{\mathrm{last}} / \partial x_t\|_F$")
    ax.set_title(f"Gradient reaching an earlier input ({result.recurrent.shape[0]} seeds)")
    ax.legend(fontsize=8)
    return fig


def plot_flops_by_length(flops: pd.DataFrame, d: int) -> Figure:
    """Counted FLOPs of one layer against sequence length (log-log), with the line n = d.

    Args:
        flops: the DataFrame of ``complexity.flops_by_length``.
        d: the width the FLOPs were counted at.
    """
    _check_frame("flops", flops, {"length", "layer", "flops"})
    check_positive_int("d", d)
    fig, ax = plt.subplots()
    for name, rows in flops.groupby("layer", sort=False):
        rows = rows.sort_values("length")
        ax.plot(rows["length"], rows["flops"], marker="o", markersize=3, label=name)
    ax.axvline(d, color="0.4", linestyle="--", linewidth=1)
    ax.text(d, ax.get_ylim()[1], f" n = d = {d}", va="top", fontsize=8, color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length n (positions)")
    ax.set_ylabel("FLOPs per layer (counted)")
    ax.set_title(f"Counted FLOPs of one layer, d = {d}")
    ax.legend(fontsize=8)
    return fig
