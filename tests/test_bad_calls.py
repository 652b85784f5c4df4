"""Bad calls to the boundary of the core, in one table: every function and class a reader calls
directly raises ``ValueError`` or ``TypeError`` (exactly, not a subclass such as torch's
``RuntimeError``), and the message starts with the name of the argument at fault.

A test below fails when a public name of ``core.__all__`` (or a public method of one of its
classes) has no entry and no stated reason in ``EXEMPT``: a new entry point must check its
arguments, or say why it need not.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from transformer_course import core
from transformer_course.core import (
    Batch,
    DecoderCache,
    KVCache,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    SinusoidalPositionalEncoding,
    TrainConfig,
    Transformer,
    TransformerConfig,
    accuracies,
    beam_search,
    causal_mask,
    combine_masks,
    count_parameters,
    decoder_self_attention_mask,
    evaluate,
    evaluate_decoding,
    greedy_decode,
    label_smoothed_loss,
    loss_floor,
    make_batch,
    make_optimizer,
    naive_softmax,
    noam_lr,
    pad_sequences,
    padding_mask_from_lengths,
    padding_mask_from_tokens,
    peak_lr,
    scaled_dot_product_attention,
    scaled_dot_product_attention_numpy,
    sequence_log_prob,
    shift_targets,
    sinusoidal_encoding,
    sinusoidal_encoding_numpy,
    sinusoidal_frequencies,
    sinusoidal_wavelengths,
    smoothed_targets,
    softmax,
    train,
    train_step,
    trim_batch,
    wrap_sources,
)

INNER = "an inner layer: trusts the checked Transformer"
EXEMPT = {
    "PAD_ID": "a constant", "BOS_ID": "a constant", "EOS_ID": "a constant",
    "DECAYS": "a constant",
    "Metrics": "a result record built by evaluate", "Evaluation": "a result record built by train",
    "TrainResult": "a result record built by train",
    "Batch": "a record built by make_batch, which checks its inputs",
    "Transformer.reset_parameters": "takes no arguments",
    "Transformer.project": INNER,
    "Embeddings": INNER, "EncoderLayer": INNER, "DecoderLayer": INNER, "Residual": INNER,
    "PositionwiseFeedForward": INNER, "xavier_init": INNER,
    "length_penalty": "a formula; beam_search checks alpha",
    "model_step_function": "builds the step of the decoders; the model's encode checks src",
    "cached_step_function": "builds the cached step of the decoders; the model's encode and "
                            "decode check their arguments",
    "KVCache": "a record that MultiHeadAttention fills; forward checks it",
    "DecoderCache": "a record that Transformer.decode fills; decode checks it",
    "train_step": "one step of train, which checks its arguments",
    "attention": "the unchecked five steps; scaled_dot_product_attention checks, then calls it",
    "teacher_forced_loss": "the default loss of train_step",
    "TrainConfig.learning_rate": "the schedule of a checked TrainConfig",
}

SRC_V, TGT_V, D, MAX_LEN = 11, 13, 8, 10  # the small model's sizes
NAN, INF = math.nan, math.inf
BOOL, F32, F64, LONG = torch.bool, torch.float32, torch.float64, torch.long


def ids(*shape: int, high: int = SRC_V, low: int = 3) -> torch.Tensor:
    """Token ids in [low, high) (no padding, no BOS/EOS), the same on every call."""
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(0))


def randn(*shape: int, dtype: torch.dtype = F32) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=dtype)


def arr(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape)


def ones(*shape: int, dtype: torch.dtype = BOOL) -> torch.Tensor:
    return torch.ones(shape, dtype=dtype)


def config(**kw: Any) -> TransformerConfig:
    sizes = dict(d_model=D, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16,
                 max_len=MAX_LEN, dropout=0.0)
    return TransformerConfig(SRC_V, TGT_V, **{**sizes, **kw})


@functools.cache
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(config()).eval()


def memory(B: int = 2, S: int = 5) -> torch.Tensor:
    with torch.no_grad():
        return model().encode(ids(B, S))


@functools.cache
def batch() -> Batch:
    return make_batch(ids(2, 4), ids(2, 3, high=TGT_V))


def mha() -> MultiHeadAttention:
    return MultiHeadAttention(D, 2)


def step_fn(V: int = 7, rows: int | None = None, value: float = 0.0,
            dtype: torch.dtype = F32) -> Callable:
    """A step function that returns (N, V) constant log-probabilities (N = rows or the prefix's)."""
    return lambda prefix, index: torch.full((rows or prefix.shape[0], V), value, dtype=dtype)


def nan_after_first_step(prefix: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(prefix.shape[0], 7)
    return out if prefix.shape[1] == 1 else out * NAN


def fresh_model() -> Transformer:
    """A model of its own, for the calls that may train it (never the shared one)."""
    torch.manual_seed(0)
    return Transformer(config())


def step(**kw: Any) -> float:
    """train_step on a fresh model, with one argument replaced."""
    net = fresh_model()
    args = dict(model=net, optimizer=make_optimizer(net, TrainConfig()), batch=batch(),
                lr=1e-3, config=TrainConfig())
    return train_step(**{**args, **kw})


def sdpa_np(q=None, k=None, v=None, mask=None, **kw):
    q, k, v = (arr(2, 3, 4) if x is None else x for x in (q, k, v))
    return scaled_dot_product_attention_numpy(q, k, v, mask, **kw)


def sdpa(q=None, k=None, v=None, mask=None, **kw):
    q, k, v = (randn(2, 3, 4) if x is None else x for x in (q, k, v))
    return scaled_dot_product_attention(q, k, v, mask, **kw)


def attend(query=None, key=None, value=None, mask=None, **kw):
    query = randn(2, 3, D) if query is None else query
    key = randn(2, 5, D) if key is None else key
    value = randn(2, 5, D) if value is None else value
    return mha()(query, key, value, mask, **kw)


def encode(src=None, src_mask=None):
    return model().encode(ids(2, 5) if src is None else src, src_mask)


def decode(tgt=None, mem=None, src_mask=None, tgt_mask=None):
    tgt = ids(2, 4, high=TGT_V) if tgt is None else tgt
    return model().decode(tgt, memory() if mem is None else mem, src_mask, tgt_mask)


def filled_cache() -> DecoderCache:
    """A cache holding 4 target positions of 2 rows."""
    cache = DecoderCache()
    with torch.no_grad():
        model().decode(ids(2, 4, high=TGT_V), memory(), cache=cache)
    return cache


def kv_cache(B: int = 2) -> KVCache:
    """Self-attention keys and values of 4 earlier positions (h = 2, d_k = D / 2)."""
    return KVCache(k=randn(B, 2, 4, D // 2), v=randn(B, 2, 4, D // 2))


def forward(src=None, tgt=None, src_mask=None, tgt_mask=None, method: str = "forward"):
    src = ids(2, 5) if src is None else src
    tgt = ids(2, 4, high=TGT_V) if tgt is None else tgt
    return getattr(model(), method)(src, tgt, src_mask, tgt_mask)


def maps(**kw):
    return forward(method="attention_maps", **kw)


def a_batch(**kw: Any) -> Batch:
    fields = dict(src=ids(2, 5), src_mask=ones(2, 1, 5), tgt_in=ids(2, 4), tgt_out=ids(2, 4),
                  tgt_mask=ones(2, 4, 4))
    return Batch(**{**fields, **kw})


def greedy(model_: Any = None, src=None, max_len: int = 6, bos_id: int = 1, eos_id: int = 2,
           **kw: Any):
    return greedy_decode(model() if model_ is None else model_,
                         ids(2, 5) if src is None else src, max_len, bos_id, eos_id, **kw)


def beam(model_: Any = None, src=None, max_len: int = 6, bos_id: int = 1, eos_id: int = 2,
         **kw: Any):
    return beam_search(model() if model_ is None else model_,
                       ids(2, 5) if src is None else src, max_len, bos_id, eos_id, **kw)


def log_prob(tokens: torch.Tensor, model_: Any = None, src=None, eos_id: int = 2, **kw: Any):
    return sequence_log_prob(model() if model_ is None else model_,
                             ids(2, 5) if src is None else src, tokens, eos_id, **kw)


def loss(logits=None, labels=None, **kw):
    logits = randn(2, 3, 7) if logits is None else logits
    labels = torch.tensor([[1, 2, 0], [3, 4, 5]]) if labels is None else labels
    return label_smoothed_loss(logits, labels, **kw)


def train_config(**kw: Any) -> TrainConfig:
    return TrainConfig(**kw)


def one_batch_then(*items: Any):
    return iter([batch(), *items])


def t(*values: int) -> torch.Tensor:
    return torch.tensor(values)


BAD: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # softmax
    ('softmax-list', lambda: softmax([1.0, 2.0]), TypeError, 'x'),
    ('softmax-0d', lambda: softmax(np.array(1.0)), ValueError, 'x'),
    ('softmax-axis-float', lambda: softmax(np.zeros(3), axis=0.5), TypeError, 'axis'),
    ('softmax-axis-too-large', lambda: softmax(np.zeros((2, 3)), axis=2), ValueError, 'axis'),
    # naive_softmax
    ('naive_softmax-list', lambda: naive_softmax([[1.0]]), TypeError, 'x'),
    ('naive_softmax-axis-too-small', lambda: naive_softmax(np.zeros((2, 3)), axis=-3),
     ValueError, 'axis'),
    # scaled_dot_product_attention_numpy
    ('scaled_dot_product_attention_numpy-q-tensor', lambda: sdpa_np(q=randn(2, 3, 4)),
     TypeError, 'q'),
    ('scaled_dot_product_attention_numpy-q-1d', lambda: sdpa_np(q=arr(4)), ValueError, 'q'),
    ('scaled_dot_product_attention_numpy-k-width', lambda: sdpa_np(k=arr(2, 3, 5)),
     ValueError, 'k'),
    ('scaled_dot_product_attention_numpy-v-length', lambda: sdpa_np(v=arr(2, 4, 4)),
     ValueError, 'v'),
    ('scaled_dot_product_attention_numpy-mask-int', lambda: sdpa_np(mask=np.ones((3, 3), int)),
     TypeError, 'mask'),
    ('scaled_dot_product_attention_numpy-mask-shape',
     lambda: sdpa_np(mask=np.ones((2, 3, 5), bool)), ValueError, 'mask'),
    ('scaled_dot_product_attention_numpy-scale-zero', lambda: sdpa_np(scale=0),
     ValueError, 'scale'),
    ('scaled_dot_product_attention_numpy-scale-str', lambda: sdpa_np(scale="1"),
     TypeError, 'scale'),
    # scaled_dot_product_attention
    ('scaled_dot_product_attention-q-numpy', lambda: sdpa(q=arr(2, 3, 4)), TypeError, 'q'),
    ('scaled_dot_product_attention-q-empty', lambda: sdpa(q=randn(2, 0, 4)), ValueError, 'q'),
    ('scaled_dot_product_attention-k-width', lambda: sdpa(k=randn(2, 3, 5)), ValueError, 'k'),
    ('scaled_dot_product_attention-v-length', lambda: sdpa(v=randn(2, 6, 4)), ValueError, 'v'),
    ('scaled_dot_product_attention-mask-numpy', lambda: sdpa(mask=np.ones((3, 3), bool)),
     TypeError, 'mask'),
    ('scaled_dot_product_attention-mask-shape', lambda: sdpa(mask=ones(3, 4)), ValueError, 'mask'),
    ('scaled_dot_product_attention-dropout_p-one', lambda: sdpa(dropout_p=1.0),
     ValueError, 'dropout_p'),
    ('scaled_dot_product_attention-need_weights-int', lambda: sdpa(need_weights=1),
     TypeError, 'need_weights'),
    ('scaled_dot_product_attention-scale-negative', lambda: sdpa(scale=-1.0), ValueError, 'scale'),
    # causal_mask
    ('causal_mask-zero', lambda: causal_mask(0), ValueError, 'T'),
    ('causal_mask-float', lambda: causal_mask(2.5), TypeError, 'T'),
    ('causal_mask-device-float', lambda: causal_mask(3, device=1.5), TypeError, 'device'),
    # padding_mask_from_lengths
    ('padding_mask_from_lengths-list', lambda: padding_mask_from_lengths([1, 2], 4),
     TypeError, 'lengths'),
    ('padding_mask_from_lengths-2d', lambda: padding_mask_from_lengths(t(1, 2)[None], 4),
     ValueError, 'lengths'),
    ('padding_mask_from_lengths-T-zero', lambda: padding_mask_from_lengths(t(0, 0), 0),
     ValueError, 'T'),
    ('padding_mask_from_lengths-T-float', lambda: padding_mask_from_lengths(t(1), 4.0),
     TypeError, 'T'),
    # padding_mask_from_tokens
    ('padding_mask_from_tokens-float', lambda: padding_mask_from_tokens(torch.ones(2, 3), 0),
     TypeError, 'tokens'),
    ('padding_mask_from_tokens-1d', lambda: padding_mask_from_tokens(t(1, 2, 0), 0),
     ValueError, 'tokens'),
    ('padding_mask_from_tokens-pad_id-negative', lambda: padding_mask_from_tokens(ids(2, 3), -1),
     ValueError, 'pad_id'),
    ('padding_mask_from_tokens-pad_id-float', lambda: padding_mask_from_tokens(ids(2, 3), 0.0),
     TypeError, 'pad_id'),
    # combine_masks
    ('combine_masks-float', lambda: combine_masks(ones(3, 3), ones(3, 3, dtype=F32)),
     TypeError, 'masks[1]'),
    ('combine_masks-numpy', lambda: combine_masks(np.ones(3, bool)), TypeError, 'masks[0]'),
    ('combine_masks-0d', lambda: combine_masks(torch.tensor(True)), ValueError, 'masks[0]'),
    ('combine_masks-no-broadcast', lambda: combine_masks(ones(2, 3), ones(4, 3)),
     ValueError, 'masks'),
    # decoder_self_attention_mask
    ('decoder_self_attention_mask-float', lambda: decoder_self_attention_mask(torch.ones(2, 3), 0),
     TypeError, 'tokens'),
    ('decoder_self_attention_mask-3d', lambda: decoder_self_attention_mask(ids(2, 3, 1), 0),
     ValueError, 'tokens'),
    ('decoder_self_attention_mask-pad_id-negative',
     lambda: decoder_self_attention_mask(ids(2, 3), -2), ValueError, 'pad_id'),
    ('decoder_self_attention_mask-pad_id-str', lambda: decoder_self_attention_mask(ids(2, 3), "0"),
     TypeError, 'pad_id'),
    # MultiHeadAttention
    ('MultiHeadAttention-d_model-zero', lambda: MultiHeadAttention(0, 1), ValueError, 'd_model'),
    ('MultiHeadAttention-d_model-float', lambda: MultiHeadAttention(8.0, 2), TypeError, 'd_model'),
    ('MultiHeadAttention-num_heads-zero', lambda: MultiHeadAttention(8, 0),
     ValueError, 'num_heads'),
    ('MultiHeadAttention-dropout-one', lambda: MultiHeadAttention(8, 2, dropout=1.0),
     ValueError, 'dropout'),
    ('MultiHeadAttention-bias-int', lambda: MultiHeadAttention(8, 2, bias=1), TypeError, 'bias'),
    ('MultiHeadAttention-scaled-str', lambda: MultiHeadAttention(8, 2, scaled="yes"),
     TypeError, 'scaled'),
    # MultiHeadAttention.forward
    ('MultiHeadAttention.forward-query-numpy', lambda: attend(query=arr(2, 3, D)),
     TypeError, 'query'),
    ('MultiHeadAttention.forward-query-2d', lambda: attend(query=randn(3, D)), ValueError, 'query'),
    ('MultiHeadAttention.forward-key-float64', lambda: attend(key=randn(2, 5, D, dtype=F64)),
     TypeError, 'key'),
    ('MultiHeadAttention.forward-key-batch', lambda: attend(key=randn(3, 5, D)), ValueError, 'key'),
    ('MultiHeadAttention.forward-value-length', lambda: attend(value=randn(2, 4, D)),
     ValueError, 'value'),
    ('MultiHeadAttention.forward-mask-2d', lambda: attend(mask=ones(3, 5)), ValueError, 'mask'),
    ('MultiHeadAttention.forward-mask-float', lambda: attend(mask=ones(2, 1, 5, dtype=F32)),
     TypeError, 'mask'),
    ('MultiHeadAttention.forward-need_weights-int', lambda: attend(need_weights=1),
     TypeError, 'need_weights'),
    ('MultiHeadAttention.forward-cache-tuple', lambda: attend(cache=(None, None)),
     TypeError, 'cache'),
    ('MultiHeadAttention.forward-cache-batch', lambda: attend(cache=kv_cache(B=3)),
     ValueError, 'cache'),
    ('MultiHeadAttention.forward-mask-without-cached-keys',  # 4 cached + 5 new keys, not 5
     lambda: attend(mask=ones(2, 3, 5), cache=kv_cache()), ValueError, 'mask'),
    # sinusoidal_frequencies
    ('sinusoidal_frequencies-d_model-zero', lambda: sinusoidal_frequencies(0),
     ValueError, 'd_model'),
    ('sinusoidal_frequencies-base-one', lambda: sinusoidal_frequencies(8, 1), ValueError, 'base'),
    ('sinusoidal_frequencies-base-str', lambda: sinusoidal_frequencies(8, "1e4"),
     TypeError, 'base'),
    # sinusoidal_wavelengths
    ('sinusoidal_wavelengths-d_model-float', lambda: sinusoidal_wavelengths(8.0),
     TypeError, 'd_model'),
    ('sinusoidal_wavelengths-base-inf', lambda: sinusoidal_wavelengths(8, INF), ValueError, 'base'),
    # sinusoidal_encoding_numpy
    ('sinusoidal_encoding_numpy-num_positions-zero', lambda: sinusoidal_encoding_numpy(0, 8),
     ValueError, 'num_positions'),
    ('sinusoidal_encoding_numpy-num_positions-float', lambda: sinusoidal_encoding_numpy(3.0, 8),
     TypeError, 'num_positions'),
    ('sinusoidal_encoding_numpy-d_model-negative', lambda: sinusoidal_encoding_numpy(3, -8),
     ValueError, 'd_model'),
    ('sinusoidal_encoding_numpy-base-below-one', lambda: sinusoidal_encoding_numpy(3, 8, 0.5),
     ValueError, 'base'),
    # sinusoidal_encoding
    ('sinusoidal_encoding-dtype-int', lambda: sinusoidal_encoding(3, 8, dtype=LONG),
     TypeError, 'dtype'),
    ('sinusoidal_encoding-num_positions-bool', lambda: sinusoidal_encoding(True, 8),
     TypeError, 'num_positions'),
    # SinusoidalPositionalEncoding
    ('SinusoidalPositionalEncoding-max_len-zero', lambda: SinusoidalPositionalEncoding(8, 0),
     ValueError, 'max_len'),
    ('SinusoidalPositionalEncoding-max_len-float', lambda: SinusoidalPositionalEncoding(8, 1e3),
     TypeError, 'max_len'),
    ('SinusoidalPositionalEncoding-d_model-zero', lambda: SinusoidalPositionalEncoding(0, 10),
     ValueError, 'd_model'),
    # SinusoidalPositionalEncoding.forward
    ('SinusoidalPositionalEncoding.forward-x-2d',
     lambda: SinusoidalPositionalEncoding(D, 10)(randn(3, D)), ValueError, 'x'),
    ('SinusoidalPositionalEncoding.forward-x-int',
     lambda: SinusoidalPositionalEncoding(D, 10)(ones(1, 3, D, dtype=LONG)), TypeError, 'x'),
    # LearnedPositionalEmbedding
    ('LearnedPositionalEmbedding-d_model-zero', lambda: LearnedPositionalEmbedding(0, 10),
     ValueError, 'd_model'),
    ('LearnedPositionalEmbedding-max_len-negative', lambda: LearnedPositionalEmbedding(8, -1),
     ValueError, 'max_len'),
    # LearnedPositionalEmbedding.forward
    ('LearnedPositionalEmbedding.forward-x-too-long',
     lambda: LearnedPositionalEmbedding(D, 4)(randn(2, 5, D)), ValueError, 'x'),
    ('LearnedPositionalEmbedding.forward-x-numpy',
     lambda: LearnedPositionalEmbedding(D, 4)(arr(2, 3, D)), TypeError, 'x'),
    # TransformerConfig
    ('TransformerConfig-src_vocab_size-zero', lambda: TransformerConfig(0, 5),
     ValueError, 'src_vocab_size'),
    ('TransformerConfig-src_vocab_size-bool', lambda: TransformerConfig(True, 5),
     TypeError, 'src_vocab_size'),
    ('TransformerConfig-tgt_vocab_size-float', lambda: TransformerConfig(5, 5.0),
     TypeError, 'tgt_vocab_size'),
    ('TransformerConfig-d_model-not-divisible', lambda: config(d_model=10, num_heads=4),
     ValueError, 'num_heads'),
    ('TransformerConfig-num_heads-zero', lambda: config(num_heads=0), ValueError, 'num_heads'),
    ('TransformerConfig-num_encoder_layers-negative', lambda: config(num_encoder_layers=-1),
     ValueError, 'num_encoder_layers'),
    ('TransformerConfig-num_decoder_layers-float', lambda: config(num_decoder_layers=1.5),
     TypeError, 'num_decoder_layers'),
    ('TransformerConfig-d_ff-zero', lambda: config(d_ff=0), ValueError, 'd_ff'),
    ('TransformerConfig-dropout-one', lambda: config(dropout=1.0), ValueError, 'dropout'),
    ('TransformerConfig-max_len-zero', lambda: config(max_len=0), ValueError, 'max_len'),
    ('TransformerConfig-norm_first-int', lambda: config(norm_first=1), TypeError, 'norm_first'),
    ('TransformerConfig-share_embeddings-str', lambda: config(share_embeddings="yes"),
     TypeError, 'share_embeddings'),
    ('TransformerConfig-positional-unknown', lambda: config(positional="rotary"),
     ValueError, 'positional'),
    ('TransformerConfig-scaled_attention-none', lambda: config(scaled_attention=None),
     TypeError, 'scaled_attention'),
    ('TransformerConfig-pad_id-negative', lambda: config(pad_id=-1), ValueError, 'pad_id'),
    ('TransformerConfig-layer_norm_eps-zero', lambda: config(layer_norm_eps=0),
     ValueError, 'layer_norm_eps'),
    ('TransformerConfig-final_norm-int', lambda: config(final_norm=1), TypeError, 'final_norm'),
    # Transformer
    ('Transformer-config-dict', lambda: Transformer({"src_vocab_size": 5}), TypeError, 'config'),
    # Transformer.encode
    ('Transformer.encode-src-float', lambda: encode(torch.ones(2, 5)), TypeError, 'src'),
    ('Transformer.encode-src-out-of-vocab', lambda: encode(t(1, 11)[None]), ValueError, 'src'),
    ('Transformer.encode-src_mask-2d', lambda: encode(src_mask=ones(2, 5)), ValueError, 'src_mask'),
    ('Transformer.encode-src_mask-float', lambda: encode(src_mask=ones(2, 1, 5, dtype=F32)),
     TypeError, 'src_mask'),
    # Transformer.decode
    ('Transformer.decode-tgt-float', lambda: decode(torch.ones(2, 4)), TypeError, 'tgt'),
    ('Transformer.decode-tgt-out-of-vocab', lambda: decode(t(3, 13)[None].repeat(2, 1)),
     ValueError, 'tgt'),
    ('Transformer.decode-memory-2d', lambda: decode(mem=randn(5, D)), ValueError, 'memory'),
    ('Transformer.decode-memory-numpy', lambda: decode(mem=arr(2, 5, D)), TypeError, 'memory'),
    ('Transformer.decode-src_mask-length', lambda: decode(src_mask=ones(2, 1, 4)),
     ValueError, 'src_mask'),
    ('Transformer.decode-tgt_mask-2d', lambda: decode(tgt_mask=causal_mask(4)),
     ValueError, 'tgt_mask'),
    ('Transformer.decode-tgt_mask-float', lambda: decode(tgt_mask=ones(1, 4, 4, dtype=F32)),
     TypeError, 'tgt_mask'),
    ('Transformer.decode-cache-list', lambda: model().decode(ids(2, 4, high=TGT_V), memory(),
                                                             cache=[]), TypeError, 'cache'),
    ('Transformer.decode-tgt-not-past-the-cache',
     lambda: model().decode(ids(2, 4, high=TGT_V), memory(), cache=filled_cache()),
     ValueError, 'tgt'),
    ('Transformer.decode-cache-batch',
     lambda: model().decode(ids(3, 5, high=TGT_V), memory(3), cache=filled_cache()),
     ValueError, 'cache'),
    ('Transformer.decode-cache-layers',
     lambda: model().decode(ids(2, 5, high=TGT_V), memory(),
                            cache=DecoderCache(filled_cache().layers * 2)), ValueError, 'cache'),
    # Transformer.forward
    ('Transformer.forward-tgt-batch', lambda: forward(tgt=ids(1, 4, high=TGT_V)),
     ValueError, 'tgt'),
    ('Transformer.forward-src-float', lambda: forward(src=torch.ones(2, 5)), TypeError, 'src'),
    ('Transformer.forward-tgt-float', lambda: forward(tgt=torch.ones(2, 4)), TypeError, 'tgt'),
    ('Transformer.forward-src_mask-padding-B-equals-S',
     lambda: forward(src=ids(2, 2), tgt=ids(2, 3, high=TGT_V), src_mask=ones(2, 2)),
     ValueError, 'src_mask'),
    ('Transformer.forward-tgt_mask-float', lambda: forward(tgt_mask=ones(1, 4, 4, dtype=F32)),
     TypeError, 'tgt_mask'),
    # Transformer.attention_maps
    ('Transformer.attention_maps-src-float', lambda: maps(src=torch.ones(2, 5)), TypeError, 'src'),
    ('Transformer.attention_maps-tgt-too-long', lambda: maps(tgt=ids(2, 11, high=TGT_V)),
     ValueError, 'tgt'),
    ('Transformer.attention_maps-tgt_mask-2d', lambda: maps(tgt_mask=causal_mask(4)),
     ValueError, 'tgt_mask'),
    # count_parameters
    ('count_parameters-list', lambda: count_parameters([1, 2]), TypeError, 'model'),
    # pad_sequences
    ('pad_sequences-tensor', lambda: pad_sequences(ones(2, 3, dtype=LONG)), TypeError, 'sequences'),
    ('pad_sequences-empty', lambda: pad_sequences([]), ValueError, 'sequences'),
    ('pad_sequences-float-item', lambda: pad_sequences([t(1, 2), torch.ones(2)]),
     TypeError, 'sequences[1]'),
    ('pad_sequences-empty-item', lambda: pad_sequences([t()]), ValueError, 'sequences[0]'),
    ('pad_sequences-2d-item', lambda: pad_sequences([t(1), ones(2, 2, dtype=LONG)]),
     ValueError, 'sequences[1]'),
    ('pad_sequences-list-item', lambda: pad_sequences([[1, 2]]), TypeError, 'sequences[0]'),
    ('pad_sequences-length-short', lambda: pad_sequences([t(1, 2, 3)], length=2),
     ValueError, 'length'),
    ('pad_sequences-length-float', lambda: pad_sequences([t(1, 2, 3)], length=4.0),
     TypeError, 'length'),
    ('pad_sequences-pad_id-negative', lambda: pad_sequences([t(1)], pad_id=-1),
     ValueError, 'pad_id'),
    ('pad_sequences-pad_id-float', lambda: pad_sequences([t(1)], pad_id=0.5), TypeError, 'pad_id'),
    # shift_targets
    ('shift_targets-float', lambda: shift_targets(torch.ones(2, 3)), TypeError, 'tgt'),
    ('shift_targets-1d', lambda: shift_targets(t(1, 2)), ValueError, 'tgt'),
    ('shift_targets-bos-equals-pad', lambda: shift_targets(ids(2, 3), bos_id=0),
     ValueError, 'pad_id'),
    ('shift_targets-eos_id-negative', lambda: shift_targets(ids(2, 3), eos_id=-1),
     ValueError, 'eos_id'),
    ('shift_targets-bos_id-float', lambda: shift_targets(ids(2, 3), bos_id=1.0),
     TypeError, 'bos_id'),
    # wrap_sources
    ('wrap_sources-float', lambda: wrap_sources(torch.ones(2, 3)), TypeError, 'src'),
    ('wrap_sources-1d', lambda: wrap_sources(t(3, 4)), ValueError, 'src'),
    ('wrap_sources-bos-equals-eos', lambda: wrap_sources(ids(2, 3), bos_id=2),
     ValueError, 'bos_id'),
    ('wrap_sources-pad_id-bool', lambda: wrap_sources(ids(2, 3), pad_id=False),
     TypeError, 'pad_id'),
    # make_batch
    ('make_batch-src-list-of-lists', lambda: make_batch([[3, 4]], [t(5)]), TypeError, 'src[0]'),
    ('make_batch-src-empty-list', lambda: make_batch([], []), ValueError, 'src'),
    ('make_batch-src-numpy', lambda: make_batch(np.ones((2, 3), int), ids(2, 3)), TypeError, 'src'),
    ('make_batch-tgt-float-item', lambda: make_batch(ids(2, 3), [torch.ones(2), t(4)]),
     TypeError, 'tgt[0]'),
    ('make_batch-tgt-batch', lambda: make_batch(ids(2, 3), ids(3, 3)), ValueError, 'tgt'),
    ('make_batch-wrap_source-int', lambda: make_batch(ids(2, 3), ids(2, 3), wrap_source=1),
     TypeError, 'wrap_source'),
    ('make_batch-pad_id-negative', lambda: make_batch(ids(2, 3), ids(2, 3), pad_id=-1),
     ValueError, 'pad_id'),
    ('make_batch-eos-equals-bos', lambda: make_batch(ids(2, 3), ids(2, 3), eos_id=1),
     ValueError, 'bos_id'),
    # trim_batch
    ('trim_batch-dict', lambda: trim_batch({"src": 1}), TypeError, 'batch'),
    # noam_lr
    ('noam_lr-step-zero', lambda: noam_lr(0, 8, 4), ValueError, 'step'),
    ('noam_lr-step-float', lambda: noam_lr(1.5, 8, 4), TypeError, 'step'),
    ('noam_lr-d_model-zero', lambda: noam_lr(1, 0, 4), ValueError, 'd_model'),
    ('noam_lr-warmup-negative', lambda: noam_lr(1, 8, -4), ValueError, 'warmup'),
    ('noam_lr-scale-inf', lambda: noam_lr(1, 8, 4, INF), ValueError, 'scale'),
    ('noam_lr-scale-str', lambda: noam_lr(1, 8, 4, "1"), TypeError, 'scale'),
    # peak_lr
    ('peak_lr-warmup-zero', lambda: peak_lr(8, 0), ValueError, 'warmup'),
    ('peak_lr-warmup-float', lambda: peak_lr(8, 1.5), TypeError, 'warmup'),
    ('peak_lr-d_model-zero', lambda: peak_lr(0, 4), ValueError, 'd_model'),
    ('peak_lr-scale-negative', lambda: peak_lr(8, 4, -1.0), ValueError, 'scale'),
    # smoothed_targets
    ('smoothed_targets-2d', lambda: smoothed_targets(ones(2, 2, dtype=LONG), 4, 0.1),
     ValueError, 'labels'),
    ('smoothed_targets-float', lambda: smoothed_targets(torch.ones(3), 4, 0.1),
     TypeError, 'labels'),
    ('smoothed_targets-vocab_size-zero', lambda: smoothed_targets(t(0), 0, 0.1),
     ValueError, 'vocab_size'),
    ('smoothed_targets-vocab_size-float', lambda: smoothed_targets(t(0), 2.5, 0.1),
     TypeError, 'vocab_size'),
    ('smoothed_targets-epsilon-one', lambda: smoothed_targets(t(0), 4, 1.0), ValueError, 'epsilon'),
    # label_smoothed_loss
    ('label_smoothed_loss-labels-float', lambda: loss(labels=torch.ones(2, 3)),
     TypeError, 'labels'),
    ('label_smoothed_loss-labels-out-of-vocab', lambda: loss(labels=t(1, 9, 0)[None].repeat(2, 1)),
     ValueError, 'labels'),
    ('label_smoothed_loss-logits-int', lambda: loss(logits=ones(2, 3, 7, dtype=LONG)),
     TypeError, 'logits'),
    ('label_smoothed_loss-logits-2d', lambda: loss(logits=randn(6, 7)), ValueError, 'logits'),
    ('label_smoothed_loss-epsilon-one', lambda: loss(epsilon=1.0), ValueError, 'epsilon'),
    ('label_smoothed_loss-pad_id-negative', lambda: loss(pad_id=-1), ValueError, 'pad_id'),
    ('label_smoothed_loss-pad_id-float', lambda: loss(pad_id=0.0), TypeError, 'pad_id'),
    # loss_floor
    ('loss_floor-vocab_size-zero', lambda: loss_floor(0, 0.1), ValueError, 'vocab_size'),
    ('loss_floor-vocab_size-float', lambda: loss_floor(4.0, 0.1), TypeError, 'vocab_size'),
    ('loss_floor-epsilon-one', lambda: loss_floor(4, 1.0), ValueError, 'epsilon'),
    # TrainConfig
    ('TrainConfig-steps-zero', lambda: train_config(steps=0), ValueError, 'steps'),
    ('TrainConfig-batch_size-zero', lambda: train_config(batch_size=0), ValueError, 'batch_size'),
    ('TrainConfig-warmup-float', lambda: train_config(warmup=1.5), TypeError, 'warmup'),
    ('TrainConfig-lr_scale-zero', lambda: train_config(lr_scale=0), ValueError, 'lr_scale'),
    ('TrainConfig-use_warmup-int', lambda: train_config(use_warmup=1), TypeError, 'use_warmup'),
    ('TrainConfig-label_smoothing-one', lambda: train_config(label_smoothing=1.0),
     ValueError, 'label_smoothing'),
    ('TrainConfig-betas-list', lambda: train_config(betas=[0.9, 0.98]), TypeError, 'betas'),
    ('TrainConfig-betas-three', lambda: train_config(betas=(0.9, 0.98, 0.9)), ValueError, 'betas'),
    ('TrainConfig-betas-one', lambda: train_config(betas=(0.9, 1.0)), ValueError, 'betas[1]'),
    ('TrainConfig-betas-str', lambda: train_config(betas=("a", 0.9)), TypeError, 'betas[0]'),
    ('TrainConfig-adam_eps-zero', lambda: train_config(adam_eps=0.0), ValueError, 'adam_eps'),
    ('TrainConfig-grad_clip-zero', lambda: train_config(grad_clip=0.0), ValueError, 'grad_clip'),
    ('TrainConfig-seed-negative', lambda: train_config(seed=-1), ValueError, 'seed'),
    ('TrainConfig-seed-float', lambda: train_config(seed=1.5), TypeError, 'seed'),
    ('TrainConfig-eval_every-negative', lambda: train_config(eval_every=-1),
     ValueError, 'eval_every'),
    ('TrainConfig-target_accuracy-above-one', lambda: train_config(target_accuracy=1.5),
     ValueError, 'target_accuracy'),
    ('TrainConfig-stop_early-none', lambda: train_config(stop_early=None), TypeError, 'stop_early'),
    ('TrainConfig-verbose-int', lambda: train_config(verbose=1), TypeError, 'verbose'),
    # make_optimizer
    ('make_optimizer-model-none', lambda: make_optimizer(None, TrainConfig()), TypeError, 'model'),
    ('make_optimizer-config-dict', lambda: make_optimizer(model(), {}), TypeError, 'config'),
    # accuracies
    ('accuracies-predicted-float', lambda: accuracies(torch.ones(2, 3), ids(2, 3)),
     TypeError, 'predicted'),
    ('accuracies-labels-float', lambda: accuracies(ids(2, 3), torch.ones(2, 3)),
     TypeError, 'labels'),
    ('accuracies-predicted-batch', lambda: accuracies(ids(3, 3), ids(2, 3)),
     ValueError, 'predicted'),
    ('accuracies-pad_id-negative', lambda: accuracies(ids(2, 3), ids(2, 3), -1),
     ValueError, 'pad_id'),
    # evaluate
    ('evaluate-batch-dict', lambda: evaluate(model(), {"src": 1}), TypeError, 'batch'),
    ('evaluate-model-none', lambda: evaluate(None, batch()), TypeError, 'model'),
    ('evaluate-epsilon-one', lambda: evaluate(model(), batch(), 1.0), ValueError, 'epsilon'),
    # evaluate_decoding
    ('evaluate_decoding-method-unknown', lambda: evaluate_decoding(model(), batch(), method="x"),
     ValueError, 'method'),
    ('evaluate_decoding-batch-none', lambda: evaluate_decoding(model(), None), TypeError, 'batch'),
    ('evaluate_decoding-model-none', lambda: evaluate_decoding(None, batch()), TypeError, 'model'),
    ('evaluate_decoding-beam_size-zero-beam',
     lambda: evaluate_decoding(model(), batch(), method="beam", beam_size=0),
     ValueError, 'beam_size'),
    ('evaluate_decoding-alpha-nan',
     lambda: evaluate_decoding(model(), batch(), method="beam", alpha=NAN), ValueError, 'alpha'),
    ('evaluate_decoding-bos_id-negative', lambda: evaluate_decoding(model(), batch(), bos_id=-1),
     ValueError, 'bos_id'),
    # train
    ('train-model-without-config', lambda: train(nn.Linear(2, 2), iter([]), TrainConfig()),
     TypeError, 'model'),
    ('train-batches-list', lambda: train(model(), [batch()], TrainConfig()), TypeError, 'batches'),
    ('train-config-dict', lambda: train(model(), iter([]), {}), TypeError, 'config'),
    ('train-held_out-dict', lambda: train(model(), iter([]), TrainConfig(), {}),
     TypeError, 'held_out'),
    ('train-batches-run-out', lambda: train(fresh_model(), one_batch_then(), TrainConfig(steps=3)),
     ValueError, 'batches'),
    # greedy_decode
    ('greedy_decode-model-int', lambda: greedy(42), TypeError, 'model'),
    ('greedy_decode-src-float', lambda: greedy(src=torch.ones(2, 5)), TypeError, 'src'),
    ('greedy_decode-src-1d', lambda: greedy(src=ids(5)), ValueError, 'src'),
    ('greedy_decode-max_len-one', lambda: greedy(max_len=1), ValueError, 'max_len'),
    ('greedy_decode-max_len-float', lambda: greedy(max_len=5.0), TypeError, 'max_len'),
    ('greedy_decode-bos_id-past-vocab', lambda: greedy(bos_id=13), ValueError, 'bos_id'),
    ('greedy_decode-eos_id-float', lambda: greedy(eos_id=2.0), TypeError, 'eos_id'),
    ('greedy_decode-pad_id-negative', lambda: greedy(pad_id=-1), ValueError, 'pad_id'),
    ('greedy_decode-eos-equals-pad', lambda: greedy(eos_id=0), ValueError, 'eos_id'),
    ('greedy_decode-src_mask-float', lambda: greedy(src_mask=ones(2, 1, 5, dtype=F32)),
     TypeError, 'src_mask'),
    ('greedy_decode-step-output-rows', lambda: greedy(step_fn(V=5, rows=1)), ValueError, 'model'),
    ('greedy_decode-step-with-src_mask', lambda: greedy(step_fn(), src_mask=ones(2, 1, 5)),
     ValueError, 'src_mask'),
    ('greedy_decode-use_cache-int', lambda: greedy(use_cache=1), TypeError, 'use_cache'),
    # beam_search
    ('beam_search-alpha-nan', lambda: beam(alpha=NAN), ValueError, 'alpha'),
    ('beam_search-beam_size-zero', lambda: beam(beam_size=0), ValueError, 'beam_size'),
    ('beam_search-beam_size-float', lambda: beam(beam_size=1.5), TypeError, 'beam_size'),
    ('beam_search-return_scores-int', lambda: beam(return_scores=1), TypeError, 'return_scores'),
    ('beam_search-use_cache-none', lambda: beam(use_cache=None), TypeError, 'use_cache'),
    ('beam_search-src-float', lambda: beam(src=torch.ones(2, 5)), TypeError, 'src'),
    ('beam_search-max_len-zero', lambda: beam(max_len=0), ValueError, 'max_len'),
    ('beam_search-pad-equals-bos', lambda: beam(pad_id=1), ValueError, 'bos_id'),
    ('beam_search-model-str', lambda: beam("x"), TypeError, 'model'),
    ('beam_search-step-output-nan', lambda: beam(nan_after_first_step, beam_size=2),
     ValueError, 'model'),
    # sequence_log_prob
    ('sequence_log_prob-tokens-float', lambda: log_prob(torch.ones(2, 3)), TypeError, 'tokens'),
    ('sequence_log_prob-tokens-one-column', lambda: log_prob(ones(2, 1, dtype=LONG)),
     ValueError, 'tokens'),
    ('sequence_log_prob-src-float', lambda: log_prob(t(1, 5, 2).view(1, 3), src=torch.ones(1, 5)),
     TypeError, 'src'),
    ('sequence_log_prob-eos_id-negative',
     lambda: log_prob(t(1, 5, 2).view(1, 3), src=ids(1, 5), eos_id=-1), ValueError, 'eos_id'),
    ('sequence_log_prob-model-int', lambda: log_prob(t(1, 5, 2).view(1, 3), 0, src=ids(1, 5)),
     TypeError, 'model'),
]


@pytest.mark.parametrize(("call", "error", "argument"),
                         [pytest.param(call, error, argument, id=entry_id)
                          for entry_id, call, error, argument in BAD])
def test_bad_call_gets_an_error_naming_the_argument(call: Callable[[], Any],
                                                    error: type[Exception], argument: str) -> None:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the exact type is checked below
        call()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert re.match(rf"{re.escape(argument)}(?!\w)", str(info.value)), str(info.value)


def _public_methods(cls: type) -> list[str]:
    """The public methods a class defines itself, as 'Class.method'."""
    return [f"{cls.__name__}.{name}" for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(value)]


def test_every_public_name_of_the_core_checks_its_arguments_or_says_why_not() -> None:
    covered = {entry_id.split("-", 1)[0] for entry_id, *_ in BAD}
    wanted = [name for name in core.__all__ if name not in EXEMPT]
    for name in core.__all__:
        value = getattr(core, name)
        if inspect.isclass(value) and name not in EXEMPT:
            wanted += [m for m in _public_methods(value) if m not in EXEMPT]
    assert not [name for name in wanted if name not in covered]
    assert not covered - set(wanted)
