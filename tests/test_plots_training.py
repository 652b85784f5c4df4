"""Tests for the training chapter's figures: they draw what they are given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_course.core.batching import make_batch
from transformer_course.core.schedule import noam_lr
from transformer_course.core.training import (  # noqa: E402
    Evaluation,
    Metrics,
    TrainResult,
)
from transformer_course.figures import ch6_training as plots


def test_lr_schedules_plot_the_formula():
    fig = plots.plot_lr_schedules(64, [10, 40], 100)
    lines = [line for line in fig.axes[0].lines if len(line.get_xdata()) == 100]
    assert len(lines) == 2
    assert np.allclose(lines[1].get_ydata(), [noam_lr(s, 64, 40) for s in range(1, 101)])


def test_label_smoothing_bars():
    fig = plots.plot_label_smoothing_targets(5, 3, [0.0, 0.1])
    assert len(fig.axes) == 2
    heights = [p.get_height() for p in fig.axes[1].patches]
    assert heights == pytest.approx([0.02, 0.02, 0.02, 0.92, 0.02])


def test_training_curves_and_masks_and_attention():
    result = TrainResult((2.0, 1.0, 0.5), (1e-3,) * 3,
                         (Evaluation(3, 0.1, 0.1, Metrics(0.4, 0.9, 0.5)),), 0.1, 0.1, None)
    fig = plots.plot_training_curves(result, floor=0.3, title="t")
    assert isinstance(fig, Figure) and fig.axes[0].lines[0].get_ydata().tolist() == [2, 1, 0.5]
    batch = make_batch([torch.tensor([4, 5])], [torch.tensor([5, 4])])
    assert len(plots.plot_batch_masks(batch).axes) == 2
    weights = torch.softmax(torch.randn(2, 3, 4), dim=-1)
    fig = plots.plot_attention_heads(weights, list("abc"), list("wxyz"))
    assert len(fig.axes) == 3  # two heads and a colour bar


def test_length_generalisation_and_warmup_figures():
    import pandas as pd

    table = pd.DataFrame({"length": [3, 4, 5], "sequence accuracy": [1.0, 0.5, 0.0]})
    fig = plots.plot_length_generalisation([table, table], [np.ones(5), np.zeros(5)],
                                           trained_max_len=4, chance=0.1)
    left, right = fig.axes
    assert left.lines[0].get_ydata().tolist() == [1.0, 0.5, 0.0]
    assert right.lines[1].get_xdata().tolist() == [1, 2, 3, 4, 5]
    curves = {"a": [[3.0, 2.0, 1.0], [3.0, 1.0]], "b": [[2.0, 2.0, 2.0]]}
    fig = plots.plot_warmup_losses(curves, steps=2)
    medians = [line.get_ydata().tolist() for line in fig.axes[0].lines]
    assert medians == [[3.0, 1.5], [2.0, 2.0]]  # per step, over the runs still going
