"""The chapter's two models: the paper's encoder-decoder at a CPU size, and the decoder alone.

The decoder alone (a GPT-style language model) is built from the same blocks. Its layer is the
paper's decoder layer without cross-attention, which is the encoder layer under a causal mask:
self-attention and a feed-forward, each in a residual. What changes from the encoder-decoder:

- no encoder, so no memory and no cross-attention;
- one mask, the causal one (and padding), on the one sequence;
- the loss is the next token's cross-entropy on the text itself, not on a translation.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_course.core.checks import (
    Shapes,
    check_instance,
    check_int,
    check_token_ids,
    checked_by,
)
from transformer_course.core.kv_cache import KVCache, cached_attention
from transformer_course.core.masks import causal_mask, decoder_self_attention_mask
from transformer_course.core.model import (
    Embeddings,
    EncoderLayer,
    TransformerConfig,
    stack_norm,
    xavier_init,
)

D_MODEL, HEADS, D_FF, MAX_LEN = 256, 4, 1024, 256


def translator_config(vocab_size: int, dropout: float = 0.1, layers: int = 3,
                      norm_first: bool = False) -> TransformerConfig:
    """The paper's base model cut to a CPU size: d_model 256 (base: 512), 4 heads of
    d_k = 64 (as in the base model), d_ff 1024 (4 d_model, as in the paper), ``layers`` + ``layers``
    layers (base: 6 + 6), post-norm, one embedding matrix shared by both languages and the output
    layer (section 3.4)."""
    return TransformerConfig(vocab_size, vocab_size, d_model=D_MODEL, num_heads=HEADS,
                             num_encoder_layers=layers, num_decoder_layers=layers, d_ff=D_FF,
                             dropout=dropout, max_len=MAX_LEN, norm_first=norm_first)


def check_language_model_tokens(model: DecoderOnly, tokens: torch.Tensor) -> None:
    """The checks of :meth:`DecoderOnly.forward`: (B, T) ids of its vocabulary, T <= max_len."""
    check_token_ids("tokens", tokens, model.config.tgt_vocab_size, "B T", Shapes(),
                    model.config.max_len)


class DecoderOnly(nn.Module):
    """A causal language model: embeddings, N self-attention layers under the causal mask, a
    final LayerNorm (pre-norm, as GPT-2 and its successors) and the tied output layer.

    Built from a :class:`TransformerConfig`; it reads the target vocabulary and the decoder's
    depth and ignores the encoder's.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embed = Embeddings(c.tgt_vocab_size, c.d_model, c.max_len, c.positional, c.dropout)
        self.layers = nn.ModuleList(
            EncoderLayer.from_config(c) for _ in range(c.num_decoder_layers))
        self.norm = stack_norm(c)
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        xavier_init(self, self.embed)  # as the encoder-decoder's reset_parameters
        self.output_projection.weight = self.embed.token.weight

    @checked_by(check_language_model_tokens)
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T), BOS first, padded right -> logits (B, T, V)
        of each next token."""
        pad = self.config.pad_id
        mask = decoder_self_attention_mask(tokens, pad)  # (B, T, T)
        x = self.embed(tokens)
        for layer in self.layers:  # causal self-attention, feed-forward
            x = layer(x, mask)
        if self.norm is not None:
            x = self.norm(x)
        return self.output_projection(x)


def writer_config(vocab_size: int, dropout: float = 0.1, layers: int = 3) -> TransformerConfig:
    """The decoder alone at the translator's width: ``layers`` pre-norm layers."""
    return TransformerConfig(vocab_size, vocab_size, d_model=D_MODEL, num_heads=HEADS,
                             num_encoder_layers=1, num_decoder_layers=layers, d_ff=D_FF,
                             dropout=dropout, max_len=MAX_LEN, norm_first=True)


def next_token_probabilities(logits: torch.Tensor, temperature: float = 1.0,
                             top_k: int | None = None) -> torch.Tensor:
    """softmax(logits / temperature) over the ``top_k`` largest logits
    (those tied with the k-th kept too), 0 elsewhere: (V,) -> (V,)."""
    logits = logits.float() / temperature
    if top_k is not None:
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, -torch.inf)
    return torch.softmax(logits, -1)


def next_token_logits(model: DecoderOnly, tokens: torch.Tensor,
                      cache: list[KVCache] | None = None) -> torch.Tensor:
    """The logits (V,) of the token after ``tokens`` (T,).
    ``cache``: one KVCache per layer, empty at the first call; the layers
    run over the positions it does not hold yet (one per call after the
    first) and append their keys and values. None: all T positions again."""
    if cache is None:
        return model(tokens[None])[0, -1]
    start = cache[0].length  # positions computed at earlier calls
    x = model.embed(tokens[None])[:, start:]  # (1, T - start, d_model)
    mask = causal_mask(len(tokens), tokens.device)[None, start:]
    for layer, kv in zip(model.layers, cache, strict=True):
        attend, feed_forward = layer.sublayers  # the EncoderLayer's
        x = attend(x, lambda x, attn=layer.self_attn, kv=kv:
                   cached_attention(attn, x, x, mask, kv))
        x = feed_forward(x, layer.feed_forward)
    if model.norm is not None:
        x = model.norm(x)
    return model.output_projection(x)[0, -1]


@torch.no_grad()
def sample(model: DecoderOnly, prompt: torch.Tensor, max_new: int, *,
           temperature: float = 1.0, top_k: int | None = None,
           eos_id: int = 2, generator: torch.Generator | None = None,
           use_cache: bool = True) -> torch.Tensor:
    """Extend ``prompt`` (T,) ids, BOS first, by up to ``max_new`` tokens,
    each drawn from :func:`next_token_probabilities`; stop at EOS.
    ``use_cache``: keep each layer's keys and values between steps.
    Returns the ids (T + n,)."""
    _check_sample_arguments(model, prompt, max_new)
    cache = [KVCache() for _ in model.layers] if use_cache else None
    tokens = prompt.clone()
    for _ in range(max_new):
        logits = next_token_logits(model, tokens, cache)  # (V,)
        probs = next_token_probabilities(logits, temperature, top_k)
        token = torch.multinomial(probs, 1, generator=generator)
        tokens = torch.cat([tokens, token.to(tokens.device)])
        if int(token) == eos_id:
            break
    return tokens


def _check_sample_arguments(model: DecoderOnly, prompt: torch.Tensor, max_new: int) -> None:
    check_instance("model", model, DecoderOnly)
    check_instance("prompt", prompt, torch.Tensor)
    check_int("max_new", max_new, low=0)
    if prompt.dim() != 1 or len(prompt) == 0 or len(prompt) + max_new > model.config.max_len:
        raise ValueError(f"prompt must be one non-empty row of ids, and prompt plus max_new at "
                         f"most the model's max_len={model.config.max_len} positions; got shape "
                         f"{tuple(prompt.shape)} and max_new={max_new}")
