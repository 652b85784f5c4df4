"""Tests for the translation chapter's bar charts: they draw the medians they are given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_course.figures import ch7_translation as plots  # noqa: E402
from transformer_course.figures.style import colour  # noqa: E402

SHORT = {"baseline": [80.0, 73.0, 81.0], "no dropout": [99.0, 100.0, 99.5],
         "N = 1": [65.0, 64.0, 70.0]}
FULL = {"baseline": [100.0, 100.0, 99.9], "no dropout": [100.0] * 3, "N = 1": [99.0, 100.0, 98.0]}


def _widths(bars: list) -> list[float]:
    """Bar lengths, first row first (the y axis is inverted: the first row is at the top)."""
    return [p.get_width() for p in sorted(bars, key=lambda p: p.get_y())]


def _in_colour(fig: Figure, colour: str) -> list:
    rgba = matplotlib.colors.to_rgba(colour)
    return [p for p in fig.axes[0].patches if p.get_facecolor() == rgba]


def test_table3_bars_are_the_medians_short_filled_full_outlined():
    fig = plots.plot_table3_variants(SHORT, FULL)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    filled = [p for p in ax.patches if p.get_facecolor()[3] > 0]
    outlined = [p for p in ax.patches if p.get_facecolor()[3] == 0]
    assert _widths(filled) == pytest.approx([np.median(v) for v in SHORT.values()])
    assert _widths(outlined) == pytest.approx([np.median(v) for v in FULL.values()])
    greedy = matplotlib.colors.to_rgba(colour("greedy"))
    assert {p.get_facecolor() for p in filled} == {p.get_edgecolor() for p in outlined} == {
        greedy}
    assert [t.get_text() for t in ax.get_yticklabels()] == list(SHORT)
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert dashed and dashed[0].get_xdata()[0] == pytest.approx(np.median(SHORT["baseline"]))


def test_training_range_bars_one_colour_per_method():
    groups = {name: [100.0] * 3 for name in SHORT}
    fig = plots.plot_training_range(SHORT, groups)
    ax = fig.axes[0]
    greedy = _in_colour(fig, colour("greedy"))
    by_group = _in_colour(fig, colour("group by group"))
    assert _widths(greedy) == pytest.approx([np.median(v) for v in SHORT.values()])
    assert _widths(by_group) == pytest.approx([100.0] * 3)
    assert len(ax.patches) == 6
    seeds = [line for line in ax.lines if line.get_marker() == "o"]
    assert sum(len(line.get_xdata()) for line in seeds) == 2 * 3 * 3  # every seed a dot
