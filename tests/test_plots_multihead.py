"""Figures of the multi-head chapter: what they draw."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from transformer_course.figures import ch3_multi_head_attention as plots


def test_split_heads_figure_shows_each_head_block() -> None:
    q = np.arange(24, dtype=float).reshape(3, 8)
    fig = plots.plot_split_heads(q, 4)
    assert isinstance(fig, Figure) and len(fig.axes) == 5
    np.testing.assert_array_equal(fig.axes[2].images[0].get_array(), q[:, 2:4])
    plt.close(fig)


def test_head_maps_figure_draws_both_rows() -> None:
    rng = np.random.default_rng(0)
    maps = rng.dirichlet(np.ones(4), size=(2, 4))  # (h, T, T)
    rows = {"untrained": maps, "trained": maps[::-1].copy(), "one head": maps[:1]}
    fig = plots.plot_head_maps(rows, list("abcd"), anchor=2)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 5
    np.testing.assert_array_equal(images[3].get_array(), maps[0])  # trained row, head 2
    np.testing.assert_array_equal(images[4].get_array(), maps[0])  # one-head row
    plt.close(fig)


def test_training_curve_figure() -> None:
    runs = {"a": ([1.0] * 30, [0.5] * 30), "b": (np.linspace(2, 1, 40), [0.2] * 40)}
    fig = plots.plot_lookup_training(runs, window=10)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 2
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), 0.5)
    assert fig.axes[0].lines[1].get_xdata()[0] == 10  # the first full window ends at step 10
    plt.close(fig)


def test_multihead_flow_draws_every_head():
    from matplotlib.patches import Rectangle

    from transformer_course.figures.ch3_multi_head_attention import plot_multihead_flow

    for h in (1, 3):
        fig = plot_multihead_flow(h)
        ax = fig.axes[0]
        boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
        # X and W^O (1 each), Q, K, V and the concatenation (h slices each), h head boxes
        assert len(boxes) == 2 + 4 * h + h
        assert sum("Attention" in t.get_text() for t in ax.texts) == h
        plt.close(fig)
