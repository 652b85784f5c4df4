"""The book's visual language (figures.style): a method has one colour in every figure, and every
attention-weight map is drawn with one colormap, its written-in numbers readable on it."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_hex, to_rgb  # noqa: E402

from transformer_course.experiments.ch1_why_attention import complexity, threads
from transformer_course.experiments.ch1_why_attention.recurrence import GradientDecay
from transformer_course.experiments.ch2_scaled_dot_product_attention import (
    attention_stats,
    score_functions,
)
from transformer_course.experiments.ch6_training.stored_runs import WARMUP_SETTINGS
from transformer_course.experiments.ch8_real_sentences.analysis import Reading
from transformer_course.figures import ch1_why_attention as ch1
from transformer_course.figures import ch2_scaled_dot_product_attention as ch2
from transformer_course.figures import ch3_multi_head_attention as ch3
from transformer_course.figures import ch6_training as ch6
from transformer_course.figures import ch8_real_sentences as ch8
from transformer_course.figures.style import ALIASES, ATTENTION_CMAP, METHOD_COLOURS, colours

RNN, LSTM = "recurrent (nn.RNN)", "recurrent (nn.LSTM)"
MHA = "self-attention (MultiHeadAttention)"


def _colour_of(ax, label: str) -> str:
    """The colour of the line labelled ``label`` on ``ax``."""
    [line] = [line for line in ax.lines if line.get_label() == label]
    return to_hex(line.get_color())


def _line_through(ax, ys) -> str:
    """The colour of the line on ``ax`` that draws ``ys``."""
    [line] = [line for line in ax.lines if np.allclose(line.get_ydata(), ys)]
    return to_hex(line.get_color())


def test_a_layer_has_one_colour_in_every_figure_of_chapter_1():
    lengths = (16, 32)
    times = pd.DataFrame([{"length": n, "layer": layer, "median_s": t, "min_s": t, "max_s": t}
                          for n in lengths for layer, t in ((RNN, 2e-3), (LSTM, 3e-3),
                                                            (MHA, 1e-3))])
    decay = GradientDecay(np.arange(3), np.ones((2, 3)), np.full((2, 3), 0.5))
    flops = complexity.flops_by_length(list(lengths), d=8)
    summary = pd.DataFrame([{"layer": layer, "threads": k, "wall_ms": 1.0, "cpu_busiest_ms": 1.0}
                            for layer in (MHA, LSTM, RNN) for k in (1, 2)])  # another order
    drawn = [ch1.plot_forward_times(times).axes[0], ch1.plot_gradient_decay(decay).axes[0],
             ch1.plot_flops_by_length(flops, d=8).axes[0],
             ch1.plot_thread_scaling(summary).axes[0]]
    attention = {_colour_of(drawn[0], MHA), _colour_of(drawn[1], MHA),
                 _colour_of(drawn[2], "self-attention layer (with projections)"),
                 _colour_of(drawn[3], MHA)}
    recurrent = {_colour_of(drawn[0], RNN), _colour_of(drawn[1], "recurrent (ElmanRNN)"),
                 _colour_of(drawn[2], RNN), _colour_of(drawn[3], RNN)}
    assert len(attention) == 1 and len(recurrent) == 1 and attention != recurrent
    # Within one figure, every layer has its own colour.
    layers = flops["layer"].unique()
    assert len({_colour_of(drawn[2], name) for name in layers}) == len(layers)


def test_a_score_function_has_one_colour_in_every_figure_of_chapter_2():
    d_k = [1, 4]
    variance = pd.DataFrame({"d_k": d_k, "var_unscaled": [1.0, 4.2], "var_scaled": [1.0, 1.05]})
    saturation = pd.DataFrame({"d_k": [1, 1, 4, 4], "scaling": ["unscaled", "scaled"] * 2,
                               "entropy": [2.0, 2.1, 1.0, 1.9],
                               "grad_norm": [0.2, 0.3, 0.1, 0.25]})
    comparison = pd.DataFrame([{"d_k": d, "score": s, "seed": 0, "accuracy": a}
                               for d in d_k for s, a in (("additive", 0.5), ("dot-product", 0.6),
                                                         ("scaled dot-product", 0.7))])
    sweep = pd.DataFrame([{"d_k": d, "score": s, "lr": lr, "seed": 0, "loss": 1.0,
                           "accuracy": a + lr}
                          for d in d_k for s, a in (("scaled dot-product", 0.7),
                                                    ("dot-product", 0.6))
                          for lr in (0.01, 0.1)])
    var_ax = ch2.plot_dot_product_variance(variance).axes[0]
    sat_ax = ch2.plot_softmax_saturation(saturation, T_k=8).axes[0]
    cmp_ax = ch2.plot_score_comparison(comparison).axes[0]
    sweep_axes = ch2.plot_lr_sweep(sweep).axes
    scaled = {_line_through(var_ax, variance["var_scaled"]),
              _line_through(sat_ax, [2.1, 1.9]),
              _colour_of(cmp_ax, "scaled dot-product"),
              *(_colour_of(ax, "scaled dot-product") for ax in sweep_axes)}
    unscaled = {_line_through(var_ax, variance["var_unscaled"]),
                _line_through(sat_ax, [2.0, 1.0]),
                _colour_of(cmp_ax, "dot-product"),
                *(_colour_of(ax, "dot-product") for ax in sweep_axes)}
    additive = _colour_of(cmp_ax, "additive")
    assert len(scaled) == 1 and len(unscaled) == 1
    assert len(scaled | unscaled | {additive}) == 3


def test_names_that_are_no_method_get_colours_no_other_series_of_the_figure_has():
    picked = colours(["scaled dot-product", "a", "b", "dot-product"])
    assert picked["scaled dot-product"] == METHOD_COLOURS["scaled"]
    assert len(set(picked.values())) == 4
    assert set(ALIASES.values()) <= set(METHOD_COLOURS)


@pytest.mark.parametrize("names", [
    [*complexity.flops_by_length([4], d=8)["layer"], *threads.LAYERS,
     "recurrent (ElmanRNN)"],  # chapter 1's layers
    score_functions.SCORES, attention_stats.ATTENTION_PATHS,  # chapter 2
    [setting.split(",")[0] for setting in WARMUP_SETTINGS],  # chapter 6's peaks
], ids=["layers", "scores", "paths", "peaks"])
def test_the_experiments_names_are_methods_with_distinct_colours(names):
    picked = colours(names)
    assert set(picked.values()) <= set(METHOD_COLOURS.values())  # none falls back
    methods = {ALIASES.get(name, name) for name in names}
    assert len(set(picked.values())) == len(methods)


def _attention_figures():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(4), size=3)  # (T_q, T_k), rows sum to 1
    weights[0] = [1.0, 0.0, 0.0, 0.0]
    heads = rng.dirichlet(np.ones(4), size=(2, 4))  # (h, T, T)
    reading = Reading(list("abcd"), list("xyz"), "x y z", torch.tensor(weights[:3]))
    mask = np.ones_like(weights, dtype=bool)
    mask[1, 3] = False
    return {
        "ch1 opening map": ch1.plot_opening_map(
            {"source": list("abcd"), "target": list("xyz"), "weights": weights.tolist()}),
        "ch2 weights": ch2.plot_attention_weights([weights, weights], ["a", "b"], [None, mask]),
        "ch3 head maps": ch3.plot_head_maps({"trained": heads}, list("abcd"), anchor=1),
        "ch6 heads": ch6.plot_attention_heads(torch.tensor(heads), list("abcd"), list("wxyz")),
        "ch8 cross-attention": ch8.plot_cross_attention(reading, slice(0, 3), slice(0, 4)),
    }


def test_every_attention_map_uses_the_books_colormap():
    for name, fig in _attention_figures().items():
        images = [image for ax in fig.axes for image in ax.images]
        assert images, name
        assert {image.get_cmap().name for image in images} == {ATTENTION_CMAP}, name


def _luminance(colour) -> float:
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
              for c in to_rgb(colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_weights_written_on_a_map_are_readable_on_their_cells():
    figures = _attention_figures()
    for name in ("ch1 opening map", "ch2 weights"):
        ax = figures[name].axes[0]
        image = ax.images[0]
        values = np.asarray(image.get_array())
        checked = 0
        for text in ax.texts:
            j, i = (round(v) for v in text.get_position())
            cell = image.cmap(image.norm(values[i, j]))
            lighter, darker = sorted((_luminance(cell), _luminance(text.get_color())))[::-1]
            assert (lighter + 0.05) / (darker + 0.05) >= 4.5, (name, text.get_text())
            checked += 1
        assert checked == values.size, name
