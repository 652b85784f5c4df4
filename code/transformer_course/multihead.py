"""Multi-head attention (Vaswani et al., 2017, section 3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The h projections of width d_k = d_model / h are stored as one (d_model, d_model) linear layer per
role and split into heads by a reshape, so the parameter count equals one head of width d_model.

Also here: the same computation in NumPy, step by step; ``mask_from_torch``, which translates
``nn.MultiheadAttention``'s masks (True = blocked) into ours (True = may attend); and
``check_multi_head_attention``, which tests a reader's own implementation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from .attention import scaled_dot_product_attention, scaled_dot_product_attention_numpy
from .checks import (
    check_array,
    check_broadcastable,
    check_dim,
    check_fraction,
    check_instance,
    check_positive_int,
)
from .masks import combine_masks


class MultiHeadAttention(nn.Module):
    """Multi-head attention with learned projections; self- or cross-attention.

    Args:
        d_model: model width. num_heads: h, which must divide d_model.
        dropout: dropout on the attention weights while training.
        bias: whether the four projections have biases.
        scaled: divide scores by sqrt(d_k) (False only for the ablation that removes it).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 scaled: bool = True) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("num_heads", num_heads)
        if d_model % num_heads:
            raise ValueError(f"d_model must be divisible by num_heads; got d_model={d_model}, "
                             f"num_heads={num_heads}")
        check_fraction("dropout", dropout)
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout, self.scaled = dropout, scaled
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, need_weights: bool = False,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: (B, T_q, d_model). key, value: (B, T_k, d_model).
            mask: boolean, broadcastable to (B, T_q, T_k); True = may attend.
            need_weights: also return the per-head weights (B, h, T_q, T_k).

        Returns:
            output (B, T_q, d_model) and the per-head weights or None.
        """
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_array(name, x, kind=torch.Tensor, ndim=3, shape=f"(B, T, {self.d_model})",
                        floating=True)
            if x.shape[-1] != self.d_model:
                raise ValueError(f"{name} must have shape (B, T, d_model={self.d_model}); "
                                 f"got {tuple(x.shape)}")
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(f"query (B, T_q, d), key and value (B, T_k, d) must share B, and key "
                             f"and value T_k; got {tuple(query.shape)}, {tuple(key.shape)}, "
                             f"{tuple(value.shape)}")
        if mask is not None:
            check_array("mask", mask, kind=torch.Tensor, ndim=(2, 3), shape="(B, T_q, T_k)")
            check_broadcastable("mask", mask.shape, (query.shape[0], query.shape[1], key.shape[1]),
                                "(B, T_q, T_k)")
            mask = mask.unsqueeze(-3) if mask.ndim == 3 else mask  # (B, 1, T_q, T_k)
        q = self._split(self.w_q(query))  # (B, h, T_q, d_k)
        k = self._split(self.w_k(key))  # (B, h, T_k, d_k)
        v = self._split(self.w_v(value))  # (B, h, T_k, d_k)
        scale = 1.0 / math.sqrt(self.d_k) if self.scaled else 1.0
        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, scale=scale, dropout_p=self.dropout if self.training else 0.0,
            need_weights=need_weights)
        B, _, T_q, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(B, T_q, self.d_model)  # (B, T_q, d_model)
        return self.w_o(concat), weights


@torch.no_grad()
def load_torch_mha_weights(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy the weights of a ``torch.nn.MultiheadAttention`` (same d_model and heads) into ours."""
    check_instance("ours", ours, MultiHeadAttention)
    if not isinstance(theirs, nn.MultiheadAttention):
        raise TypeError(f"theirs must be a torch.nn.MultiheadAttention; "
                        f"got {type(theirs).__name__}")
    if (theirs.embed_dim, theirs.num_heads) != (ours.d_model, ours.num_heads):
        raise ValueError(f"theirs must have embed_dim={ours.d_model} and num_heads="
                         f"{ours.num_heads}; got {theirs.embed_dim} and {theirs.num_heads}")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs must use one packed in_proj_weight (kdim = vdim = embed_dim)")
    has_bias = theirs.in_proj_bias is not None
    if has_bias != (ours.w_q.bias is not None):
        raise ValueError(f"theirs has bias={has_bias} but ours has "
                         f"bias={ours.w_q.bias is not None}")
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3, dim=0)  # each (d_model, d_model)
    for layer, w in zip((ours.w_q, ours.w_k, ours.w_v), (w_q, w_k, w_v), strict=True):
        layer.weight.copy_(w)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    if has_bias:
        b_q, b_k, b_v = theirs.in_proj_bias.chunk(3)  # each (d_model,)
        for layer, b in zip((ours.w_q, ours.w_k, ours.w_v), (b_q, b_k, b_v), strict=True):
            layer.bias.copy_(b)
        ours.w_o.bias.copy_(theirs.out_proj.bias)


def mask_from_torch(attn_mask: torch.Tensor | None = None,
                    key_padding_mask: torch.Tensor | None = None) -> torch.Tensor | None:
    """Turn ``nn.MultiheadAttention``'s boolean masks (True = blocked) into ours (True = allowed).

    Args:
        attn_mask: boolean (T_q, T_k); True = this query may NOT attend to this key.
        key_padding_mask: boolean (B, T_k); True = this key is padding.

    Returns:
        boolean mask broadcastable to (B, T_q, T_k) in our convention, or None if both are None.
    """
    ours = []
    if attn_mask is not None:
        check_array("attn_mask", attn_mask, kind=torch.Tensor, ndim=2, shape="(T_q, T_k)")
        if attn_mask.dtype != torch.bool:
            raise TypeError(f"attn_mask must be boolean (True = blocked); "
                            f"got dtype {attn_mask.dtype}")
        ours.append(~attn_mask)  # (T_q, T_k)
    if key_padding_mask is not None:
        check_array("key_padding_mask", key_padding_mask, kind=torch.Tensor, ndim=2,
                    shape="(B, T_k)")
        if key_padding_mask.dtype != torch.bool:
            raise TypeError(f"key_padding_mask must be boolean (True = padding); got dtype "
                            f"{key_padding_mask.dtype}")
        ours.append(~key_padding_mask[:, None, :])  # (B, 1, T_k)
    if (attn_mask is not None and key_padding_mask is not None
            and attn_mask.shape[-1] != key_padding_mask.shape[-1]):
        raise ValueError(f"attn_mask (T_q, T_k) and key_padding_mask (B, T_k) must share T_k; got "
                         f"{tuple(attn_mask.shape)} and {tuple(key_padding_mask.shape)}")
    return combine_masks(*ours)


# ---------------------------------------------------------------------------------------------
# The same computation in NumPy, written out step by step for the chapter.
# Weights follow the paper's orientation: a projection is x @ W with W of shape (d_model, d_model),
# whose columns i*d_k .. (i+1)*d_k - 1 are head i's W_i (torch's nn.Linear stores the transpose).


def split_heads_numpy(x: np.ndarray, num_heads: int) -> np.ndarray:
    """Split the last dimension into heads.

    Args:
        x: (B, T, d_model), with d_model divisible by num_heads.

    Returns:
        (B, h, T, d_k) with d_k = d_model / h; head i holds columns i*d_k .. (i+1)*d_k - 1.
    """
    check_array("x", x, kind=np.ndarray, ndim=3, shape="(B, T, d_model)")
    check_positive_int("num_heads", num_heads)
    B, T, d_model = x.shape
    if d_model % num_heads:
        raise ValueError(f"x's last dimension d_model must be divisible by num_heads={num_heads}; "
                         f"got shape {x.shape}")
    d_k = d_model // num_heads
    return x.reshape(B, T, num_heads, d_k).transpose(0, 2, 1, 3)  # (B, h, T, d_k)


def merge_heads_numpy(x: np.ndarray) -> np.ndarray:
    """Concatenate the heads again: (B, h, T, d_k) -> (B, T, h * d_k)."""
    check_array("x", x, kind=np.ndarray, ndim=4, shape="(B, h, T, d_k)")
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
        mask: boolean, broadcastable to (B, T_q, T_k); True = may attend.
        b_q, b_k, b_v, b_o: optional (d_model,) biases.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).

    Returns:
        output (B, T_q, d_model) and per-head weights (B, h, T_q, T_k).
    """
    check_array("x_q", x_q, kind=np.ndarray, ndim=3, shape="(B, T_q, d_model)", floating=True)
    check_array("x_kv", x_kv, kind=np.ndarray, ndim=3, shape="(B, T_k, d_model)", floating=True)
    B, T_q, d_model = x_q.shape
    if x_kv.shape[0] != B or x_kv.shape[2] != d_model:
        raise ValueError(f"x_kv must have shape (B={B}, T_k, d_model={d_model}) to match x_q; "
                         f"got x_q shape {x_q.shape} and x_kv shape {x_kv.shape}")
    check_positive_int("num_heads", num_heads)
    if d_model % num_heads:
        raise ValueError(f"d_model must be divisible by num_heads; got d_model={d_model}, "
                         f"num_heads={num_heads}")
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        check_array(name, w, kind=np.ndarray, ndim=2, shape=f"(d_model, d_model) = "
                    f"({d_model}, {d_model})", floating=True)
        if w.shape != (d_model, d_model):
            raise ValueError(f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}); "
                             f"got {w.shape}")
    for name, b in (("b_q", b_q), ("b_k", b_k), ("b_v", b_v), ("b_o", b_o)):
        if b is not None:
            check_array(name, b, kind=np.ndarray, ndim=1, shape=f"(d_model,) = ({d_model},)",
                        floating=True)
            check_dim(name, b, 0, d_model, f"(d_model,) = ({d_model},)")
    if mask is not None:
        check_array("mask", mask, kind=np.ndarray, ndim=(2, 3), shape="(B, T_q, T_k)")
        check_broadcastable("mask", mask.shape, (B, T_q, x_kv.shape[1]), "(B, T_q, T_k)")
        mask = mask[:, None] if mask.ndim == 3 else mask  # (B, 1, T_q, T_k): same for every head
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
    check_instance("module", module, MultiHeadAttention)
    params: dict[str, np.ndarray] = {}
    for role in ("q", "k", "v", "o"):
        layer = getattr(module, f"w_{role}")
        params[f"w_{role}"] = layer.weight.detach().cpu().double().numpy().T.copy()
        if layer.bias is not None:
            params[f"b_{role}"] = layer.bias.detach().cpu().double().numpy().copy()
    return params


def check_multi_head_attention(fn: Callable[..., np.ndarray], *, seed: int = 0) -> float:
    """Test a reader's ``fn(x_q, x_kv, w_q, w_k, w_v, w_o, num_heads, mask)`` -> output (B, T_q,
    d_model) against :func:`multi_head_attention_numpy` on random self- and cross-attention cases.

    Returns the largest absolute difference seen; raises AssertionError naming the failing case.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    rng = np.random.default_rng(seed)
    cases = [(2, 5, 5, 8, 2, False), (3, 4, 6, 12, 3, True), (1, 7, 3, 16, 4, True),
             (2, 6, 6, 8, 1, False)]
    worst = 0.0
    for B, T_q, T_k, d_model, h, masked in cases:
        x_q = rng.standard_normal((B, T_q, d_model))
        x_kv = x_q if T_q == T_k else rng.standard_normal((B, T_k, d_model))
        ws = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        mask = None
        if masked:
            mask = rng.random((B, T_q, T_k)) < 0.7
            mask[..., 0] = True  # every query may attend somewhere
        want, _ = multi_head_attention_numpy(x_q, x_kv, *ws, h, mask)
        got = np.asarray(fn(x_q, x_kv, *ws, h, mask))
        case = f"B={B}, T_q={T_q}, T_k={T_k}, d_model={d_model}, num_heads={h}, mask={masked}"
        if got.shape != want.shape:
            raise AssertionError(f"{case}: output must have shape (B, T_q, d_model) = "
                                 f"{want.shape}; got {got.shape}")
        diff = float(np.max(np.abs(got - want)))
        if not diff <= 1e-8:
            raise AssertionError(f"{case}: output differs from multi_head_attention_numpy by "
                                 f"{diff:.3g} (tolerance 1e-8)")
        worst = max(worst, diff)
    return worst
