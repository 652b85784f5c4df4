"""Figures for the full-model chapter: norms through depth and the decoding loop (the map is in
figures.architecture)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import MaxNLocator

from .architecture import (
    _BOX_H,
    _COLORS,
    _HERE,
    plot_architecture,  # noqa: F401  (chapter 5 draws it from here)
)
from .style import colour


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
        for norm, part in table[table["stack"] == stack].groupby("norm", sort=True):
            ax.plot(part["layer"], part[value], marker="o", ms=3, color=colour(norm), label=norm)
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
        for residual in ("with", "without"):
            rows = part[part["residual"] == residual]
            ax.plot(rows["layer"], rows["gradient norm"], marker="o", ms=3,
                    color=colour(f"{residual} residual"), label=f"{residual} residual")
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


def plot_decoding_cache(steps: int = 4) -> Figure:
    """Autoregressive decoding (left) and one of its steps with a key-value cache (right).

    Left: at step t the decoder reads BOS and the t - 1 tokens generated so far and predicts
    token t, which is appended to the input of step t + 1. Right: step ``steps`` inside one
    masked self-attention layer: the keys and values of the earlier positions come from the
    cache (patches with gid "cached"), and only the new position's query, key and value are
    computed (gid "new").

    Args:
        steps: how many steps the loop shows (at least 2); the right panel is the last of them.
    """
    if steps < 2:
        raise ValueError(f"steps must be at least 2 (one cached position), got {steps}")
    tokens = ["BOS"] + [f"$y_{{{i}}}$" for i in range(1, steps + 1)]
    fig, ax = plt.subplots(figsize=(8.6, 1.2 + 0.85 * max(steps, 4)))

    def box(x: float, y: float, text: str, kind: str, width: float = 0.8,
            here: bool = False, gid: str | None = None) -> None:
        ax.add_patch(FancyBboxPatch(
            (x - width / 2, y - _BOX_H / 2), width, _BOX_H,
            boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=_COLORS.get(kind, kind),
            edgecolor=_HERE if here else "0.25", linewidth=2.2 if here else 1, gid=gid,
            zorder=2))
        ax.text(x, y, text, ha="center", va="center", fontsize=8, zorder=3)

    def arrow(start: tuple[float, float], end: tuple[float, float],
              color: str = "0.2") -> None:
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9,
                                     color=color, linewidth=1, shrinkA=0, shrinkB=0,
                                     zorder=3))

    # Left: the loop, one row per step, read left to right, top to bottom.
    top = 0.85 * steps
    head = max(top, 0.85 + 2.55) + 0.85  # the titles' height: panel b needs 2.55 above row 1
    dec_x, out_x = 0.45 + 0.9 * steps + 1.0, 0.45 + 0.9 * steps + 2.6
    ax.text(-0.9, head, "a. the loop: read the prefix, predict, append", fontsize=9,
            weight="bold")
    for t in range(1, steps + 1):
        y = top - 0.85 * (t - 1)
        ax.text(-0.15, y, f"t = {t}", ha="right", va="center", fontsize=8, color="0.35")
        for s in range(t):
            box(0.45 + 0.9 * s, y, tokens[s], "io", here=s == t - 1 and t > 1)
        arrow((0.45 + 0.9 * (t - 1) + 0.45, y), (dec_x - 0.7, y))
        box(dec_x, y, "decoder", "0.88", width=1.4)  # the whole stack: grey
        arrow((dec_x + 0.7, y), (out_x - 0.4, y))
        box(out_x, y, tokens[t], "out")
        if t < steps:  # the prediction becomes the next step's last input (red edge)
            arrow((out_x - 0.3, y - _BOX_H / 2),
                  (0.45 + 0.9 * t + 0.3, y - 0.85 + _BOX_H / 2), color=_HERE)
    bottom = top - 0.85 * (steps - 1)
    ax.text(-0.9, bottom - 0.65, "each prediction is appended; stop at EOS or max_len",
            fontsize=7.5, color=_HERE)
    ax.text(dec_x, top + 0.42, "reads the memory Z", ha="center", fontsize=7.5, color="C0")

    # Right: step t = steps inside one masked self-attention layer.
    x0 = out_x + 1.7
    xs = [x0 + 0.95 * s for s in range(steps)]
    ax.text(x0 - 0.5, head, f"b. step t = {steps}, one self-attention layer",
            fontsize=9, weight="bold")
    y_tok, y_v, y_k, y_q = bottom, bottom + 1.15, bottom + 1.8, bottom + 2.75
    for s, x in enumerate(xs):
        new = s == steps - 1
        box(x, y_tok, tokens[s], "io", here=new)
        box(x, y_v, f"$v_{{{s + 1}}}$", "attn", here=new, gid="new" if new else "cached")
        box(x, y_k, f"$k_{{{s + 1}}}$", "attn", here=new, gid="new" if new else "cached")
    last = xs[-1]
    arrow((last, y_tok + _BOX_H / 2), (last, y_v - _BOX_H / 2), color=_HERE)
    box(last, y_q, f"$q_{{{steps}}}$", "attn", here=True, gid="new")
    for x in xs:  # the new query reads every key, cached or new
        ax.plot([last, x], [y_q - _BOX_H / 2, y_k + _BOX_H / 2], color="C0", lw=0.9,
                zorder=1)
    ax.text(last - 0.55, y_q + 0.05, f"$q_{{{steps}}}$ attends to $k_1 \\ldots k_{{{steps}}}$",
            ha="right", va="center", fontsize=7.5, color="C0")
    ax.add_patch(FancyBboxPatch((xs[0] - 0.5, y_v - 0.4), xs[-2] - xs[0] + 1.0, 1.5,
                                boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor="none", edgecolor="0.45", linestyle="--"))
    ax.text((xs[0] + xs[-2]) / 2, y_tok + 0.6, "cache: kept from earlier steps",
            ha="center", va="center", fontsize=7.5, color="0.3")
    ax.text(last + 0.55, (y_v + y_q) / 2, f"computed now,\nfor position {steps}\nonly",
            va="center", fontsize=7.5, color=_HERE)
    ax.text(x0 - 0.5, bottom - 0.65, "cross-attention's K, V: the memory's, computed once",
            fontsize=7.5, color="0.3")
    ax.set_xlim(-0.9, xs[-1] + 1.9)
    ax.set_ylim(bottom - 0.9, head + 0.3)
    ax.set_axis_off()
    return fig


def plot_residual_stream(positions: int = 4) -> Figure:
    """One encoder layer as what it does to the residual stream: one lane per position, running
    up from the embeddings; self-attention reads every lane and adds into each (the only place
    lanes exchange anything), then the feed-forward network reads each lane alone and adds back
    into it. The LayerNorms are left out (a note says so).

    Args:
        positions: how many lanes (positions) to draw, at least 2.
    """
    xs = [1.2 * p for p in range(positions)]
    y_in, y_attn, y_mid, y_ffn, y_out = 0.0, 1.35, 2.55, 3.35, 4.45
    fig, ax = plt.subplots(figsize=(7.6, 4.4))
    ax.set_xlim(xs[0] - 1.0, xs[-1] + 2.6)
    ax.set_ylim(-0.6, y_out + 0.7)
    ax.axis("off")

    def box(x: float, y: float, width: float, text: str, kind: str) -> None:
        ax.add_patch(FancyBboxPatch((x - width / 2, y - _BOX_H / 2), width, _BOX_H,
                                    boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=_COLORS[kind], edgecolor="0.25", zorder=3))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=4)

    def arrow(start: tuple[float, float], end: tuple[float, float], color: str = "0.3",
              width: float = 1.0, rad: float = 0.0) -> None:
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9,
                                     color=color, linewidth=width, shrinkA=0, shrinkB=0,
                                     connectionstyle=f"arc3,rad={rad}", zorder=2))

    lane = "C0"  # the stream
    y_add2 = y_out - 0.5  # where the feed-forward's result is added
    width = xs[-1] - xs[0] + 0.9
    centre = (xs[0] + xs[-1]) / 2
    box(centre, y_attn, width, "self-attention", "attn")  # between the middle lanes
    for p, x in enumerate(xs):  # the lanes: the stream itself, bottom to top
        ax.plot([x, x], [y_in + 0.25, y_out - 0.25], color=lane, linewidth=6, alpha=0.35,
                solid_capstyle="butt", zorder=1)
        ax.plot([x, x], [y_attn - _BOX_H / 2, y_attn + _BOX_H / 2], color=lane, linewidth=1.5,
                linestyle=(0, (2, 2)), zorder=5)  # the stream passes attention by
        ax.text(x, y_in, f"$x_{{{p + 1}}}$", ha="center", va="center", fontsize=11)
        ax.text(x, y_out, f"$x'_{{{p + 1}}}$", ha="center", va="center", fontsize=11)
        for y in (y_mid, y_add2):  # the residual additions
            ax.scatter([x], [y], s=150, facecolor="white", edgecolor=_HERE, zorder=6)
            ax.text(x, y, "+", ha="center", va="center", fontsize=11, color=_HERE,
                    weight="bold", zorder=7)
    for x in xs:  # every lane into attention ...
        arrow((x, y_attn - 0.75), (x, y_attn - _BOX_H / 2), color=lane)
    for x_from in xs:  # ... and what it writes, into each lane (positions exchange here)
        for x_to in xs:
            arrow((x_from, y_attn + _BOX_H / 2), (x_to, y_mid - 0.13),
                  color="C1" if x_from != x_to else "0.45", width=0.6)
    for x in xs:  # the feed-forward network: each lane alone, added back into it
        box(x + 0.55, y_ffn, 0.6, "FFN", "ffn")
        arrow((x + 0.05, y_mid + 0.15), (x + 0.45, y_ffn - _BOX_H / 2), rad=-0.3)
        arrow((x + 0.45, y_ffn + _BOX_H / 2), (x + 0.1, y_add2 + 0.08), rad=-0.3)
    side = xs[-1] + 1.05
    ax.text(side, y_attn, "attention communicates:\nwhat one position holds\nmoves into others",
            fontsize=8.5, va="center", color="C1")
    ax.text(side, y_ffn, "the feed-forward computes:\nthe same function on each\nposition alone",
            fontsize=8.5, va="center", color="0.25")
    ax.text(side, y_out, "to the next layer", fontsize=8.5, va="center", color="0.25")
    ax.text(side, y_in, "from the embeddings\nor the layer below", fontsize=8.5, va="center",
            color="0.25")
    ax.text(centre, -0.55, "(+: a residual addition; the LayerNorms are left out)",
            ha="center", fontsize=8, color="0.35")
    return fig
