"""What the residual connection does for the gradient: a deep stack with and without it.

The same encoder layers of the package, freshly initialised, are run once with their residual
additions (``x + F(x)``, the paper's layers) and once with the additions removed (``F(x)``, the
LayerNorms kept where they stand). One random batch, a mean-squared error against a random
target, one backward pass, no training: the norm of the loss gradient with respect to each
layer's parameters says how much of the learning signal reaches that layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from transformer_course.core.model import EncoderLayer

COLUMNS = ("norm", "residual", "layer", "gradient norm")


@dataclass(frozen=True)
class ResidualProbe:
    """Sizes of the deep stack and of the random batch that probes it."""

    num_layers: int = 24  # N, encoder layers in the stack
    d_model: int = 32  # model width
    num_heads: int = 4  # h
    d_ff: int = 128  # feed-forward width, 4 * d_model
    batch: int = 4  # B
    length: int = 8  # T, positions per sequence
    seed: int = 0  # seeds the weights; the batch uses seed + 1


def _layer(layer: EncoderLayer, x: torch.Tensor, residual: bool) -> torch.Tensor:
    """One encoder layer, as the package runs it or with both residual additions removed."""
    if residual:
        return layer(x)
    attend, feed_forward = layer.sublayers
    if attend.norm_first:  # x <- F(LayerNorm(x)) instead of x + F(LayerNorm(x))
        y = attend.norm(x)
        x = layer.self_attn(y, y, y)[0]
        return layer.feed_forward(feed_forward.norm(x))
    x = attend.norm(layer.self_attn(x, x, x)[0])  # LayerNorm(F(x)) instead of LayerNorm(x + F(x))
    return feed_forward.norm(layer.feed_forward(x))


def residual_gradients(residual: bool, norm_first: bool = False,
                       probe: ResidualProbe = ResidualProbe()) -> pd.DataFrame:
    """The gradient norm of each layer's parameters in a freshly initialised deep stack.

    Args:
        residual: keep the residual additions (True) or remove them (False).
        norm_first: pre-norm layers instead of the paper's post-norm.
        probe: sizes and seed.

    Returns:
        One row per layer (1 = nearest the input), columns norm ("post-norm" / "pre-norm"),
        residual ("with" / "without"), layer, gradient norm.
    """
    if not isinstance(residual, bool) or not isinstance(norm_first, bool):
        raise TypeError("residual and norm_first must be bools")
    if probe.num_layers < 1:
        raise ValueError(f"probe.num_layers must be at least 1, got {probe.num_layers}")
    torch.manual_seed(probe.seed)
    layers = [EncoderLayer(probe.d_model, probe.num_heads, probe.d_ff, norm_first=norm_first)
              for _ in range(probe.num_layers)]
    generator = torch.Generator().manual_seed(probe.seed + 1)
    shape = (probe.batch, probe.length, probe.d_model)
    x = torch.randn(shape, generator=generator)  # (B, T, d_model)
    target = torch.randn(shape, generator=generator)
    for layer in layers:
        x = _layer(layer, x, residual)
    (x - target).pow(2).mean().backward()
    rows = [{"norm": "pre-norm" if norm_first else "post-norm",
             "residual": "with" if residual else "without", "layer": i + 1,
             "gradient norm": torch.cat([p.grad.flatten() for p in layer.parameters()])
             .norm().item()}
            for i, layer in enumerate(layers)]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def first_to_last(table: pd.DataFrame) -> float:
    """The first layer's gradient norm divided by the last layer's, for one stack's table."""
    grads = table.set_index("layer")["gradient norm"]
    return float(grads.loc[grads.index.min()] / grads.loc[grads.index.max()])
