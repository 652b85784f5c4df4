"""Bad calls to every public function and class of the core, in one table.

Each entry makes one bad call and names the exception it must raise (``ValueError`` or
``TypeError`` exactly, never a subclass such as torch's ``RuntimeError``) and a regex its message
must match: the message starts with the argument's name, then says what was expected and, after
"got", what arrived. A test below fails when a public name of ``core.__all__`` (or a public method
of one of its classes) has no entry, so the table cannot fall behind the API.

Exempt, because they take no checked input: the constants ``PAD_ID``, ``BOS_ID``, ``EOS_ID``; the
result records ``Metrics``, ``Evaluation`` and ``TrainResult`` (built by the package, never from a
user's input); ``Transformer.reset_parameters`` (no arguments); and the ``forward`` of the inner
layers (``EncoderLayer``, ``DecoderLayer``, ``Residual``, ``PositionwiseFeedForward``), which
trust their caller, the checked ``Transformer``.
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
    DecoderLayer,
    Embeddings,
    EncoderLayer,
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    PositionwiseFeedForward,
    Residual,
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
    length_penalty,
    loss_floor,
    make_batch,
    make_optimizer,
    model_step_function,
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

EXEMPT = {
    "PAD_ID": "a constant", "BOS_ID": "a constant", "EOS_ID": "a constant",
    "Metrics": "a result record built by evaluate", "Evaluation": "a result record built by train",
    "TrainResult": "a result record built by train",
    "Transformer.reset_parameters": "takes no arguments",
    "EncoderLayer.forward": "an inner layer: trusts the checked Transformer",
    "DecoderLayer.forward": "an inner layer: trusts the checked Transformer",
    "Residual.forward": "an inner layer: trusts the checked Transformer",
    "PositionwiseFeedForward.forward": "an inner layer: trusts the checked Transformer",
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


# Patterns for the package's standard phrasings.
INT_TENSOR = r"must be an integer torch\.Tensor of shape"
FLOAT_TENSOR = r"must be a floating-point torch\.Tensor of shape"
INT_DTYPE = r"must have an integer dtype; got torch\.float32$"
AMBIGUOUS = r"got shape \(\d+, \d+\); a mask with fewer dimensions is ambiguous"
POSITIVE = r"must be a positive int; got"

BAD: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # ---------------------------------------------------------------- attention: softmax
    ("softmax-list", lambda: softmax([1.0, 2.0]), TypeError,
     r"^x must be a floating-point NumPy array of shape \(\.\.\., n\); got list$"),
    ("softmax-tensor", lambda: softmax(torch.zeros(3)), TypeError,
     r"^x must be a floating-point NumPy array .*; got Tensor$"),
    ("softmax-int-dtype", lambda: softmax(np.arange(3)), TypeError,
     r"^x must have a floating-point dtype; got int64$"),
    ("softmax-complex", lambda: softmax(np.zeros(3, complex)), TypeError,
     r"^x must have a floating-point dtype; got complex128$"),
    ("softmax-0d", lambda: softmax(np.array(1.0)), ValueError,
     r"^x must have at least 1 dimensions, shape \(\.\.\., n\); got 0 dimensions, shape \(\)$"),
    ("softmax-empty", lambda: softmax(np.zeros((2, 0))), ValueError,
     r"^x must have a positive size in every dimension.*; got shape \(2, 0\)$"),
    ("softmax-axis-float", lambda: softmax(np.zeros(3), axis=0.5), TypeError,
     r"^axis must be an int in \[-1, 0\]; got float 0\.5$"),
    ("softmax-axis-bool", lambda: softmax(np.zeros(3), axis=True), TypeError,
     r"^axis must be an int in \[-1, 0\]; got bool True$"),
    ("softmax-axis-too-large", lambda: softmax(np.zeros((2, 3)), axis=2), ValueError,
     r"^axis must be an int in \[-2, 1\]; got 2$"),
    ("naive_softmax-list", lambda: naive_softmax([[1.0]]), TypeError,
     r"^x must be a floating-point NumPy array .*; got list$"),
    ("naive_softmax-axis-too-small", lambda: naive_softmax(np.zeros((2, 3)), axis=-3),
     ValueError, r"^axis must be an int in \[-2, 1\]; got -3$"),
    ("naive_softmax-bool-dtype", lambda: naive_softmax(np.ones(3, bool)), TypeError,
     r"^x must have a floating-point dtype; got bool$"),
    # ---------------------------------------------------------------- attention: NumPy
    ("scaled_dot_product_attention_numpy-q-tensor", lambda: sdpa_np(q=randn(2, 3, 4)),
     TypeError, r"^q must be a floating-point NumPy array of shape \(\.\.\., T_q, d_k\); "
                r"got Tensor$"),
    ("scaled_dot_product_attention_numpy-q-1d", lambda: sdpa_np(q=arr(4)), ValueError,
     r"^q must have at least 2 dimensions.*; got 1 dimensions, shape \(4,\)$"),
    ("scaled_dot_product_attention_numpy-k-width", lambda: sdpa_np(k=arr(2, 3, 5)), ValueError,
     r"^k must have shape \(\.\.\., T_k, d_k=4\); got shape \(2, 3, 5\) \(d_k does not match\)$"),
    ("scaled_dot_product_attention_numpy-v-length", lambda: sdpa_np(v=arr(2, 4, 4)), ValueError,
     r"^v must have shape \(\.\.\., T_k=3, d_v\).*; got shape \(2, 4, 4\) \(T_k does not match\)$"),
    ("scaled_dot_product_attention_numpy-k-batch", lambda: sdpa_np(k=arr(3, 3, 4)), ValueError,
     r"^k must have shape \(\.\.\., T_k, d_k=4\) with \.\.\. = \(2,\); got shape \(3, 3, 4\) "
     r"\(\.\.\. does not match\)$"),
    ("scaled_dot_product_attention_numpy-mixed-dtypes",
     lambda: sdpa_np(k=arr(2, 3, 4).astype(np.float32)), TypeError,
     r"^q, k and v must share a dtype; got float64, float32, float64$"),
    ("scaled_dot_product_attention_numpy-mask-int", lambda: sdpa_np(mask=np.ones((3, 3), int)),
     TypeError, r"^mask must be boolean \(True = may attend\); got dtype int64$"),
    ("scaled_dot_product_attention_numpy-mask-shape",
     lambda: sdpa_np(mask=np.ones((2, 3, 5), bool)), ValueError,
     r"^mask must broadcast to \(\.\.\., T_q=3, T_k=3\); got shape \(2, 3, 5\)$"),
    ("scaled_dot_product_attention_numpy-mask-list", lambda: sdpa_np(mask=[[True]]), TypeError,
     r"^mask must be a boolean NumPy array of shape .*; got list$"),
    ("scaled_dot_product_attention_numpy-scale-zero", lambda: sdpa_np(scale=0), ValueError,
     r"^scale must be a positive finite number; got 0$"),
    ("scaled_dot_product_attention_numpy-scale-nan", lambda: sdpa_np(scale=NAN), ValueError,
     r"^scale must be a positive finite number; got nan$"),
    ("scaled_dot_product_attention_numpy-scale-str", lambda: sdpa_np(scale="1"), TypeError,
     r"^scale must be a positive finite number; got str '1'$"),
    # ---------------------------------------------------------------- attention: PyTorch
    ("scaled_dot_product_attention-q-numpy", lambda: sdpa(q=arr(2, 3, 4)), TypeError,
     r"^q " + FLOAT_TENSOR + r" \(\.\.\., T_q, d_k\); got ndarray$"),
    ("scaled_dot_product_attention-q-int", lambda: sdpa(q=ones(2, 3, 4, dtype=LONG)), TypeError,
     r"^q must have a floating-point dtype; got torch\.int64$"),
    ("scaled_dot_product_attention-q-complex",
     lambda: sdpa(q=ones(2, 3, 4, dtype=torch.complex64)), TypeError,
     r"^q must have a floating-point dtype; got torch\.complex64$"),
    ("scaled_dot_product_attention-q-empty", lambda: sdpa(q=randn(2, 0, 4)), ValueError,
     r"^q must have a positive size in every dimension.*; got shape \(2, 0, 4\)$"),
    ("scaled_dot_product_attention-k-width", lambda: sdpa(k=randn(2, 3, 5)), ValueError,
     r"^k must have shape \(\.\.\., T_k, d_k=4\).*; got shape \(2, 3, 5\) \(d_k does not match\)$"),
    ("scaled_dot_product_attention-v-length", lambda: sdpa(v=randn(2, 6, 4)), ValueError,
     r"^v must have shape \(\.\.\., T_k=3, d_v\).*; got shape \(2, 6, 4\) \(T_k does not match\)$"),
    ("scaled_dot_product_attention-mixed-dtypes", lambda: sdpa(v=randn(2, 3, 4, dtype=F64)),
     TypeError, r"^q, k and v must share a dtype; got torch\.float32, torch\.float32, "
                r"torch\.float64$"),
    ("scaled_dot_product_attention-mask-numpy", lambda: sdpa(mask=np.ones((3, 3), bool)),
     TypeError, r"^mask must be a boolean torch\.Tensor of shape \(\.\.\., T_q=3, T_k=3\); "
                r"got ndarray$"),
    ("scaled_dot_product_attention-mask-float", lambda: sdpa(mask=ones(3, 3, dtype=F32)),
     TypeError, r"^mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("scaled_dot_product_attention-mask-shape", lambda: sdpa(mask=ones(3, 4)), ValueError,
     r"^mask must broadcast to \(\.\.\., T_q=3, T_k=3\); got shape \(3, 4\)$"),
    ("scaled_dot_product_attention-dropout_p-one", lambda: sdpa(dropout_p=1.0), ValueError,
     r"^dropout_p must be a number in \[0, 1\); got 1\.0$"),
    ("scaled_dot_product_attention-dropout_p-nan", lambda: sdpa(dropout_p=NAN), ValueError,
     r"^dropout_p must be a number in \[0, 1\); got nan$"),
    ("scaled_dot_product_attention-need_weights-int", lambda: sdpa(need_weights=1), TypeError,
     r"^need_weights must be a bool; got int$"),
    ("scaled_dot_product_attention-scale-negative", lambda: sdpa(scale=-1.0), ValueError,
     r"^scale must be a positive finite number; got -1\.0$"),
    ("scaled_dot_product_attention-scale-inf", lambda: sdpa(scale=INF), ValueError,
     r"^scale must be a positive finite number; got inf$"),
    # ---------------------------------------------------------------- masks
    ("causal_mask-zero", lambda: causal_mask(0), ValueError, r"^T must be a positive int; got 0$"),
    ("causal_mask-float", lambda: causal_mask(2.5), TypeError,
     r"^T must be a positive int; got float 2\.5$"),
    ("causal_mask-bool", lambda: causal_mask(True), TypeError,
     r"^T must be a positive int; got bool True$"),
    ("causal_mask-tensor", lambda: causal_mask(torch.tensor(3)), TypeError,
     r"^T must be a positive int; got Tensor tensor\(3\)$"),
    ("causal_mask-device-unknown", lambda: causal_mask(3, device="nope"), ValueError,
     r"^device must be .*'cpu'.*; got 'nope'$"),
    ("causal_mask-device-float", lambda: causal_mask(3, device=1.5), TypeError,
     r"^device must be a torch\.device, a device string such as 'cpu', or None; got float 1\.5$"),
    ("padding_mask_from_lengths-list", lambda: padding_mask_from_lengths([1, 2], 4), TypeError,
     r"^lengths " + INT_TENSOR + r" \(B\); got list$"),
    ("padding_mask_from_lengths-float", lambda: padding_mask_from_lengths(torch.ones(2), 4),
     TypeError, r"^lengths " + INT_DTYPE),
    ("padding_mask_from_lengths-2d", lambda: padding_mask_from_lengths(t(1, 2)[None], 4),
     ValueError,
     r"^lengths must have 1 dimensions, shape \(B\); got 2 dimensions, shape \(1, 2\)$"),
    ("padding_mask_from_lengths-negative", lambda: padding_mask_from_lengths(t(-1, 2), 4),
     ValueError, r"^lengths must lie in \[0, T=4\]; got \[-1, 2\]$"),
    ("padding_mask_from_lengths-too-long", lambda: padding_mask_from_lengths(t(5, 2), 4),
     ValueError, r"^lengths must lie in \[0, T=4\]; got \[5, 2\]$"),
    ("padding_mask_from_lengths-empty", lambda: padding_mask_from_lengths(t(), 4), ValueError,
     r"^lengths must have a positive size in every dimension, shape \(B\); got shape \(0,\)$"),
    ("padding_mask_from_lengths-T-zero", lambda: padding_mask_from_lengths(t(0, 0), 0),
     ValueError, r"^T " + POSITIVE + r" 0$"),
    ("padding_mask_from_lengths-T-float", lambda: padding_mask_from_lengths(t(1), 4.0),
     TypeError, r"^T " + POSITIVE + r" float 4\.0$"),
    ("padding_mask_from_tokens-float", lambda: padding_mask_from_tokens(torch.ones(2, 3), 0),
     TypeError, r"^tokens " + INT_DTYPE),
    ("padding_mask_from_tokens-bool", lambda: padding_mask_from_tokens(ones(2, 3), 0),
     TypeError, r"^tokens must have an integer dtype; got torch\.bool$"),
    ("padding_mask_from_tokens-1d", lambda: padding_mask_from_tokens(t(1, 2, 0), 0), ValueError,
     r"^tokens must have 2 dimensions, shape \(B, T\); got 1 dimensions, shape \(3,\)$"),
    ("padding_mask_from_tokens-numpy", lambda: padding_mask_from_tokens(np.ones((2, 3), int), 0),
     TypeError, r"^tokens " + INT_TENSOR + r" \(B, T\); got ndarray$"),
    ("padding_mask_from_tokens-pad_id-negative", lambda: padding_mask_from_tokens(ids(2, 3), -1),
     ValueError, r"^pad_id must be a non-negative int; got -1$"),
    ("padding_mask_from_tokens-pad_id-float", lambda: padding_mask_from_tokens(ids(2, 3), 0.0),
     TypeError, r"^pad_id must be a non-negative int; got float 0\.0$"),
    ("combine_masks-float", lambda: combine_masks(ones(3, 3), ones(3, 3, dtype=F32)), TypeError,
     r"^masks\[1\] must have a boolean dtype; got torch\.float32$"),
    ("combine_masks-numpy", lambda: combine_masks(np.ones(3, bool)), TypeError,
     r"^masks\[0\] must be a boolean torch\.Tensor of shape \(\.\.\., T_k\); got ndarray$"),
    ("combine_masks-list", lambda: combine_masks([True, False]), TypeError,
     r"^masks\[0\] must be a boolean torch\.Tensor .*; got list$"),
    ("combine_masks-0d", lambda: combine_masks(torch.tensor(True)), ValueError,
     r"^masks\[0\] must have at least 1 dimensions, shape \(\.\.\., T_k\); got 0 dimensions"),
    ("combine_masks-no-broadcast", lambda: combine_masks(ones(2, 3), ones(4, 3)), ValueError,
     r"^masks must broadcast to one shape \(\.\.\., T_q, T_k\); got \(2, 3\), \(4, 3\)$"),
    ("decoder_self_attention_mask-float",
     lambda: decoder_self_attention_mask(torch.ones(2, 3), 0), TypeError, r"^tokens " + INT_DTYPE),
    ("decoder_self_attention_mask-3d", lambda: decoder_self_attention_mask(ids(2, 3, 1), 0),
     ValueError, r"^tokens must have 2 dimensions, shape \(B, T\); got 3 dimensions"),
    ("decoder_self_attention_mask-pad_id-negative",
     lambda: decoder_self_attention_mask(ids(2, 3), -2), ValueError,
     r"^pad_id must be a non-negative int; got -2$"),
    ("decoder_self_attention_mask-pad_id-str", lambda: decoder_self_attention_mask(ids(2, 3), "0"),
     TypeError, r"^pad_id must be a non-negative int; got str '0'$"),
    # ---------------------------------------------------------------- multi-head attention
    ("MultiHeadAttention-d_model-zero", lambda: MultiHeadAttention(0, 1), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("MultiHeadAttention-d_model-float", lambda: MultiHeadAttention(8.0, 2), TypeError,
     r"^d_model " + POSITIVE + r" float 8\.0$"),
    ("MultiHeadAttention-d_model-bool", lambda: MultiHeadAttention(True, 1), TypeError,
     r"^d_model " + POSITIVE + r" bool True$"),
    ("MultiHeadAttention-num_heads-zero", lambda: MultiHeadAttention(8, 0), ValueError,
     r"^num_heads " + POSITIVE + r" 0$"),
    ("MultiHeadAttention-num_heads-not-divisor", lambda: MultiHeadAttention(8, 3), ValueError,
     r"^d_model must be divisible by num_heads; got d_model=8, num_heads=3$"),
    ("MultiHeadAttention-dropout-one", lambda: MultiHeadAttention(8, 2, dropout=1.0), ValueError,
     r"^dropout must be a number in \[0, 1\); got 1\.0$"),
    ("MultiHeadAttention-dropout-negative", lambda: MultiHeadAttention(8, 2, dropout=-0.1),
     ValueError, r"^dropout must be a number in \[0, 1\); got -0\.1$"),
    ("MultiHeadAttention-bias-int", lambda: MultiHeadAttention(8, 2, bias=1), TypeError,
     r"^bias must be a bool; got int$"),
    ("MultiHeadAttention-scaled-str", lambda: MultiHeadAttention(8, 2, scaled="yes"), TypeError,
     r"^scaled must be a bool; got str$"),
    ("MultiHeadAttention.forward-query-numpy", lambda: attend(query=arr(2, 3, D)), TypeError,
     r"^query " + FLOAT_TENSOR + r" \(B, T_q, d_model=8\); got ndarray$"),
    ("MultiHeadAttention.forward-query-2d", lambda: attend(query=randn(3, D)), ValueError,
     r"^query must have 3 dimensions, shape \(B, T_q, d_model=8\); got 2 dimensions, "
     r"shape \(3, 8\)$"),
    ("MultiHeadAttention.forward-query-width", lambda: attend(query=randn(2, 3, 6)), ValueError,
     r"^query must have shape \(B, T_q, d_model=8\); got shape \(2, 3, 6\) "
     r"\(d_model does not match\)$"),
    ("MultiHeadAttention.forward-query-int", lambda: attend(query=ones(2, 3, D, dtype=LONG)),
     TypeError, r"^query must have a floating-point dtype; got torch\.int64$"),
    ("MultiHeadAttention.forward-query-empty", lambda: attend(query=randn(2, 0, D)), ValueError,
     r"^query must have a positive size in every dimension.*; got shape \(2, 0, 8\)$"),
    ("MultiHeadAttention.forward-query-float64", lambda: attend(query=randn(2, 3, D, dtype=F64)),
     TypeError, r"^query must have dtype torch\.float32 \(the module's\); got torch\.float64$"),
    ("MultiHeadAttention.forward-key-float64", lambda: attend(key=randn(2, 5, D, dtype=F64)),
     TypeError, r"^key must have dtype torch\.float32 \(the module's\); got torch\.float64$"),
    ("MultiHeadAttention.forward-key-batch", lambda: attend(key=randn(3, 5, D)), ValueError,
     r"^key must have shape \(B=2, T_k, d_model=8\); got shape \(3, 5, 8\) "
     r"\(B does not match\)$"),
    ("MultiHeadAttention.forward-value-length", lambda: attend(value=randn(2, 4, D)), ValueError,
     r"^value must have shape \(B=2, T_k=5, d_model=8\); got shape \(2, 4, 8\) "
     r"\(T_k does not match\)$"),
    ("MultiHeadAttention.forward-mask-2d", lambda: attend(mask=ones(3, 5)), ValueError,
     r"^mask must have 3 dimensions \(B=2, T_q=3, T_k=5\).*" + AMBIGUOUS),
    ("MultiHeadAttention.forward-mask-padding-B-equals-T",
     lambda: attend(randn(3, 3, D), randn(3, 3, D), randn(3, 3, D), ones(3, 3)), ValueError,
     r"^mask must have 3 dimensions \(B=3, T_q=3, T_k=3\).*" + AMBIGUOUS),
    ("MultiHeadAttention.forward-mask-float", lambda: attend(mask=ones(2, 1, 5, dtype=F32)),
     TypeError, r"^mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("MultiHeadAttention.forward-mask-size", lambda: attend(mask=ones(2, 3, 6)), ValueError,
     r"^mask must have 3 dimensions \(B=2, T_q=3, T_k=5\), each of size 1 or the full size "
     r".*; got shape \(2, 3, 6\)$"),
    ("MultiHeadAttention.forward-mask-numpy", lambda: attend(mask=np.ones((2, 1, 5), bool)),
     TypeError, r"^mask must be a boolean torch\.Tensor of shape \(B=2, T_q=3, T_k=5\); "
                r"got ndarray$"),
    ("MultiHeadAttention.forward-need_weights-int", lambda: attend(need_weights=1), TypeError,
     r"^need_weights must be a bool; got int$"),
    # ---------------------------------------------------------------- positions
    ("sinusoidal_frequencies-d_model-zero", lambda: sinusoidal_frequencies(0), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("sinusoidal_frequencies-base-one", lambda: sinusoidal_frequencies(8, 1), ValueError,
     r"^base must be a finite number greater than 1; got 1$"),
    ("sinusoidal_frequencies-base-nan", lambda: sinusoidal_frequencies(8, NAN), ValueError,
     r"^base must be a finite number greater than 1; got nan$"),
    ("sinusoidal_frequencies-base-str", lambda: sinusoidal_frequencies(8, "1e4"), TypeError,
     r"^base must be a finite number greater than 1; got str '1e4'$"),
    ("sinusoidal_wavelengths-d_model-float", lambda: sinusoidal_wavelengths(8.0), TypeError,
     r"^d_model " + POSITIVE + r" float 8\.0$"),
    ("sinusoidal_wavelengths-base-inf", lambda: sinusoidal_wavelengths(8, INF), ValueError,
     r"^base must be a finite number greater than 1; got inf$"),
    ("sinusoidal_encoding_numpy-num_positions-zero", lambda: sinusoidal_encoding_numpy(0, 8),
     ValueError, r"^num_positions " + POSITIVE + r" 0$"),
    ("sinusoidal_encoding_numpy-num_positions-float", lambda: sinusoidal_encoding_numpy(3.0, 8),
     TypeError, r"^num_positions " + POSITIVE + r" float 3\.0$"),
    ("sinusoidal_encoding_numpy-d_model-negative", lambda: sinusoidal_encoding_numpy(3, -8),
     ValueError, r"^d_model " + POSITIVE + r" -8$"),
    ("sinusoidal_encoding_numpy-base-below-one", lambda: sinusoidal_encoding_numpy(3, 8, 0.5),
     ValueError, r"^base must be a finite number greater than 1; got 0\.5$"),
    ("sinusoidal_encoding-dtype-int", lambda: sinusoidal_encoding(3, 8, dtype=LONG), TypeError,
     r"^dtype must be a floating-point torch\.dtype; got torch\.int64$"),
    ("sinusoidal_encoding-dtype-numpy", lambda: sinusoidal_encoding(3, 8, dtype=np.float32),
     TypeError, r"^dtype must be a floating-point torch\.dtype; got <class 'numpy\.float32'>$"),
    ("sinusoidal_encoding-dtype-str", lambda: sinusoidal_encoding(3, 8, dtype="float32"),
     TypeError, r"^dtype must be a floating-point torch\.dtype; got 'float32'$"),
    ("sinusoidal_encoding-num_positions-bool", lambda: sinusoidal_encoding(True, 8), TypeError,
     r"^num_positions " + POSITIVE + r" bool True$"),
    ("SinusoidalPositionalEncoding-max_len-zero", lambda: SinusoidalPositionalEncoding(8, 0),
     ValueError, r"^max_len " + POSITIVE + r" 0$"),
    ("SinusoidalPositionalEncoding-max_len-float", lambda: SinusoidalPositionalEncoding(8, 1e3),
     TypeError, r"^max_len " + POSITIVE + r" float 1000\.0$"),
    ("SinusoidalPositionalEncoding-d_model-zero", lambda: SinusoidalPositionalEncoding(0, 10),
     ValueError, r"^d_model " + POSITIVE + r" 0$"),
    ("SinusoidalPositionalEncoding.forward-x-2d",
     lambda: SinusoidalPositionalEncoding(D, 10)(randn(3, D)), ValueError,
     r"^x must have 3 dimensions, shape \(B, T, d_model=8\); got 2 dimensions, shape \(3, 8\)$"),
    ("SinusoidalPositionalEncoding.forward-x-width",
     lambda: SinusoidalPositionalEncoding(D, 10)(randn(1, 3, 6)), ValueError,
     r"^x must have shape \(B, T, d_model=8\); got shape \(1, 3, 6\) \(d_model does not match\)$"),
    ("SinusoidalPositionalEncoding.forward-x-too-long",
     lambda: SinusoidalPositionalEncoding(D, 10)(randn(1, 11, D)), ValueError,
     r"^x has T=11 positions, more than max_len=10; got shape \(1, 11, 8\)$"),
    ("SinusoidalPositionalEncoding.forward-x-int",
     lambda: SinusoidalPositionalEncoding(D, 10)(ones(1, 3, D, dtype=LONG)), TypeError,
     r"^x must have a floating-point dtype; got torch\.int64$"),
    ("SinusoidalPositionalEncoding.forward-x-list",
     lambda: SinusoidalPositionalEncoding(D, 10)([[0.0] * D]), TypeError,
     r"^x " + FLOAT_TENSOR + r" \(B, T, d_model=8\); got list$"),
    ("LearnedPositionalEmbedding-d_model-zero", lambda: LearnedPositionalEmbedding(0, 10),
     ValueError, r"^d_model " + POSITIVE + r" 0$"),
    ("LearnedPositionalEmbedding-max_len-negative", lambda: LearnedPositionalEmbedding(8, -1),
     ValueError, r"^max_len " + POSITIVE + r" -1$"),
    ("LearnedPositionalEmbedding.forward-x-too-long",
     lambda: LearnedPositionalEmbedding(D, 4)(randn(2, 5, D)), ValueError,
     r"^x has T=5 positions, more than max_len=4; got shape \(2, 5, 8\)$"),
    ("LearnedPositionalEmbedding.forward-x-numpy",
     lambda: LearnedPositionalEmbedding(D, 4)(arr(2, 3, D)), TypeError,
     r"^x " + FLOAT_TENSOR + r" \(B, T, d_model=8\); got ndarray$"),
    ("LearnedPositionalEmbedding.forward-x-width",
     lambda: LearnedPositionalEmbedding(D, 4)(randn(2, 3, 4)), ValueError,
     r"^x must have shape \(B, T, d_model=8\); got shape \(2, 3, 4\) \(d_model does not match\)$"),
    # ---------------------------------------------------------------- model: configuration
    ("TransformerConfig-src_vocab_size-zero", lambda: TransformerConfig(0, 5), ValueError,
     r"^src_vocab_size " + POSITIVE + r" 0$"),
    ("TransformerConfig-src_vocab_size-bool", lambda: TransformerConfig(True, 5), TypeError,
     r"^src_vocab_size " + POSITIVE + r" bool True$"),
    ("TransformerConfig-tgt_vocab_size-float", lambda: TransformerConfig(5, 5.0), TypeError,
     r"^tgt_vocab_size " + POSITIVE + r" float 5\.0$"),
    ("TransformerConfig-d_model-not-divisible", lambda: config(d_model=10, num_heads=4),
     ValueError, r"^d_model must be divisible by num_heads; got d_model=10, num_heads=4$"),
    ("TransformerConfig-num_heads-zero", lambda: config(num_heads=0), ValueError,
     r"^num_heads " + POSITIVE + r" 0$"),
    ("TransformerConfig-num_encoder_layers-negative", lambda: config(num_encoder_layers=-1),
     ValueError, r"^num_encoder_layers " + POSITIVE + r" -1$"),
    ("TransformerConfig-num_decoder_layers-float", lambda: config(num_decoder_layers=1.5),
     TypeError, r"^num_decoder_layers " + POSITIVE + r" float 1\.5$"),
    ("TransformerConfig-d_ff-zero", lambda: config(d_ff=0), ValueError,
     r"^d_ff " + POSITIVE + r" 0$"),
    ("TransformerConfig-dropout-one", lambda: config(dropout=1.0), ValueError,
     r"^dropout must be a number in \[0, 1\); got 1\.0$"),
    ("TransformerConfig-dropout-nan", lambda: config(dropout=NAN), ValueError,
     r"^dropout must be a number in \[0, 1\); got nan$"),
    ("TransformerConfig-max_len-zero", lambda: config(max_len=0), ValueError,
     r"^max_len " + POSITIVE + r" 0$"),
    ("TransformerConfig-norm_first-int", lambda: config(norm_first=1), TypeError,
     r"^norm_first must be a bool; got int$"),
    ("TransformerConfig-share_embeddings-str", lambda: config(share_embeddings="yes"), TypeError,
     r"^share_embeddings must be a bool; got str$"),
    ("TransformerConfig-positional-unknown", lambda: config(positional="rotary"), ValueError,
     r"^positional must be one of \('sinusoidal', 'learned', 'none'\); got 'rotary'$"),
    ("TransformerConfig-positional-none", lambda: config(positional=None), ValueError,
     r"^positional must be one of \('sinusoidal', 'learned', 'none'\); got None$"),
    ("TransformerConfig-scaled_attention-none", lambda: config(scaled_attention=None), TypeError,
     r"^scaled_attention must be a bool; got NoneType$"),
    ("TransformerConfig-pad_id-negative", lambda: config(pad_id=-1), ValueError,
     r"^pad_id must be an int in \[0, 10\]; got -1$"),
    ("TransformerConfig-pad_id-past-vocab", lambda: config(pad_id=11), ValueError,
     r"^pad_id must be an int in \[0, 10\]; got 11$"),
    ("TransformerConfig-layer_norm_eps-zero", lambda: config(layer_norm_eps=0), ValueError,
     r"^layer_norm_eps must be a finite number in \(0, 1\); got 0$"),
    ("TransformerConfig-layer_norm_eps-nan", lambda: config(layer_norm_eps=NAN), ValueError,
     r"^layer_norm_eps must be a finite number in \(0, 1\); got nan$"),
    ("TransformerConfig-final_norm-int", lambda: config(final_norm=1), TypeError,
     r"^final_norm must be a bool or None; got int$"),
    # ---------------------------------------------------------------- model: layers
    ("PositionwiseFeedForward-d_model-zero", lambda: PositionwiseFeedForward(0, 16), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("PositionwiseFeedForward-d_ff-float", lambda: PositionwiseFeedForward(8, 2.0), TypeError,
     r"^d_ff " + POSITIVE + r" float 2\.0$"),
    ("Embeddings-vocab_size-zero", lambda: Embeddings(0, 8, 10), ValueError,
     r"^vocab_size " + POSITIVE + r" 0$"),
    ("Embeddings-d_model-negative", lambda: Embeddings(5, -8, 10), ValueError,
     r"^d_model " + POSITIVE + r" -8$"),
    ("Embeddings-max_len-zero", lambda: Embeddings(5, 8, 0), ValueError,
     r"^max_len " + POSITIVE + r" 0$"),
    ("Embeddings-positional-unknown", lambda: Embeddings(5, 8, 10, "rope"), ValueError,
     r"^positional must be one of \('sinusoidal', 'learned', 'none'\); got 'rope'$"),
    ("Embeddings-dropout-too-large", lambda: Embeddings(5, 8, 10, dropout=1.5), ValueError,
     r"^dropout must be a number in \[0, 1\); got 1\.5$"),
    ("Embeddings-dropout-str", lambda: Embeddings(5, 8, 10, dropout="0.1"), TypeError,
     r"^dropout must be a number in \[0, 1\); got str '0\.1'$"),
    ("Embeddings.forward-tokens-float", lambda: Embeddings(5, 8, 10)(torch.ones(2, 3)),
     TypeError, r"^tokens " + INT_DTYPE),
    ("Embeddings.forward-tokens-out-of-vocab", lambda: Embeddings(5, 8, 10)(t(1, 5)[None]),
     ValueError, r"^tokens must hold token ids in \[0, 5\); got ids from 1 to 5$"),
    ("Embeddings.forward-tokens-negative", lambda: Embeddings(5, 8, 10)(t(-1, 2)[None]),
     ValueError, r"^tokens must hold token ids in \[0, 5\); got ids from -1 to 2$"),
    ("Embeddings.forward-tokens-too-long", lambda: Embeddings(5, 8, 4)(ones(1, 5, dtype=LONG)),
     ValueError, r"^tokens must be at most max_len=4 tokens long, shape \(B=1, T=5\); "
                 r"got shape \(1, 5\)$"),
    ("Embeddings.forward-tokens-1d", lambda: Embeddings(5, 8, 10)(t(1, 2)), ValueError,
     r"^tokens must have 2 dimensions, shape \(B, T\); got 1 dimensions, shape \(2,\)$"),
    ("Embeddings.forward-tokens-numpy", lambda: Embeddings(5, 8, 10)(np.ones((1, 2), int)),
     TypeError, r"^tokens " + INT_TENSOR + r" \(B, T\); got ndarray$"),
    ("Residual-dropout-one", lambda: Residual(8, 1.0, False, 1e-5), ValueError,
     r"^dropout must be a number in \[0, 1\); got 1\.0$"),
    ("Residual-d_model-zero", lambda: Residual(0, 0.1, False, 1e-5), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("Residual-d_model-negative", lambda: Residual(-1, 0.1, False, 1e-5), ValueError,
     r"^d_model " + POSITIVE + r" -1$"),
    ("Residual-eps-negative", lambda: Residual(8, 0.1, False, -1.0), ValueError,
     r"^eps must be a finite number in \(0, 1\); got -1\.0$"),
    ("Residual-norm_first-int", lambda: Residual(8, 0.1, 1, 1e-5), TypeError,
     r"^norm_first must be a bool; got int$"),
    ("EncoderLayer-num_heads-not-divisor", lambda: EncoderLayer(8, 3, 16), ValueError,
     r"^d_model must be divisible by num_heads; got d_model=8, num_heads=3$"),
    ("EncoderLayer-d_ff-zero", lambda: EncoderLayer(8, 2, 0), ValueError,
     r"^d_ff " + POSITIVE + r" 0$"),
    ("EncoderLayer-dropout-one", lambda: EncoderLayer(8, 2, 16, dropout=1.0), ValueError,
     r"^dropout must be a number in \[0, 1\); got 1\.0$"),
    ("EncoderLayer-eps-zero", lambda: EncoderLayer(8, 2, 16, eps=0.0), ValueError,
     r"^eps must be a finite number in \(0, 1\); got 0\.0$"),
    ("EncoderLayer-norm_first-str", lambda: EncoderLayer(8, 2, 16, norm_first="no"), TypeError,
     r"^norm_first must be a bool; got str$"),
    ("EncoderLayer-scaled-int", lambda: EncoderLayer(8, 2, 16, scaled=1), TypeError,
     r"^scaled must be a bool; got int$"),
    ("DecoderLayer-d_model-zero", lambda: DecoderLayer(0, 2, 16), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("DecoderLayer-dropout-two", lambda: DecoderLayer(8, 2, 16, dropout=2.0), ValueError,
     r"^dropout must be a number in \[0, 1\); got 2\.0$"),
    ("DecoderLayer-eps-nan", lambda: DecoderLayer(8, 2, 16, eps=NAN), ValueError,
     r"^eps must be a finite number in \(0, 1\); got nan$"),
    ("DecoderLayer-norm_first-none", lambda: DecoderLayer(8, 2, 16, norm_first=None), TypeError,
     r"^norm_first must be a bool; got NoneType$"),
    # ---------------------------------------------------------------- model: Transformer
    ("Transformer-config-dict", lambda: Transformer({"src_vocab_size": 5}), TypeError,
     r"^config must be a TransformerConfig; got dict$"),
    ("Transformer-config-none", lambda: Transformer(None), TypeError,
     r"^config must be a TransformerConfig; got NoneType$"),
    ("Transformer.encode-src-float", lambda: encode(torch.ones(2, 5)), TypeError,
     r"^src " + INT_DTYPE),
    ("Transformer.encode-src-out-of-vocab", lambda: encode(t(1, 11)[None]), ValueError,
     r"^src must hold token ids in \[0, 11\); got ids from 1 to 11$"),
    ("Transformer.encode-src-negative", lambda: encode(t(-3, 1)[None]), ValueError,
     r"^src must hold token ids in \[0, 11\); got ids from -3 to 1$"),
    ("Transformer.encode-src-too-long", lambda: encode(ids(1, 11)), ValueError,
     r"^src must be at most max_len=10 tokens long, shape \(B=1, S=11\); got shape \(1, 11\)$"),
    ("Transformer.encode-src-1d", lambda: encode(ids(5)), ValueError,
     r"^src must have 2 dimensions, shape \(B, S\); got 1 dimensions, shape \(5,\)$"),
    ("Transformer.encode-src-numpy", lambda: encode(np.ones((2, 5), int)), TypeError,
     r"^src " + INT_TENSOR + r" \(B, S\); got ndarray$"),
    ("Transformer.encode-src-list", lambda: encode([[3, 4]]), TypeError,
     r"^src " + INT_TENSOR + r" \(B, S\); got list$"),
    ("Transformer.encode-src-empty", lambda: encode(ids(2, 0)), ValueError,
     r"^src must have a positive size in every dimension, shape \(B, S\); got shape \(2, 0\)$"),
    ("Transformer.encode-src_mask-2d", lambda: encode(src_mask=ones(2, 5)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=5, S=5\).*" + AMBIGUOUS),
    ("Transformer.encode-src_mask-float", lambda: encode(src_mask=ones(2, 1, 5, dtype=F32)),
     TypeError, r"^src_mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("Transformer.encode-src_mask-size", lambda: encode(src_mask=ones(2, 1, 6)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=5, S=5\), each of size 1 or the full size "
     r".*; got shape \(2, 1, 6\)$"),
    ("Transformer.encode-src_mask-batch", lambda: encode(src_mask=ones(3, 1, 5)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=5, S=5\).*; got shape \(3, 1, 5\)$"),
    ("Transformer.encode-src_mask-numpy", lambda: encode(src_mask=np.ones((2, 1, 5), bool)),
     TypeError, r"^src_mask must be a boolean torch\.Tensor of shape \(B=2, S=5, S=5\); "
                r"got ndarray$"),
    ("Transformer.decode-tgt-float", lambda: decode(torch.ones(2, 4)), TypeError,
     r"^tgt " + INT_DTYPE),
    ("Transformer.decode-tgt-out-of-vocab", lambda: decode(t(3, 13)[None].repeat(2, 1)),
     ValueError, r"^tgt must hold token ids in \[0, 13\); got ids from 3 to 13$"),
    ("Transformer.decode-tgt-too-long", lambda: decode(ids(2, 11, high=TGT_V)), ValueError,
     r"^tgt must be at most max_len=10 tokens long, shape \(B=2, T=11\); got shape \(2, 11\)$"),
    ("Transformer.decode-memory-2d", lambda: decode(mem=randn(5, D)), ValueError,
     r"^memory must have 3 dimensions, shape \(B=2, S, d_model=8\); got 2 dimensions, "
     r"shape \(5, 8\)$"),
    ("Transformer.decode-memory-width", lambda: decode(mem=randn(2, 5, 6)), ValueError,
     r"^memory must have shape \(B=2, S, d_model=8\); got shape \(2, 5, 6\) "
     r"\(d_model does not match\)$"),
    ("Transformer.decode-memory-batch", lambda: decode(mem=randn(3, 5, D)), ValueError,
     r"^memory must have shape \(B=2, S, d_model=8\); got shape \(3, 5, 8\) "
     r"\(B does not match\)$"),
    ("Transformer.decode-memory-numpy", lambda: decode(mem=arr(2, 5, D)), TypeError,
     r"^memory " + FLOAT_TENSOR + r" \(B=2, S, d_model=8\); got ndarray$"),
    ("Transformer.decode-memory-int", lambda: decode(mem=ones(2, 5, D, dtype=LONG)), TypeError,
     r"^memory must have a floating-point dtype; got torch\.int64$"),
    ("Transformer.decode-memory-float64", lambda: decode(mem=randn(2, 5, D, dtype=F64)),
     TypeError, r"^memory must have dtype torch\.float32 \(the module's\); got torch\.float64$"),
    ("Transformer.decode-src_mask-length", lambda: decode(src_mask=ones(2, 1, 4)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, T=4, S=5\).*; got shape \(2, 1, 4\)$"),
    ("Transformer.decode-src_mask-2d", lambda: decode(src_mask=ones(2, 5)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, T=4, S=5\).*" + AMBIGUOUS),
    ("Transformer.decode-tgt_mask-2d", lambda: decode(tgt_mask=causal_mask(4)), ValueError,
     r"^tgt_mask must have 3 dimensions \(B=2, T=4, T=4\).*" + AMBIGUOUS),
    ("Transformer.decode-tgt_mask-float", lambda: decode(tgt_mask=ones(1, 4, 4, dtype=F32)),
     TypeError, r"^tgt_mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("Transformer.decode-tgt_mask-size", lambda: decode(tgt_mask=ones(1, 4, 5)), ValueError,
     r"^tgt_mask must have 3 dimensions \(B=2, T=4, T=4\).*; got shape \(1, 4, 5\)$"),
    ("Transformer.project-hidden-2d", lambda: model().project(randn(4, D)), ValueError,
     r"^hidden must have 3 dimensions, shape \(B, T, d_model=8\); got 2 dimensions"),
    ("Transformer.project-hidden-width", lambda: model().project(randn(2, 4, 6)), ValueError,
     r"^hidden must have shape \(B, T, d_model=8\); got shape \(2, 4, 6\) "
     r"\(d_model does not match\)$"),
    ("Transformer.project-hidden-int", lambda: model().project(ones(2, 4, D, dtype=LONG)),
     TypeError, r"^hidden must have a floating-point dtype; got torch\.int64$"),
    ("Transformer.project-hidden-float64", lambda: model().project(randn(2, 4, D, dtype=F64)),
     TypeError, r"^hidden must have dtype torch\.float32 \(the module's\); got torch\.float64$"),
    ("Transformer.project-hidden-list", lambda: model().project([[[0.0] * D]]), TypeError,
     r"^hidden " + FLOAT_TENSOR + r" \(B, T, d_model=8\); got list$"),
    ("Transformer.forward-tgt-batch", lambda: forward(tgt=ids(1, 4, high=TGT_V)), ValueError,
     r"^tgt must have shape \(B=2, T\); got shape \(1, 4\) \(B does not match\)$"),
    ("Transformer.forward-src-float", lambda: forward(src=torch.ones(2, 5)), TypeError,
     r"^src " + INT_DTYPE),
    ("Transformer.forward-tgt-float", lambda: forward(tgt=torch.ones(2, 4)), TypeError,
     r"^tgt " + INT_DTYPE),
    ("Transformer.forward-src_mask-padding-B-equals-S",
     lambda: forward(src=ids(2, 2), tgt=ids(2, 3, high=TGT_V), src_mask=ones(2, 2)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=2, S=2\).*" + AMBIGUOUS),
    ("Transformer.forward-tgt_mask-float", lambda: forward(tgt_mask=ones(1, 4, 4, dtype=F32)),
     TypeError, r"^tgt_mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("Transformer.attention_maps-src-float", lambda: maps(src=torch.ones(2, 5)), TypeError,
     r"^src " + INT_DTYPE),
    ("Transformer.attention_maps-tgt-too-long", lambda: maps(tgt=ids(2, 11, high=TGT_V)),
     ValueError, r"^tgt must be at most max_len=10 tokens long"),
    ("Transformer.attention_maps-tgt_mask-2d", lambda: maps(tgt_mask=causal_mask(4)),
     ValueError, r"^tgt_mask must have 3 dimensions \(B=2, T=4, T=4\).*" + AMBIGUOUS),
    ("Transformer.attention_maps-tgt-batch", lambda: maps(tgt=ids(3, 4, high=TGT_V)),
     ValueError, r"^tgt must have shape \(B=2, T\); got shape \(3, 4\) \(B does not match\)$"),
    ("count_parameters-list", lambda: count_parameters([1, 2]), TypeError,
     r"^model must be a torch\.nn\.Module; got list$"),
    ("count_parameters-class", lambda: count_parameters(Transformer), TypeError,
     r"^model must be a torch\.nn\.Module; got type$"),
    # ---------------------------------------------------------------- batching
    ("Batch-src-float", lambda: a_batch(src=torch.ones(2, 5)), TypeError, r"^src " + INT_DTYPE),
    ("Batch-src-list", lambda: a_batch(src=[[3, 4]]), TypeError,
     r"^src " + INT_TENSOR + r" \(B, S\); got list$"),
    ("Batch-src_mask-2d", lambda: a_batch(src_mask=ones(2, 5)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=5, S=5\).*" + AMBIGUOUS),
    ("Batch-tgt_in-batch", lambda: a_batch(tgt_in=ids(3, 4)), ValueError,
     r"^tgt_in must have shape \(B=2, T\); got shape \(3, 4\) \(B does not match\)$"),
    ("Batch-tgt_out-length", lambda: a_batch(tgt_out=ids(2, 5)), ValueError,
     r"^tgt_out must have shape \(B=2, T=4\); got shape \(2, 5\) \(T does not match\)$"),
    ("Batch-tgt_mask-float", lambda: a_batch(tgt_mask=ones(2, 4, 4, dtype=F32)), TypeError,
     r"^tgt_mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("Batch-pad_id-negative", lambda: a_batch(pad_id=-1), ValueError,
     r"^pad_id must be a non-negative int; got -1$"),
    ("pad_sequences-tensor", lambda: pad_sequences(ones(2, 3, dtype=LONG)), TypeError,
     r"^sequences must be a list of 1-D integer tensors; got Tensor$"),
    ("pad_sequences-empty", lambda: pad_sequences([]), ValueError,
     r"^sequences must hold at least one sequence; got an empty list$"),
    ("pad_sequences-float-item", lambda: pad_sequences([t(1, 2), torch.ones(2)]), TypeError,
     r"^sequences\[1\] " + INT_DTYPE),
    ("pad_sequences-empty-item", lambda: pad_sequences([t()]), ValueError,
     r"^sequences\[0\] must have a positive size in every dimension, shape \(n_i\); "
     r"got shape \(0,\)$"),
    ("pad_sequences-2d-item", lambda: pad_sequences([t(1), ones(2, 2, dtype=LONG)]), ValueError,
     r"^sequences\[1\] must have 1 dimensions, shape \(n_i\); got 2 dimensions"),
    ("pad_sequences-list-item", lambda: pad_sequences([[1, 2]]), TypeError,
     r"^sequences\[0\] " + INT_TENSOR + r" \(n_i\); got list$"),
    ("pad_sequences-negative-id", lambda: pad_sequences([t(-1, 3)]), ValueError,
     r"^sequences must hold non-negative token ids; got ids from -1 to 3$"),
    ("pad_sequences-length-short", lambda: pad_sequences([t(1, 2, 3)], length=2), ValueError,
     r"^length must be an int >= 3; got 2$"),
    ("pad_sequences-length-float", lambda: pad_sequences([t(1, 2, 3)], length=4.0), TypeError,
     r"^length must be an int >= 3; got float 4\.0$"),
    ("pad_sequences-pad_id-negative", lambda: pad_sequences([t(1)], pad_id=-1), ValueError,
     r"^pad_id must be a non-negative int; got -1$"),
    ("pad_sequences-pad_id-float", lambda: pad_sequences([t(1)], pad_id=0.5), TypeError,
     r"^pad_id must be a non-negative int; got float 0\.5$"),
    ("shift_targets-float", lambda: shift_targets(torch.ones(2, 3)), TypeError,
     r"^tgt " + INT_DTYPE),
    ("shift_targets-1d", lambda: shift_targets(t(1, 2)), ValueError,
     r"^tgt must have 2 dimensions, shape \(B, L\); got 1 dimensions, shape \(2,\)$"),
    ("shift_targets-numpy", lambda: shift_targets(np.ones((2, 3), int)), TypeError,
     r"^tgt " + INT_TENSOR + r" \(B, L\); got ndarray$"),
    ("shift_targets-bos-equals-pad", lambda: shift_targets(ids(2, 3), bos_id=0), ValueError,
     r"^pad_id and bos_id must differ; got pad_id=0, bos_id=0$"),
    ("shift_targets-eos_id-negative", lambda: shift_targets(ids(2, 3), eos_id=-1), ValueError,
     r"^eos_id must be a non-negative int; got -1$"),
    ("shift_targets-bos_id-float", lambda: shift_targets(ids(2, 3), bos_id=1.0), TypeError,
     r"^bos_id must be a non-negative int; got float 1\.0$"),
    ("shift_targets-padding-inside", lambda: shift_targets(t(3, 0, 4)[None]), ValueError,
     r"^tgt must hold each row's tokens first and padding only after them; "
     r"got row 0 = \[3, 0, 4\]$"),
    ("wrap_sources-float", lambda: wrap_sources(torch.ones(2, 3)), TypeError,
     r"^src " + INT_DTYPE),
    ("wrap_sources-1d", lambda: wrap_sources(t(3, 4)), ValueError,
     r"^src must have 2 dimensions, shape \(B, S\); got 1 dimensions, shape \(2,\)$"),
    ("wrap_sources-padding-inside", lambda: wrap_sources(t(3, 4, 5, 0, 6)[None].repeat(2, 1)),
     ValueError, r"^src must hold each row's tokens first and padding only after them; "
                 r"got row 0 = \[3, 4, 5, 0, 6\]$"),
    ("wrap_sources-bos-equals-eos", lambda: wrap_sources(ids(2, 3), bos_id=2), ValueError,
     r"^bos_id and eos_id must differ; got bos_id=2, eos_id=2$"),
    ("wrap_sources-pad_id-bool", lambda: wrap_sources(ids(2, 3), pad_id=False), TypeError,
     r"^pad_id must be a non-negative int; got bool False$"),
    ("make_batch-src-list-of-lists", lambda: make_batch([[3, 4]], [t(5)]), TypeError,
     r"^src\[0\] " + INT_TENSOR + r" \(n_i\); got list$"),
    ("make_batch-src-empty-list", lambda: make_batch([], []), ValueError,
     r"^src must hold at least one sequence; got an empty list$"),
    ("make_batch-src-numpy", lambda: make_batch(np.ones((2, 3), int), ids(2, 3)), TypeError,
     r"^src must be a list of 1-D integer tensors; got ndarray$"),
    ("make_batch-src-float", lambda: make_batch(torch.ones(2, 3), ids(2, 3)), TypeError,
     r"^src " + INT_DTYPE),
    ("make_batch-tgt-float-item", lambda: make_batch(ids(2, 3), [torch.ones(2), t(4)]),
     TypeError, r"^tgt\[0\] " + INT_DTYPE),
    ("make_batch-tgt-batch", lambda: make_batch(ids(2, 3), ids(3, 3)), ValueError,
     r"^tgt must have shape \(B=2, L\); got shape \(3, 3\) \(B does not match\)$"),
    ("make_batch-tgt-3d", lambda: make_batch(ids(2, 3), ids(2, 3, 1)), ValueError,
     r"^tgt must have 2 dimensions, shape \(B=2, L\); got 3 dimensions"),
    ("make_batch-wrap_source-int", lambda: make_batch(ids(2, 3), ids(2, 3), wrap_source=1),
     TypeError, r"^wrap_source must be a bool; got int$"),
    ("make_batch-pad_id-negative", lambda: make_batch(ids(2, 3), ids(2, 3), pad_id=-1),
     ValueError, r"^pad_id must be a non-negative int; got -1$"),
    ("make_batch-eos-equals-bos", lambda: make_batch(ids(2, 3), ids(2, 3), eos_id=1),
     ValueError, r"^bos_id and eos_id must differ; got bos_id=1, eos_id=1$"),
    ("trim_batch-dict", lambda: trim_batch({"src": 1}), TypeError,
     r"^batch must be a Batch; got dict$"),
    ("trim_batch-none", lambda: trim_batch(None), TypeError,
     r"^batch must be a Batch; got NoneType$"),
    # ---------------------------------------------------------------- schedule
    ("noam_lr-step-zero", lambda: noam_lr(0, 8, 4), ValueError, r"^step " + POSITIVE + r" 0$"),
    ("noam_lr-step-float", lambda: noam_lr(1.5, 8, 4), TypeError,
     r"^step " + POSITIVE + r" float 1\.5$"),
    ("noam_lr-step-bool", lambda: noam_lr(True, 8, 4), TypeError,
     r"^step " + POSITIVE + r" bool True$"),
    ("noam_lr-d_model-zero", lambda: noam_lr(1, 0, 4), ValueError,
     r"^d_model " + POSITIVE + r" 0$"),
    ("noam_lr-warmup-negative", lambda: noam_lr(1, 8, -4), ValueError,
     r"^warmup " + POSITIVE + r" -4$"),
    ("noam_lr-scale-inf", lambda: noam_lr(1, 8, 4, INF), ValueError,
     r"^scale must be a positive finite number; got inf$"),
    ("noam_lr-scale-nan", lambda: noam_lr(1, 8, 4, NAN), ValueError,
     r"^scale must be a positive finite number; got nan$"),
    ("noam_lr-scale-zero", lambda: noam_lr(1, 8, 4, 0.0), ValueError,
     r"^scale must be a positive finite number; got 0\.0$"),
    ("noam_lr-scale-str", lambda: noam_lr(1, 8, 4, "1"), TypeError,
     r"^scale must be a positive finite number; got str '1'$"),
    ("noam_lr-scale-bool", lambda: noam_lr(1, 8, 4, True), TypeError,
     r"^scale must be a positive finite number; got bool True$"),
    ("peak_lr-warmup-zero", lambda: peak_lr(8, 0), ValueError, r"^warmup " + POSITIVE + r" 0$"),
    ("peak_lr-warmup-float", lambda: peak_lr(8, 1.5), TypeError,
     r"^warmup " + POSITIVE + r" float 1\.5$"),
    ("peak_lr-d_model-zero", lambda: peak_lr(0, 4), ValueError, r"^d_model " + POSITIVE + r" 0$"),
    ("peak_lr-scale-negative", lambda: peak_lr(8, 4, -1.0), ValueError,
     r"^scale must be a positive finite number; got -1\.0$"),
    # ---------------------------------------------------------------- loss
    ("smoothed_targets-2d", lambda: smoothed_targets(ones(2, 2, dtype=LONG), 4, 0.1), ValueError,
     r"^labels must have 1 dimensions, shape \(N\); got 2 dimensions, shape \(2, 2\)$"),
    ("smoothed_targets-float", lambda: smoothed_targets(torch.ones(3), 4, 0.1), TypeError,
     r"^labels " + INT_DTYPE),
    ("smoothed_targets-out-of-vocab", lambda: smoothed_targets(t(0, 4), 4, 0.1), ValueError,
     r"^labels must hold token ids in \[0, 4\); got ids from 0 to 4$"),
    ("smoothed_targets-numpy", lambda: smoothed_targets(np.arange(3), 4, 0.1), TypeError,
     r"^labels " + INT_TENSOR + r" \(N\); got ndarray$"),
    ("smoothed_targets-vocab_size-zero", lambda: smoothed_targets(t(0), 0, 0.1), ValueError,
     r"^vocab_size " + POSITIVE + r" 0$"),
    ("smoothed_targets-vocab_size-float", lambda: smoothed_targets(t(0), 2.5, 0.1), TypeError,
     r"^vocab_size " + POSITIVE + r" float 2\.5$"),
    ("smoothed_targets-epsilon-one", lambda: smoothed_targets(t(0), 4, 1.0), ValueError,
     r"^epsilon must be a number in \[0, 1\); got 1\.0$"),
    ("smoothed_targets-epsilon-nan", lambda: smoothed_targets(t(0), 4, NAN), ValueError,
     r"^epsilon must be a number in \[0, 1\); got nan$"),
    ("label_smoothed_loss-labels-float", lambda: loss(labels=torch.ones(2, 3)), TypeError,
     r"^labels " + INT_DTYPE),
    ("label_smoothed_loss-labels-out-of-vocab", lambda: loss(labels=t(1, 9, 0)[None].repeat(2, 1)),
     ValueError, r"^labels \(other than padding\) must hold token ids in \[0, 7\); "
                 r"got ids from 1 to 9$"),
    ("label_smoothed_loss-labels-negative", lambda: loss(labels=t(-1, 3, 0)[None].repeat(2, 1)),
     ValueError, r"^labels \(other than padding\) must hold token ids in \[0, 7\); "
                 r"got ids from -1 to 3$"),
    ("label_smoothed_loss-labels-all-padding", lambda: loss(labels=ones(2, 3, dtype=LONG) * 0),
     ValueError, r"^labels must hold at least one label other than pad_id=0; got only padding$"),
    ("label_smoothed_loss-labels-length", lambda: loss(labels=ids(2, 4, high=7)), ValueError,
     r"^labels must have shape \(B=2, T=3\); got shape \(2, 4\) \(T does not match\)$"),
    ("label_smoothed_loss-labels-batch", lambda: loss(labels=ids(1, 3, high=7)), ValueError,
     r"^labels must have shape \(B=2, T=3\); got shape \(1, 3\) \(B does not match\)$"),
    ("label_smoothed_loss-logits-int", lambda: loss(logits=ones(2, 3, 7, dtype=LONG)), TypeError,
     r"^logits must have a floating-point dtype; got torch\.int64$"),
    ("label_smoothed_loss-logits-2d", lambda: loss(logits=randn(6, 7)), ValueError,
     r"^logits must have 3 dimensions, shape \(B, T, V\); got 2 dimensions, shape \(6, 7\)$"),
    ("label_smoothed_loss-logits-numpy", lambda: loss(logits=arr(2, 3, 7)), TypeError,
     r"^logits " + FLOAT_TENSOR + r" \(B, T, V\); got ndarray$"),
    ("label_smoothed_loss-epsilon-one", lambda: loss(epsilon=1.0), ValueError,
     r"^epsilon must be a number in \[0, 1\); got 1\.0$"),
    ("label_smoothed_loss-epsilon-negative", lambda: loss(epsilon=-0.1), ValueError,
     r"^epsilon must be a number in \[0, 1\); got -0\.1$"),
    ("label_smoothed_loss-pad_id-negative", lambda: loss(pad_id=-1), ValueError,
     r"^pad_id must be a non-negative int; got -1$"),
    ("label_smoothed_loss-pad_id-float", lambda: loss(pad_id=0.0), TypeError,
     r"^pad_id must be a non-negative int; got float 0\.0$"),
    ("loss_floor-vocab_size-zero", lambda: loss_floor(0, 0.1), ValueError,
     r"^vocab_size " + POSITIVE + r" 0$"),
    ("loss_floor-vocab_size-float", lambda: loss_floor(4.0, 0.1), TypeError,
     r"^vocab_size " + POSITIVE + r" float 4\.0$"),
    ("loss_floor-epsilon-one", lambda: loss_floor(4, 1.0), ValueError,
     r"^epsilon must be a number in \[0, 1\); got 1\.0$"),
    ("loss_floor-epsilon-inf", lambda: loss_floor(4, INF), ValueError,
     r"^epsilon must be a number in \[0, 1\); got inf$"),
    # ---------------------------------------------------------------- training: configuration
    ("TrainConfig-steps-zero", lambda: train_config(steps=0), ValueError,
     r"^steps " + POSITIVE + r" 0$"),
    ("TrainConfig-batch_size-zero", lambda: train_config(batch_size=0), ValueError,
     r"^batch_size " + POSITIVE + r" 0$"),
    ("TrainConfig-warmup-float", lambda: train_config(warmup=1.5), TypeError,
     r"^warmup " + POSITIVE + r" float 1\.5$"),
    ("TrainConfig-lr_scale-zero", lambda: train_config(lr_scale=0), ValueError,
     r"^lr_scale must be a positive finite number; got 0$"),
    ("TrainConfig-lr_scale-inf", lambda: train_config(lr_scale=INF), ValueError,
     r"^lr_scale must be a positive finite number; got inf$"),
    ("TrainConfig-use_warmup-int", lambda: train_config(use_warmup=1), TypeError,
     r"^use_warmup must be a bool; got int$"),
    ("TrainConfig-constant_lr-zero", lambda: train_config(constant_lr=0.0), ValueError,
     r"^constant_lr must be a positive finite number; got 0\.0$"),
    ("TrainConfig-constant_lr-nan", lambda: train_config(constant_lr=NAN), ValueError,
     r"^constant_lr must be a positive finite number; got nan$"),
    ("TrainConfig-constant_lr-str", lambda: train_config(constant_lr="1e-3"), TypeError,
     r"^constant_lr must be a positive finite number; got str '1e-3'$"),
    ("TrainConfig-label_smoothing-one", lambda: train_config(label_smoothing=1.0), ValueError,
     r"^label_smoothing must be a number in \[0, 1\); got 1\.0$"),
    ("TrainConfig-betas-list", lambda: train_config(betas=[0.9, 0.98]), TypeError,
     r"^betas must be a tuple \(beta_1, beta_2\); got list$"),
    ("TrainConfig-betas-three", lambda: train_config(betas=(0.9, 0.98, 0.9)), ValueError,
     r"^betas must be two numbers \(beta_1, beta_2\); got \(0\.9, 0\.98, 0\.9\)$"),
    ("TrainConfig-betas-one", lambda: train_config(betas=(0.9, 1.0)), ValueError,
     r"^betas\[1\] must be a number in \[0, 1\); got 1\.0$"),
    ("TrainConfig-betas-str", lambda: train_config(betas=("a", 0.9)), TypeError,
     r"^betas\[0\] must be a number in \[0, 1\); got str 'a'$"),
    ("TrainConfig-adam_eps-zero", lambda: train_config(adam_eps=0.0), ValueError,
     r"^adam_eps must be a positive finite number; got 0\.0$"),
    ("TrainConfig-adam_eps-negative", lambda: train_config(adam_eps=-1e-9), ValueError,
     r"^adam_eps must be a positive finite number; got -1e-09$"),
    ("TrainConfig-grad_clip-zero", lambda: train_config(grad_clip=0.0), ValueError,
     r"^grad_clip must be a positive finite number; got 0\.0$"),
    ("TrainConfig-grad_clip-nan", lambda: train_config(grad_clip=NAN), ValueError,
     r"^grad_clip must be a positive finite number; got nan$"),
    ("TrainConfig-seed-negative", lambda: train_config(seed=-1), ValueError,
     r"^seed must be a non-negative int; got -1$"),
    ("TrainConfig-seed-float", lambda: train_config(seed=1.5), TypeError,
     r"^seed must be a non-negative int; got float 1\.5$"),
    ("TrainConfig-eval_every-negative", lambda: train_config(eval_every=-1), ValueError,
     r"^eval_every must be a non-negative int; got -1$"),
    ("TrainConfig-target_accuracy-above-one", lambda: train_config(target_accuracy=1.5),
     ValueError, r"^target_accuracy must be a number in \[0, 1\]; got 1\.5$"),
    ("TrainConfig-target_accuracy-nan", lambda: train_config(target_accuracy=NAN), ValueError,
     r"^target_accuracy must be a number in \[0, 1\]; got nan$"),
    ("TrainConfig-stop_early-none", lambda: train_config(stop_early=None), TypeError,
     r"^stop_early must be a bool; got NoneType$"),
    ("TrainConfig-verbose-int", lambda: train_config(verbose=1), TypeError,
     r"^verbose must be a bool; got int$"),
    ("TrainConfig.learning_rate-step-zero", lambda: TrainConfig().learning_rate(0, 8), ValueError,
     r"^step " + POSITIVE + r" 0$"),
    ("TrainConfig.learning_rate-step-float", lambda: TrainConfig().learning_rate(1.0, 8),
     TypeError, r"^step " + POSITIVE + r" float 1\.0$"),
    ("TrainConfig.learning_rate-d_model-zero", lambda: TrainConfig().learning_rate(1, 0),
     ValueError, r"^d_model " + POSITIVE + r" 0$"),
    ("TrainConfig.learning_rate-d_model-str-constant",
     lambda: TrainConfig(constant_lr=1e-3).learning_rate(1, "8"), TypeError,
     r"^d_model " + POSITIVE + r" str '8'$"),
    ("TrainConfig.learning_rate-step-zero-constant",
     lambda: TrainConfig(constant_lr=1e-3).learning_rate(0, 8), ValueError,
     r"^step " + POSITIVE + r" 0$"),
    # ---------------------------------------------------------------- training: functions
    ("make_optimizer-model-none", lambda: make_optimizer(None, TrainConfig()), TypeError,
     r"^model must be a torch\.nn\.Module; got NoneType$"),
    ("make_optimizer-model-no-parameters", lambda: make_optimizer(nn.Identity(), TrainConfig()),
     ValueError, r"^model must have parameters to optimise; got a Identity with none$"),
    ("make_optimizer-config-dict", lambda: make_optimizer(model(), {}), TypeError,
     r"^config must be a TrainConfig; got dict$"),
    ("train_step-model-none", lambda: step(model=None), TypeError,
     r"^model must be a torch\.nn\.Module; got NoneType$"),
    ("train_step-optimizer-none", lambda: step(optimizer=None), TypeError,
     r"^optimizer must be a torch\.optim\.Optimizer; got NoneType$"),
    ("train_step-batch-tuple", lambda: step(batch=(1, 2)), TypeError,
     r"^batch must be a Batch; got tuple$"),
    ("train_step-lr-nan", lambda: step(lr=NAN), ValueError,
     r"^lr must be a finite number >= 0; got nan$"),
    ("train_step-lr-negative", lambda: step(lr=-1.0), ValueError,
     r"^lr must be a finite number >= 0; got -1\.0$"),
    ("train_step-lr-str", lambda: step(lr="1e-3"), TypeError,
     r"^lr must be a finite number >= 0; got str '1e-3'$"),
    ("train_step-config-dict", lambda: step(config={}), TypeError,
     r"^config must be a TrainConfig; got dict$"),
    ("accuracies-predicted-float", lambda: accuracies(torch.ones(2, 3), ids(2, 3)), TypeError,
     r"^predicted " + INT_DTYPE),
    ("accuracies-labels-float", lambda: accuracies(ids(2, 3), torch.ones(2, 3)), TypeError,
     r"^labels " + INT_DTYPE),
    ("accuracies-predicted-batch", lambda: accuracies(ids(3, 3), ids(2, 3)), ValueError,
     r"^predicted must have shape \(B=2, T_pred\); got shape \(3, 3\) \(B does not match\)$"),
    ("accuracies-predicted-1d", lambda: accuracies(ids(3), ids(2, 3)), ValueError,
     r"^predicted must have 2 dimensions, shape \(B=2, T_pred\); got 1 dimensions"),
    ("accuracies-labels-numpy", lambda: accuracies(ids(2, 3), np.ones((2, 3), int)), TypeError,
     r"^labels " + INT_TENSOR + r" \(B, T\); got ndarray$"),
    ("accuracies-pad_id-negative", lambda: accuracies(ids(2, 3), ids(2, 3), -1), ValueError,
     r"^pad_id must be a non-negative int; got -1$"),
    ("evaluate-batch-dict", lambda: evaluate(model(), {"src": 1}), TypeError,
     r"^batch must be a Batch; got dict$"),
    ("evaluate-model-none", lambda: evaluate(None, batch()), TypeError,
     r"^model must be a torch\.nn\.Module; got NoneType$"),
    ("evaluate-epsilon-one", lambda: evaluate(model(), batch(), 1.0), ValueError,
     r"^epsilon must be a number in \[0, 1\); got 1\.0$"),
    ("evaluate_decoding-method-unknown", lambda: evaluate_decoding(model(), batch(), method="x"),
     ValueError, r"^method must be 'greedy' or 'beam'; got 'x'$"),
    ("evaluate_decoding-batch-none", lambda: evaluate_decoding(model(), None), TypeError,
     r"^batch must be a Batch; got NoneType$"),
    ("evaluate_decoding-model-none", lambda: evaluate_decoding(None, batch()), TypeError,
     r"^model must be a torch\.nn\.Module; got NoneType$"),
    ("evaluate_decoding-beam_size-zero-beam",
     lambda: evaluate_decoding(model(), batch(), method="beam", beam_size=0), ValueError,
     r"^beam_size " + POSITIVE + r" 0$"),
    ("evaluate_decoding-beam_size-zero-greedy",
     lambda: evaluate_decoding(model(), batch(), beam_size=0), ValueError,
     r"^beam_size " + POSITIVE + r" 0$"),
    ("evaluate_decoding-alpha-nan", lambda: evaluate_decoding(model(), batch(), alpha=NAN),
     ValueError, r"^alpha must be a finite number in \[0, inf\]; got nan$"),
    ("evaluate_decoding-bos_id-negative", lambda: evaluate_decoding(model(), batch(), bos_id=-1),
     ValueError, r"^bos_id must be an int in \[0, 12\]; got -1$"),
    ("evaluate_decoding-eos-equals-bos", lambda: evaluate_decoding(model(), batch(), eos_id=1),
     ValueError, r"^bos_id and eos_id must differ; got bos_id=1, eos_id=1$"),
    ("train-model-without-config", lambda: train(nn.Linear(2, 2), iter([]), TrainConfig()),
     TypeError, r"^model must be a Transformer \(an nn\.Module with \.config\); got Linear$"),
    ("train-model-none", lambda: train(None, iter([]), TrainConfig()), TypeError,
     r"^model must be a Transformer .*; got NoneType$"),
    ("train-batches-list", lambda: train(model(), [batch()], TrainConfig()), TypeError,
     r"^batches must be an iterator of Batch; got list$"),
    ("train-config-dict", lambda: train(model(), iter([]), {}), TypeError,
     r"^config must be a TrainConfig; got dict$"),
    ("train-held_out-dict", lambda: train(model(), iter([]), TrainConfig(), {}), TypeError,
     r"^held_out must be a Batch or None; got dict$"),
    ("train-batches-run-out", lambda: train(fresh_model(), one_batch_then(), TrainConfig(steps=3)),
     ValueError, r"^batches must yield a Batch for each of the 3 steps; got only 1$"),
    ("train-batches-not-batch", lambda: train(fresh_model(), iter([7]), TrainConfig(steps=2)),
     TypeError, r"^batches must yield Batch objects; got int at step 1$"),
    # ---------------------------------------------------------------- decoding
    ("model_step_function-model-int", lambda: model_step_function(42, ids(2, 5)), TypeError,
     r"^model must have encode, decode and project methods; got int$"),
    ("model_step_function-src-float", lambda: model_step_function(model(), torch.ones(2, 5)),
     TypeError, r"^src " + INT_DTYPE),
    ("model_step_function-src-out-of-vocab", lambda: model_step_function(model(), t(3, 11)[None]),
     ValueError, r"^src must hold token ids in \[0, 11\); got ids from 3 to 11$"),
    ("model_step_function-src_mask-2d",
     lambda: model_step_function(model(), ids(2, 5), ones(2, 5)), ValueError,
     r"^src_mask must have 3 dimensions \(B=2, S=5, S=5\).*" + AMBIGUOUS),
    ("greedy_decode-model-int", lambda: greedy(42), TypeError,
     r"^model must have encode, decode and project methods or be a step function; got int$"),
    ("greedy_decode-src-float", lambda: greedy(src=torch.ones(2, 5)), TypeError,
     r"^src " + INT_DTYPE),
    ("greedy_decode-src-1d", lambda: greedy(src=ids(5)), ValueError,
     r"^src must have 2 dimensions, shape \(B, S\); got 1 dimensions, shape \(5,\)$"),
    ("greedy_decode-src-numpy", lambda: greedy(src=np.ones((2, 5), int)), TypeError,
     r"^src " + INT_TENSOR + r" \(B, S\); got ndarray$"),
    ("greedy_decode-src-out-of-vocab", lambda: greedy(src=t(3, 11)[None]), ValueError,
     r"^src must hold token ids in \[0, 11\); got ids from 3 to 11$"),
    ("greedy_decode-max_len-one", lambda: greedy(max_len=1), ValueError,
     r"^max_len must be an int >= 2; got 1$"),
    ("greedy_decode-max_len-past-model", lambda: greedy(max_len=11), ValueError,
     r"^max_len must be an int in \[2, 10\]; got 11$"),
    ("greedy_decode-max_len-float", lambda: greedy(max_len=5.0), TypeError,
     r"^max_len must be an int >= 2; got float 5\.0$"),
    ("greedy_decode-bos_id-past-vocab", lambda: greedy(bos_id=13), ValueError,
     r"^bos_id must be an int in \[0, 12\]; got 13$"),
    ("greedy_decode-eos_id-float", lambda: greedy(eos_id=2.0), TypeError,
     r"^eos_id must be an int in \[0, 12\]; got float 2\.0$"),
    ("greedy_decode-pad_id-negative", lambda: greedy(pad_id=-1), ValueError,
     r"^pad_id must be an int in \[0, 12\]; got -1$"),
    ("greedy_decode-eos-equals-pad", lambda: greedy(eos_id=0), ValueError,
     r"^eos_id and pad_id must differ; got eos_id=0, pad_id=0$"),
    ("greedy_decode-bos-equals-eos", lambda: greedy(bos_id=2), ValueError,
     r"^bos_id and eos_id must differ; got bos_id=2, eos_id=2$"),
    ("greedy_decode-src_mask-float", lambda: greedy(src_mask=ones(2, 1, 5, dtype=F32)),
     TypeError, r"^src_mask must be boolean \(True = may attend\); got dtype torch\.float32$"),
    ("greedy_decode-step-output-rows", lambda: greedy(step_fn(V=5, rows=1)), ValueError,
     r"^model: the step function's output must have shape \(N=2, V\); got shape \(1, 5\) "
     r"\(N does not match\)$"),
    ("greedy_decode-step-output-list", lambda: greedy(lambda p, i: [[0.0] * 5] * p.shape[0]),
     TypeError, r"^model: the step function's output " + FLOAT_TENSOR + r" \(N=2, V\); "
                r"got list$"),
    ("greedy_decode-step-output-int", lambda: greedy(step_fn(dtype=LONG)), TypeError,
     r"^model: the step function's output must have a floating-point dtype; got torch\.int64$"),
    ("greedy_decode-step-output-nan", lambda: greedy(step_fn(value=NAN)), ValueError,
     r"^model: the step function's output must not be NaN; got NaN in rows \[0, 1\]$"),
    ("greedy_decode-step-output-narrow", lambda: greedy(step_fn(V=3), pad_id=5), ValueError,
     r"^model: the step function's output must have V > pad_id=5 columns; got shape \(2, 3\)$"),
    ("greedy_decode-step-with-src_mask", lambda: greedy(step_fn(), src_mask=ones(2, 1, 5)),
     ValueError, r"^src_mask must be None when model is a step function \(it has no encoder "
                 r"to mask\); got Tensor$"),
    ("length_penalty-alpha-nan", lambda: length_penalty(3, NAN), ValueError,
     r"^alpha must be a finite number in \[0, inf\]; got nan$"),
    ("length_penalty-alpha-negative", lambda: length_penalty(3, -1.0), ValueError,
     r"^alpha must be a finite number in \[0, inf\]; got -1\.0$"),
    ("length_penalty-alpha-inf", lambda: length_penalty(3, INF), ValueError,
     r"^alpha must be a finite number in \[0, inf\]; got inf$"),
    ("length_penalty-alpha-str", lambda: length_penalty(3, "0.6"), TypeError,
     r"^alpha must be a finite number in \[0, inf\]; got str '0\.6'$"),
    ("length_penalty-n-negative", lambda: length_penalty(-10, 0.6), ValueError,
     r"^n must be a non-negative int; got -10$"),
    ("length_penalty-n-float", lambda: length_penalty(1.5, 0.6), TypeError,
     r"^n must be a non-negative int; got float 1\.5$"),
    ("length_penalty-n-none", lambda: length_penalty(None, 0.6), TypeError,
     r"^n must be a non-negative int; got NoneType None$"),
    ("beam_search-alpha-nan", lambda: beam(alpha=NAN), ValueError,
     r"^alpha must be a finite number in \[0, inf\]; got nan$"),
    ("beam_search-beam_size-zero", lambda: beam(beam_size=0), ValueError,
     r"^beam_size " + POSITIVE + r" 0$"),
    ("beam_search-beam_size-float", lambda: beam(beam_size=1.5), TypeError,
     r"^beam_size " + POSITIVE + r" float 1\.5$"),
    ("beam_search-beam_size-bool", lambda: beam(beam_size=True), TypeError,
     r"^beam_size " + POSITIVE + r" bool True$"),
    ("beam_search-return_scores-int", lambda: beam(return_scores=1), TypeError,
     r"^return_scores must be a bool; got int$"),
    ("beam_search-src-float", lambda: beam(src=torch.ones(2, 5)), TypeError,
     r"^src " + INT_DTYPE),
    ("beam_search-max_len-zero", lambda: beam(max_len=0), ValueError,
     r"^max_len must be an int >= 2; got 0$"),
    ("beam_search-pad-equals-bos", lambda: beam(pad_id=1), ValueError,
     r"^bos_id and pad_id must differ; got bos_id=1, pad_id=1$"),
    ("beam_search-model-str", lambda: beam("x"), TypeError,
     r"^model must have encode, decode and project methods or be a step function; got str$"),
    ("beam_search-step-output-nan", lambda: beam(nan_after_first_step, beam_size=2), ValueError,
     r"^model: the step function's output must not be NaN; got NaN in rows \[0, 1, 2, 3\]$"),
    ("sequence_log_prob-tokens-float", lambda: log_prob(torch.ones(2, 3)), TypeError,
     r"^tokens " + INT_DTYPE),
    ("sequence_log_prob-tokens-one-column", lambda: log_prob(ones(2, 1, dtype=LONG)), ValueError,
     r"^tokens must have BOS and at least one token, shape \(B, L >= 2\); got \(2, 1\)$"),
    ("sequence_log_prob-tokens-batch", lambda: log_prob(ones(3, 2, dtype=LONG)), ValueError,
     r"^tokens must have shape \(B=2, L\); got shape \(3, 2\) \(B does not match\)$"),
    ("sequence_log_prob-tokens-out-of-vocab", lambda: log_prob(t(1, 5, 2, 1, 50, 2).view(2, 3)),
     ValueError, r"^tokens must hold token ids in \[0, 13\); got ids from 1 to 50$"),
    ("sequence_log_prob-tokens-negative", lambda: log_prob(t(1, -1, 2, 1, 3, 2).view(2, 3)),
     ValueError, r"^tokens must hold token ids in \[0, 13\); got ids from -1 to 3$"),
    ("sequence_log_prob-tokens-too-long", lambda: log_prob(ones(2, 11, dtype=LONG)), ValueError,
     r"^tokens must be at most max_len=10 tokens long, shape \(B=2, L=11\); got shape "
     r"\(2, 11\)$"),
    ("sequence_log_prob-tokens-bos-differ", lambda: log_prob(t(1, 3, 2, 4, 3, 2).view(2, 3)),
     ValueError, r"^tokens must start every row with the same BOS id; got first column \[1, 4\]$"),
    ("sequence_log_prob-tokens-past-step-vocab",
     lambda: log_prob(t(1, 5, 2, 1, 9, 2).view(2, 3), step_fn(V=7)), ValueError,
     r"^tokens must hold token ids in \[0, 7\); got ids from 1 to 9$"),
    ("sequence_log_prob-src-float", lambda: log_prob(t(1, 5, 2).view(1, 3), src=torch.ones(1, 5)),
     TypeError, r"^src " + INT_DTYPE),
    ("sequence_log_prob-eos_id-negative",
     lambda: log_prob(t(1, 5, 2).view(1, 3), src=ids(1, 5), eos_id=-1),
     ValueError, r"^eos_id must be an int in \[0, 12\]; got -1$"),
    ("sequence_log_prob-model-int", lambda: log_prob(t(1, 5, 2).view(1, 3), 0, src=ids(1, 5)),
     TypeError, r"^model must have encode, decode and project methods or be a step function; "
                r"got int$"),
]


def _case_name(entry_id: str) -> str:
    """'Transformer.encode-src-float' -> 'Transformer.encode'; 'softmax-list' -> 'softmax'."""
    return entry_id.split("-", 1)[0]


@pytest.mark.parametrize(("call", "error", "pattern"),
                         [pytest.param(call, error, pattern, id=entry_id)
                          for entry_id, call, error, pattern in BAD])
def test_bad_call_gets_a_clear_error(call: Callable[[], Any], error: type[Exception],
                                     pattern: str) -> None:
    assert error in (ValueError, TypeError)
    with pytest.raises(Exception) as info:  # noqa: PT011 - the exact type is checked below
        call()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    assert re.search(pattern, message), f"{message!r} does not match {pattern!r}"
    assert "got" in message  # what arrived


def test_the_table_is_large_and_its_ids_are_distinct() -> None:
    entry_ids = [entry_id for entry_id, *_ in BAD]
    assert len(entry_ids) == len(set(entry_ids))
    assert len(BAD) >= 150


def _public_methods(cls: type) -> list[str]:
    """The public methods a class defines itself, as 'Class.method'."""
    return [f"{cls.__name__}.{name}" for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(value)]


def test_every_public_name_of_the_core_has_a_bad_call() -> None:
    covered = {_case_name(entry_id) for entry_id, *_ in BAD}
    wanted = [name for name in core.__all__ if name not in EXEMPT]
    for name in core.__all__:
        value = getattr(core, name)
        if inspect.isclass(value) and name not in EXEMPT:
            wanted += [m for m in _public_methods(value) if m not in EXEMPT]
    missing = [name for name in wanted if name not in covered]
    assert not missing, f"no bad call for: {missing}"
    unknown = covered - set(wanted)
    assert not unknown, f"entries for names that are not public: {unknown}"


def test_exemptions_are_real_names() -> None:
    for name in EXEMPT:
        owner, _, method = name.partition(".")
        assert owner in core.__all__
        assert not method or callable(getattr(getattr(core, owner), method))
