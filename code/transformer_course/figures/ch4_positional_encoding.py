"""Figures of the positional-encoding chapter: one function per figure, each returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .style import SIGNED_CMAP, colours


def plot_embedding_plus_encoding(tokens: Sequence[str], embeddings: np.ndarray,
                                 encodings: np.ndarray) -> Figure:
    """Token embeddings + positional encodings = the input: three (T, d_model) heat maps side
    by side, one row per token (labelled with the token and its position), with "+" and "="
    between the panels. The right panel is embeddings + encodings.

    Each panel has its own colour scale, symmetric about 0 and as wide as its largest value,
    with its own colour bar under it: the encodings stay within [-1, 1] while embeddings may
    reach several units, and on one shared scale the encodings' panel would look blank.
    """
    panels = (("token embeddings", embeddings), ("positional encodings", encodings),
              ("input to the first layer", embeddings + encodings))
    # Five columns: three panels, and a narrow one for each sign between them.
    fig, columns = plt.subplots(1, 5, figsize=(9.6, 3.4), layout="constrained",
                                gridspec_kw={"width_ratios": [1, 0.14, 1, 0.14, 1]})
    for ax, sign in zip(columns[1::2], "+=", strict=True):
        ax.axis("off")
        ax.text(0.5, 0.5, sign, ha="center", va="center", fontsize=22, transform=ax.transAxes)
    for ax, (title, values) in zip(columns[0::2], panels, strict=True):
        limit = float(np.abs(values).max()) or 1.0
        image = ax.imshow(values, aspect="auto", cmap=SIGNED_CMAP, vmin=-limit, vmax=limit,
                          interpolation="nearest")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("dimension")
        ax.set_yticks(range(len(tokens)), [] if ax is not columns[0] else
                      [f"{token} ({t})" for t, token in enumerate(tokens)])
        ax.grid(False)
        fig.colorbar(image, ax=ax, location="bottom", shrink=0.8, aspect=25, label="value")
    return fig


def plot_encoding_heatmap(encoding: np.ndarray) -> Figure:
    """Heat map of a (P, d_model) encoding table: positions down, dimensions across."""
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    image = ax.imshow(encoding, aspect="auto", cmap=SIGNED_CMAP, vmin=-1, vmax=1,
                      interpolation="nearest")
    ax.set_xlabel("dimension (even: sine, odd: cosine)")
    ax.set_ylabel("position")
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="PE(pos, dim)")
    return fig


def plot_encoding_curves(encoding: np.ndarray, dims: Sequence[int]) -> Figure:
    """PE(pos, dim) against pos for a few dimensions, one panel per dimension."""
    positions = np.arange(encoding.shape[0])
    fig, axes = plt.subplots(len(dims), 1, figsize=(7.0, 1.1 * len(dims) + 0.6), sharex=True)
    for ax, dim in zip(np.atleast_1d(axes), dims, strict=True):
        ax.plot(positions, encoding[:, dim], lw=1.4, color=f"C{dim % 10}")
        ax.set_ylim(-1.15, 1.15)
        ax.set_ylabel(f"dim {dim}", rotation=0, ha="right", va="center")
        ax.set_yticks([-1, 0, 1])
    np.atleast_1d(axes)[-1].set_xlabel("position")
    return fig


def plot_wavelengths(wavelengths: np.ndarray) -> Figure:
    """Wavelength (in positions, log scale) of each sine/cosine pair."""
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    ax.semilogy(np.arange(len(wavelengths)), wavelengths, "o", ms=3)
    # The data rise from bottom left to top right: label the lower line on the right, the upper
    # one on the left, where nothing is drawn.
    for level, text, x, ha, va in ((2 * np.pi, r"$2\pi$", len(wavelengths) - 1, "right", "bottom"),
                                   (2 * np.pi * 1e4, r"$10000 \cdot 2\pi$", 0, "left", "top")):
        ax.axhline(level, color="0.5", ls=":", lw=1)
        ax.annotate(text, (x, level), xytext=(0, 3 if va == "bottom" else -3),
                    textcoords="offset points", ha=ha, va=va, color="0.3")
    ax.set_xlabel("pair index i (dimensions 2i, 2i+1)")
    ax.set_ylabel("wavelength (positions)")
    return fig


def plot_similarity_vs_offset(offsets: np.ndarray, similarity: np.ndarray,
                         starts: Sequence[int], ylabel: str) -> Figure:
    """Similarity of PE(s) and PE(s + offset) against offset, one line per start s."""
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    styles = ("-", "--", ":", "-.")
    for row, (start, line) in enumerate(zip(starts, similarity, strict=True)):
        ax.plot(offsets, line, ls=styles[row % len(styles)], lw=2.2 - 0.4 * row,
                label=f"start s = {start}")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlabel("offset k (position s + k compared with position s)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    return fig


def plot_encoding_circle(encoding: np.ndarray, pairs: Sequence[int], positions: int,
                         shift: int) -> Figure:
    """Each sine/cosine pair of the encoding as points on the unit circle, one panel per pair.

    Args:
        encoding: (P, d_model) table. pairs: pair indices i (dimensions 2i, 2i + 1).
        positions: how many positions (0 .. positions - 1) to draw. shift: an offset k, drawn as
            arrows from a few positions pos to pos + k (the same angle whatever pos is).
    """
    fig, axes = plt.subplots(1, len(pairs), figsize=(2.6 * len(pairs) + 0.8, 3.0),
                             squeeze=False, layout="constrained")
    circle = np.linspace(0, 2 * np.pi, 200)
    for ax, pair in zip(axes[0], pairs, strict=True):
        sine, cosine = encoding[:positions, 2 * pair], encoding[:positions, 2 * pair + 1]
        ax.plot(np.cos(circle), np.sin(circle), color="0.85", lw=1, zorder=0)
        points = ax.scatter(sine, cosine, c=np.arange(positions), cmap="viridis", s=14,
                            zorder=2)
        for start in (0, positions // 3, 2 * positions // 3):
            ax.annotate("", (sine[start + shift], cosine[start + shift]),
                        (sine[start], cosine[start]),
                        arrowprops={"arrowstyle": "->", "color": "C3", "lw": 1.2})
        ax.set_aspect("equal")
        ax.set_xlim(-1.25, 1.25)
        ax.set_ylim(-1.25, 1.25)
        ax.set_xlabel(f"dimension {2 * pair} (sine)")
        ax.set_ylabel(f"dimension {2 * pair + 1} (cosine)")
        ax.set_title(f"pair {pair}", fontsize="medium")
    fig.colorbar(points, ax=list(axes[0]), label="position", shrink=0.8)
    return fig


def plot_extrapolation(accuracy: Mapping[str, np.ndarray], weight: Mapping[str, np.ndarray],
                       train_len: int, chance: float) -> Figure:
    """Per-position accuracy (top) and attention on the target (bottom) of several models."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 5.2), sharex=True)
    palette = colours([*accuracy, *weight])  # a model has one colour in both panels
    for ax, curves, ylabel in ((top, accuracy, "accuracy"),
                               (bottom, weight, "attention weight\non token t - 1")):
        for label, values in curves.items():
            ax.plot(np.arange(len(values)), values, marker="o", ms=2.5, lw=1.2,
                    color=palette[label], label=label)
        ax.axvspan(-0.5, train_len - 0.5, color="0.9", zorder=0)
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.02, 1.02)
    top.axhline(chance, color="0.4", ls=":", lw=1, label="chance")
    top.legend(fontsize="small", loc="upper right")
    bottom.set_xlabel("position t (shaded: positions seen in training)")
    return fig
