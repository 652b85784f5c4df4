"""Scaled dot-product attention, in NumPy and in PyTorch.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (Vaswani et al., 2017, eq. 1)

Masks, everywhere in this package, are boolean with True = "may attend" (as in
``torch.nn.functional.scaled_dot_product_attention``). Here a mask broadcasts against the scores
(..., T_q, T_k) by NumPy's rules, so a 2-D mask means (T_q, T_k).

A fully masked row (a query allowed to attend to nothing) gets all-zero weights and a zero output,
not NaN, as ``F.scaled_dot_product_attention`` returns. A NaN or infinite query gives a NaN output
row on every path (NumPy, explicit, fused), masked or not: NaN in is NaN out. Half-precision
inputs compute scores and softmax in float32 and return their own dtype, so logits of 1e4 neither
overflow nor turn into NaN.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .checks import Shapes, check_instance, check_int, check_number

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _check_softmax_input(x: np.ndarray, axis: int) -> None:
    Shapes().tensor("x", x, "... n", kind=np.ndarray)
    check_int("axis", axis, low=-x.ndim, high=x.ndim - 1)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax: subtract the row maximum before exponentiating.

    Rows that are entirely ``-inf`` (nothing to attend to) come out as zeros rather than NaN.
    """
    _check_softmax_input(x, axis)
    return _stable_softmax(x, axis)


def _stable_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    exps = np.exp(x - peak)
    total = np.sum(exps, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):  # a NaN row stays NaN; an all -inf row becomes zeros
        return np.divide(exps, total, out=np.zeros_like(exps), where=total != 0)


def naive_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Textbook softmax, exp(x) / sum(exp(x)): overflows to inf/NaN for large logits."""
    _check_softmax_input(x, axis)
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.exp(x)
        return exps / np.sum(exps, axis=axis, keepdims=True)


def _check_attention_args(q, k, v, mask, scale, kind) -> float:
    """Check q, k, v and mask; return the score multiplier (``scale``, else 1 / sqrt(d_k))."""
    shapes = Shapes()
    shapes.tensor("q", q, "... T_q d_k", kind=kind)
    shapes.tensor("k", k, "... T_k d_k", kind=kind)
    shapes.tensor("v", v, "... T_k d_v", kind=kind)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"k and v must have the dtype of q, {q.dtype}; got {k.dtype}, {v.dtype}")
    if mask is not None:
        shapes.mask("mask", mask, "... T_q T_k", kind=kind)
    if scale is None:
        return 1.0 / math.sqrt(q.shape[-1])
    check_number("scale", scale, low=0, low_open=True)
    return float(scale)


def scaled_dot_product_attention_numpy(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
    *, scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention in NumPy.

    Args:
        q: queries (..., T_q, d_k). k: keys (..., T_k, d_k). v: values (..., T_k, d_v).
        mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).

    Returns:
        output (..., T_q, d_v) and weights (..., T_q, T_k).
    """
    scale = _check_attention_args(q, k, v, mask, scale, np.ndarray)
    work = np.float32 if q.dtype == np.float16 else q.dtype  # half precision: scores in float32
    scores = (q.astype(work) @ np.swapaxes(k.astype(work), -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _stable_softmax(scores, axis=-1).astype(q.dtype, copy=False)
    # NaN in, NaN out: a non-finite query's row is NaN even where softmax gave zeros (all -inf)
    weights = np.where(np.isfinite(q).all(-1, keepdims=True), weights, q.dtype.type(np.nan))
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
    *, scale: float | None = None, dropout_p: float = 0.0, need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention in PyTorch: :func:`attention` with its arguments checked.

    Args:
        q: queries (..., T_q, d_k). k: keys (..., T_k, d_k). v: values (..., T_k, d_v).
        mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).
        dropout_p: dropout on the attention weights (pass 0 in evaluation).
        need_weights: if False, run ``F.scaled_dot_product_attention`` and return None weights.

    Returns:
        output (..., T_q, d_v) and weights (..., T_q, T_k) or None.
    """
    scale = _check_attention_args(q, k, v, mask, scale, torch.Tensor)
    check_number("dropout_p", dropout_p, 0, 1, high_open=True)
    check_instance("need_weights", need_weights, bool)
    return attention(q, k, v, mask, scale, dropout_p, need_weights)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
              scale: float, dropout_p: float = 0.0, need_weights: bool = True,
              ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The five steps of attention, for callers that have checked the arguments (shapes and
    arguments as in :func:`scaled_dot_product_attention`, ``scale`` given)."""
    if not need_weights:  # the fused kernel: same output
        return _fused_attention(q, k, v, mask, scale, dropout_p), None
    q, k = _float32_if_half(q), _float32_if_half(k)
    scores = q @ k.transpose(-2, -1) * scale  # 1, 2: (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)  # 3
    weights = _softmax_over_keys(scores, mask, q).to(v.dtype)  # 4
    if dropout_p:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ v, weights  # 5: (..., T_q, d_v), (..., T_q, T_k)


def _float32_if_half(x: torch.Tensor) -> torch.Tensor:
    """Half-precision scores and softmax are computed in float32: 1e4 logits stay finite."""
    return x.float() if x.dtype in _LOW_PRECISION else x


def _nan_rows(q: torch.Tensor) -> torch.Tensor:
    """(..., T_q, 1): 0 where a query row is finite, NaN where it holds a NaN or an inf (as
    0 * inf is NaN). Adding it to an output row keeps a finite row and turns a non-finite one to
    NaN; on a CPU it costs far less than ``isfinite().all()``, and it has no branch (vmap)."""
    return (q * 0).sum(-1, keepdim=True)


def _softmax_over_keys(scores: torch.Tensor, mask: torch.Tensor | None, q: torch.Tensor,
                       ) -> torch.Tensor:
    """Softmax over the last dimension, with the policy for a query that may attend to nothing:
    zero weights (and so a zero output), not NaN, as ``F.scaled_dot_product_attention`` gives;
    a NaN query's row stays NaN. Its scores become 0, not -inf, so the gradient stays finite."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(dim=-1, keepdim=True) & (_nan_rows(q) == 0)  # (..., T_q, 1)
    return torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)


def _fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     mask: torch.Tensor | None, scale: float, dropout_p: float) -> torch.Tensor:
    """``F.scaled_dot_product_attention``; its CPU kernel gives zeros for a NaN query, kept NaN."""
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                         scale=scale)
    return out + _nan_rows(q)
