"""Checks for the reader's solutions to the full-model chapter's exercises.

Each check runs the reader's function against the package's own module on seeded random inputs
and raises an ``AssertionError`` that says what differed and by how much.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .masks import padding_mask_from_lengths
from .model import EncoderLayer

EncoderLayerForward = Callable[[EncoderLayer, torch.Tensor, torch.Tensor], torch.Tensor]


def check_encoder_layer_forward(fn: EncoderLayerForward, norm_first: bool = False,
                                atol: float = 1e-10) -> float:
    """Check ``fn(layer, x, mask)`` against ``EncoderLayer.forward`` (eval mode, float64).

    Args:
        fn: the reader's forward pass; gets an :class:`EncoderLayer`, x (B, S, d_model) and a
            padding mask (B, 1, S), and must return (B, S, d_model).
        norm_first: check the pre-norm variant instead of the paper's post-norm.
        atol: the largest absolute difference accepted.

    Returns:
        The largest absolute difference found.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be a bool; got {norm_first!r}")
    generator = torch.Generator().manual_seed(5)
    with torch.random.fork_rng(devices=[]):  # leaves the caller's random stream untouched
        torch.manual_seed(5)
        layer = EncoderLayer(16, 4, 32, dropout=0.1, norm_first=norm_first).double().eval()
    with torch.no_grad():  # non-trivial LayerNorm parameters, so forgetting them is caught
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5, generator=generator)
            norm.bias.uniform_(-0.5, 0.5, generator=generator)
    x = torch.randn(3, 7, 16, dtype=torch.float64, generator=generator)  # (B, S, d_model)
    mask = padding_mask_from_lengths(torch.tensor([7, 4, 1]), 7)  # (B, 1, S)
    with torch.no_grad():
        expected = layer(x, mask)
        got = fn(layer, x, mask)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        raise AssertionError(f"fn must return a tensor of shape {tuple(expected.shape)}; "
                             f"got {shape}")
    difference = float((got - expected).abs().max())
    if not difference <= atol:
        raise AssertionError(f"fn differs from EncoderLayer.forward (norm_first={norm_first}) "
                             f"by up to {difference:.3g} (allowed {atol:g})")
    return difference
