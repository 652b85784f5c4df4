"""Figures for chapter 8: learning curves of the translator and the writer, and cross-attention
on a real sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from transformer_course.experiments.ch8_real_sentences.analysis import Reading

from .style import ATTENTION_CMAP, colour, colours


def plot_bits_per_character(live: Sequence[tuple[float, float]],
                            longer: Sequence[tuple[float, float]],
                            stored: Sequence[tuple[float, float]], kept: int) -> Figure:
    """Validation bits per character against training characters read (log scale), each a
    list of (characters, bits): this page's small writer, its longer stored run, and the
    stored GPU writer, whose kept check (index ``kept``) is circled."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    series = ((stored, "the stored writer (8,000 pieces, GPU)", "0.25", "s-"),
              (longer, "the small writer, 3,000 steps (stored, CPU)", colour("validation"),
               "o-"),
              (live, "the small writer, this page's run", colour("training"), "o-"))
    for points, label, color, style in series:
        ax.plot([c for c, _ in points], [b for _, b in points], style, ms=3, color=color,
                label=label)
    ax.plot([stored[kept][0]], [stored[kept][1]], "o", ms=9, mfc="none", color="C3",
            label="the stored writer's kept check")
    ax.set_xscale("log")
    ax.set_xlabel("training characters read (log scale)")
    ax.set_ylabel("validation bits per character")
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


def plot_cpu_and_gpu(cpu: Mapping[str, Any], gpu: Mapping[str, Any]) -> Figure:
    """Test BLEU at each check (the first, untrained, left out) of the CPU translator's run
    (``cpu``: study ch8-cpu-translator) and of the stored GPU translator (``gpu``: its record in
    ch8-stored-models), against minutes of training on each one's own machine (left) and against
    the tokens each read (right), both on log scales."""
    fig, (by_time, by_tokens) = plt.subplots(1, 2, figsize=(7.2, 3.2), sharey=True,
                                             layout="constrained")
    series = ((cpu["checks"][1:], f"CPU recipe, {cpu['threads']} cores", colour("training"),
               "o-"),
              (gpu["curve"], "paper's recipe, one GPU", "0.25", "s-"))
    for checks, label, color, style in series:
        bleu = [c["test_bleu"] for c in checks]
        by_time.plot([c["seconds"] / 60 for c in checks], bleu, style, ms=3, color=color,
                     label=label)
        by_tokens.plot([c["tokens"] / 1e6 for c in checks], bleu, style, ms=3, color=color)
    by_time.set_xlabel("minutes of training (log scale)")
    by_tokens.set_xlabel("tokens read, millions (log scale)")
    by_time.set_ylabel("test BLEU (greedy)")
    for ax in (by_time, by_tokens):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.set_ylim(bottom=0)
    fig.legend(fontsize=8, loc="outside upper center", ncol=2)
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
