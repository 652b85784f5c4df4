"""Smoke tests for the positional-encoding figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_course.core.positional import (  # noqa: E402
    sinusoidal_encoding_numpy,
    sinusoidal_wavelengths,
)
from transformer_course.figures import ch4_positional_encoding as plots


def test_every_figure_function_returns_a_figure():
    import matplotlib.pyplot as plt

    table = sinusoidal_encoding_numpy(20, 8)
    offsets = np.arange(-3, 4)
    curves = {"a": np.linspace(0, 1, 10), "b": np.full(10, 0.5)}
    figures = [
        plots.plot_encoding_heatmap(table),
        plots.plot_encoding_curves(table, [0, 1, 5]),
        plots.plot_wavelengths(sinusoidal_wavelengths(8)),
        plots.plot_similarity_vs_offset(offsets, np.ones((2, 7)), [3, 9], "dot"),
        plots.plot_encoding_circle(table, [0, 2], positions=12, shift=3),
        plots.plot_extrapolation(curves, curves, train_len=4, chance=0.1),
    ]
    circle = figures[4].axes[0]
    assert circle.collections[0].get_offsets().shape == (12, 2)  # one point per position
    assert np.allclose(np.hypot(*circle.collections[0].get_offsets().T), 1.0)
    for fig in figures:
        assert isinstance(fig, Figure)
        assert fig.axes
        plt.close(fig)
    assert len(figures[1].axes) == 3
    assert len(figures[5].axes) == 2



def test_embedding_plus_encoding_draws_the_sum_with_its_signs():
    import matplotlib.pyplot as plt

    tokens = ["the", "cat", "sat", "the"]
    embeddings = np.random.default_rng(0).standard_normal((4, 8))
    encodings = sinusoidal_encoding_numpy(4, 8)
    fig = plots.plot_embedding_plus_encoding(tokens, embeddings, encodings)
    panels = [ax for ax in fig.axes if ax.images and ax.get_title()]
    drawn = [np.asarray(ax.images[0].get_array()) for ax in panels]
    assert len(drawn) == 3
    assert np.allclose(drawn[0], embeddings) and np.allclose(drawn[1], encodings)
    assert np.allclose(drawn[2], embeddings + encodings)
    # Each panel has its own scale, symmetric about 0 and as wide as its values, with its own
    # colour bar: the encodings (within [-1, 1]) fill theirs instead of looking blank beside
    # embeddings of several units.
    for ax, values in zip(panels, drawn, strict=True):
        low, high = ax.images[0].get_clim()
        assert low == -high and high == pytest.approx(np.abs(values).max())
        assert ax.images[0].colorbar is not None
    assert panels[1].images[0].get_clim()[1] < panels[0].images[0].get_clim()[1]
    signs = [text.get_text() for ax in fig.axes if not ax.axison for text in ax.texts]
    assert signs == ["+", "="]
    labels = [label.get_text() for label in panels[0].get_yticklabels()]
    assert labels == ["the (0)", "cat (1)", "sat (2)", "the (3)"]
    plt.close(fig)
