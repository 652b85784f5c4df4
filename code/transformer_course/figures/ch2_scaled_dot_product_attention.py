"""Figures of chapter 2 (scaled dot-product attention). One function per figure; each returns a
``matplotlib.figure.Figure`` and never shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from transformer_course.experiments.ch2_scaled_dot_product_attention.attention_stats import (
    loglog_slope,
)
from transformer_course.experiments.ch2_scaled_dot_product_attention.lr_sweep import (
    best_of_sweep,
)

from .style import ATTENTION_CMAP, colour, colours, text_colour


def plot_dot_product_variance(table: pd.DataFrame) -> Figure:
    """Variance of q . k (unscaled and divided by sqrt(d_k)) against d_k, on log-log axes.

    Args:
        table: the output of ``attention_stats.dot_product_variance``.
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    d_k = table["d_k"].to_numpy(dtype=float)
    ax.plot(d_k, d_k, color="0.6", linestyle="--", label="$d_k$ (theory, unscaled)")
    ax.plot(d_k, np.ones_like(d_k), color="0.6", linestyle=":", label="1 (theory, scaled)")
    ax.plot(d_k, table["var_unscaled"], "o-", color=colour("unscaled"),
            label=r"measured Var$(q \cdot k)$")
    ax.plot(d_k, table["var_scaled"], "s-", color=colour("scaled"),
            label=r"measured Var$(q \cdot k / \sqrt{d_k})$")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("variance of the score")
    ax.legend(fontsize="small")
    return fig


def plot_softmax_saturation(table: pd.DataFrame, T_k: int) -> Figure:
    """Entropy of the weights and gradient norm through the softmax against d_k, both scalings.

    Args:
        table: the output of ``attention_stats.softmax_saturation``.
        T_k: the number of keys used there (for the uniform-weights entropy line log T_k).
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.8, 3.6))
    for scaling, marker in (("scaled", "s-"), ("unscaled", "o-")):
        rows = table[table["scaling"] == scaling]
        label = r"$q \cdot k / \sqrt{d_k}$" if scaling == "scaled" else r"$q \cdot k$"
        left.plot(rows["d_k"], rows["entropy"], marker, color=colour(scaling), label=label)
        right.plot(rows["d_k"], rows["grad_norm"], marker, color=colour(scaling), label=label)
    left.axhline(math.log(T_k), color="0.6", linestyle="--",
                 label=f"uniform over {T_k} keys")
    left.set_ylabel("mean entropy of a row (nats)")
    left.set_ylim(bottom=0)
    right.set_yscale("log")
    right.set_ylabel("mean gradient norm at the scores")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("$d_k$")
    left.legend(fontsize="small")
    return fig


def plot_attention_cost(times: pd.DataFrame, memory: pd.DataFrame, fit_from: int = 1,
                        time_label: str = "median time per call (ms)",
                        time_slopes: Mapping[str, float] | None = None) -> Figure:
    """Time (per path) and peak memory of attention against T on log-log axes, slopes fitted.

    Args:
        times: the output of ``attention_stats.attention_time``.
        memory: the output of ``attention_stats.attention_memory``.
        fit_from: fit the slopes only on points with T >= fit_from (small T is overhead-bound).
        time_label: the label of the time axis (say which clock was read).
        time_slopes: path -> growth exponent measured elsewhere (e.g. ``growth_exponent``), to
            show instead of a fit to the medians.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.2, 3.8))
    palette = colours([*times["path"], "numpy"])  # "numpy": the memory panel's path
    for path, rows in times.groupby("path", sort=False):
        fit = rows[rows["T"] >= fit_from]
        slope = loglog_slope(fit["T"], fit["seconds"]) if len(fit) >= 2 else float("nan")
        slope = slope if time_slopes is None else time_slopes[path]
        left.plot(rows["T"], rows["seconds"] * 1e3, "o-", color=palette[path],
                  label=f"{path} (slope {slope:.2f})")
    left.set_ylabel(time_label)
    fit = memory[memory["T"] >= fit_from]
    slope = loglog_slope(fit["T"], fit["peak_bytes"]) if len(fit) >= 2 else float("nan")
    right.plot(memory["T"], memory["peak_bytes"] / 2**20, "o-", color=palette["numpy"],
               label=f"NumPy peak (slope {slope:.2f})")
    right.plot(memory["T"], memory["weights_bytes"] / 2**20, "s--", color="0.5",
               label="the (T, T) weights alone")  # a reference: T^2 numbers, counted
    right.set_ylabel("memory (MiB)")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length $T$")
        ax.legend(fontsize="small")
    return fig


def plot_attention_weights(weights: Sequence[np.ndarray], titles: Sequence[str],
                           masks: Sequence[np.ndarray | None] | None = None, *,
                           labels: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
                           ) -> Figure:
    """Heatmaps of attention weights side by side, values written in, masked cells crossed out.

    Args:
        weights: one (T_q, T_k) array per panel, rows = queries, columns = keys.
        titles: one title per panel.
        masks: optional (T_q, T_k) boolean arrays (True = may attend), or None per panel.
        labels: optional (query labels, key labels) per panel; positions are numbered otherwise.
    """
    masks = [None] * len(weights) if masks is None else list(masks)
    labels = [None] * len(weights) if labels is None else list(labels)
    arrays = [np.asarray(w, dtype=float) for w in weights]
    fig, axes = plt.subplots(1, len(arrays), figsize=(2.6 * len(arrays) + 0.6, 3.0),
                             squeeze=False)
    for ax, w, m, title, names in zip(axes[0], arrays, masks, titles, labels, strict=True):
        ax.imshow(w, cmap=ATTENTION_CMAP, vmin=0.0, vmax=1.0)
        ax.grid(False)
        for (i, j), value in np.ndenumerate(w):
            blocked = m is not None and not bool(np.asarray(m)[i, j])
            if blocked:  # a masked cell is no part of the weights: grey, crossed out
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.88",
                                           edgecolor="none"))
            text = "×" if blocked else f"{value:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="0.35" if blocked else text_colour(value))
        ax.set_title(title, fontsize="small")
        queries, keys = names if names is not None else (range(w.shape[0]), range(w.shape[1]))
        ax.set_xticks(range(w.shape[1]), [str(k) for k in keys], fontsize="x-small",
                      rotation=90 if names is not None else 0)
        ax.set_yticks(range(w.shape[0]), [str(q) for q in queries], fontsize="x-small")
        ax.set_xlabel("key" if names is not None else "key position")
        ax.set_ylabel("query" if names is not None else "query position")
    return fig


def plot_score_comparison(table: pd.DataFrame) -> Figure:
    """Held-out accuracy against d_k for each score function: median over seeds, min-max band.

    Args:
        table: the output of ``score_functions.compare_score_functions`` (chapter 2).
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    palette = colours(table["score"])
    for (score, rows), marker in zip(table.groupby("score", sort=False), "o^s", strict=False):
        by_width = rows.groupby("d_k")["accuracy"]
        widths = np.array(sorted(rows["d_k"].unique()))
        ax.plot(widths, by_width.median().loc[widths], marker=marker, color=palette[score],
                label=score)
        ax.fill_between(widths, by_width.min().loc[widths], by_width.max().loc[widths],
                        color=palette[score], alpha=0.15, linewidth=0)
    ax.set_xscale("log", base=2)
    widths = sorted(table["d_k"].unique())
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.minorticks_off()
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("held-out accuracy")
    ax.set_ylim(top=1.02)
    ax.legend(fontsize="small", loc="lower left")
    return fig


def plot_lr_sweep(sweep: pd.DataFrame, selection_seeds: Sequence[int] | None = None,
                  reported_seeds: Sequence[int] | None = None) -> Figure:
    """Held-out accuracy against the learning rate, one line per score function, one panel per
    d_k: the median over ``reported_seeds``, a band from their worst to their best seed, and a
    ring at the rate ``lr_sweep.best_of_sweep`` chooses on ``selection_seeds``.

    Args:
        sweep: one row per run, as ``lr_sweep.run_sweep`` returns it (chapter 2).
        selection_seeds, reported_seeds: the seeds the rate is chosen on and the seeds drawn;
            ``None`` (either): every seed of ``sweep``.
    """
    every_seed = tuple(sorted(sweep["seed"].unique()))
    selection_seeds = every_seed if selection_seeds is None else tuple(selection_seeds)
    reported_seeds = every_seed if reported_seeds is None else tuple(reported_seeds)
    best = best_of_sweep(sweep, selection_seeds=selection_seeds,
                         reported_seeds=reported_seeds).set_index(["d_k", "score"])["best_lr"]
    palette = colours(sweep["score"])  # the same colour for a score in every panel
    sweep = sweep[sweep["seed"].isin(reported_seeds)]
    widths = sorted(sweep["d_k"].unique())
    cols = min(2, len(widths))
    rows = math.ceil(len(widths) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 0.6, 2.6 * rows + 0.4),
                             sharex=True, sharey=True, squeeze=False)
    for ax, d_k in zip(axes.flat, widths, strict=False):
        at_width = sweep[sweep["d_k"] == d_k]
        for (score, rows), marker in zip(at_width.groupby("score", sort=False), "o^s",
                                         strict=False):
            by_lr = rows.groupby("lr")["accuracy"]
            median = by_lr.median()
            ax.plot(median.index, median, marker=marker, markersize=3.5, color=palette[score],
                    label=score)
            ax.fill_between(median.index, by_lr.min(), by_lr.max(), color=palette[score],
                            alpha=0.15, linewidth=0)
            ax.plot(best[d_k, score], median[best[d_k, score]], marker=marker, markersize=9,
                    markerfacecolor="none", color=palette[score])
        ax.set_xscale("log")
        ax.set_title(f"$d_k$ = {d_k}", fontsize="small")
    for ax in axes[-1]:
        ax.set_xlabel("learning rate")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out accuracy")
    axes[0, 0].set_ylim(top=1.02)
    axes[0, 0].legend(fontsize="x-small", loc="lower left")
    return fig


def _draw_vector(ax: plt.Axes, x: float, y: float, values: Sequence[float],
                 limit: float, highlight: bool = False) -> None:
    """Draw ``values`` as a row of cells with their numbers, left edge at x, centred on y."""
    cmap = plt.get_cmap("RdBu_r")
    for i, value in enumerate(values):
        ax.add_patch(plt.Rectangle((x + i, y - 0.5), 1, 1,
                                   facecolor=cmap(0.5 + 0.35 * value / limit),
                                   edgecolor="black" if highlight else "0.5",
                                   linewidth=1.4 if highlight else 0.6))
        text = f"{value:.2f}" if abs(value - round(value)) > 1e-9 else f"{round(value)}"
        ax.text(x + i + 0.5, y, text, ha="center", va="center", fontsize=7)


def plot_attention_steps(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                         query: int = 0) -> Figure:
    """One token's self-attention drawn as vectors: x_j -> k_j (and the query q) -> q . k_j ->
    divided by sqrt(d_k) -> softmax w_j -> w_j v_j -> their sum, every number written in.

    Args:
        x: (T, d_model) token vectors. w_q, w_k: (d_model, d_k). w_v: (d_model, d_v).
        query: the token whose query is drawn.
    """
    x, w_q, w_k, w_v = (np.asarray(a, dtype=float) for a in (x, w_q, w_k, w_v))
    T, d_k, d_v = x.shape[0], w_q.shape[1], w_v.shape[1]
    q, keys, values = x[query] @ w_q, x @ w_k, x @ w_v  # (d_k,), (T, d_k), (T, d_v)
    scores = keys @ q  # (T,)
    scaled = scores / math.sqrt(d_k)
    weights = np.exp(scaled - scaled.max())
    weights /= weights.sum()
    weighted = weights[:, None] * values  # (T, d_v)
    output = weighted.sum(axis=0)  # (d_v,)
    limit = max(np.abs(np.concatenate([x.ravel(), q, keys.ravel(), values.ravel(), scores])))
    columns = [  # (header, label of the arrow into it, one vector per token, colour scale)
        ("token\n$x_j$", "", x, limit),
        ("key\n$k_j = x_j W^K$", r"$\times W^K$", keys, limit),
        (r"$q \cdot k_j$", "dot with $q$", scores[:, None], limit),
        (rf"$\div \sqrt{{{d_k}}}$", "scale", scaled[:, None], limit),
        ("weight\n$w_j$", "softmax", weights[:, None], 1.0),
        ("value\n$v_j = x_j W^V$", "", values, limit),
        ("$w_j v_j$", r"$\times w_j$", weighted, 1.0),
    ]
    gap = 1.5
    widths = [vectors.shape[1] for _, _, vectors, _ in columns]
    starts = np.cumsum([0] + [w + gap for w in widths[:-1]])  # left edge of each column
    fig, ax = plt.subplots(figsize=(0.3 * (starts[-1] + d_v + 2.3), 0.3 * (T + 6)))
    top = T + 2.2  # the query's row, above the tokens
    for column, (header, arrow, vectors, scale) in enumerate(columns):
        start = starts[column]
        ax.text(start, T - 0.35, header, ha="left", va="bottom", fontsize=8.5)
        for j in range(T):
            y = T - 1 - j
            _draw_vector(ax, start, y, vectors[j], scale, highlight=(j == query and column == 0))
            if arrow:
                ax.annotate("", xy=(start - 0.1, y), xytext=(start - gap + 0.1, y),
                            arrowprops={"arrowstyle": "->", "color": "0.4"})
        if arrow:
            ax.text(start - gap / 2, -0.75, arrow, ha="center", va="top", fontsize=8,
                    color="0.3")
    for j in range(T):
        ax.text(-0.3, T - 1 - j, f"$j = {j}$", ha="right", va="center", fontsize=8.5)
    ax.text(starts[1] - 0.3, top, f"query of token {query}: $q = x_{query} W^Q$", ha="right",
            va="center", fontsize=8.5)
    _draw_vector(ax, starts[1], top, q, limit, highlight=True)
    ax.annotate("", xy=(starts[2] + 0.5, T + 1.3), xytext=(starts[1] + d_k + 0.1, top),
                arrowprops={"arrowstyle": "->", "color": "0.4"})
    ax.text(starts[-1] - 0.3, -2.1, "output $= \\sum_j w_j v_j$", ha="right", va="center",
            fontsize=8.5)
    _draw_vector(ax, starts[-1], -2.1, output, 1.0, highlight=True)
    ax.set_xlim(-2.0, starts[-1] + d_v + 0.3)
    ax.set_ylim(-2.8, top + 0.7)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


def plot_tuned_against_fixed(fixed: pd.DataFrame, tuned: pd.DataFrame,
                             additive_plateau: pd.Series, fixed_rate: float) -> Figure:
    """Median held-out accuracy against d_k for the unscaled and the scaled dot product, each at
    ``fixed_rate`` (dashed, open markers) and at its own chosen rate (solid, filled), under the
    line of additive attention's plateau: the gap the single rate opened and the gap tuning
    leaves, on one panel.

    Args:
        fixed, tuned: medians (fractions) indexed by d_k, one column per score function, at
            ``fixed_rate`` and at each one's chosen rate (``lr_sweep.read_sweep``'s ``fixed``
            and ``medians``).
        additive_plateau: additive attention's highest median at each d_k.
    """
    palette = colours(list(fixed.columns))
    widths = sorted(fixed.index)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(widths, 100 * additive_plateau.loc[widths], color=palette["additive"], linewidth=3,
            alpha=0.5, label="additive, its plateau of rates")
    for score, marker in (("dot-product", "o"), ("scaled dot-product", "s")):
        ax.plot(widths, 100 * fixed.loc[widths, score], linestyle="--", marker=marker,
                markerfacecolor="white", color=palette[score], label=f"{score}, at {fixed_rate:g}")
        ax.plot(widths, 100 * tuned.loc[widths, score], marker=marker, color=palette[score],
                label=f"{score}, at its own rate")
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths, [str(d) for d in widths])
    ax.minorticks_off()
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("held-out accuracy (%, median)")
    ax.set_ylim(top=103)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title("One rate for all, or each its own", fontsize=11)
    return fig
