"""Tests for permutation equivariance of attention and the permutation helpers."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.masks import causal_mask
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.core.positional import SinusoidalPositionalEncoding
from transformer_course.experiments.ch4_positional_encoding.order import (
    permutation_gap,
    permute_positions,
)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.sampled_from([(8, 1), (8, 2), (12, 3), (16, 4)]),
       st.integers(0, 10_000), st.booleans())
def test_attention_without_positions_is_permutation_equivariant(T, sizes, seed, bias):
    torch.manual_seed(seed)
    d_model, heads = sizes
    mha = MultiHeadAttention(d_model, heads, bias=bias).double().eval()
    x = torch.randn(2, T, d_model, dtype=torch.float64)
    perm = torch.randperm(T)
    with torch.no_grad():
        out = mha(x, x, x)[0]
        out_permuted = mha(x[:, perm], x[:, perm], x[:, perm])[0]
    assert torch.allclose(out_permuted, out[:, perm], atol=1e-12, rtol=0)
    assert permutation_gap(lambda z: mha(z, z, z)[0], x, perm) < 1e-12


def test_positions_or_a_causal_mask_break_equivariance():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).double().eval()
    encode = SinusoidalPositionalEncoding(16, 32).double()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    perm = [5, 4, 3, 2, 1, 0]
    assert permutation_gap(lambda z: mha(encode(z), encode(z), encode(z))[0], x, perm) > 1e-3
    mask = causal_mask(6)[None]  # (1, T, T)
    assert permutation_gap(lambda z: mha(z, z, z, mask)[0], x, perm) > 1e-3


def test_permute_positions_semantics():
    x = torch.arange(2 * 4 * 3, dtype=torch.float32).reshape(2, 4, 3)
    perm = [2, 0, 3, 1]
    out = permute_positions(x, perm)
    for t, source in enumerate(perm):
        assert torch.equal(out[:, t], x[:, source])
    assert torch.equal(permute_positions(x, torch.tensor(perm)), out)


def test_permutation_gap_of_a_position_aware_function():
    x = torch.randn(1, 5, 2)
    assert permutation_gap(lambda z: z.cumsum(dim=1), x, [1, 0, 2, 3, 4]) > 0
    assert permutation_gap(lambda z: z * 2, x, [1, 0, 2, 3, 4]) == 0
