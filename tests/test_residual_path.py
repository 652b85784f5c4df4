"""Tests for experiments.ch5_full_model.residual_path: gradients with and without residuals."""

from __future__ import annotations

import pytest
import torch

from transformer_course.core.model import EncoderLayer
from transformer_course.experiments.ch5_full_model.residual_path import (
    ResidualProbe,
    first_to_last,
    residual_gradients,
)

SMALL = ResidualProbe(num_layers=3, d_model=8, num_heads=2, d_ff=16, batch=2, length=3, seed=5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_with_residual_matches_the_package_layers(norm_first):
    table = residual_gradients(True, norm_first, SMALL)
    torch.manual_seed(SMALL.seed)
    layers = [EncoderLayer(8, 2, 16, norm_first=norm_first) for _ in range(3)]
    g = torch.Generator().manual_seed(SMALL.seed + 1)
    x = torch.randn(2, 3, 8, generator=g)
    target = torch.randn(2, 3, 8, generator=g)
    for layer in layers:
        x = layer(x)
    (x - target).pow(2).mean().backward()
    expected = [torch.cat([p.grad.flatten() for p in layer.parameters()]).norm().item()
                for layer in layers]
    assert table["gradient norm"].tolist() == pytest.approx(expected, rel=1e-5)
    assert table["layer"].tolist() == [1, 2, 3]


def test_without_residual_drops_the_additions():
    table = residual_gradients(False, False, SMALL)
    torch.manual_seed(SMALL.seed)
    layers = [EncoderLayer(8, 2, 16) for _ in range(3)]
    g = torch.Generator().manual_seed(SMALL.seed + 1)
    x = torch.randn(2, 3, 8, generator=g)
    target = torch.randn(2, 3, 8, generator=g)
    for layer in layers:
        norm1, norm2 = (sublayer.norm for sublayer in layer.sublayers)
        x = norm1(layer.self_attn(x, x, x)[0])
        x = norm2(layer.feed_forward(x))
    (x - target).pow(2).mean().backward()
    expected = [torch.cat([p.grad.flatten() for p in layer.parameters()]).norm().item()
                for layer in layers]
    assert table["gradient norm"].tolist() == pytest.approx(expected, rel=1e-5)


def test_with_and_without_are_labelled_and_differ():
    with_ = residual_gradients(True, False, SMALL)
    without = residual_gradients(False, False, SMALL)
    assert set(without["residual"]) == {"without"} and set(with_["residual"]) == {"with"}
    assert with_["gradient norm"].tolist() != pytest.approx(without["gradient norm"].tolist())


def test_one_layer_ratio_is_one():
    """With a single layer, the last layer is the first."""
    probe = ResidualProbe(num_layers=1, d_model=8, num_heads=2, d_ff=16, batch=2, length=3)
    assert first_to_last(residual_gradients(False, True, probe)) == pytest.approx(1.0)


def test_arguments_are_checked():
    with pytest.raises(TypeError):
        residual_gradients(1, False, SMALL)
    with pytest.raises(ValueError):
        residual_gradients(True, False, ResidualProbe(num_layers=0))
