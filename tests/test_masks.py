"""Tests for transformer_course.masks: semantics against loops, use in attention, bad input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.attention import scaled_dot_product_attention
from transformer_course.core.masks import (
    causal_mask,
    combine_masks,
    decoder_self_attention_mask,
    padding_mask_from_lengths,
    padding_mask_from_tokens,
)

SETTINGS = settings(max_examples=30, deadline=None)


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_causal_mask_allows_only_the_past(T):
    mask = causal_mask(T)
    assert mask.shape == (T, T) and mask.dtype == torch.bool
    for i in range(T):
        for j in range(T):
            assert bool(mask[i, j]) == (j <= i)


@SETTINGS
@given(lengths=st.lists(st.integers(0, 7), min_size=1, max_size=4), extra=st.integers(0, 3))
def test_padding_mask_from_lengths_matches_loop(lengths, extra):
    T = max(max(lengths), 1) + extra
    mask = padding_mask_from_lengths(torch.tensor(lengths), T)
    assert mask.shape == (len(lengths), 1, T) and mask.dtype == torch.bool
    for b, length in enumerate(lengths):
        assert mask[b, 0].tolist() == [t < length for t in range(T)]


@SETTINGS
@given(tokens=st.lists(st.lists(st.integers(0, 3), min_size=4, max_size=4), min_size=1,
                       max_size=3),
       pad_id=st.integers(0, 3))
def test_padding_and_decoder_masks_match_loops(tokens, pad_id):
    t = torch.tensor(tokens)
    padding = padding_mask_from_tokens(t, pad_id)
    decoder = decoder_self_attention_mask(t, pad_id)
    B, T = t.shape
    assert padding.shape == (B, 1, T) and decoder.shape == (B, T, T)
    for b in range(B):
        for j in range(T):
            assert bool(padding[b, 0, j]) == (tokens[b][j] != pad_id)
            for i in range(T):
                assert bool(decoder[b, i, j]) == (j <= i and tokens[b][j] != pad_id)


def test_combine_masks_is_a_broadcast_and():
    a = torch.tensor([[True, False, True]])  # (1, 3)
    b = torch.tensor([[True], [False]])  # (2, 1)
    combined = combine_masks(a, None, b)
    assert combined.tolist() == [[True, False, True], [False, False, False]]
    assert combine_masks(None, None) is None
    assert combine_masks() is None
    assert combine_masks(a).tolist() == a.tolist()


def test_padded_keys_get_zero_weight_and_padding_does_not_leak():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 5, 4, dtype=torch.float64) for _ in range(3))
    mask = padding_mask_from_lengths(torch.tensor([5, 3]), 5)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(w[1, :, 3:] == 0)
    changed_v = v.clone()
    changed_v[1, 3:] = 1e6  # whatever sits in the padding must not reach the output
    out_changed, _ = scaled_dot_product_attention(q, k, changed_v, mask)
    torch.testing.assert_close(out_changed, out, atol=0, rtol=0)


def test_left_padding_with_causal_mask_gives_an_empty_row():
    mask = decoder_self_attention_mask(torch.tensor([[0, 5, 6]]), pad_id=0)
    assert not mask[0, 0].any() and mask[0, 1].tolist() == [False, True, False]
