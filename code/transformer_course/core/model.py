"""The encoder-decoder Transformer (Vaswani et al., 2017, section 3 and Figure 1).

Every sub-layer (self-attention, cross-attention, feed-forward) sits in a :class:`Residual`:

    post-norm (the paper):  x = LayerNorm(x + Dropout(sublayer(x)))
    pre-norm:               x = x + Dropout(sublayer(LayerNorm(x)))

and pre-norm models put one final LayerNorm after each stack. Dropout follows the paper: on the
sum of embeddings and positions, and on every sub-layer output before the residual addition.
(``torch.nn.Transformer`` also drops attention weights and the feed-forward hidden layer; the two
agree exactly only with dropout off, e.g. in ``eval()``.)

Arguments are checked where they enter: :class:`TransformerConfig` checks the sizes, and
``encode``/``decode`` check tokens and masks (their ``@checked_by`` lines); the layers inside
trust their caller (a checked call inside a checked call is not checked again). The modules
from :class:`PositionwiseFeedForward` to :meth:`Transformer.forward` are the model as chapter 5
shows it, in one listing. Decoding one token at a time with a key-value cache belongs to
:mod:`.kv_cache`, which reads these layers' parts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

import torch
from torch import nn

from .checks import (
    check_choice,
    check_decode_arguments,
    check_encode_arguments,
    check_instance,
    check_int,
    check_number,
    checked_by,
)
from .masks import causal_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and switches of an encoder-decoder Transformer; validates itself on creation."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512  # model width (paper base)
    num_heads: int = 8  # h; must divide d_model
    num_encoder_layers: int = 6  # N
    num_decoder_layers: int = 6  # N
    d_ff: int = 2048  # feed-forward inner width
    dropout: float = 0.1  # P_drop, in [0, 1)
    max_len: int = 512  # longest sequence the model accepts
    norm_first: bool = False  # False: post-norm as in the paper; True: pre-norm
    share_embeddings: bool = True  # tie target embedding and output projection (and the source
    #                                embedding too when the vocabularies are the same size)
    positional: str = "sinusoidal"  # "sinusoidal" | "learned" | "none"
    scaled_attention: bool = True  # divide scores by sqrt(d_k) (False only for an ablation)
    pad_id: int = 0  # padding token id, in [0, min(vocab sizes))
    layer_norm_eps: float = 1e-5  # epsilon of every LayerNorm, in (0, 1)
    final_norm: bool | None = None  # LayerNorm after each stack; None: same as norm_first

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads",
                     "num_encoder_layers", "num_decoder_layers", "d_ff", "max_len"):
            check_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"num_heads must divide d_model={self.d_model}; "
                             f"got {self.num_heads}")
        for name in ("norm_first", "share_embeddings", "scaled_attention"):
            check_instance(name, getattr(self, name), bool)
        check_instance("final_norm", self.final_norm, (bool, type(None)))
        check_choice("positional", self.positional, POSITIONS)
        check_number("dropout", self.dropout, 0, 1, high_open=True)
        check_int("pad_id", self.pad_id, low=0,
                  high=min(self.src_vocab_size, self.tgt_vocab_size) - 1)
        check_number("layer_norm_eps", self.layer_norm_eps, 0, 1, low_open=True, high_open=True)

    @property
    def d_k(self) -> int:
        """Width of one attention head, d_model / h."""
        return self.d_model // self.num_heads

    @property
    def has_final_norm(self) -> bool:
        """Whether each stack ends in a LayerNorm (``final_norm``, defaulting to ``norm_first``)."""
        return self.norm_first if self.final_norm is None else self.final_norm


POSITIONS = {"sinusoidal": SinusoidalPositionalEncoding,
             "learned": LearnedPositionalEmbedding,
             "none": lambda d_model, max_len: nn.Identity()}


def stack_norm(config: TransformerConfig) -> nn.LayerNorm | None:
    """The LayerNorm that ends a stack when ``config.has_final_norm``, else None."""
    return nn.LayerNorm(config.d_model, config.layer_norm_eps) if config.has_final_norm else None


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, at each position (eq. 2)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> (B, T, d_model)."""
        return self.linear2(self.activation(self.linear1(x)))


class Embeddings(nn.Module):
    """Token embedding times sqrt(d_model), plus positions ("sinusoidal",
    "learned" or "none"), then dropout (sections 3.4, 3.5 and 5.4)."""

    def __init__(self, vocab_size: int, d_model: int, max_len: int,
                 positional: str = "sinusoidal",
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.vocab_size, self.max_len = vocab_size, max_len
        self.token = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        self.positional = POSITIONS[positional](d_model, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: (B, T) ids < vocab_size, T <= max_len -> (B, T, d)."""
        return self.dropout(self.positional(self.token(tokens) * self.scale))


class Residual(nn.Module):
    """One sub-layer with its residual connection and LayerNorm (section
    3.1) and the dropout on its output (section 5.4): post-norm (the paper)
    unless ``norm_first``."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool,
                 eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor,
                sublayer: Callable[[torch.Tensor], torch.Tensor],
                ) -> torch.Tensor:
        """x: (B, T, d_model) -> (B, T, d_model)."""
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class ConfiguredLayer(nn.Module):
    """A layer whose arguments are :class:`TransformerConfig`
    fields (some by shorter names)."""

    @classmethod
    def from_config(cls, config: TransformerConfig) -> Self:
        """One layer of the sizes and switches in ``config``."""
        c = config
        return cls(d_model=c.d_model, num_heads=c.num_heads,
                   d_ff=c.d_ff, dropout=c.dropout,
                   norm_first=c.norm_first, eps=c.layer_norm_eps,
                   scaled=c.scaled_attention)


class EncoderLayer(ConfiguredLayer):
    """Self-attention, then feed-forward, each in a :class:`Residual`
    (arguments as the :class:`TransformerConfig` fields)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.0, norm_first: bool = False,
                 eps: float = 1e-5, scaled: bool = True) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads,
                                            scaled=scaled)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.sublayers = nn.ModuleList(
            Residual(d_model, dropout, norm_first, eps) for _ in range(2))

    def forward(self, x: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """x: (B, S, d_model); mask: (B, 1 or S, S), True = attend."""
        attend, feed_forward = self.sublayers
        x = attend(x, lambda x: self.self_attn(x, x, x, mask)[0])
        return feed_forward(x, self.feed_forward)


class DecoderLayer(ConfiguredLayer):
    """Masked self-attention, cross-attention to the memory, feed-forward;
    each in a :class:`Residual` (arguments as for :class:`EncoderLayer`)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.0, norm_first: bool = False,
                 eps: float = 1e-5, scaled: bool = True) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads,
                                            scaled=scaled)
        self.cross_attn = MultiHeadAttention(d_model, num_heads,
                                             scaled=scaled)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.sublayers = nn.ModuleList(
            Residual(d_model, dropout, norm_first, eps) for _ in range(3))

    def forward(self, y: torch.Tensor, memory: torch.Tensor,
                src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """y: (B, T, d_model); memory: (B, S, d_model);
        src_mask: (B, 1 or T, S); tgt_mask: (1 or B, T, T)."""
        masked_self, cross, feed_forward = self.sublayers
        y = masked_self(y, lambda y: self.self_attn(y, y, y, tgt_mask)[0])
        y = cross(y, lambda y: self.cross_attn(
            y, memory, memory, src_mask)[0])
        return feed_forward(y, self.feed_forward)


class Transformer(nn.Module):
    """The encoder-decoder Transformer of Figure 1: embeddings, two stacks,
    a tied output layer; built from a :class:`TransformerConfig`."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        check_instance("config", config, TransformerConfig)
        self.config = c = config
        embed = (c.d_model, c.max_len, c.positional, c.dropout)
        self.src_embed = Embeddings(c.src_vocab_size, *embed)
        self.tgt_embed = Embeddings(c.tgt_vocab_size, *embed)
        self.encoder = nn.ModuleList(
            EncoderLayer.from_config(c) for _ in range(c.num_encoder_layers))
        self.decoder = nn.ModuleList(
            DecoderLayer.from_config(c) for _ in range(c.num_decoder_layers))
        # pre-norm: a LayerNorm after each stack; post-norm: none
        self.encoder_norm = stack_norm(c)
        self.decoder_norm = stack_norm(c)
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size,
                                           bias=False)
        self.reset_parameters()
        if c.share_embeddings:  # one (V, d_model) matrix, three uses (3.4)
            self.output_projection.weight = self.tgt_embed.token.weight
            if c.src_vocab_size == c.tgt_vocab_size:
                self.src_embed.token.weight = self.tgt_embed.token.weight

    def reset_parameters(self) -> None:
        """Xavier-uniform weights (linear layers, token embeddings), zero
        biases; LayerNorms 1 and 0; learned positions keep N(0, 0.02^2)."""
        xavier_init(self, self.src_embed, self.tgt_embed)

    @checked_by(check_encode_arguments)
    def encode(self, src: torch.Tensor,
               src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """src: (B, S) token ids, S <= max_len; src_mask: boolean (B, 1, S)
        or (B, S, S), True = may attend, None = everywhere.
        Returns the memory (B, S, d_model)."""
        x = self.src_embed(src)  # (B, S, d_model)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return x if self.encoder_norm is None else self.encoder_norm(x)

    @checked_by(check_decode_arguments)
    def decode(self, tgt: torch.Tensor, memory: torch.Tensor,
               src_mask: torch.Tensor | None = None,
               tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """tgt: (B, T) token ids; memory: (B, S, d_model); src_mask: (B, 1
        or T, S) or None; tgt_mask: (1 or B, T, T), None = causal (never
        "no mask": seeing the future must be asked for).
        Returns hidden states (B, T, d_model)."""
        if tgt_mask is None:
            tgt_mask = causal_mask(tgt.shape[1], device=tgt.device)[None]
        y = self.tgt_embed(tgt)  # (B, T, d_model)
        for layer in self.decoder:
            y = layer(y, memory, src_mask, tgt_mask)
        return y if self.decoder_norm is None else self.decoder_norm(y)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (B, T, d_model) -> logits (B, T, V), before the softmax."""
        return self.output_projection(hidden)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor,
                src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """src (B, S), tgt (B, T) -> logits (B, T, V); ``src_mask`` serves
        the encoder and cross-attention (as for encode and decode)."""
        memory = self.encode(src, src_mask)
        return self.project(self.decode(tgt, memory, src_mask, tgt_mask))

    def attention_maps(self, src: torch.Tensor, tgt: torch.Tensor,
                       src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
                       ) -> dict[str, list[torch.Tensor]]:
        """Attention weights of every layer from one forward pass (arguments as for
        :meth:`forward`), recorded by hooks so the layers need not pass them on:
        {"encoder": [(B, h, S, S)] * N_enc, "decoder_self": [(B, h, T, T)] * N_dec,
        "cross": [(B, h, T, S)] * N_dec}."""
        maps: dict[str, list[torch.Tensor]] = {"encoder": [], "decoder_self": [], "cross": []}
        recorded = [(layer.self_attn, maps["encoder"]) for layer in self.encoder]
        for layer in self.decoder:
            recorded += [(layer.self_attn, maps["decoder_self"]), (layer.cross_attn, maps["cross"])]
        handles = [h for module, into in recorded for h in _record_weights(module, into)]
        try:
            with torch.no_grad():
                self(src, tgt, src_mask, tgt_mask)
        finally:
            for handle in handles:
                handle.remove()
        return maps


@torch.no_grad()
def xavier_init(model: nn.Module, *embeddings: Embeddings) -> None:
    """Xavier-uniform for every linear layer's weight of ``model`` (biases zero), then for the
    token matrix of each of ``embeddings``, in that order."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
    for embedding in embeddings:
        nn.init.xavier_uniform_(embedding.token.weight)


def _record_weights(module: MultiHeadAttention, into: list[torch.Tensor],
                    ) -> list[torch.utils.hooks.RemovableHandle]:
    """Hooks that make ``module`` return its weights and append them to ``into``."""
    def ask(_module, args, kwargs):
        return args, {**kwargs, "need_weights": True}

    def keep(_module, _args, _kwargs, output):
        into.append(output[1])

    return [module.register_forward_pre_hook(ask, with_kwargs=True),
            module.register_forward_hook(keep, with_kwargs=True)]


def count_parameters(model: nn.Module) -> int:
    """Number of unique trainable parameters (a tied matrix counts once)."""
    check_instance("model", model, nn.Module)
    unique = {id(p): p for p in model.parameters() if p.requires_grad}
    return sum(p.numel() for p in unique.values())
