"""Boolean attention masks. True = may attend, as everywhere in this package.

The masks a model or multi-head attention takes have three dimensions, (B, T_q, T_k), each of size
1 or the full size: (B, 1, S) hides padded keys from every query, (1, T, T) is causal for every
sequence. ``causal_mask`` returns the bare (T, T) pattern; index it with ``[None]`` to share it.
"""

from __future__ import annotations

import functools

import torch

from .checks import Shapes, check_instance, check_int


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(T, T) lower-triangular mask: position t may attend to positions 0..t."""
    check_int("T", T)
    check_instance("device", device, (torch.device, str, type(None)))
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask_from_lengths(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """(B, 1, T) mask that lets every query attend to the first ``lengths[b]`` keys.

    Args:
        lengths: (B,) integer lengths, each in 0..T. T: the padded key length.
    """
    Shapes().tensor("lengths", lengths, "B", dtype="int")
    check_int("T", T)
    if lengths.min() < 0 or lengths.max() > T:
        raise ValueError(f"lengths must lie in [0, T={T}]; got {lengths.tolist()}")
    positions = torch.arange(T, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T)


def padding_mask_from_tokens(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, T) mask that blocks the keys whose token is ``pad_id``.

    Args:
        tokens: (B, T) integer token ids.
    """
    Shapes().tensor("tokens", tokens, "B T", dtype="int")
    check_int("pad_id", pad_id, low=0)
    return (tokens != pad_id)[:, None, :]  # (B, 1, T)


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Broadcast the given masks together and AND them; ``None`` entries are ignored."""
    present = [m for m in masks if m is not None]
    for i, m in enumerate(present):
        Shapes().tensor(f"masks[{i}]", m, "... T_k", dtype="bool")
    try:
        return functools.reduce(torch.logical_and, present) if present else None
    except RuntimeError as error:  # shapes that do not broadcast
        raise ValueError(f"masks must broadcast to one shape (..., T_q, T_k); got "
                         f"{[tuple(m.shape) for m in present]}") from error


def decoder_self_attention_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, T, T) mask for decoder self-attention: causal, and padded keys blocked."""
    padding = padding_mask_from_tokens(tokens, pad_id)  # (B, 1, T)
    return padding & causal_mask(tokens.shape[1], device=tokens.device)  # (B, T, T)
