"""Multi-head attention (Vaswani et al., 2017, section 3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The h projections of width d_k = d_model / h are stored as one (d_model, d_model) linear layer per
role and split into heads by a reshape, so the parameter count equals one head of width d_model.

The module's arguments are checked where a reader calls in (the ``@checked_by`` line); the
forward pass itself is the equation. Decoding with a key-value cache reuses the pieces,
:meth:`MultiHeadAttention.split_heads` and :meth:`MultiHeadAttention.attend`, from
:mod:`.kv_cache`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .attention import attention
from .checks import check_attention_arguments, check_instance, check_int, check_number, checked_by


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

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, h, T, d_k): head i gets features i*d_k .. (i+1)*d_k - 1."""
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               mask: torch.Tensor | None = None, need_weights: bool = False,
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Every head attends, then Concat(head_1, ..., head_h) W^O.

        q: (B, h, T_q, d_k); k, v: (B, h, T_k, d_k); mask: (B, T_q, T_k), each size 1 or full.
        Returns (B, T_q, d_model) and the weights (B, h, T_q, T_k) or None."""
        if mask is not None:
            mask = mask[:, None]  # (B, 1, T_q, T_k): one mask for every head
        dropout = self.dropout if self.training else 0.0
        heads, weights = attention(q, k, v, mask, self.scale, dropout,
                                   need_weights)  # heads: (B, h, T_q, d_k)
        B, _, T_q, _ = q.shape
        concat = heads.transpose(1, 2).reshape(B, T_q, self.d_model)
        return self.w_o(concat), weights

    @checked_by(check_attention_arguments)
    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None, need_weights: bool = False,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: (B, T_q, d_model). key, value: (B, T_k, d_model).
            mask: boolean (B, T_q, T_k), each size 1 or full, e.g. (B, 1, T_k) for padding or
                (1, T_q, T_k) causal; True = may attend.
            need_weights: also return the per-head weights (B, h, T_q, T_k).

        Returns:
            output (B, T_q, d_model) and the per-head weights or None.
        """
        q = self.split_heads(self.w_q(query))  # (B, h, T_q, d_k)
        k = self.split_heads(self.w_k(key))  # (B, h, T_k, d_k)
        v = self.split_heads(self.w_v(value))  # (B, h, T_k, d_k)
        return self.attend(q, k, v, mask, need_weights)
