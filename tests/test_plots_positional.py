"""Smoke tests for the positional-encoding figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
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

