"""The encoder-decoder Transformer (Vaswani et al., 2017, section 3 and Figure 1).

Encoder layer (post-norm, as in the paper):   x = LayerNorm(x + Dropout(SelfAttn(x)))
                                              x = LayerNorm(x + Dropout(FFN(x)))
Decoder layer adds cross-attention to the encoder output ("memory") between the two.
Pre-norm (``norm_first=True``) moves each LayerNorm inside the residual branch,
x = x + Dropout(Sublayer(LayerNorm(x))), and puts one final LayerNorm after each stack.

Dropout follows the paper: on the sum of embeddings and positions, and on every sub-layer output
before the residual addition. (``torch.nn.Transformer`` also drops attention weights and the
feed-forward hidden layer; the two agree exactly only with dropout off, e.g. in ``eval()``.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .checks import (
    check_array,
    check_broadcastable,
    check_fraction,
    check_instance,
    check_positive_int,
)
from .masks import causal_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

POSITIONAL_KINDS = ("sinusoidal", "learned", "none")


def _check_hidden(name: str, x: torch.Tensor, d_model: int, dims: str = "B, T") -> None:
    """Check that ``x`` is a floating-point tensor of shape (``dims``, d_model)."""
    check_array(name, x, kind=torch.Tensor, ndim=3, shape=f"({dims}, d_model={d_model})",
                floating=True)
    if x.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape ({dims}, d_model={d_model}); "
                         f"got {tuple(x.shape)}")


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
    layer_norm_eps: float = 1e-5  # epsilon of every LayerNorm
    final_norm: bool | None = None  # LayerNorm after each stack; None: same as norm_first

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads",
                     "num_encoder_layers", "num_decoder_layers", "d_ff", "max_len"):
            check_positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model must be divisible by num_heads; got d_model={self.d_model},"
                             f" num_heads={self.num_heads}")
        check_fraction("dropout", self.dropout)
        for name in ("norm_first", "share_embeddings", "scaled_attention"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {getattr(self, name)!r}")
        if self.final_norm is not None and not isinstance(self.final_norm, bool):
            raise TypeError(f"final_norm must be a bool or None; got {self.final_norm!r}")
        if self.positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {POSITIONAL_KINDS}; "
                             f"got {self.positional!r}")
        if isinstance(self.pad_id, bool) or not isinstance(self.pad_id, int):
            raise TypeError(f"pad_id must be an int; got {self.pad_id!r}")
        smallest = min(self.src_vocab_size, self.tgt_vocab_size)
        if not 0 <= self.pad_id < smallest:
            raise ValueError(f"pad_id must lie in [0, {smallest}) (both vocabularies); "
                             f"got {self.pad_id}")
        eps = self.layer_norm_eps
        if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
            raise ValueError(f"layer_norm_eps must be a number in (0, 1); got {eps!r}")

    @property
    def d_k(self) -> int:
        """Width of one attention head, d_model / h."""
        return self.d_model // self.num_heads

    @property
    def has_final_norm(self) -> bool:
        """Whether each stack ends in a LayerNorm (``final_norm``, defaulting to ``norm_first``)."""
        return self.norm_first if self.final_norm is None else self.final_norm


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position alike (eq. 2).

    Args:
        d_model: input and output width. d_ff: inner width.
    """

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("d_ff", d_ff)
        self.d_model = d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> (B, T, d_model)."""
        _check_hidden("x", x, self.d_model)
        return self.linear2(self.activation(self.linear1(x)))


class Embeddings(nn.Module):
    """Token embedding times sqrt(d_model), plus positions, then dropout (section 3.4, 3.5).

    Args:
        vocab_size: number of token ids. d_model: width. max_len: longest sequence.
        positional: "sinusoidal", "learned" or "none". dropout: P_drop on the sum.
    """

    def __init__(self, vocab_size: int, d_model: int, max_len: int, positional: str,
                 dropout: float) -> None:
        super().__init__()
        check_positive_int("vocab_size", vocab_size)
        if positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {POSITIONAL_KINDS}; got {positional!r}")
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.token = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        if positional == "sinusoidal":
            self.positional: nn.Module = SinusoidalPositionalEncoding(d_model, max_len)
        elif positional == "learned":
            self.positional = LearnedPositionalEmbedding(d_model, max_len)
        else:
            self.positional = nn.Identity()
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: (B, T) integer ids in [0, vocab_size) -> (B, T, d_model)."""
        check_array("tokens", tokens, kind=torch.Tensor, ndim=2, shape="(B, T)")
        return self.dropout(self.positional(self.token(tokens) * self.scale))


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in residual + LayerNorm + dropout.

    Args:
        d_model, num_heads, d_ff: sizes. dropout: P_drop on each sub-layer output.
        norm_first: pre-norm if True, post-norm (the paper) if False.
        eps: LayerNorm epsilon. scaled: divide attention scores by sqrt(d_k).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float,
                 norm_first: bool = False, eps: float = 1e-5, scaled: bool = True) -> None:
        super().__init__()
        check_fraction("dropout", dropout)
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, scaled=scaled)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def _attend(self, x: torch.Tensor, mask: torch.Tensor | None,
                weights: list[torch.Tensor] | None) -> torch.Tensor:
        out, w = self.self_attn(x, x, x, mask, need_weights=weights is not None)
        if weights is not None:
            weights.append(w)
        return self.dropout1(out)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        """One encoder layer.

        Args:
            x: (B, S, d_model). mask: bool, broadcastable to (B, S, S); True = may attend.
            weights: if a list, the self-attention weights (B, h, S, S) are appended to it.

        Returns:
            (B, S, d_model).
        """
        _check_hidden("x", x, self.d_model, "B, S")
        if self.norm_first:
            x = x + self._attend(self.norm1(x), mask, weights)
            return x + self.dropout2(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self._attend(x, mask, weights))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the memory, feed-forward; each a residual block.

    Args: as for :class:`EncoderLayer`.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float,
                 norm_first: bool = False, eps: float = 1e-5, scaled: bool = True) -> None:
        super().__init__()
        check_fraction("dropout", dropout)
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, scaled=scaled)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, scaled=scaled)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def _self(self, y: torch.Tensor, mask: torch.Tensor | None,
              weights: list[torch.Tensor] | None) -> torch.Tensor:
        out, w = self.self_attn(y, y, y, mask, need_weights=weights is not None)
        if weights is not None:
            weights.append(w)
        return self.dropout1(out)

    def _cross(self, y: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None,
               weights: list[torch.Tensor] | None) -> torch.Tensor:
        out, w = self.cross_attn(y, memory, memory, mask, need_weights=weights is not None)
        if weights is not None:
            weights.append(w)
        return self.dropout2(out)

    def forward(self, y: torch.Tensor, memory: torch.Tensor,
                src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
                self_weights: list[torch.Tensor] | None = None,
                cross_weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        """One decoder layer.

        Args:
            y: (B, T, d_model). memory: encoder output (B, S, d_model).
            src_mask: bool, broadcastable to (B, T, S). tgt_mask: bool, broadcastable to (B, T, T).
            self_weights, cross_weights: lists that receive (B, h, T, T) and (B, h, T, S) weights.

        Returns:
            (B, T, d_model).
        """
        _check_hidden("y", y, self.d_model)
        _check_hidden("memory", memory, self.d_model, "B, S")
        if self.norm_first:
            y = y + self._self(self.norm1(y), tgt_mask, self_weights)
            y = y + self._cross(self.norm2(y), memory, src_mask, cross_weights)
            return y + self.dropout3(self.feed_forward(self.norm3(y)))
        y = self.norm1(y + self._self(y, tgt_mask, self_weights))
        y = self.norm2(y + self._cross(y, memory, src_mask, cross_weights))
        return self.norm3(y + self.dropout3(self.feed_forward(y)))


class Encoder(nn.Module):
    """A stack of N encoder layers, with an optional final LayerNorm."""

    def __init__(self, layers: list[EncoderLayer], norm: nn.LayerNorm | None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None,
                weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        """x: (B, S, d_model); mask broadcastable to (B, S, S) -> (B, S, d_model)."""
        for layer in self.layers:
            x = layer(x, mask, weights)
        return x if self.norm is None else self.norm(x)


class Decoder(nn.Module):
    """A stack of N decoder layers, with an optional final LayerNorm."""

    def __init__(self, layers: list[DecoderLayer], norm: nn.LayerNorm | None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm

    def forward(self, y: torch.Tensor, memory: torch.Tensor,
                src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
                self_weights: list[torch.Tensor] | None = None,
                cross_weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        """y: (B, T, d_model); memory: (B, S, d_model) -> (B, T, d_model)."""
        for layer in self.layers:
            y = layer(y, memory, src_mask, tgt_mask, self_weights, cross_weights)
        return y if self.norm is None else self.norm(y)


class Transformer(nn.Module):
    """The encoder-decoder Transformer of Figure 1: embeddings, two stacks, tied output layer.

    Args:
        config: a :class:`TransformerConfig`.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        check_instance("config", config, TransformerConfig)
        self.config = c = config
        self.src_embed = Embeddings(c.src_vocab_size, c.d_model, c.max_len, c.positional,
                                    c.dropout)
        self.tgt_embed = Embeddings(c.tgt_vocab_size, c.d_model, c.max_len, c.positional,
                                    c.dropout)
        layer_args = (c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first, c.layer_norm_eps,
                      c.scaled_attention)
        self.encoder = Encoder([EncoderLayer(*layer_args) for _ in range(c.num_encoder_layers)],
                               self._final_norm())
        self.decoder = Decoder([DecoderLayer(*layer_args) for _ in range(c.num_decoder_layers)],
                               self._final_norm())
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self.reset_parameters()
        if c.share_embeddings:  # one (V, d_model) matrix, used three ways (section 3.4)
            self.output_projection.weight = self.tgt_embed.token.weight
            if c.src_vocab_size == c.tgt_vocab_size:
                self.src_embed.token.weight = self.tgt_embed.token.weight

    def _final_norm(self) -> nn.LayerNorm | None:
        c = self.config
        return nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.has_final_norm else None

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Xavier-uniform for every weight matrix (linear and token embedding); biases zero.

        LayerNorms start at weight 1, bias 0; learned positions keep their own N(0, 0.02^2).
        """
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.xavier_uniform_(self.src_embed.token.weight)
        nn.init.xavier_uniform_(self.tgt_embed.token.weight)

    # ----------------------------------------------------------------------------- input checks
    def _check_tokens(self, name: str, tokens: torch.Tensor, vocab_size: int) -> None:
        check_array(name, tokens, kind=torch.Tensor, ndim=2, shape="(B, T)")
        if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
            raise TypeError(f"{name} must hold integer token ids; got dtype {tokens.dtype}")
        if tokens.shape[1] == 0:
            raise ValueError(f"{name} must have at least one position; got shape "
                             f"{tuple(tokens.shape)}")
        if tokens.shape[1] > self.config.max_len:
            raise ValueError(f"{name} has length {tokens.shape[1]}, more than max_len="
                             f"{self.config.max_len}; got shape {tuple(tokens.shape)}")
        if tokens.device.type != "meta" and tokens.numel():
            low, high = int(tokens.min()), int(tokens.max())
            if low < 0 or high >= vocab_size:
                raise ValueError(f"{name} must hold token ids in [0, {vocab_size}); got ids "
                                 f"from {low} to {high}")

    @staticmethod
    def _check_mask(name: str, mask: torch.Tensor | None, target: tuple[int, int, int],
                    expected: str) -> None:
        if mask is None:
            return
        check_array(name, mask, kind=torch.Tensor, ndim=(2, 3), shape=expected)
        if mask.dtype != torch.bool:
            raise TypeError(f"{name} must be boolean (True = may attend); got dtype {mask.dtype}")
        check_broadcastable(name, mask.shape, target, expected)

    # ------------------------------------------------------------------------------ the model
    def _encode(self, src: torch.Tensor, src_mask: torch.Tensor | None,
                weights: list[torch.Tensor] | None) -> torch.Tensor:
        self._check_tokens("src", src, self.config.src_vocab_size)
        B, S = src.shape
        self._check_mask("src_mask", src_mask, (B, S, S), "(B, S, S), e.g. (B, 1, S)")
        return self.encoder(self.src_embed(src), src_mask, weights)

    def _decode(self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None,
                tgt_mask: torch.Tensor | None, self_weights: list[torch.Tensor] | None = None,
                cross_weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        self._check_tokens("tgt", tgt, self.config.tgt_vocab_size)
        B, T = tgt.shape
        _check_hidden("memory", memory, self.config.d_model, "B, S")
        if memory.shape[0] != B:
            raise ValueError(f"memory must have the batch size B={B} of tgt; "
                             f"got shape {tuple(memory.shape)}")
        S = memory.shape[1]
        self._check_mask("src_mask", src_mask, (B, T, S), "(B, T, S), e.g. (B, 1, S)")
        self._check_mask("tgt_mask", tgt_mask, (B, T, T), "(B, T, T) or (T, T)")
        if tgt_mask is None:
            tgt_mask = causal_mask(T, device=tgt.device)  # (T, T)
        y = self.tgt_embed(tgt)  # (B, T, d_model)
        return self.decoder(y, memory, src_mask, tgt_mask, self_weights, cross_weights)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Run the encoder.

        Args:
            src: (B, S) token ids in [0, src_vocab_size), S <= max_len.
            src_mask: bool, broadcastable to (B, S, S), e.g. (B, 1, S) from
                ``padding_mask_from_tokens``; None lets every position attend everywhere.

        Returns:
            memory (B, S, d_model).
        """
        return self._encode(src, src_mask, None)

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
               tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Run the decoder over the target prefix, attending to the encoder's memory.

        Args:
            tgt: (B, T) token ids in [0, tgt_vocab_size). memory: (B, S, d_model).
            src_mask: bool, broadcastable to (B, T, S), e.g. (B, 1, S); None: attend to all.
            tgt_mask: bool, (B, T, T) or (T, T), e.g. from ``decoder_self_attention_mask``;
                None means the causal mask alone (never "no mask": the decoder must not see
                the future unless the caller passes an all-True mask on purpose).

        Returns:
            hidden states (B, T, d_model).
        """
        return self._decode(tgt, memory, src_mask, tgt_mask)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (B, T, d_model) -> logits (B, T, tgt_vocab_size) (no softmax)."""
        _check_hidden("hidden", hidden, self.config.d_model)
        return self.output_projection(hidden)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Encode ``src``, decode ``tgt`` and project: logits (B, T, tgt_vocab_size).

        Args:
            src: (B, S) ids. tgt: (B, T) ids.
            src_mask: (B, 1, S) padding mask, used by the encoder and by cross-attention.
            tgt_mask: (B, T, T) or (T, T); None: causal.
        """
        memory = self.encode(src, src_mask)
        return self.project(self.decode(tgt, memory, src_mask, tgt_mask))

    def attention_maps(self, src: torch.Tensor, tgt: torch.Tensor,
                       src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
                       ) -> dict[str, list[torch.Tensor]]:
        """Attention weights of every layer, from one forward pass (no gradient).

        Args: as for :meth:`forward`.

        Returns:
            {"encoder": [(B, h, S, S)] * N_enc, "decoder_self": [(B, h, T, T)] * N_dec,
            "cross": [(B, h, T, S)] * N_dec}.
        """
        maps: dict[str, list[torch.Tensor]] = {"encoder": [], "decoder_self": [], "cross": []}
        with torch.no_grad():
            memory = self._encode(src, src_mask, maps["encoder"])
            self._decode(tgt, memory, src_mask, tgt_mask, maps["decoder_self"], maps["cross"])
        return maps


def build_model(config: TransformerConfig) -> Transformer:
    """A new :class:`Transformer` for ``config``, Xavier-uniform initialised.

    Build inside ``with torch.device("meta"):`` to count parameters without allocating them.
    """
    return Transformer(config)


def count_parameters(model: nn.Module) -> int:
    """Number of unique trainable parameters (a tied matrix counts once)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    unique = {id(p): p for p in model.parameters() if p.requires_grad}
    return sum(p.numel() for p in unique.values())
