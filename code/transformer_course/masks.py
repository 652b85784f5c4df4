"""Boolean attention masks. True = may attend, as everywhere in this package.

Shapes are chosen to broadcast against single-head scores (B, T_q, T_k); multi-head attention
inserts the head dimension itself.
"""

from __future__ import annotations

import torch

from .checks import check_array, check_positive_int


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(T, T) lower-triangular mask: position t may attend to positions 0..t."""
    check_positive_int("T", T)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask_from_lengths(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """(B, 1, T) mask that lets every query attend to the first ``lengths[b]`` keys.

    Args:
        lengths: (B,) integer lengths, each in 0..T.
        T: the padded key length.
    """
    check_array("lengths", lengths, kind=torch.Tensor, ndim=1, shape="(B,)")
    check_positive_int("T", T)
    if lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must hold integers; got dtype {lengths.dtype}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(f"lengths must lie in [0, T={T}]; got {lengths.tolist()}")
    positions = torch.arange(T, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T)


def padding_mask_from_tokens(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, T) mask that blocks the keys whose token is ``pad_id``.

    Args:
        tokens: (B, T) integer token ids.
    """
    check_array("tokens", tokens, kind=torch.Tensor, ndim=2, shape="(B, T)")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer ids; got dtype {tokens.dtype}")
    if tokens.shape[1] == 0:
        raise ValueError(f"tokens must have at least one position, shape (B, T) with T > 0; "
                         f"got shape {tuple(tokens.shape)}")
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int; got {type(pad_id).__name__}")
    return (tokens != pad_id)[:, None, :]  # (B, 1, T)


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Broadcast the given masks together and AND them; ``None`` entries are ignored."""
    present = [m for m in masks if m is not None]
    for i, m in enumerate(present):
        check_array(f"masks[{i}]", m, kind=torch.Tensor, shape="(..., T_q, T_k)")
        if m.dtype != torch.bool:
            raise TypeError(f"masks[{i}] must be boolean; got dtype {m.dtype}")
    if not present:
        return None
    try:
        shape = torch.broadcast_shapes(*(m.shape for m in present))
    except RuntimeError as error:
        shapes = ", ".join(str(tuple(m.shape)) for m in present)
        raise ValueError(
            f"masks must broadcast to one shape (..., T_q, T_k); got {shapes}") from error
    combined = torch.ones(shape, dtype=torch.bool, device=present[0].device)
    for m in present:
        combined = combined & m
    return combined


def decoder_self_attention_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, T, T) mask for decoder self-attention: causal, and padded keys blocked."""
    padding = padding_mask_from_tokens(tokens, pad_id)
    return combine_masks(padding, causal_mask(tokens.shape[1], device=tokens.device))
