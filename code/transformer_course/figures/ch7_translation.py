"""Figures for the translation chapter: training curves, and cross-attention that crosses."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from transformer_course.core.training import TrainResult
from transformer_course.experiments.ch7_translation.translate import Translation


def plot_translation_curves(result: TrainResult, floor: float | None = None,
                            window: int = 25) -> Figure:
    """Training loss (moving mean) and validation loss against the step, with validation
    exact match on a second axis.

    Args:
        result: a ``recipe.train_translation`` run (its evaluations hold ``recipe.Validation``
            records). floor: the label-smoothed loss floor, drawn as a dashed line.
            window: steps averaged in the training curve.
    """
    losses = np.asarray(result.losses)
    window = max(1, min(window, len(losses)))
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(np.arange(window, len(losses) + 1), smooth, label="training (with dropout)")
    steps = [e.step for e in result.evaluations]
    ax.plot(steps, [e.metrics.loss for e in result.evaluations], "o-", ms=3, label="validation")
    if floor is not None:
        ax.axhline(floor, color="0.4", ls="--", lw=1, label="label-smoothing floor")
    ax.set_xlabel("step")
    ax.set_ylabel("label-smoothed loss")
    ax.set_ylim(bottom=0)
    right = ax.twinx()
    right.plot(steps, [100 * e.metrics.exact_match for e in result.evaluations], color="C2", lw=1,
               label="validation exact match")
    right.set_ylabel("exact match (%)", color="C2")
    right.set_ylim(0, 101)
    right.grid(False)
    lines = ax.get_legend_handles_labels()
    extra = right.get_legend_handles_labels()
    ax.legend(lines[0] + extra[0], lines[1] + extra[1], loc="center right", fontsize=8)
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
        image = ax.imshow(t.cross[layer].mean(dim=0).numpy(), cmap="viridis", vmin=0, vmax=1,
                          aspect="auto")
        ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), rows, fontsize=7)
        ax.set_title(t.source, fontsize=8)
        ax.grid(False)
    axes[0, 0].set_ylabel("German token written")
    fig.supxlabel("English token attended to", fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="weight (heads averaged)")
    return fig
