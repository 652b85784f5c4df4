"""Figures of the positional-encoding chapter: one function per figure, each returns a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from transformer_course.core.checks import check_array


def plot_encoding_heatmap(encoding: np.ndarray) -> Figure:
    """Heat map of a (P, d_model) encoding table: positions down, dimensions across."""
    check_array("encoding", encoding, kind=np.ndarray, ndim=2, shape="(P, d_model)")
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    image = ax.imshow(encoding, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1,
                      interpolation="nearest")
    ax.set_xlabel("dimension (even: sine, odd: cosine)")
    ax.set_ylabel("position")
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="PE(pos, dim)")
    return fig


def plot_encoding_curves(encoding: np.ndarray, dims: Sequence[int]) -> Figure:
    """PE(pos, dim) against pos for a few dimensions, one panel per dimension."""
    check_array("encoding", encoding, kind=np.ndarray, ndim=2, shape="(P, d_model)")
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
    check_array("wavelengths", wavelengths, kind=np.ndarray, ndim=1, shape="(d_model / 2,)")
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
    check_array("similarity", similarity, kind=np.ndarray, ndim=2, shape="(starts, offsets)")
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


def plot_shift_maps(maps: Mapping[str, np.ndarray]) -> Figure:
    """Side-by-side heat maps of (d_model, d_model) matrices, e.g. analytic and fitted shifts."""
    fig = plt.figure(figsize=(2.9 * len(maps) + 0.7, 3.3), layout="none")
    width = 0.86 / len(maps)
    for index, (title, matrix) in enumerate(maps.items()):
        check_array(title, matrix, kind=np.ndarray, ndim=2, shape="(d_model, d_model)")
        ax = fig.add_axes((0.02 + index * width, 0.04, width * 0.92, 0.82))
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
        ax.set_title(title, fontsize="medium")
        ax.grid(False)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(image, cax=fig.add_axes((0.91, 0.12, 0.02, 0.66)))
    return fig


def plot_extrapolation(accuracy: Mapping[str, np.ndarray], weight: Mapping[str, np.ndarray],
                       train_len: int, chance: float) -> Figure:
    """Per-position accuracy (top) and attention on the target (bottom) of several models."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 5.2), sharex=True)
    for ax, curves, ylabel in ((top, accuracy, "accuracy"),
                               (bottom, weight, "attention weight\non token t - 1")):
        for index, (label, values) in enumerate(curves.items()):
            check_array(label, values, kind=np.ndarray, ndim=1, shape="(test_len,)")
            ax.plot(np.arange(len(values)), values, marker="o", ms=2.5, lw=1.2,
                    color=f"C{index}", label=label)
        ax.axvspan(-0.5, train_len - 0.5, color="0.9", zorder=0)
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.02, 1.02)
    top.axhline(chance, color="0.4", ls=":", lw=1, label="chance")
    top.legend(fontsize="small", loc="upper right")
    bottom.set_xlabel("position t (shaded: positions seen in training)")
    return fig
