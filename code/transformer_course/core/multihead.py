"""Multi-head attention (Vaswani et al., 2017, section 3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The h projections of width d_k = d_model / h are stored as one (d_model, d_model) linear layer per
role and split into heads by a reshape, so the parameter count equals one head of width d_model.

While decoding one position at a time, a :class:`KVCache` keeps the keys and values of the
positions before, so that each step projects only its new position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .attention import attention
from .checks import Shapes, check_instance, check_int, check_number


@dataclass
class KVCache:
    """The keys and values one attention layer computed at earlier decoding steps.

    Self-attention appends each step's new positions to them. Cross-attention (``static``)
    attends to the same encoder memory at every step, so it projects it once and reuses it.
    """

    static: bool = False  # True: computed at the first step, then only read (cross-attention)
    k: torch.Tensor | None = None  # (B, h, T, d_k); None before the first step
    v: torch.Tensor | None = None  # (B, h, T, d_k)

    @property
    def length(self) -> int:
        """Key positions held."""
        return 0 if self.k is None else self.k.shape[2]

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new positions' keys and values (B, h, T_new, d_k); return all of them."""
        if self.k is not None:
            k = torch.cat([self.k, k], dim=2)  # (B, h, T + T_new, d_k)
            v = torch.cat([self.v, v], dim=2)  # (B, h, T + T_new, d_k)
        self.k, self.v = k, v
        return k, v

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the rows ``index`` (B',) in that order (beam search: the beams that go on)."""
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]  # (B', h, T, d_k)


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
        check_int("d_model", d_model)
        check_int("num_heads", num_heads)
        if d_model % num_heads:
            raise ValueError(f"num_heads must divide d_model={d_model}; got {num_heads}")
        check_number("dropout", dropout, 0, 1, high_open=True)
        check_instance("bias", bias, bool)
        check_instance("scaled", scaled, bool)
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.scale = 1.0 / math.sqrt(self.d_k) if scaled else 1.0
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, h, T, d_k): head i gets features i*d_k .. (i+1)*d_k - 1."""
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def _keys_values(self, key: torch.Tensor, value: torch.Tensor, cache: KVCache | None,
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """``key`` and ``value`` projected and split into heads, (B, h, T_k, d_k) each; with a
        ``cache``, after the keys and values of earlier decoding steps (see :class:`KVCache`)."""
        if cache is not None and cache.static and cache.k is not None:
            return cache.k, cache.v  # the memory's, projected at the first step
        k = self._split(self.w_k(key))  # (B, h, T_k, d_k)
        v = self._split(self.w_v(value))  # (B, h, T_k, d_k)
        return (k, v) if cache is None else cache.update(k, v)

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      mask: torch.Tensor | None, need_weights: bool,
                      cache: KVCache | None = None) -> None:
        shapes, dtype = Shapes(d_model=self.d_model), self.w_q.weight.dtype
        shapes.tensor("query", query, "B T_q d_model", dtype=dtype)
        shapes.tensor("key", key, "B T_k d_model", dtype=dtype)
        shapes.tensor("value", value, "B T_k d_model", dtype=dtype)
        if cache is not None:
            check_instance("cache", cache, KVCache)
            if cache.k is not None:
                shapes.sizes.update(h=self.num_heads, d_k=self.d_k)
                shapes.tensor("cache.k", cache.k, "B h T_past d_k", dtype=dtype)
                # a mask covers every key: the cached ones, then the new ones unless static
                shapes.sizes["T_k"] = cache.length + (0 if cache.static else key.shape[1])
        if mask is not None:
            shapes.mask("mask", mask, "B T_q T_k")
        check_instance("need_weights", need_weights, bool)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, need_weights: bool = False,
                cache: KVCache | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: (B, T_q, d_model). key, value: (B, T_k, d_model).
            mask: boolean (B, T_q, T_k), each size 1 or full, e.g. (B, 1, T_k) for padding or
                (1, T_q, T_k) causal; True = may attend.
            need_weights: also return the per-head weights (B, h, T_q, T_k).
            cache: keys and values of earlier decoding steps, updated in place (see
                :class:`KVCache`); the mask's T_k then counts them too.

        Returns:
            output (B, T_q, d_model) and the per-head weights or None.
        """
        self._check_inputs(query, key, value, mask, need_weights, cache)
        B, T_q, _ = query.shape
        q = self._split(self.w_q(query))  # (B, h, T_q, d_k)
        k, v = self._keys_values(key, value, cache)  # (B, h, T_k, d_k) each, as q
        dropout = self.dropout if self.training else 0.0
        if mask is not None:
            mask = mask[:, None]  # (B, 1, T_q, T_k): one mask for every head
        heads, weights = attention(q, k, v, mask, self.scale, dropout,
                                   need_weights)  # heads: (B, h, T_q, d_k)
        concat = heads.transpose(1, 2).reshape(B, T_q, -1)  # (B, T_q, d_model)
        return self.w_o(concat), weights
