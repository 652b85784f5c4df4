"""Bad calls to the boundary a reader calls: the attention functions and layers, the model and
its configuration, batching, the loss, training and decoding each raise ``ValueError`` or
``TypeError`` (exactly, not a subclass such as torch's ``RuntimeError``) with a message that
names the argument at fault. How the message is worded is the message's business.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from transformer_course.core import (
    Batch,
    MultiHeadAttention,
    TrainConfig,
    Transformer,
    TransformerConfig,
    beam_search,
    checks,
    greedy_decode,
    label_smoothed_loss,
    make_batch,
    padding_mask_from_lengths,
    scaled_dot_product_attention,
    train,
)
from transformer_course.core.checks import checked_by

SRC_V, TGT_V, D, MAX_LEN = 11, 13, 8, 10  # the small model's sizes


def ids(*shape: int, high: int = SRC_V, low: int = 3) -> torch.Tensor:
    """Token ids in [low, high) (no padding, no BOS/EOS), the same on every call."""
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(0))


def randn(*shape: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(0))


def config(**kw: Any) -> TransformerConfig:
    sizes = dict(d_model=D, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16,
                 max_len=MAX_LEN, dropout=0.0)
    return TransformerConfig(SRC_V, TGT_V, **{**sizes, **kw})


@functools.cache
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(config()).eval()


@functools.cache
def batch() -> Batch:
    return make_batch(ids(2, 4), ids(2, 3, high=TGT_V))


def sdpa(q=None, mask=None):
    k = v = randn(2, 3, 4)
    return scaled_dot_product_attention(randn(2, 3, 4) if q is None else q, k, v, mask)


def attend(key):
    return MultiHeadAttention(D, 2)(randn(2, 3, D), key, randn(2, 5, D))


def loss(**kw):
    return label_smoothed_loss(randn(2, 3, 7), torch.tensor([[1, 2, 0], [3, 4, 5]]), **kw)


BAD: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("scaled_dot_product_attention-q-numpy",
     lambda: sdpa(q=np.zeros((2, 3, 4))), TypeError, "q"),
    ("scaled_dot_product_attention-mask-shape",
     lambda: sdpa(mask=torch.ones(3, 4, dtype=torch.bool)), ValueError, "mask"),
    ("MultiHeadAttention-num_heads-zero", lambda: MultiHeadAttention(8, 0),
     ValueError, "num_heads"),
    ("MultiHeadAttention.forward-key-batch", lambda: attend(randn(3, 5, D)), ValueError, "key"),
    ("TransformerConfig-d_model-not-divisible", lambda: config(d_model=10, num_heads=4),
     ValueError, "num_heads"),
    ("TransformerConfig-positional-unknown", lambda: config(positional="rotary"),
     ValueError, "positional"),
    ("Transformer.forward-src-float",
     lambda: model()(torch.ones(2, 5), ids(2, 4, high=TGT_V)), TypeError, "src"),
    ("make_batch-tgt-batch", lambda: make_batch(ids(2, 3), ids(3, 3)), ValueError, "tgt"),
    ("label_smoothed_loss-epsilon-one", lambda: loss(epsilon=1.0), ValueError, "epsilon"),
    ("TrainConfig-steps-zero", lambda: TrainConfig(steps=0), ValueError, "steps"),
    ("train-batches-list", lambda: train(model(), [batch()], TrainConfig()), TypeError,
     "batches"),
    ("greedy_decode-max_len-one", lambda: greedy_decode(model(), ids(2, 5), 1, 1, 2),
     ValueError, "max_len"),
    ("beam_search-beam_size-zero", lambda: beam_search(model(), ids(2, 5), 6, 1, 2, beam_size=0),
     ValueError, "beam_size"),
    ("padding_mask_from_lengths-2d",
     lambda: padding_mask_from_lengths(torch.tensor([[1, 2]]), 4), ValueError, "lengths"),
]


@pytest.mark.parametrize(("call", "error", "argument"),
                         [pytest.param(call, error, argument, id=entry_id)
                          for entry_id, call, error, argument in BAD])
def test_bad_call_gets_an_error_naming_the_argument(call: Callable[[], Any],
                                                    error: type[Exception], argument: str) -> None:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the exact type is checked below
        call()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert re.search(rf"(?<![\w.]){re.escape(argument)}(?!\w)", str(info.value)), \
        str(info.value)


def test_only_the_outermost_checked_call_is_checked() -> None:
    """A checked call made inside another (a layer inside the model) trusts its caller; a direct
    call is checked, also after a call that raised."""
    checked: list[tuple[str, int]] = []

    class Inner:
        @checked_by(lambda _self, x: checked.append(("inner", x)))
        def run(self, x: int) -> int:
            return x

    class Outer:
        @checked_by(lambda _self, x: checked.append(("outer", x)))
        def run(self, x: int) -> int:
            if x < 0:
                raise ValueError("x must be >= 0")
            return Inner().run(x + 1)

    assert Outer().run(1) == 2 and checked == [("outer", 1)]
    with pytest.raises(ValueError):
        Outer().run(-1)
    assert Inner().run(5) == 5 and checked[-1] == ("inner", 5)


def test_a_model_checks_its_batch_once_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The attention inside the model is not checked again: a step's checks are the model's."""
    seen: list[str] = []
    original = checks.Shapes.tensor

    def counting(self: checks.Shapes, name: str, *args: Any, **kwargs: Any) -> dict[str, int]:
        seen.append(name)
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(checks.Shapes, "tensor", counting)
    model()(ids(2, 4), ids(2, 3, high=TGT_V))
    assert "query" not in seen and {"src", "tgt", "memory"} <= set(seen)
