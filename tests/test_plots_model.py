"""Tests for the full-model figures (figures.ch5_full_model)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from transformer_course.figures import ch5_full_model as plots


def test_depth_profile_one_line_per_norm():
    table = pd.DataFrame({"stack": ["encoder"] * 4 + ["decoder"] * 4,
                          "norm": ["post-norm", "post-norm", "pre-norm", "pre-norm"] * 2,
                          "layer": [1, 2] * 4,
                          "grad": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]})
    fig = plots.plot_depth_profile(table, "grad", "gradient norm")
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]
    # a panel per stack, in the table's order, a line per placement
    assert [[list(line.get_ydata()) for line in ax.lines] for ax in fig.axes] == [
        [[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]


def test_residual_gradients_one_line_per_residual_setting():
    table = pd.DataFrame({"norm": ["post-norm"] * 4 + ["pre-norm"] * 4,
                          "residual": ["with", "with", "without", "without"] * 2,
                          "layer": [1, 2] * 4,
                          "gradient norm": [1.0, 2.0, 0.1, 3.0, 4.0, 2.0, 0.2, 1.0]})
    fig = plots.plot_residual_gradients(table)
    # a panel per placement, a line per residual setting: the "without" lines
    assert [list(ax.lines[1].get_ydata()) for ax in fig.axes] == [[0.1, 3.0], [0.2, 1.0]]


def test_layer_norm_panels_report_each_vectors_statistics():
    before = pd.Series([1.0, 3.0, 5.0, 7.0])  # mean 4, std sqrt(5)
    after = (before - 4.0) / 5.0 ** 0.5
    fig = plots.plot_layer_norm(before, after)
    titles = [ax.get_title() for ax in fig.axes]
    assert "mean 4.00" in titles[0] and "std 2.24" in titles[0]
    assert "mean 0.00" in titles[1] and "std 1.00" in titles[1]
    assert len(fig.axes[0].patches) == 4  # one bar per feature


def test_decoding_cache_holds_earlier_positions_and_computes_only_the_new_one():
    steps = 4
    fig = plots.plot_decoding_cache(steps)
    gids = [patch.get_gid() for patch in fig.axes[0].patches]
    assert gids.count("cached") == 2 * (steps - 1)  # a key and a value per earlier position
    assert gids.count("new") == 3  # the new position's query, key and value
    texts = [text.get_text() for text in fig.axes[0].texts]
    assert texts.count("decoder") == steps  # one decoder call per step of the loop
    assert texts.count("BOS") == steps + 1  # every step reads BOS; so does panel b
    with pytest.raises(ValueError, match="at least 2"):
        plots.plot_decoding_cache(1)


def test_residual_stream_crosses_lanes_only_in_attention():
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgb
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    positions = 3
    fig = plots.plot_residual_stream(positions)
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    labels = [t.get_text() for t in ax.texts]
    assert labels.count("FFN") == positions and labels.count("self-attention") == 1
    assert len(boxes) == positions + 1
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    # into attention from each lane, attention into every lane, into and out of each FFN
    assert len(arrows) == positions + positions ** 2 + 2 * positions
    crossing = [a for a in arrows if a.get_edgecolor()[:3] == to_rgb("C1")]
    assert len(crossing) == positions * (positions - 1)  # lane to another lane: attention only
    assert labels.count("+") == 2 * positions  # two residual additions per lane
    plt.close(fig)
