"""Figures of chapter 1, "Why attention": one function per figure, each returns a Figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from transformer_course.experiments.ch1_why_attention.paths import path_length_formula
from transformer_course.experiments.ch1_why_attention.recurrence import GradientDecay

from .style import ATTENTION_CMAP, colour, colours, text_colour

HIGHLIGHT = "C3"  # the path from the first input to the last output
FAINT = "0.75"


def _arrow(ax, start, end, *, color=FAINT, width=1.0, z=1, bend=0.0) -> None:
    ax.annotate("", xy=end, xytext=start, zorder=z,
                arrowprops={"arrowstyle": "-|>", "color": color, "lw": width,
                            "shrinkA": 9, "shrinkB": 9, "mutation_scale": 9,
                            "connectionstyle": f"arc3,rad={bend}"})


def _nodes(ax, xs, y, labels, *, marker, color="white") -> None:
    ax.scatter(xs, np.full(len(xs), y), s=520, marker=marker, facecolor=color,
               edgecolor="0.2", zorder=3)
    for x, label in zip(xs, labels, strict=True):
        ax.text(x, y, label, ha="center", va="center", fontsize=10, zorder=4)


def plot_information_flow(n: int = 6, kernel_size: int = 3) -> Figure:
    """What reaches what, n positions each: a recurrent chain; a stack of contiguous, centred
    convolutions of width ``kernel_size`` (odd), as many layers as it takes the first input to
    reach the last output; all-to-all self-attention."""
    fig, (rnn_ax, conv_ax, att_ax) = plt.subplots(1, 3, figsize=(12.0, 4.0))
    xs = np.arange(n, dtype=float)
    inputs = [f"$x_{{{i + 1}}}$" for i in range(n)]
    for ax in (rnn_ax, att_ax):
        ax.set_xlim(-0.7, n - 0.3)
        ax.set_ylim(-0.25, 1.55)
        ax.axis("off")

    for i in range(n):  # recurrent: x_i -> h_i and h_{i-1} -> h_i
        _arrow(rnn_ax, (xs[i], 0), (xs[i], 1), color=HIGHLIGHT if i == 0 else FAINT,
               width=2 if i == 0 else 1)
        if i:
            _arrow(rnn_ax, (xs[i - 1], 1), (xs[i], 1), color=HIGHLIGHT, width=2)
    _nodes(rnn_ax, xs, 0, inputs, marker="o")
    _nodes(rnn_ax, xs, 1, [f"$h_{{{i + 1}}}$" for i in range(n)], marker="s", color="0.92")
    rnn_ax.text((n - 1) / 2, 1.38, f"$x_1$ reaches $h_{{{n}}}$ through {n - 1} steps,\n"
                f"each through the same fixed-size state", ha="center", va="bottom",
                fontsize=11, color=HIGHLIGHT)
    rnn_ax.set_title("Recurrent layer:\na chain of n - 1 steps", fontsize=13, pad=26)

    _convolution_stack(conv_ax, n, kernel_size)

    for i in range(n):  # attention: every input feeds every output
        for j in range(n):
            if (i, j) != (n - 1, 0):
                _arrow(att_ax, (xs[j], 0), (xs[i], 1), width=0.6)
    _arrow(att_ax, (xs[0], 0), (xs[n - 1], 1), color=HIGHLIGHT, width=2, z=2)
    _nodes(att_ax, xs, 0, inputs, marker="o")
    _nodes(att_ax, xs, 1, [f"$y_{{{i + 1}}}$" for i in range(n)], marker="o", color="0.92")
    att_ax.text((n - 1) / 2, 1.38, f"$x_1$ reaches $y_{{{n}}}$ in one step;\nso does every pair",
                ha="center", va="bottom", fontsize=11, color=HIGHLIGHT)
    att_ax.set_title("Self-attention layer:\nevery pair in one step", fontsize=13, pad=26)
    return fig


def _convolution_stack(ax, n: int, kernel_size: int) -> None:
    """Layers of centred width-``kernel_size`` windows over n positions, stacked until the first
    input reaches the last position; its path highlighted."""
    reach = kernel_size // 2  # positions a layer moves information in either direction
    layers = path_length_formula("convolutional", n, kernel_size=kernel_size)
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-0.55, layers + 0.95)
    ax.axis("off")
    path = [min(reach * layer, n - 1) for layer in range(layers + 1)]  # x_1's farthest reach
    for layer in range(1, layers + 1):
        for i in range(n):
            for j in range(max(0, i - reach), min(n, i + reach + 1)):
                on_path = path[layer - 1] == j and path[layer] == i
                ax.plot([j, i], [layer - 1, layer], color=HIGHLIGHT if on_path else FAINT,
                        lw=2 if on_path else 0.6, zorder=2 if on_path else 1)
    for layer in range(layers + 1):
        ax.scatter(np.arange(n), np.full(n, layer), s=70, facecolor="white" if layer == 0
                   else "0.92", edgecolor="0.2", zorder=3)
    for i in range(n):
        ax.text(i, -0.38, f"$x_{{{i + 1}}}$", ha="center", va="top", fontsize=11)
    ax.text(n - 1 + 0.35, layers, f"$y_{{{n}}}$", ha="left", va="center", fontsize=11)
    ax.text((n - 1) / 2, layers + 0.55, f"$x_1$ reaches $y_{{{n}}}$ through {layers} "
            f"stacked layers", ha="center", va="bottom", fontsize=11, color=HIGHLIGHT)
    ax.set_title(f"Convolutions of width {kernel_size}:\na stack of layers", fontsize=13, pad=26)


def plot_parallel_speedup(summary: pd.DataFrame) -> Figure:
    """The best case a second thread allows each layer: one thread's time over the busiest
    thread's CPU time with two, against the ideal 2.

    Args:
        summary: the DataFrame of ``threads.summarise_threads``.
    """
    two = summary[summary["threads"] == 2]
    fig, ax = plt.subplots(figsize=(7.2, 2.8))
    palette = colours(two["layer"])
    names = list(two["layer"])
    ax.barh(names, two["best_case_speedup"], color=[palette[name] for name in names])
    ax.axvline(2.0, color="0.3", linestyle="--", linewidth=1)
    ax.text(1.97, -0.5, "perfect split", va="top", ha="right", fontsize=8.5, color="0.3")
    ax.axvline(1.0, color="0.6", linewidth=0.8)
    for y, value in enumerate(two["best_case_speedup"]):
        ax.text(value, y, f" {value:.2f}x", va="center", ha="left", fontsize=9)
    ax.set_xlim(0, 2.3)
    ax.set_ylim(len(names) - 0.4, -0.6)  # first layer on top
    ax.set_xlabel("best-case speed-up with two threads (1: none)")
    ax.set_title("What a second thread can buy each layer", fontsize=11)
    return fig


def plot_forward_times(times: pd.DataFrame) -> Figure:
    """Median forward time against sequence length, one line per layer, min-max as a band.

    Args:
        times: the DataFrame of ``complexity.time_forward_by_length``.
    """
    fig, ax = plt.subplots()
    palette = colours(times["layer"])
    for name, rows in times.groupby("layer", sort=False):
        rows = rows.sort_values("length")
        ax.plot(rows["length"], rows["median_s"] * 1e3, marker="o", color=palette[name],
                label=name)
        ax.fill_between(rows["length"], rows["min_s"] * 1e3, rows["max_s"] * 1e3,
                        color=palette[name], alpha=0.15, linewidth=0)
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
    fig, ax = plt.subplots()
    for name, norms in (("recurrent (ElmanRNN)", result.recurrent),
                        ("self-attention (MultiHeadAttention)", result.attention)):
        mean = np.exp(np.log(norms).mean(axis=0))
        ax.plot(result.distances, mean, color=colour(name), label=name)
        ax.fill_between(result.distances, norms.min(axis=0), norms.max(axis=0),
                        color=colour(name), alpha=0.2, linewidth=0)
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
    fig, ax = plt.subplots()
    palette = colours(flops["layer"])
    for name, rows in flops.groupby("layer", sort=False):
        rows = rows.sort_values("length")
        ax.plot(rows["length"], rows["flops"], marker="o", markersize=3, color=palette[name],
                label=name)
    ax.axvline(d, color="0.4", linestyle="--", linewidth=1)
    ax.text(d, ax.get_ylim()[1], f" n = d = {d}", va="top", fontsize=8, color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length n (positions)")
    ax.set_ylabel("FLOPs per layer (counted)")
    ax.set_title(f"Counted FLOPs of one layer, d = {d}")
    ax.legend(fontsize=8)
    return fig


def plot_seq2seq(n: int = 4) -> Figure:
    """The encoder-decoder before and after attention: one context vector, then a look back.

    Left: the decoder sees the source only through the encoder's last state c. Right: with
    additive attention (Bahdanau et al., 2014) each decoder step i reads a weighted average of all
    encoder states, with weights from a small network that scores s_{i-1} against each h_j.
    """
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 3.4))
    enc = np.arange(n, dtype=float)
    dec = n + 0.8 + np.arange(n - 1, dtype=float)
    for ax in axes:
        ax.set_xlim(-0.7, dec[-1] + 0.7)
        ax.set_ylim(-0.35, 1.85)
        ax.axis("off")
        for i in range(1, n):
            _arrow(ax, (enc[i - 1], 1), (enc[i], 1), width=1.2)
        for i in range(n):
            _arrow(ax, (enc[i], 0), (enc[i], 1))
        for i in range(1, n - 1):
            _arrow(ax, (dec[i - 1], 1), (dec[i], 1), width=1.2)
        _nodes(ax, enc, 0, [f"$x_{{{i + 1}}}$" for i in range(n)], marker="o")
        _nodes(ax, enc, 1, [f"$h_{{{i + 1}}}$" for i in range(n)], marker="s", color="0.92")
        _nodes(ax, dec, 1, [f"$s_{{{i + 1}}}$" for i in range(n - 1)], marker="s",
               color="0.92")
        ax.text(enc.mean(), -0.3, "encoder (source)", ha="center", fontsize=9)
        ax.text(dec.mean(), -0.3, "decoder (target)", ha="center", fontsize=9)
    left, right = axes
    _arrow(left, (enc[-1], 1), (dec[0], 1), color=HIGHLIGHT, width=2.2)
    left.text((enc[-1] + dec[0]) / 2, 1.18, f"$c = h_{{{n}}}$", ha="center", fontsize=9,
              color=HIGHLIGHT)
    left.set_title("Encoder-decoder: the whole source in one vector c", fontsize=10)
    _arrow(right, (enc[-1], 1), (dec[0], 1), width=1.2)
    step = min(1, n - 2)  # the decoder step whose look-back is drawn
    for j in range(n):  # line width: an illustrative weight alpha_ij, not a learned one
        _arrow(right, (enc[j], 1), (dec[step], 1), color=HIGHLIGHT, width=0.8 + 0.5 * j,
               z=2, bend=-0.35)
    right.text(dec[step], 1.62, r"$c_i = \sum_j \alpha_{ij} h_j$", ha="center", fontsize=9,
               color=HIGHLIGHT)
    right.text(enc[0] - 0.5, 1.62, r"$e_{ij} = v^\top \tanh(W s_{i-1} + U h_j)$",
               ha="left", fontsize=8.5, color="0.25")
    right.set_title("With additive attention: every step looks back at every $h_j$",
                    fontsize=10)
    return fig


def plot_thread_scaling(summary: pd.DataFrame) -> Figure:
    """Wall-clock time and the busiest thread's CPU time against the number of threads.

    Args:
        summary: the DataFrame of ``threads.summarise_threads``.
    """
    fig, (wall, busy) = plt.subplots(1, 2, figsize=(8.6, 3.4), sharey=True)
    palette = colours(summary["layer"])
    for name, rows in summary.groupby("layer", sort=False):
        rows = rows.sort_values("threads")
        wall.plot(rows["threads"], rows["wall_ms"], marker="o", color=palette[name], label=name)
        busy.plot(rows["threads"], rows["cpu_busiest_ms"], marker="s", color=palette[name])
    counts = sorted(summary["threads"].unique())
    for ax, title in ((wall, "Wall-clock time (this build's machine)"),
                      (busy, "CPU time of the busiest thread")):
        ax.set_xticks(counts)
        ax.set_xlabel("threads")
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
    wall.set_ylabel("one forward pass (ms, median)")
    wall.legend(fontsize=8)
    return fig


def plot_opening_map(stored: dict) -> Figure:
    """A trained model's cross-attention as a heat map with its weights written in.

    Args:
        stored: ``source`` (the columns), ``target`` (the rows) and ``weights`` (rows x columns),
            as ``experiments.ch7_translation.opening_map`` stores them.
    """
    weights = np.asarray(stored["weights"], dtype=float)  # (T, S)
    rows, cols = stored["target"], stored["source"]
    fig, ax = plt.subplots(figsize=(0.75 * len(cols) + 1.6, 0.5 * len(rows) + 1.3),
                           layout="constrained")
    image = ax.imshow(weights, cmap=ATTENTION_CMAP, vmin=0, vmax=1, aspect="auto")
    for (t, s), w in np.ndenumerate(weights):
        ax.text(s, t, f"{w:.2f}".lstrip("0"), ha="center", va="center", fontsize=8,
                color=text_colour(w))
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.xaxis.tick_top()
    ax.set_xlabel("English token attended to")
    ax.set_ylabel("German token being written")
    ax.grid(False)
    fig.colorbar(image, ax=ax, shrink=0.8, label="attention weight")
    return fig
