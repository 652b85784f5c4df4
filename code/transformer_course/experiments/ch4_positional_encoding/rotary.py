"""Rotary position embeddings (RoPE): the sinusoids' rotation property put to work.

Chapter 4 shows that moving a sinusoidal encoding k positions on is a fixed block rotation R_k,
one 2 x 2 rotation by the angle k w_i per pair of dimensions (``relative_position.relative_position
_map``). RoPE (Su et al., "RoFormer", 2021) adds nothing to the embeddings. It rotates every query
and key by the rotation of its own position, q_t -> R_t q_t and k_s -> R_s k_s, so that

    (R_t q) . (R_s k) = q^T R_t^T R_s k = q^T R_{s - t} k,

a score that depends on the two positions only through their offset s - t.
"""

from __future__ import annotations

import torch

from transformer_course.core.positional import BASE, sinusoidal_frequencies


def rotate(x: torch.Tensor, positions: torch.Tensor | None = None,
           base: float = BASE) -> torch.Tensor:
    """Rotate each pair (2i, 2i + 1) of the last dimension of ``x`` at position t by t w_i.

    The rotation is the chapter's R_t, block [[cos, sin], [-sin, cos]] of the angle t w_i, so
    ``rotate(x)[..., t, :] == relative_position_map(t, d) @ x[..., t, :]``.

    Args:
        x: (..., T, d) queries or keys, d even.
        positions: (T,) integer positions of the T rows; None: 0 .. T - 1.
        base: the constant of the sinusoids' formula.

    Returns:
        (..., T, d), same dtype.
    """
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    frequencies = torch.from_numpy(sinusoidal_frequencies(d, base))  # (d / 2,) float64
    angles = positions.double()[:, None] * frequencies[None, :]  # (T, d / 2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    first, second = x[..., 0::2], x[..., 1::2]  # (..., T, d / 2) each
    rotated = torch.stack([first * cos + second * sin, second * cos - first * sin], dim=-1)
    return rotated.flatten(-2)  # (..., T, d): pairs interleaved back
