"""Tests for the chapter 2 checks in transformer_course.exercises: correct answers pass, wrong
ones fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from transformer_course.core.attention import (
    naive_softmax,
    scaled_dot_product_attention_numpy,
    softmax,
)
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.exercises import (
    Passed,
    check_attention,
    check_attention_weights_memory,
    check_local_causal_mask,
    check_softmax,
)


def _attention_with(softmax_fn, scale=True, use_mask=True):
    def attend(q, k, v, mask=None):
        scores = q @ np.swapaxes(k, -1, -2)
        if scale:
            scores = scores / math.sqrt(q.shape[-1])
        if use_mask and mask is not None:
            scores = np.where(mask, scores, -np.inf)
        return softmax_fn(scores) @ v
    return attend


def test_reference_answers_pass():
    # The package's own functions agree with themselves exactly.
    assert check_softmax(softmax) == Passed(cases=6, largest_difference=0.0)
    assert check_attention(lambda q, k, v, mask=None:
                           scaled_dot_product_attention_numpy(q, k, v, mask)[0]) == \
        Passed(cases=7, largest_difference=0.0)
    written = check_attention(_attention_with(softmax))
    assert isinstance(written, Passed) and written.cases == 7
    assert 0.0 <= written.largest_difference <= 1e-10
    assert check_local_causal_mask(
        lambda T, w: torch.ones(T, T, dtype=torch.bool).tril() &
        torch.ones(T, T, dtype=torch.bool).triu(-(w - 1))) == \
        Passed(cases=6, largest_difference=0.0)


def test_passed_reads_as_a_summary():
    assert repr(Passed(cases=7, largest_difference=3.5e-16)) == \
        "passed 7 cases; largest difference 3.5e-16"


@pytest.mark.parametrize(("fn", "pattern"), [
    (naive_softmax, r"case 'large logits \(1000\)': the result holds NaN"),
    (lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True))
     .sum(-1, keepdims=True), r"case 'a row of only -inf \(must give zeros\)'"),
    (lambda x: softmax(x, axis=0), r"case 'random logits': largest difference"),
    (lambda x: softmax(x)[..., :-1], r"expected shape"),
    (lambda x: softmax(x).tolist(),
     r"case 'random logits': expected an array of shape \(3, 5\); got list"),
])
def test_wrong_softmax_fails(fn, pattern):
    with pytest.raises(AssertionError, match=pattern):
        check_softmax(fn)


@pytest.mark.parametrize(("fn", "pattern"), [
    (_attention_with(softmax, scale=False), r"case 'no mask, one sequence'"),
    (_attention_with(softmax, use_mask=False), r"case 'padding mask'"),
    (_attention_with(naive_softmax), r"case 'large scores \(needs a stable softmax\)'"),
    (_attention_with(lambda s: np.exp(s - s.max(-1, keepdims=True))
                     / np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True)),
     r"case 'a fully masked query row \(must output zeros\)'"),
])
def test_wrong_attention_fails(fn, pattern):
    with pytest.raises(AssertionError, match=pattern):
        check_attention(fn)


@pytest.mark.parametrize(("fn", "pattern"), [
    (lambda T, w: torch.ones(T, T, dtype=torch.bool).tril(), r"case T=5, window=1"),
    (lambda T, w: torch.ones(T, T, dtype=torch.bool).tril(-1), r"case T=1, window=1"),
    (lambda T, w: torch.ones(T, T).tril(), r"expected a boolean torch tensor"),
    (lambda T, w: torch.ones(T, T + 1, dtype=torch.bool), r"expected shape"),
])
def test_wrong_local_mask_fails(fn, pattern):
    with pytest.raises(AssertionError, match=pattern):
        check_local_causal_mask(fn)


def test_weights_memory_counts_the_tensor_attention_returns():
    # the checker's reference is the size of the weights the package's attention keeps
    x = torch.zeros(2, 5, 12)
    _, weights = MultiHeadAttention(12, 3)(x, x, x, need_weights=True)
    assert weights.nelement() * weights.element_size() == 2 * 3 * 5 * 5 * 4  # B h T T, float32
    assert check_attention_weights_memory(
        lambda b, t, h, n, size: n * b * h * t * t * size).cases >= 5


@pytest.mark.parametrize("fn", [
    lambda b, t, h, n, size: n * b * h * t * size,  # T, not T x T
    lambda b, t, h, n, size: n * b * t * t * size,  # the heads forgotten
    lambda b, t, h, n, size: b * h * t * t * size,  # one layer
    lambda b, t, h, n, size: n * b * h * t * t * 4,  # always float32
    lambda b, t, h, n, size: n * b * h * t * t * size / 2 ** 30,  # GiB, not bytes
    lambda b, t, h, n, size: str(n * b * h * t * t * size),
])
def test_wrong_weights_memory_fails(fn):
    with pytest.raises(AssertionError):
        check_attention_weights_memory(fn)


@pytest.mark.parametrize("check", [check_softmax, check_attention, check_local_causal_mask,
                                   check_attention_weights_memory])
def test_non_callable_is_rejected(check):
    with pytest.raises(TypeError, match="fn must be callable"):
        check(42)
