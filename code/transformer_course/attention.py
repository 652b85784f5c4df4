"""Scaled dot-product attention, in NumPy and in PyTorch.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (Vaswani et al., 2017, eq. 1)

Mask convention, everywhere in this package: a boolean mask broadcastable to (..., T_q, T_k) where
True means "may attend" (as in ``torch.nn.functional.scaled_dot_product_attention``).

A fully masked row (a query allowed to attend to nothing) gets all-zero weights and a zero output,
not NaN; ``F.scaled_dot_product_attention`` returns the same zeros. Half-precision inputs
(float16, bfloat16; float16 in NumPy) compute scores and softmax in float32 and return their own
dtype, so logits of 1e4 neither overflow nor turn into NaN.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .checks import check_array, check_broadcastable, check_fraction, check_instance

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _check_axis(x: np.ndarray, axis: int) -> None:
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"axis must be an int; got {type(axis).__name__} {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must lie in [{-x.ndim}, {x.ndim - 1}] for x of shape "
                         f"{x.shape}; got {axis}")
    if x.shape[axis] == 0:
        raise ValueError(f"x must have at least one entry along axis {axis}; got shape {x.shape}")


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax: subtract the row maximum before exponentiating.

    Rows that are entirely ``-inf`` (nothing to attend to) come out as zeros rather than NaN.
    """
    check_array("x", x, kind=np.ndarray, min_ndim=1, shape="(..., n)", floating=True)
    _check_axis(x, axis)
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    exps = np.exp(x - peak)
    total = np.sum(exps, axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def naive_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Textbook softmax, exp(x) / sum(exp(x)): overflows to inf/NaN for large logits."""
    check_array("x", x, kind=np.ndarray, min_ndim=1, shape="(..., n)", floating=True)
    _check_axis(x, axis)
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.exp(x)
        return exps / np.sum(exps, axis=axis, keepdims=True)


def _check_qkv(q, k, v, mask, kind) -> None:
    expected = {"q": "(..., T_q, d_k)", "k": "(..., T_k, d_k)", "v": "(..., T_k, d_v)"}
    for name, x in (("q", q), ("k", k), ("v", v)):
        shape = expected[name]
        check_array(name, x, kind=kind, min_ndim=2, shape=shape, floating=True)
        if 0 in x.shape:
            raise ValueError(f"{name} must have positive sizes in every dimension, shape {shape}; "
                             f"got shape {tuple(x.shape)}")
    if q.dtype != k.dtype or k.dtype != v.dtype:
        raise TypeError(f"q, k and v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same d_k in their last dimension; got q shape "
                         f"{tuple(q.shape)} and k shape {tuple(k.shape)}")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"k and v must have the same leading dimensions (..., T_k); got k shape "
                         f"{tuple(k.shape)} and v shape {tuple(v.shape)}")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q and k must have the same batch dimensions (...); got q shape "
                         f"{tuple(q.shape)} and k shape {tuple(k.shape)}")
    if mask is not None:
        check_array("mask", mask, kind=kind, shape="broadcastable to (..., T_q, T_k)")
        if mask.dtype not in (bool, np.bool_, torch.bool):
            raise TypeError(f"mask must be boolean (True = may attend); got dtype {mask.dtype}")
        target = (*q.shape[:-1], k.shape[-2])
        check_broadcastable("mask", mask.shape, target, "(..., T_q, T_k)")


def _resolve_scale(scale: float | None, d_k: int) -> float:
    """The score multiplier: ``scale`` if given (a positive finite number), else 1 / sqrt(d_k)."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.integer | np.floating):
        raise TypeError(f"scale must be a positive number or None; got {type(scale).__name__} "
                        f"{scale!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number or None; got {scale}")
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
    _check_qkv(q, k, v, mask, np.ndarray)
    scale = _resolve_scale(scale, q.shape[-1])
    work = np.float32 if q.dtype == np.float16 else q.dtype  # half precision: scores in float32
    q_w, k_w = q.astype(work, copy=False), k.astype(work, copy=False)
    scores = (q_w @ np.swapaxes(k_w, -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1).astype(q.dtype, copy=False)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
    *, scale: float | None = None, dropout_p: float = 0.0, need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention in PyTorch: the explicit path, or the fused one when weights are not needed.

    Args:
        q: queries (..., T_q, d_k). k: keys (..., T_k, d_k). v: values (..., T_k, d_v).
        mask: boolean, broadcastable to (..., T_q, T_k); True = may attend.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).
        dropout_p: dropout on the attention weights (pass 0 in evaluation).
        need_weights: if False, run ``F.scaled_dot_product_attention`` and return None weights.

    Returns:
        output (..., T_q, d_v) and weights (..., T_q, T_k) or None.
    """
    _check_qkv(q, k, v, mask, torch.Tensor)
    check_fraction("dropout_p", dropout_p)
    check_instance("need_weights", need_weights, bool)
    scale = _resolve_scale(scale, q.shape[-1])
    if not need_weights:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                              scale=scale), None
    work = torch.float32 if q.dtype in _LOW_PRECISION else q.dtype
    scores = (q.to(work) @ k.to(work).transpose(-2, -1)) * scale  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        empty = ~mask.any(dim=-1, keepdim=True)  # queries with nothing to attend to
        scores = scores.masked_fill(empty, 0.0)  # keeps softmax (and its gradient) finite
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(empty, 0.0)
    weights = weights.to(q.dtype)
    if dropout_p > 0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)
