"""Tests for transformer_course.attention: references, properties, numerics, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.attention import (
    naive_softmax,
    scaled_dot_product_attention,
    scaled_dot_product_attention_numpy,
    softmax,
)

SETTINGS = settings(max_examples=30, deadline=None)
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}

# (q shape, k shape, v shape): T_q != T_k, d_v != d_k, extra batch dimensions.
SHAPES = [
    ((3, 4), (3, 4), (3, 4)),
    ((2, 3, 4), (2, 5, 4), (2, 5, 6)),
    ((2, 3, 7, 8), (2, 3, 4, 8), (2, 3, 4, 2)),
    ((2, 2, 2, 1, 5), (2, 2, 2, 6, 5), (2, 2, 2, 6, 3)),
]


def _inputs(shapes, dtype, seed=0, masked=False):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(*s, generator=gen, dtype=torch.float64).to(dtype) for s in shapes)
    mask = None
    if masked:
        mask = torch.rand(*q.shape[:-1], k.shape[-2], generator=gen) > 0.4  # (..., T_q, T_k)
        mask[..., 0, :] = False  # one fully masked query row in every batch entry
    return q, k, v, mask


def _sdpa(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _reference_numpy(q, k, v, mask):
    """Attention written from the formula with explicit loops over the queries (float64)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    out = np.zeros((*q.shape[:-1], v.shape[-1]))
    if mask is not None:
        mask = np.broadcast_to(mask, (*q.shape[:-1], k.shape[-2]))
    for index in np.ndindex(*q.shape[:-1]):
        batch, i = index[:-1], index[-1]
        scores = np.array([q[index] @ k[(*batch, j)] for j in range(k.shape[-2])])
        scores = scores / math.sqrt(q.shape[-1])
        allowed = np.ones(k.shape[-2], bool) if mask is None else mask[(*batch, i)]
        if not allowed.any():
            continue
        e = np.where(allowed, np.exp(scores - scores[allowed].max()), 0.0)
        out[index] = (e / e.sum()) @ v[batch]
    return out


# --- References -----------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("masked", [False, True])
def test_all_paths_match_torch_sdpa(shapes, dtype, masked):
    q, k, v, mask = _inputs(shapes, dtype, masked=masked)
    expected = _sdpa(q, k, v, mask)
    explicit, weights = scaled_dot_product_attention(q, k, v, mask)
    fast, none = scaled_dot_product_attention(q, k, v, mask, need_weights=False)
    np_out, np_weights = scaled_dot_product_attention_numpy(
        q.numpy(), k.numpy(), v.numpy(), None if mask is None else mask.numpy())
    tol = TOLERANCE[dtype]
    assert none is None
    assert explicit.dtype == fast.dtype == dtype and np_out.dtype == q.numpy().dtype
    torch.testing.assert_close(explicit, expected, atol=tol, rtol=0)
    torch.testing.assert_close(fast, expected, atol=tol, rtol=0)
    torch.testing.assert_close(torch.from_numpy(np_out), expected, atol=tol, rtol=0)
    torch.testing.assert_close(torch.from_numpy(np_weights), weights, atol=tol, rtol=0)


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("masked", [False, True])
def test_numpy_matches_loop_reference(shapes, masked):
    q, k, v, mask = _inputs(shapes, torch.float64, seed=3, masked=masked)
    q, k, v = q.numpy(), k.numpy(), v.numpy()
    mask = None if mask is None else mask.numpy()
    out, _ = scaled_dot_product_attention_numpy(q, k, v, mask)
    np.testing.assert_allclose(out, _reference_numpy(q, k, v, mask), atol=1e-12, rtol=0)


@pytest.mark.parametrize("need_weights", [True, False])
def test_low_level_masks_broadcast_by_numpy_rules(need_weights):
    # Unlike MultiHeadAttention and the Transformer, the low-level function takes any mask that
    # broadcasts against (..., T_q, T_k): a 2-D mask is (T_q, T_k), shared by the whole batch.
    q, k, v, _ = _inputs(SHAPES[1], torch.float64)  # (2, 3, 4), (2, 5, 4), (2, 5, 6)
    pattern = torch.rand(3, 5, generator=torch.Generator().manual_seed(4)) > 0.3
    pattern[:, 0] = True
    shared, _ = scaled_dot_product_attention(q, k, v, pattern, need_weights=need_weights)
    full, _ = scaled_dot_product_attention(q, k, v, pattern.expand(2, 3, 5),
                                           need_weights=need_weights)
    torch.testing.assert_close(shared, full, atol=0, rtol=0)
    np_shared, _ = scaled_dot_product_attention_numpy(q.numpy(), k.numpy(), v.numpy(),
                                                      pattern.numpy())
    np.testing.assert_allclose(np_shared, full.numpy(), atol=1e-12, rtol=0)


def test_custom_scale_matches_torch():
    q, k, v, mask = _inputs(SHAPES[1], torch.float64, masked=True)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)
    for need_weights in (True, False):
        out, _ = scaled_dot_product_attention(q, k, v, mask, scale=0.3, need_weights=need_weights)
        torch.testing.assert_close(out, expected, atol=1e-10, rtol=0)
    np_out, _ = scaled_dot_product_attention_numpy(q.numpy(), k.numpy(), v.numpy(), mask.numpy(),
                                                   scale=0.3)
    np.testing.assert_allclose(np_out, expected.numpy(), atol=1e-10, rtol=0)


@pytest.mark.parametrize("shapes", SHAPES[1:3])
@pytest.mark.parametrize("masked", [False, True])
def test_gradients_match_torch_sdpa(shapes, masked):
    q, k, v, mask = _inputs(shapes, torch.float64, seed=5, masked=masked)
    upstream = torch.randn(*q.shape[:-1], v.shape[-1], dtype=torch.float64)

    def grads(fn):
        leaves = [x.clone().requires_grad_(True) for x in (q, k, v)]
        (fn(*leaves) * upstream).sum().backward()
        return [x.grad for x in leaves]

    ours = grads(lambda a, b, c: scaled_dot_product_attention(a, b, c, mask)[0])
    theirs = grads(lambda a, b, c: _sdpa(a, b, c, mask))
    for g_ours, g_theirs in zip(ours, theirs, strict=True):
        assert torch.isfinite(g_ours).all()
        torch.testing.assert_close(g_ours, g_theirs, atol=1e-10, rtol=0)


# --- Properties -----------------------------------------------------------------------------

dims = st.integers(min_value=1, max_value=6)


@SETTINGS
@given(B=dims, T_q=dims, T_k=dims, d_k=dims, seed=st.integers(0, 10_000))
def test_rows_sum_to_one_and_masked_weights_are_zero(B, T_q, T_k, d_k, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, T_q, d_k)) * 5
    k = rng.standard_normal((B, T_k, d_k)) * 5
    v = rng.standard_normal((B, T_k, 2))
    mask = rng.random((B, T_q, T_k)) > 0.5
    np_out, np_w = scaled_dot_product_attention_numpy(q, k, v, mask)
    t_out, t_w = scaled_dot_product_attention(*(torch.from_numpy(x) for x in (q, k, v)),
                                              torch.from_numpy(mask))
    for w in (np_w, t_w.numpy()):
        assert np.all(w[~mask] == 0.0)  # exactly zero, not small
        assert np.all(w >= 0)
        has_key = mask.any(-1)
        np.testing.assert_allclose(w.sum(-1)[has_key], 1.0, atol=1e-12)
        assert np.all(w.sum(-1)[~has_key] == 0.0)
    assert np.all(np_out[~mask.any(-1)] == 0.0) and np.all(t_out.numpy()[~mask.any(-1)] == 0.0)


@SETTINGS
@given(T=st.integers(2, 8), t=st.integers(0, 6), seed=st.integers(0, 10_000))
def test_causal_outputs_ignore_the_future(T, t, seed):
    t = min(t, T - 2)
    gen = torch.Generator().manual_seed(seed)
    proj = torch.randn(4, 3 * 4, generator=gen, dtype=torch.float64)  # x -> q, k, v
    x = torch.randn(2, T, 4, generator=gen, dtype=torch.float64)
    changed = x.clone()
    changed[:, t + 1:] = torch.randn(2, T - t - 1, 4, generator=gen, dtype=torch.float64) * 10
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for need_weights in (True, False):
        before = scaled_dot_product_attention(*(x @ proj).split(4, -1), mask,
                                              need_weights=need_weights)[0]
        after = scaled_dot_product_attention(*(changed @ proj).split(4, -1), mask,
                                             need_weights=need_weights)[0]
        torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], atol=1e-12, rtol=0)
        assert not torch.allclose(after[:, t + 1:], before[:, t + 1:])


@SETTINGS
@given(T_q=dims, T_k=st.integers(2, 8), seed=st.integers(0, 10_000))
def test_permutation_equivariance(T_q, T_k, seed):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, T_q, 4, generator=gen, dtype=torch.float64)
    k = torch.randn(2, T_k, 4, generator=gen, dtype=torch.float64)
    v = torch.randn(2, T_k, 3, generator=gen, dtype=torch.float64)
    out, _ = scaled_dot_product_attention(q, k, v)
    key_perm = torch.randperm(T_k, generator=gen)
    same, _ = scaled_dot_product_attention(q, k[:, key_perm], v[:, key_perm])
    torch.testing.assert_close(same, out, atol=1e-12, rtol=0)
    query_perm = torch.randperm(T_q, generator=gen)
    permuted, _ = scaled_dot_product_attention(q[:, query_perm], k, v)
    torch.testing.assert_close(permuted, out[:, query_perm], atol=1e-12, rtol=0)
    # Self-attention with projections: permuting the input permutes the output.
    proj = torch.randn(3, 3 * 4, generator=gen, dtype=torch.float64)
    x = torch.randn(1, T_k, 3, generator=gen, dtype=torch.float64)
    self_out, _ = scaled_dot_product_attention(*(x @ proj).split(4, -1))
    self_perm, _ = scaled_dot_product_attention(*(x[:, key_perm] @ proj).split(4, -1))
    torch.testing.assert_close(self_perm, self_out[:, key_perm], atol=1e-12, rtol=0)


def test_shift_invariance_and_stable_softmax():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 7))
    np.testing.assert_allclose(softmax(x + 1234.5), softmax(x), atol=1e-12)
    np.testing.assert_allclose(softmax(x), naive_softmax(x), atol=1e-14)
    e = np.exp(x)
    np.testing.assert_allclose(softmax(x, axis=0), e / e.sum(0), atol=1e-14)


# --- Numerics -------------------------------------------------------------------------------


def test_naive_softmax_fails_where_stable_does_not():
    big = np.array([1000.0, 999.0, 998.0])
    assert np.isnan(naive_softmax(big)).all()
    assert np.isnan(naive_softmax(-big)).all()
    expected = np.exp([0.0, -1.0, -2.0]) / np.exp([0.0, -1.0, -2.0]).sum()
    np.testing.assert_allclose(softmax(big), expected, atol=1e-15)
    np.testing.assert_allclose(softmax(-big), expected[::-1], atol=1e-15)


def test_softmax_of_all_minus_inf_row_is_zero():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    np.testing.assert_array_equal(softmax(x), [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("need_weights", [True, False])
def test_huge_logits_give_finite_outputs(dtype, need_weights):
    gen = torch.Generator().manual_seed(0)
    signs = torch.randint(0, 2, (2, 3, 4), generator=gen) * 2 - 1
    q = (100.0 * signs).to(dtype)  # (B, T_q, d_k): scores up to 100 * 100 * 4 / 2 = 2e4
    k = (100.0 * torch.randint(0, 2, (2, 5, 4), generator=gen) * 2 - 100.0).to(dtype)
    v = torch.randn(2, 5, 3, generator=gen).to(dtype)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    for m in (None, mask):
        out, _ = scaled_dot_product_attention(q, k, v, m, need_weights=need_weights)
        assert out.dtype == dtype and torch.isfinite(out).all()
        ref = _sdpa(q.double(), k.double(), v.double(), m)
        torch.testing.assert_close(out.double(), ref, atol=0.05, rtol=0.02)


def test_numpy_float16_huge_logits_finite():
    q = np.full((1, 2, 4), 100.0, dtype=np.float16)
    k = np.concatenate([q, -q], axis=1)  # scores +-2e4
    v = np.arange(12, dtype=np.float16).reshape(1, 4, 3)
    out, w = scaled_dot_product_attention_numpy(q, k, v)
    assert out.dtype == np.float16 and np.isfinite(out).all()
    np.testing.assert_allclose(w[0, 0], [0.5, 0.5, 0.0, 0.0])


def test_fully_masked_row_gives_zeros_and_finite_gradients():
    q, k, v, _ = _inputs(SHAPES[1], torch.float64)
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[:, 1] = False  # query 1 may attend to nothing
    np_out, np_w = scaled_dot_product_attention_numpy(q.numpy(), k.numpy(), v.numpy(),
                                                      mask.numpy())
    assert np.all(np_out[:, 1] == 0) and np.all(np_w[:, 1] == 0)
    for need_weights in (True, False):
        leaves = [x.clone().requires_grad_(True) for x in (q, k, v)]
        out, w = scaled_dot_product_attention(*leaves, mask, need_weights=need_weights)
        assert torch.all(out[:, 1] == 0)
        assert w is None or torch.all(w[:, 1] == 0)
        out.sum().backward()
        for leaf in leaves:
            assert torch.isfinite(leaf.grad).all()
        assert torch.all(leaves[0].grad[:, 1] == 0)


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 4), (2, 4, 16, 8)])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("masked", [False, True])
def test_non_finite_query_gives_nan_row_on_both_paths(shape, bad, masked):
    # PyTorch's fused CPU kernel returns zeros for a NaN query in some shapes (e.g. (1, 2, 3, 4)
    # without a mask); both of our paths must give NaN in that query's row, and only there.
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(*shape, generator=gen, dtype=torch.float64) for _ in range(3))
    q[..., 1, 2] = bad
    mask = torch.ones(shape[-2], shape[-2], dtype=torch.bool).tril() if masked else None
    for need_weights in (True, False):
        out, _ = scaled_dot_product_attention(q, k, v, mask, need_weights=need_weights)
        assert out[..., 1, :].isnan().all(), (need_weights, out[..., 1, :])
        others = torch.cat([out[..., :1, :], out[..., 2:, :]], dim=-2)
        assert torch.isfinite(others).all()


def test_dropout_is_applied_to_weights():
    q, k, v, _ = _inputs(SHAPES[1], torch.float64)
    torch.manual_seed(0)
    _, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    _, w_clean = scaled_dot_product_attention(q, k, v)
    kept = w != 0
    assert 0 < kept.float().mean() < 1
    torch.testing.assert_close(w[kept], 2 * w_clean[kept])
