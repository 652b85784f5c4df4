"""Figures for the translation chapter: training curves, cross-attention that crosses, and bar
charts of the stored studies (Table 3's variants; training below a bound)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from transformer_course.core.training import TrainResult
from transformer_course.experiments.ch7_translation.translate import Translation

from .style import ATTENTION_CMAP, colour


def plot_translation_curves(result: TrainResult, floor: float | None = None,
                            window: int = 25) -> Figure:
    """Left: training loss (moving mean) and validation loss against the step. Right:
    validation exact match against the step.

    Args:
        result: a ``recipe.train_translation`` run (its evaluations hold ``recipe.Validation``
            records). floor: the label-smoothed loss floor, drawn as a dashed line.
            window: steps averaged in the training curve.
    """
    losses = np.asarray(result.losses)
    window = max(1, min(window, len(losses)))
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    steps = [e.step for e in result.evaluations]
    fig, (ax, right) = plt.subplots(1, 2, figsize=(7.6, 3.2), layout="constrained")
    ax.plot(np.arange(window, len(losses) + 1), smooth, color=colour("training"),
            label="training (with dropout)")
    ax.plot(steps, [e.metrics.loss for e in result.evaluations], "o-", ms=3,
            color=colour("validation"), label="validation")
    if floor is not None:
        ax.axhline(floor, color="0.4", ls="--", lw=1, label="label-smoothing floor")
    ax.set_xlabel("step")
    ax.set_ylabel("label-smoothed loss")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    right.plot(steps, [100 * e.metrics.exact_match for e in result.evaluations], "o-", ms=3,
               color=colour("validation"))
    right.set_xlabel("step")
    right.set_ylabel("validation exact match (%)")
    right.set_ylim(0, 101)
    return fig


def _labels(translation: Translation) -> tuple[list[str], list[str]]:
    rows = [*translation.target_tokens, "</s>"]
    cols = ["<s>", *translation.source_tokens, "</s>"]
    return rows, cols


def plot_crossing(translations: Sequence[Translation], layer: int = -1) -> Figure:
    """Cross-attention of one decoder layer, heads averaged, one panel per translation.

    Row t is the query that writes German token t; column s is English position s.
    """
    fig, axes = plt.subplots(1, len(translations), squeeze=False, layout="constrained",
                             figsize=(3.0 * len(translations) + 0.8, 3.6),
                             width_ratios=[len(t.source_tokens) + 2 for t in translations])
    for ax, t in zip(axes[0], translations, strict=True):
        rows, cols = _labels(t)
        image = ax.imshow(t.cross[layer].mean(dim=0).numpy(), cmap=ATTENTION_CMAP, vmin=0, vmax=1,
                          aspect="auto")
        ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), rows, fontsize=7)
        ax.set_title(t.source, fontsize=8)
        ax.grid(False)
    axes[0, 0].set_ylabel("German token written")
    fig.supxlabel("English token attended to", fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="weight (heads averaged)")
    return fig


def _seed_dots(ax, positions: Sequence[float], values: Sequence[Sequence[float]]) -> None:
    """Each seed's value as a small dark dot on its bar."""
    for y, seeds in zip(positions, values, strict=True):
        ax.plot(seeds, [y] * len(seeds), "o", color="0.15", ms=3, zorder=3)


def _finish_bars(ax, names: Sequence[str], xlabel: str, legend_columns: int) -> None:
    """One row per name, top to bottom, on a 0-100 % axis, with the legend above the bars."""
    ax.set_yticks(np.arange(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlim(0, 101)
    ax.set_xlabel(xlabel)
    ax.grid(False, axis="y")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=legend_columns, fontsize=8,
              frameon=False)


def plot_table3_variants(short: Mapping[str, Sequence[float]],
                         full: Mapping[str, Sequence[float]] | None = None,
                         baseline: str = "baseline",
                         budgets: tuple[str, str] = ("200 steps", "600 steps")) -> Figure:
    """Horizontal bars of validation exact match per Table 3 variant: the median over seeds
    after a short budget (filled), and after the full budget (outlined), with each seed as a dot.

    Args:
        short: variant name -> per-seed exact match (%) after the short budget, in the order
            drawn (top to bottom). full: the same after the full budget, or None.
        baseline: the variant whose short-budget median is drawn as a dashed line.
        budgets: how the legend names the short and the full budget.
    """
    names = list(short)
    y = np.arange(len(names), dtype=float)
    height = 0.38 if full is not None else 0.7
    fig, ax = plt.subplots(figsize=(6.4, 0.42 * len(names) + 1.3), layout="constrained")
    offset = height / 2 if full is not None else 0.0
    greedy = colour("greedy")
    ax.barh(y - offset, [float(np.median(short[n])) for n in names], height=height,
            color=greedy, label=f"after {budgets[0]}")
    _seed_dots(ax, y - offset, [short[n] for n in names])
    if full is not None:
        ax.barh(y + offset, [float(np.median(full[n])) for n in names], height=height,
                facecolor="none", edgecolor=greedy, lw=1.2, label=f"after {budgets[1]}")
        _seed_dots(ax, y + offset, [full[n] for n in names])
    if baseline in short:
        ax.axvline(float(np.median(short[baseline])), color="0.4", ls="--", lw=1,
                   label=f"{baseline}, {budgets[0]}")
    _finish_bars(ax, names, "validation exact match (%), greedy decoding", legend_columns=3)
    return fig


def plot_training_range(greedy: Mapping[str, Sequence[float]],
                        groups: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """Horizontal bars of test exact match above the training bound, one row per training set:
    the median over seeds for greedy decoding and, if given, for translating each three-digit
    group on its own, with each seed as a dot.

    Args:
        greedy: training set -> per-seed exact match (%) of greedy decoding, in the order drawn
            (top to bottom). groups: the same, group by group, or None.
    """
    names = list(greedy)
    y = np.arange(len(names), dtype=float)
    methods = {"greedy": greedy} | ({"group by group": groups} if groups is not None else {})
    height = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(names) + 1.3), layout="constrained")
    for k, (method, values) in enumerate(methods.items()):
        at = y + (k - (len(methods) - 1) / 2) * height
        ax.barh(at, [float(np.median(values[n])) for n in names], height=height,
                color=colour(method), label=method)
        _seed_dots(ax, at, [values[n] for n in names])
    _finish_bars(ax, names, "test exact match above the bound (%)", legend_columns=2)
    return fig
