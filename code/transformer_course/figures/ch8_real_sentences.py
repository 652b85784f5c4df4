"""Figures for chapter 8: learning curves of the translator and the writer, and cross-attention
on a real sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from transformer_course.experiments.ch8_real_sentences.analysis import Reading

from .style import ATTENTION_CMAP, colour, colours


def plot_live_loss(tokens: Sequence[float], losses: Sequence[float],
                   stored_tokens: Sequence[float], stored_losses: Sequence[float],
                   stored_steps: int, uniform: float) -> Figure:
    """The live run's training loss at every step and the stored run's, against the tokens each
    had read (log scale), with the loss of a uniform guess."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    ax.plot(stored_tokens, stored_losses, "-", lw=1.5, color="0.25",
            label=f"the stored run (GPU, {stored_steps:,} steps)")
    ax.plot(tokens, losses, "o-", ms=3, color=colour("training"),
            label="this page's run (your CPU)")
    ax.axhline(uniform, color="0.4", ls="--", lw=1, label="a uniform guess, ln V")
    ax.set_xscale("log")
    ax.set_xlabel("training tokens read (log scale)")
    ax.set_ylabel("label-smoothed loss")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="lower left")
    return fig


def plot_bleu_against_tokens(records: Sequence[Mapping[str, Any]],
                             tokens_per_cpu_hour: float) -> Figure:
    """Validation BLEU at each check against the training tokens seen, one line per stored
    candidate, with the tokens read as hours on a CPU on a second x-axis."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    palette = colours(f"dropout {record['dropout']}" for record in records)
    for record in records:
        curve, label = record["curve"], f"dropout {record['dropout']}"
        ax.plot([p["tokens"] / 1e6 for p in curve], [p["validation_bleu"] for p in curve],
                "o-", ms=3, color=palette[label], label=label)
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("validation BLEU")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="lower right")
    scale = 1e6 / tokens_per_cpu_hour
    top = ax.secondary_xaxis("top", functions=(lambda m: m * scale, lambda h: h / scale))
    top.set_xlabel("hours on this 2-core CPU at the same speed", fontsize=8)
    return fig


def plot_writer_curve(curve: Sequence[Mapping[str, Any]], kept: int) -> Figure:
    """The writer's validation perplexity against training tokens; the kept check marked."""
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    x = [p["tokens"] / 1e6 for p in curve]
    y = [p["validation_perplexity"] for p in curve]
    ax.plot(x, y, "o-", ms=3, color=colour("validation"), label="validation perplexity")
    ax.plot([x[kept]], [y[kept]], "o", ms=9, mfc="none", color="C3", label="the stored model")
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("perplexity")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    return fig


def plot_cross_attention(reading: Reading, rows: slice, cols: slice) -> Figure:
    """Part of one translation's last-layer cross-attention (heads averaged): output pieces
    ``rows`` against source pieces ``cols``."""
    fig, ax = plt.subplots(figsize=(4.6, 3.6), layout="constrained")
    weights = reading.cross[rows, cols].numpy()
    image = ax.imshow(weights, cmap=ATTENTION_CMAP, vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(weights.shape[1]), reading.source_tokens[cols], rotation=90, fontsize=8)
    ax.set_yticks(range(weights.shape[0]), reading.output_tokens[rows], fontsize=8)
    ax.set_xlabel("Spanish piece attended to")
    ax.set_ylabel("English piece written")
    ax.grid(False)
    fig.colorbar(image, ax=ax, shrink=0.8, label="weight (heads averaged)")
    return fig
