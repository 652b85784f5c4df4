"""Attention read causally: change one cross-attention head of a trained model, and measure.

An attention map shows where a head looked; it does not show that the model's output depends on
it (Jain and Wallace, 2019; Wiegreffe and Pinter, 2019). An intervention does: copy the model,
change what one head passes on, and decode again. :func:`with_head` returns such a copy. The
head's output is changed just before the layer's output projection W^O, where the heads are
still separate slices of the concatenation:

- ``pattern=None`` knocks the head out (its slice becomes zero);
- a pattern replaces the head's attention weights by fixed ones: the head then passes on the
  weighted average of its own value vectors under those weights. :func:`anti_diagonal` is
  reversal's ideal lookup (output position t reads source position n - t), :func:`diagonal`
  copying's (t reads t + 1), a control of the same shape in the wrong place.

A pattern needs the whole target prefix at every call, so decode an intervened model with
``use_cache=False`` (the decoders then re-run the decoder over the prefix at every step).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch import nn

from transformer_course.core.checks import check_instance, check_int

Pattern = Callable[[torch.Tensor, int], torch.Tensor]  # (src_mask (N, 1, S), T) -> (N, T, S)


def anti_diagonal(src_mask: torch.Tensor, T: int) -> torch.Tensor:
    """Reversal's lookup: output position t puts all its weight on source position n - t.

    Sources are ``<s> x_1 .. x_n </s>`` (so x_i sits at position i); n is read off the mask.
    Position n (which predicts EOS) reads position 0, and positions past it read it too.
    Returns (N, T, S) weights.
    """
    n = src_mask[:, 0].sum(dim=-1) - 2  # (N,)
    t = torch.arange(T)
    source = (n[:, None] - t[None, :]).clamp(min=0)  # (N, T)
    return nn.functional.one_hot(source, src_mask.shape[-1]).float()


def diagonal(src_mask: torch.Tensor, T: int) -> torch.Tensor:
    """Copying's lookup: output position t puts all its weight on source position t + 1
    (``</s>`` and beyond: the last real position). Returns (N, T, S) weights."""
    last = src_mask[:, 0].sum(dim=-1) - 1  # (N,): the position of </s>
    source = torch.minimum(torch.arange(T)[None, :] + 1, last[:, None])  # (N, T)
    return nn.functional.one_hot(source, src_mask.shape[-1]).float()


def with_head(model: nn.Module, head: int, pattern: Pattern | None = None,
              layer: int = -1) -> nn.Module:
    """A copy of ``model`` whose cross-attention ``head`` in decoder ``layer`` is changed.

    Args:
        model: a trained ``Transformer`` (not changed).
        head: the head, 0-based. pattern: None knocks the head out; else (src_mask, T) ->
            (N, T, S) attention weights that replace the head's own.
        layer: the decoder layer (negative: from the last).

    Returns:
        the changed copy, in eval mode.
    """
    check_instance("model", model, nn.Module)
    attention = model.decoder[layer].cross_attn
    check_int("head", head, low=0, high=attention.num_heads - 1)
    changed = copy.deepcopy(model).eval()
    attention = changed.decoder[layer].cross_attn
    d_k, seen = attention.d_k, {}
    features = slice(head * d_k, (head + 1) * d_k)

    def remember(_module, args):  # (query, key, value, mask): the memory and its mask
        seen["value"], seen["mask"] = args[2], args[3]

    def replace(_module, args):
        concat = args[0].clone()  # (N, T, d_model): the heads side by side
        if pattern is None:
            concat[..., features] = 0
        else:
            values = attention.w_v(seen["value"])[..., features]  # (N, S, d_k): this head's
            weights = pattern(seen["mask"], concat.shape[1])  # (N, T, S)
            concat[..., features] = weights @ values  # (N, T, d_k)
        return (concat,)

    attention.register_forward_pre_hook(remember)
    attention.w_o.register_forward_pre_hook(replace)
    return changed
