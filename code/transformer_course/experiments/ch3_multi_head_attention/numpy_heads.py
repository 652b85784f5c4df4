"""Multi-head attention in NumPy, written out step by step for chapter 3.

Weights follow the paper's orientation: a projection is x @ W with W of shape (d_model, d_model),
whose columns i*d_k .. (i+1)*d_k - 1 are head i's W_i (torch's nn.Linear stores the transpose).
"""

from __future__ import annotations

import numpy as np

from transformer_course.core.attention import scaled_dot_product_attention_numpy
from transformer_course.core.multihead import MultiHeadAttention


def split_heads_numpy(x: np.ndarray, num_heads: int) -> np.ndarray:
    """Split the last dimension into heads.

    Args:
        x: (B, T, d_model), with d_model divisible by num_heads.

    Returns:
        (B, h, T, d_k) with d_k = d_model / h; head i holds columns i*d_k .. (i+1)*d_k - 1.
    """
    B, T, d_model = x.shape
    d_k = d_model // num_heads
    return x.reshape(B, T, num_heads, d_k).transpose(0, 2, 1, 3)  # (B, h, T, d_k)


def merge_heads_numpy(x: np.ndarray) -> np.ndarray:
    """Concatenate the heads again: (B, h, T, d_k) -> (B, T, h * d_k)."""
    B, h, T, d_k = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d_k)  # (B, T, d_model)


def multi_head_attention_numpy(
    x_q: np.ndarray, x_kv: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
    w_o: np.ndarray, num_heads: int, mask: np.ndarray | None = None, *,
    b_q: np.ndarray | None = None, b_k: np.ndarray | None = None, b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None, scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention in NumPy: project, split, attend per head, concatenate, project.

    Args:
        x_q: queries' inputs (B, T_q, d_model). x_kv: keys' and values' inputs (B, T_k, d_model).
        w_q, w_k, w_v, w_o: (d_model, d_model), applied as x @ W.
        num_heads: h, which must divide d_model.
        mask: boolean (B, T_q, T_k), each size 1 or full; True = may attend.
        b_q, b_k, b_v, b_o: optional (d_model,) biases.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).

    Returns:
        output (B, T_q, d_model) and per-head weights (B, h, T_q, T_k).
    """
    if mask is not None:
        mask = mask[:, None]  # (B, 1, T_q, T_k): the same mask for every head
    q = split_heads_numpy(_affine(x_q, w_q, b_q), num_heads)  # (B, h, T_q, d_k)
    k = split_heads_numpy(_affine(x_kv, w_k, b_k), num_heads)  # (B, h, T_k, d_k)
    v = split_heads_numpy(_affine(x_kv, w_v, b_v), num_heads)  # (B, h, T_k, d_k)
    heads, weights = scaled_dot_product_attention_numpy(q, k, v, mask, scale=scale)
    concat = merge_heads_numpy(heads)  # (B, T_q, d_model)
    return _affine(concat, w_o, b_o), weights  # (B, T_q, d_model), (B, h, T_q, T_k)


def _affine(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    return x @ w if b is None else x @ w + b


def mha_parameters_numpy(module: MultiHeadAttention) -> dict[str, np.ndarray]:
    """A module's weights as float64 NumPy arrays, keyed and oriented for
    :func:`multi_head_attention_numpy` (weights transposed to x @ W form; biases if present)."""
    params: dict[str, np.ndarray] = {}
    for role in ("q", "k", "v", "o"):
        layer = getattr(module, f"w_{role}")
        params[f"w_{role}"] = layer.weight.detach().cpu().double().numpy().T.copy()
        if layer.bias is not None:
            params[f"b_{role}"] = layer.bias.detach().cpu().double().numpy().copy()
    return params
