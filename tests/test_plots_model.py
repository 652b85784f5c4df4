"""Tests for the full-model figures (figures.ch5_full_model)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_course.figures import ch5_full_model as plots


@pytest.mark.parametrize("norm_first", [False, True])
def test_architecture_diagram_draws_every_block(norm_first):
    fig = plots.plot_architecture(norm_first)
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("Multi-head self-attention") == 1
    assert ("final LayerNorm (once)" in texts) == norm_first
    assert texts.count("LayerNorm") == (5 if norm_first else 0)  # 2 encoder + 3 decoder


def test_depth_profile_one_line_per_norm():
    table = pd.DataFrame({"stack": ["encoder"] * 4 + ["decoder"] * 4,
                          "norm": ["post-norm", "post-norm", "pre-norm", "pre-norm"] * 2,
                          "layer": [1, 2] * 4, "grad": [1.0, 2.0, 3.0, 4.0] * 2})
    fig = plots.plot_depth_profile(table, "grad", "gradient norm")
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]
    assert [ax.get_title() for ax in fig.axes] == ["encoder", "decoder"]
