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
