"""Tests for figures.ch2_scaled_dot_product_attention: figures build from their tables."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from transformer_course.figures import ch2_scaled_dot_product_attention as plots

VARIANCE = pd.DataFrame({"d_k": [1, 2, 4], "var_unscaled": [1.0, 2.1, 3.9],
                         "var_scaled": [1.0, 1.05, 0.97]})
SATURATION = pd.DataFrame({"d_k": [1, 1, 4, 4], "scaling": ["scaled", "unscaled"] * 2,
                           "entropy": [2.0, 2.0, 1.9, 1.0], "grad_norm": [0.2, 0.2, 0.2, 0.1]})
TIMES = pd.DataFrame({"T": [64, 128, 256] * 2, "path": ["a"] * 3 + ["b"] * 3,
                      "seconds": [1e-3, 4e-3, 1.6e-2, 2e-3, 8e-3, 3.2e-2]})
MEMORY = pd.DataFrame({"T": [64, 128, 256], "peak_bytes": [3e4, 1.2e5, 4.8e5],
                       "weights_bytes": [1e4, 4e4, 1.6e5]})


def _close(fig):
    assert isinstance(fig, Figure)
    plt.close(fig)


def test_variance_figure():
    fig = plots.plot_dot_product_variance(VARIANCE)
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 4
    _close(fig)


def test_saturation_figure():
    fig = plots.plot_softmax_saturation(SATURATION, T_k=8)
    left, right = fig.axes
    assert left.lines[-1].get_ydata()[0] == pytest.approx(np.log(8))
    assert right.get_yscale() == "log"
    _close(fig)


def test_cost_figure_reports_fitted_slopes():
    fig = plots.plot_attention_cost(TIMES, MEMORY, fit_from=64, time_label="CPU ms")
    left, right = fig.axes
    labels = [line.get_label() for line in left.lines]
    assert labels == ["a (slope 2.00)", "b (slope 2.00)"]
    assert right.lines[0].get_label() == "NumPy peak (slope 2.00)"
    assert left.get_ylabel() == "CPU ms"
    _close(fig)


def test_cost_figure_shows_given_exponents():
    fig = plots.plot_attention_cost(TIMES, MEMORY, time_slopes={"a": 1.5, "b": 2.25})
    assert [line.get_label() for line in fig.axes[0].lines] == ["a (slope 1.50)",
                                                                "b (slope 2.25)"]
    _close(fig)


def test_weights_figure_labels_queries_and_keys():
    w = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    fig = plots.plot_attention_weights([w], ["t"], labels=[(["q0", "q1"], ["a", "b", "c"])])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["q0", "q1"]
    _close(fig)


def test_score_comparison_plots_medians_with_bands():
    table = pd.DataFrame([{"d_k": d, "score": s, "seed": seed, "accuracy": a + 0.01 * seed}
                          for d, a in ((8, 0.5), (16, 0.7)) for s in ("x", "y")
                          for seed in range(3)])
    fig = plots.plot_score_comparison(table)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.51, 0.71])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["x", "y"]
    assert ax.get_xscale() == "log" and "accuracy" in ax.get_ylabel()
    _close(fig)


def test_weights_figure_marks_blocked_cells():
    w = np.array([[1.0, 0.0], [0.4, 0.6]])
    mask = np.array([[True, False], [True, True]])
    fig = plots.plot_attention_weights([w, w], ["plain", "masked"], [None, mask])
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert texts == ["1.00", "×", "0.40", "0.60"]
    assert "×" not in [t.get_text() for t in fig.axes[0].texts]
    _close(fig)


def test_lr_sweep_has_one_panel_per_width_and_rings_each_best_rate():
    table = pd.DataFrame([{"d_k": d, "score": s, "lr": lr, "seed": seed,
                           "accuracy": (0.9 if lr == best else 0.5) + 0.01 * seed,
                           "loss": 1.0}
                          for d in (8, 16) for s, best in (("x", 0.1), ("y", 0.01))
                          for lr in (0.01, 0.1) for seed in range(3)])
    fig = plots.plot_lr_sweep(table)
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.51, 0.91])  # medians of "x"
    assert (ax.lines[1].get_xdata()[0], ax.lines[1].get_ydata()[0]) == (0.1, 0.91)  # its ring
    assert (ax.lines[3].get_xdata()[0], ax.lines[3].get_ydata()[0]) == (0.01, 0.91)  # y's
    assert ax.get_xscale() == "log"
    _close(fig)


def test_tuned_against_fixed_draws_both_rates_under_additive_attentions_plateau():
    scores = ["additive", "dot-product", "scaled dot-product"]
    fixed = pd.DataFrame([[1.0, 0.9, 1.0], [1.0, 0.5, 0.8]], index=[32, 256], columns=scores)
    tuned = pd.DataFrame([[0.97, 0.95, 1.0], [1.0, 0.8, 1.0]], index=[32, 256],
                         columns=scores)
    plateau = pd.Series([1.0, 1.0], index=[32, 256])
    fig = plots.plot_tuned_against_fixed(fixed, tuned, plateau, 0.01)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    np.testing.assert_allclose(lines["dot-product, at 0.01"].get_ydata(), [90, 50])
    np.testing.assert_allclose(lines["dot-product, at its own rate"].get_ydata(), [95, 80])
    np.testing.assert_allclose(lines["scaled dot-product, at 0.01"].get_ydata(), [100, 80])
    np.testing.assert_allclose(lines["additive, its plateau of rates"].get_ydata(), [100, 100])
    assert lines["dot-product, at 0.01"].get_linestyle() == "--"
    assert lines["dot-product, at its own rate"].get_linestyle() == "-"
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == \
        ["32", "256"]
    _close(fig)


def test_attention_steps_writes_the_packages_numbers():
    from transformer_course import scaled_dot_product_attention_numpy

    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (3, 3)).astype(float)
    w_q, w_k, w_v = (rng.integers(-1, 2, (3, n)).astype(float) for n in (4, 4, 2))
    out, weights = scaled_dot_product_attention_numpy(x @ w_q, x @ w_k, x @ w_v)
    fig = plots.plot_attention_steps(x, w_q, w_k, w_v, query=1)
    texts = [t.get_text() for t in fig.axes[0].texts]
    for value in (*weights[1], *out[1]):  # query 1's weights and output are written in
        assert f"{value:.2f}" in texts or f"{round(value)}" in texts
    assert sum(t.startswith("$j") for t in texts) == 3  # one row per token
    _close(fig)
