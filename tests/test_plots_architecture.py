"""Tests for the course's map (figures.architecture)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from transformer_course.figures.architecture import (  # noqa: E402
    PARTS,
    plot_architecture,
    plot_decoder_only,
)


def _boxes(fig) -> dict[str, FancyBboxPatch]:
    """Each labelled box of the drawing, by its label (the last box drawn with a label wins)."""
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    labelled = {}
    for text in ax.texts:
        x, y = text.get_position()
        for box in boxes:
            if box.get_bbox().contains(x, y) and box.get_linestyle() in ("-", "solid"):
                labelled[text.get_text()] = box
    assert labelled, "the drawing has labelled boxes"
    return labelled


@pytest.mark.parametrize("norm_first", [False, True])
def test_architecture_diagram_draws_every_block(norm_first):
    texts = [t.get_text() for t in plot_architecture(norm_first).axes[0].texts]
    assert texts.count("Multi-head self-attention") == 1
    assert ("final LayerNorm (once)" in texts) == norm_first
    assert texts.count("LayerNorm") == (5 if norm_first else 0)  # 2 encoder + 3 decoder


def test_no_highlight_marks_nothing():
    assert all(box.get_alpha() in (None, 1.0) for box in _boxes(plot_architecture()).values())


@pytest.mark.parametrize("part", sorted(PARTS))
def test_highlight_marks_one_kind_of_box_and_fades_the_rest(part):
    plain = _boxes(plot_architecture())
    fig = plot_architecture(highlight=[part], here="this part")
    marked = _boxes(fig)
    assert plain.keys() == marked.keys()
    thick = {label for label, box in marked.items() if box.get_linewidth() > 2}
    faded = {label for label, box in marked.items() if (box.get_alpha() or 1.0) < 1}
    assert thick and thick.isdisjoint(faded) and thick | faded == set(marked)
    fills = {to_hex(plain[label].get_facecolor()[:3]) for label in thick}
    assert len(fills) == 1, "one kind of box is highlighted"
    assert all(to_hex(plain[label].get_facecolor()[:3]) not in fills for label in faded)
    assert any("this part" in t.get_text() for t in fig.axes[0].texts)


def test_each_part_highlights_different_boxes():
    thick = [frozenset(label for label, box in _boxes(plot_architecture(highlight=[part])).items()
                       if box.get_linewidth() > 2) for part in PARTS]
    assert len(set(thick)) == len(PARTS)


def test_the_decoder_alone_draws_one_pre_norm_stack_without_cross_attention():
    from transformer_course.experiments.ch8_real_sentences import models

    labels = [t.get_text() for t in plot_decoder_only().axes[0].texts]
    model = models.DecoderOnly(models.writer_config(30, layers=1))
    layer = model.layers[0]
    assert not any(label.startswith(("Cross-attention", "memory")) for label in labels)
    assert labels.count("Masked multi-head self-attention") == 1
    assert labels.count("Feed-forward (ReLU)") == 1
    # one LayerNorm per sub-layer and one at the top, as the model has
    assert labels.count("LayerNorm") == len(layer.sublayers) and model.norm is not None
    assert "final LayerNorm (once)" in labels
