"""The key-value cache: decoding one position at a time without re-running the prefix.

Under the causal mask, position s never sees a later token, so its keys and values in every
decoder layer are the same at every later step. :func:`decode_with_cache` keeps them in a
:class:`DecoderCache` and runs the decoder over the new positions only. It is
``Transformer.decode`` step by step: the same layers, read part by part (the projections,
:meth:`~.multihead.MultiHeadAttention.attend`, the :class:`~.model.Residual` wrappers), so the
layers themselves carry no cache plumbing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .checks import check_decode_arguments, check_instance, checked_by
from .masks import causal_mask
from .model import DecoderLayer, Transformer
from .multihead import MultiHeadAttention


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


@dataclass
class DecoderCache:
    """What the decoder keeps between decoding steps: per layer, the keys and values of its
    masked self-attention (one per target position so far) and of its cross-attention (one per
    source position, computed at the first step). Start with an empty one and pass it to every
    step's :func:`decode_with_cache`, which fills it."""

    layers: list[tuple[KVCache, KVCache]] = field(default_factory=list)  # (self, cross) per layer

    @property
    def length(self) -> int:
        """Target positions held (the same in every layer)."""
        return self.layers[0][0].length if self.layers else 0

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the rows ``index`` (B',) in that order (beam search: the beams that go on)."""
        for self_cache, cross_cache in self.layers:
            self_cache.reorder(index)
            cross_cache.reorder(index)


def _check_cached_decode_arguments(model: Transformer, tgt: torch.Tensor, memory: torch.Tensor,
                                  src_mask: torch.Tensor | None = None,
                                  tgt_mask: torch.Tensor | None = None,
                                  cache: DecoderCache | None = None) -> None:
    """The checks of :func:`decode_with_cache`: those of ``Transformer.decode``, then a cache
    that belongs to this model and these rows and holds fewer positions than ``tgt``."""
    check_instance("model", model, Transformer)
    check_decode_arguments(model, tgt, memory, src_mask, tgt_mask)
    check_instance("cache", cache, DecoderCache)
    if cache.layers and len(cache.layers) != len(model.decoder):
        raise ValueError(f"cache must hold {len(model.decoder)} decoder layers (this model's); "
                         f"got {len(cache.layers)}")
    start = cache.length
    if start and cache.layers[0][0].k.shape[0] != tgt.shape[0]:
        raise ValueError(f"cache must hold the rows of tgt, B={tgt.shape[0]}; "
                         f"got {cache.layers[0][0].k.shape[0]}")
    if tgt.shape[1] <= start:
        raise ValueError(f"tgt must be longer than the {start} positions the cache holds; "
                         f"got shape {tuple(tgt.shape)}")


@checked_by(_check_cached_decode_arguments)
def decode_with_cache(model: Transformer, tgt: torch.Tensor, memory: torch.Tensor,
                      src_mask: torch.Tensor | None = None,
                      tgt_mask: torch.Tensor | None = None,
                      cache: DecoderCache | None = None) -> torch.Tensor:
    """``model.decode`` over the positions of ``tgt`` after the ``cache.length`` the cache holds.

    Args:
        model, tgt (B, T), memory (B, S, d_model), src_mask, tgt_mask: as for
            ``Transformer.decode``, with the same memory and masks at every call.
        cache: a :class:`DecoderCache`, empty at the first call; the new positions' keys and
            values are appended to it.

    Returns:
        hidden states of the new positions, (B, T - T_past, d_model), T_past the positions the
        cache held before the call.
    """
    start = cache.length
    if tgt_mask is None:
        tgt_mask = causal_mask(tgt.shape[1], device=tgt.device)[None]  # (1, T, T)
    if not cache.layers:  # the first step: (self, cross) per layer
        cache.layers = [(KVCache(), KVCache(static=True)) for _ in model.decoder]
    y = model.tgt_embed(tgt)[:, start:]  # (B, T - start, d_model): the new positions, O(T d)
    src_mask, tgt_mask = _query_rows(src_mask, start), _query_rows(tgt_mask, start)
    for layer, layer_cache in zip(model.decoder, cache.layers, strict=True):
        y = _decoder_layer_step(layer, y, memory, src_mask, tgt_mask, layer_cache)
    return y if model.decoder_norm is None else model.decoder_norm(y)


def _decoder_layer_step(layer: DecoderLayer, y: torch.Tensor, memory: torch.Tensor,
                        src_mask: torch.Tensor | None, tgt_mask: torch.Tensor,
                        caches: tuple[KVCache, KVCache]) -> torch.Tensor:
    """``DecoderLayer.forward`` for the new positions y (B, T_new, d_model), with the keys and
    values of the positions before them from ``caches`` (self, cross)."""
    masked_self, cross, feed_forward = layer.sublayers
    self_cache, cross_cache = caches
    y = masked_self(y, lambda y: cached_attention(layer.self_attn, y, y, tgt_mask,
                                                  self_cache))
    y = cross(y, lambda y: cached_attention(layer.cross_attn, y, memory, src_mask,
                                            cross_cache))
    return feed_forward(y, layer.feed_forward)


def cached_attention(attn: MultiHeadAttention, query: torch.Tensor, source: torch.Tensor,
                   mask: torch.Tensor | None, cache: KVCache) -> torch.Tensor:
    """``attn(query, source, source, mask)`` with the keys and values from ``cache``: the
    source's are appended to it, or, for a static cache that is already filled, not computed.
    query: (B, T_new, d_model) -> (B, T_new, d_model)."""
    q = attn.split_heads(attn.w_q(query))  # (B, h, T_new, d_k)
    if not (cache.static and cache.k is not None):  # else: the memory's, kept
        k = attn.split_heads(attn.w_k(source))  # (B, h, T_new, d_k)
        v = attn.split_heads(attn.w_v(source))
        cache.update(k, v)  # now (B, h, T_past + T_new, d_k) each
    return attn.attend(q, cache.k, cache.v, mask)[0]


def _query_rows(mask: torch.Tensor | None, start: int) -> torch.Tensor | None:
    """A mask's rows for the queries from position ``start`` on: (B, T_q - start, T_k); a mask
    with one row (the same for every query) stays as it is."""
    return mask if mask is None or mask.shape[1] == 1 else mask[:, start:]
