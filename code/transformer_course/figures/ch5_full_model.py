"""Figures for the full-model chapter: norms through depth (the map is in figures.architecture)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .architecture import plot_architecture  # noqa: F401  (chapter 5 draws it from here)


def plot_depth_profile(table: pd.DataFrame, value: str, ylabel: str) -> Figure:
    """One line per (stack, norm) in ``table`` of ``value`` against layer index.

    Args:
        table: columns "stack" ("encoder"/"decoder"), "norm" ("post-norm"/"pre-norm"),
            "layer" (1..N) and ``value``.
        value: the column to plot. ylabel: its axis label.
    """
    stacks = list(dict.fromkeys(table["stack"]))
    fig, axes = plt.subplots(1, len(stacks), figsize=(7.6, 3.2), sharey=True, squeeze=False)
    for ax, stack in zip(axes[0], stacks, strict=True):
        for i, (norm, part) in enumerate(table[table["stack"] == stack].groupby("norm", sort=True)):
            ax.plot(part["layer"], part[value], marker="o", ms=3, color=f"C{i}", label=norm)
        ax.set_title(stack)
        ax.set_xlabel("layer")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(frameon=False, fontsize=8)
    return fig


def plot_residual_gradients(table: pd.DataFrame) -> Figure:
    """Gradient norm against layer, with and without residual connections, one panel per norm.

    Args:
        table: columns "norm", "residual" ("with"/"without"), "layer" and "gradient norm", as
            returned (concatenated) by ``residual_path.residual_gradients``.
    """
    norms = list(dict.fromkeys(table["norm"]))
    fig, axes = plt.subplots(1, len(norms), figsize=(7.6, 3.0), sharey=True, squeeze=False)
    for ax, norm in zip(axes[0], norms, strict=True):
        part = table[table["norm"] == norm]
        for i, residual in enumerate(("with", "without")):
            rows = part[part["residual"] == residual]
            ax.plot(rows["layer"], rows["gradient norm"], marker="o", ms=3, color=f"C{i}",
                    label=f"{residual} residual")
        ax.set_title(norm)
        ax.set_xlabel("layer (1 = nearest the input)")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0][0].set_ylabel("parameter gradient norm")
    axes[0][-1].legend(frameon=False, fontsize=8)
    return fig


def plot_layer_norm(before: pd.Series, after: pd.Series) -> Figure:
    """One position's features before and after LayerNorm, as bars, with mean and ±1 std.

    Args:
        before, after: the d_model features of one position's vector, before and after.
    """
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 2.8), sharey=True)
    for ax, values, title in ((axes[0], before, "before LayerNorm"),
                              (axes[1], after, "after LayerNorm")):
        mean, std = round(float(values.mean()), 6) + 0.0, float(values.std(ddof=0))  # no "-0.00"
        ax.bar(range(len(values)), values, color="C0", width=0.8)
        ax.axhline(mean, color="C3", lw=1.2, label="mean")
        for sign in (-1, 1):
            ax.axhline(mean + sign * std, color="C3", lw=0.8, ls="--",
                       label="mean ± std" if sign > 0 else None)
        ax.set_title(f"{title}: mean {mean:.2f}, std {std:.2f}", fontsize=9)
        ax.set_xlabel("feature (0 .. d_model - 1)")
    axes[0].set_ylabel("value")
    axes[1].legend(frameon=False, fontsize=8)
    return fig
