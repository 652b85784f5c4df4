"""Multi-head attention (Vaswani et al., 2017, section 3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The h projections of width d_k = d_model / h are stored as one (d_model, d_model) linear layer per
role and split into heads by a reshape, so the parameter count equals one head of width d_model.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .attention import scaled_dot_product_attention
from .checks import check_array, check_broadcastable, check_fraction, check_positive_int


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
    if not isinstance(ours, MultiHeadAttention):
        raise TypeError(f"ours must be a MultiHeadAttention; got {type(ours).__name__}")
    if not isinstance(theirs, nn.MultiheadAttention):
        raise TypeError(f"theirs must be a torch.nn.MultiheadAttention; got {type(theirs).__name__}")
    if (theirs.embed_dim, theirs.num_heads) != (ours.d_model, ours.num_heads):
        raise ValueError(f"theirs must have embed_dim={ours.d_model} and num_heads="
                         f"{ours.num_heads}; got {theirs.embed_dim} and {theirs.num_heads}")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs must use one packed in_proj_weight (kdim = vdim = embed_dim)")
    has_bias = theirs.in_proj_bias is not None
    if has_bias != (ours.w_q.bias is not None):
        raise ValueError(f"theirs has bias={has_bias} but ours has bias={ours.w_q.bias is not None}")
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3, dim=0)  # each (d_model, d_model)
    for layer, w in zip((ours.w_q, ours.w_k, ours.w_v), (w_q, w_k, w_v), strict=True):
        layer.weight.copy_(w)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    if has_bias:
        for layer, b in zip((ours.w_q, ours.w_k, ours.w_v), theirs.in_proj_bias.chunk(3), strict=True):
            layer.bias.copy_(b)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
