"""Tests for figures.ch1_why_attention: each figure's axes, labels and contents."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

from transformer_course.experiments.ch1_why_attention.recurrence import GradientDecay
from transformer_course.figures import ch1_why_attention as why_attention


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _arrows(ax) -> int:
    return sum(isinstance(t, Annotation) for t in ax.texts)


def test_information_flow():
    n = 5
    fig = why_attention.plot_information_flow(n, kernel_size=3)
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    rnn_ax, conv_ax, att_ax = fig.axes
    assert _arrows(rnn_ax) == n + (n - 1)  # x_i -> h_i and h_{i-1} -> h_i
    assert _arrows(att_ax) == n * n  # every input to every output
    assert any(f"through {n - 1} steps" in t.get_text() for t in rnn_ax.texts)
    # width 3 moves information one position per layer: n - 1 layers, each wired to neighbours
    assert any(f"through {n - 1} stacked layers" in t.get_text() for t in conv_ax.texts)
    assert len(conv_ax.lines) == (n - 1) * (3 * n - 2)
    highlighted = [line for line in conv_ax.lines if line.get_linewidth() == 2]
    assert len(highlighted) == n - 1
    assert {(line.get_xdata()[1], line.get_ydata()[1]) for line in highlighted} == \
        {(layer, layer) for layer in range(1, n)}  # x_1's path: one position per layer
    wide = why_attention.plot_information_flow(n, kernel_size=5).axes[1]
    assert any("through 2 stacked layers" in t.get_text() for t in wide.texts)


def test_parallel_speedup_shows_each_layers_two_thread_bound():
    summary = pd.DataFrame([{"layer": layer, "threads": threads, "best_case_speedup": speedup}
                            for layer, speedup in (("rnn", 0.8), ("att", 1.9))
                            for threads in (1, 2)])
    ax = why_attention.plot_parallel_speedup(summary).axes[0]
    assert [round(bar.get_width(), 2) for bar in ax.patches] == [0.8, 1.9]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rnn", "att"]
    assert 2.0 in [line.get_xdata()[0] for line in ax.lines]  # the perfect split


def _times() -> pd.DataFrame:
    rows = [{"length": n, "layer": layer, "median_s": t * n, "min_s": t * n * 0.9,
             "max_s": t * n * 1.1} for n in (16, 32, 64) for layer, t in (("a", 1e-5), ("b", 1e-6))]
    return pd.DataFrame(rows)


def test_forward_times():
    fig = why_attention.plot_forward_times(_times())
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "sequence length" in ax.get_xlabel() and "ms" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.16, 0.32, 0.64])  # seconds -> ms


def test_gradient_decay():
    distances = np.arange(6)
    result = GradientDecay(distances, np.tile(0.5 ** distances, (3, 1)),
                           np.full((3, 6), 0.1))
    fig = why_attention.plot_gradient_decay(result)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "distance" in ax.get_xlabel() and "3 seeds" in ax.get_title()
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[0].get_ydata(), 0.5 ** distances)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("recurrent") and labels[1].startswith("self-attention")


def test_flops_by_length():
    flops = pd.DataFrame([{"length": n, "layer": layer, "flops": n ** p}
                          for n in (8, 16, 32) for layer, p in (("x", 1), ("y", 2))])
    fig = why_attention.plot_flops_by_length(flops, d=16)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "FLOPs" in ax.get_ylabel() and "d = 16" in ax.get_title()
    assert any(list(line.get_xdata()) == [16, 16] for line in ax.lines)  # the n = d line
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["x", "y"]


def test_seq2seq():
    n = 4
    fig = why_attention.plot_seq2seq(n)
    left, right = fig.axes
    # left: chains (n - 1 encoder, n - 2 decoder), inputs (n) and the one link c (1)
    assert _arrows(left) == (n - 1) + (n - 2) + n + 1
    assert _arrows(right) == (n - 1) + (n - 2) + n + 1 + n  # plus one look-back per h_j
    assert any("tanh" in t.get_text() for t in right.texts)


def _summary() -> pd.DataFrame:
    return pd.DataFrame([{"layer": layer, "threads": t, "wall_ms": w * t, "cpu_busiest_ms": w / t}
                         for layer, w in (("a", 10.0), ("b", 2.0)) for t in (1, 2)])


def test_thread_scaling():
    fig = why_attention.plot_thread_scaling(_summary())
    wall, busy = fig.axes
    assert list(wall.get_xticks()) == [1, 2] and wall.get_xlabel() == "threads"
    np.testing.assert_allclose(wall.lines[0].get_ydata(), [10.0, 20.0])
    np.testing.assert_allclose(busy.lines[0].get_ydata(), [10.0, 5.0])
    assert [t.get_text() for t in wall.get_legend().get_texts()] == ["a", "b"]


def test_opening_map():
    stored = {"source": ["<s>", "a", "b", "</s>"], "target": ["x", "</s>"],
              "weights": [[0.1, 0.2, 0.7, 0.0], [0.25, 0.25, 0.25, 0.25]]}
    fig = why_attention.plot_opening_map(stored)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == stored["source"]
    assert [t.get_text() for t in ax.get_yticklabels()] == stored["target"]
    written = [t.get_text() for t in ax.texts]
    assert ".70" in written and written.count(".25") == 4  # every weight is written in
    assert ax.images[0].get_array().shape == (2, 4)
