"""What self-attention knows about word order: nothing, unless positions are added to its input.

A function f of a sequence is permutation-equivariant when f(x[perm]) = f(x)[perm] for every
reordering perm of the positions. Self-attention without a mask is: every query scores every key by
content alone, so reordering the tokens reorders the outputs and changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def permute_positions(x: torch.Tensor, perm: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """Reorder the positions of ``x``: result[:, t] = x[:, perm[t]].

    Args:
        x: (B, T, d_model). perm: a permutation of 0 .. T - 1, length T.

    Returns:
        (B, T, d_model).
    """
    return x[:, torch.as_tensor(perm, device=x.device)]  # (B, T, d_model)


def permutation_gap(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                    perm: Sequence[int] | torch.Tensor) -> float:
    """max |fn(x[:, perm]) - fn(x)[:, perm]|: zero (up to rounding) when fn is equivariant.

    Args:
        fn: maps (B, T, d_model) to (B, T, d_out). x: (B, T, d_model). perm: a permutation.
    """
    with torch.no_grad():
        permuted_then_fn = fn(permute_positions(x, perm))  # (B, T, d_out)
        fn_then_permuted = permute_positions(fn(x), perm)  # (B, T, d_out)
    return float((permuted_then_fn - fn_then_permuted).abs().max())
