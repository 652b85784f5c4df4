"""Tests for the full-model figures (figures.ch5_full_model)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from transformer_course.figures import ch5_full_model as plots


def test_depth_profile_one_line_per_norm():
    table = pd.DataFrame({"stack": ["encoder"] * 4 + ["decoder"] * 4,
                          "norm": ["post-norm", "post-norm", "pre-norm", "pre-norm"] * 2,
                          "layer": [1, 2] * 4, "grad": [1.0, 2.0, 3.0, 4.0] * 2})
    fig = plots.plot_depth_profile(table, "grad", "gradient norm")
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]
    assert [ax.get_title() for ax in fig.axes] == ["encoder", "decoder"]
