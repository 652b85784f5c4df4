"""Multi-head attention: equal to nn.MultiheadAttention and to NumPy; properties; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course.core.masks import causal_mask
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.exercises import Passed, check_multi_head_attention
from transformer_course.experiments.ch3_multi_head_attention.numpy_heads import (
    merge_heads_numpy,
    mha_parameters_numpy,
    multi_head_attention_numpy,
    split_heads_numpy,
)
from transformer_course.pytorch_parity import load_torch_mha_weights, mask_from_torch

torch.set_num_threads(1)
D, H = 16, 4
PROPERTY = settings(max_examples=30, deadline=None)


def _pair(bias: bool, seed: int = 0) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(D, H, bias=bias, batch_first=True)
    with torch.no_grad():  # torch zero-initialises the biases; make them matter
        for p in theirs.parameters():
            if p.ndim == 1:
                p.normal_()
    ours = MultiHeadAttention(D, H, bias=bias)
    load_torch_mha_weights(ours, theirs)
    return ours, theirs


def _torch_masks(kind: str, B: int, T_q: int, T_k: int) -> tuple[torch.Tensor | None, ...]:
    """PyTorch-convention masks (True = blocked) that leave every query a key to attend to."""
    attn = key_padding = None
    if kind in ("causal", "both"):
        attn = ~torch.ones(T_q, T_k, dtype=torch.bool).tril()
    if kind in ("padding", "both"):
        lengths = torch.tensor([T_k, 2, 1][:B])
        key_padding = torch.arange(T_k)[None, :] >= lengths[:, None]  # (B, T_k)
    return attn, key_padding


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("kind", ["none", "padding", "causal", "both"])
def test_matches_torch_outputs_weights_and_gradients(bias: bool, cross: bool, kind: str) -> None:
    ours, theirs = _pair(bias)
    B, T_q = 3, 5
    T_k = 7 if cross and kind not in ("causal", "both") else T_q
    torch.manual_seed(1)
    query = torch.randn(B, T_q, D, requires_grad=True)
    memory = torch.randn(B, T_k, D, requires_grad=True) if cross else query
    value = torch.randn(B, T_k, D, requires_grad=True) if cross else query
    attn, key_padding = _torch_masks(kind, B, T_q, T_k)
    mask = mask_from_torch(attn, key_padding)

    out, weights = ours(query, memory, value, mask=mask, need_weights=True)
    ref, ref_avg = theirs(query, memory, value, key_padding_mask=key_padding, attn_mask=attn,
                          need_weights=True)
    _, ref_heads = theirs(query, memory, value, key_padding_mask=key_padding, attn_mask=attn,
                          need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_heads, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights.mean(1), ref_avg, atol=1e-5, rtol=0)

    upstream = torch.randn(B, T_q, D)
    inputs = [query] + ([memory, value] if cross else [])
    ours_grads = torch.autograd.grad((out * upstream).sum(), inputs + list(ours.parameters()))
    ref_grads = torch.autograd.grad((ref * upstream).sum(), inputs + list(theirs.parameters()))
    n = len(inputs)
    for got, want in zip(ours_grads[:n], ref_grads[:n], strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=0)
    ours_named = dict(zip([name for name, _ in ours.named_parameters()], ours_grads[n:],
                          strict=True))
    ref_named = dict(zip([name for name, _ in theirs.named_parameters()], ref_grads[n:],
                         strict=True))
    for role, chunk in zip("qkv", ref_named["in_proj_weight"].chunk(3), strict=True):
        torch.testing.assert_close(ours_named[f"w_{role}.weight"], chunk, atol=1e-5, rtol=0)
    torch.testing.assert_close(ours_named["w_o.weight"], ref_named["out_proj.weight"], atol=1e-5,
                               rtol=0)
    if bias:
        for role, chunk in zip("qkv", ref_named["in_proj_bias"].chunk(3), strict=True):
            torch.testing.assert_close(ours_named[f"w_{role}.bias"], chunk, atol=1e-5, rtol=0)
        torch.testing.assert_close(ours_named["w_o.bias"], ref_named["out_proj.bias"],
                                   atol=1e-5, rtol=0)


def test_fused_path_matches_explicit_path() -> None:
    ours, _ = _pair(True)
    x = torch.randn(2, 6, D)
    mask = causal_mask(6)[None]  # (1, T, T): the same causal mask for every sequence
    fast, none = ours(x, x, x, mask=mask, need_weights=False)
    slow, _ = ours(x, x, x, mask=mask, need_weights=True)
    assert none is None
    torch.testing.assert_close(fast, slow, atol=1e-6, rtol=0)


def test_parameter_count_equals_one_head_of_full_width() -> None:
    for d_model, h in ((512, 8), (64, 1), (64, 16)):
        count = sum(p.numel() for p in MultiHeadAttention(d_model, h).parameters())
        assert count == 4 * d_model * d_model + 4 * d_model
        theirs = nn.MultiheadAttention(d_model, h)
        assert count == sum(p.numel() for p in theirs.parameters())


def test_load_weights_copies_every_parameter() -> None:
    ours, theirs = _pair(True)
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3)
    assert torch.equal(ours.w_q.weight, w_q) and torch.equal(ours.w_k.weight, w_k)
    assert torch.equal(ours.w_v.weight, w_v)
    assert torch.equal(ours.w_o.weight, theirs.out_proj.weight)
    assert torch.equal(ours.w_v.bias, theirs.in_proj_bias.chunk(3)[2])


def test_mask_from_torch_inverts_and_combines() -> None:
    attn = torch.tensor([[False, True, True], [False, False, True]])
    key_padding = torch.tensor([[False, True, False], [False, False, False]])
    got = mask_from_torch(attn, key_padding)
    want = torch.tensor([[[True, False, False], [True, False, False]],
                         [[True, False, False], [True, True, False]]])
    assert torch.equal(got, want)
    assert torch.equal(mask_from_torch(attn_mask=attn), ~attn[None])  # (1, T_q, T_k)
    assert mask_from_torch(attn_mask=attn).shape == (1, 2, 3)
    assert torch.equal(mask_from_torch(key_padding_mask=key_padding), ~key_padding[:, None, :])
    assert mask_from_torch() is None


# ---- NumPy version -----------------------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cross", [False, True])
def test_numpy_matches_module(bias: bool, cross: bool) -> None:
    torch.manual_seed(2)
    module = MultiHeadAttention(D, H, bias=bias).double()
    x = torch.randn(2, 5, D, dtype=torch.float64)
    memory = torch.randn(2, 3, D, dtype=torch.float64) if cross else x
    mask = torch.rand(2, 5, memory.shape[1]) < 0.6
    mask[..., 0] = True
    out, weights = module(x, memory, memory, mask=mask, need_weights=True)
    params = mha_parameters_numpy(module)
    assert ("b_q" in params) == bias
    got, got_weights = multi_head_attention_numpy(x.numpy(), memory.numpy(), num_heads=H,
                                                  mask=mask.numpy(), **params)
    np.testing.assert_allclose(got, out.detach().numpy(), atol=1e-12, rtol=0)
    np.testing.assert_allclose(got_weights, weights.detach().numpy(), atol=1e-12, rtol=0)


def test_numpy_heads_are_separate_column_blocks() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 12))
    heads = split_heads_numpy(x, 3)
    assert heads.shape == (2, 3, 4, 4)
    np.testing.assert_array_equal(heads[:, 1], x[:, :, 4:8])
    np.testing.assert_array_equal(merge_heads_numpy(heads), x)


def test_numpy_one_head_is_plain_attention() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 5, 6))
    w_q, w_k, w_v, w_o = (rng.standard_normal((6, 6)) for _ in range(4))
    out, weights = multi_head_attention_numpy(x, x, w_q, w_k, w_v, w_o, 1)
    q, k, v = x[0] @ w_q, x[0] @ w_k, x[0] @ w_v
    scores = q @ k.T / np.sqrt(6)
    direct = np.exp(scores - scores.max(1, keepdims=True))
    direct /= direct.sum(1, keepdims=True)
    np.testing.assert_allclose(weights[0, 0], direct, atol=1e-12)
    np.testing.assert_allclose(out[0], direct @ v @ w_o, atol=1e-12)


def test_check_multi_head_attention_accepts_correct_and_rejects_wrong() -> None:
    assert check_multi_head_attention(lambda *a: multi_head_attention_numpy(*a)[0]) == \
        Passed(cases=4, largest_difference=0.0)

    def forgot_output_projection(x_q, x_kv, w_q, w_k, w_v, w_o, h, mask):
        return multi_head_attention_numpy(x_q, x_kv, w_q, w_k, w_v, np.eye(len(w_o)), h, mask)[0]

    with pytest.raises(AssertionError, match=r"\bcase\b"):
        check_multi_head_attention(forgot_output_projection)
    with pytest.raises(AssertionError, match=r"expected(?!\w)"):
        check_multi_head_attention(lambda x_q, *a: x_q[:, :1])
    with pytest.raises(TypeError, match=r"\bfn\b"):
        check_multi_head_attention(3)


# ---- properties --------------------------------------------------------------------------------


@PROPERTY
@given(B=st.integers(1, 3), T_q=st.integers(1, 6), T_k=st.integers(1, 6),
       h=st.sampled_from([1, 2, 4]), seed=st.integers(0, 10_000))
def test_rows_sum_to_one_and_masked_weights_are_zero(B, T_q, T_k, h, seed) -> None:
    torch.manual_seed(seed)
    module = MultiHeadAttention(8, h).double()
    x, memory = torch.randn(B, T_q, 8).double(), torch.randn(B, T_k, 8).double()
    mask = torch.rand(B, T_q, T_k) < 0.5
    mask[torch.arange(B)[:, None], torch.arange(T_q)[None, :],
         torch.randint(0, T_k, (B, T_q))] = True  # at least one key per query
    _, weights = module(x, memory, memory, mask=mask, need_weights=True)
    assert weights.shape == (B, h, T_q, T_k)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, h, T_q, dtype=torch.float64))
    blocked = (~mask)[:, None].expand_as(weights)
    assert torch.all(weights[blocked] == 0)


def test_fully_masked_query_gets_zero_weights_and_bias_only_output() -> None:
    module = MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 3, 8).double()
    mask = torch.tensor([[[True, True, True], [False, False, False], [True, False, True]]])
    out, weights = module(x, x, x, mask=mask, need_weights=True)
    assert torch.all(weights[:, :, 1] == 0)
    torch.testing.assert_close(out[0, 1], module.w_o.bias)  # zero heads, then W_o adds its bias


@PROPERTY
@given(T=st.integers(2, 7), h=st.sampled_from([1, 2, 4]), seed=st.integers(0, 10_000))
def test_self_attention_without_positions_is_permutation_equivariant(T, h, seed) -> None:
    torch.manual_seed(seed)
    module = MultiHeadAttention(8, h).double()
    x = torch.randn(2, T, 8).double()
    perm = torch.randperm(T)
    out, _ = module(x, x, x)
    out_permuted, _ = module(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_permuted, out[:, perm], atol=1e-12, rtol=0)


@PROPERTY
@given(T=st.integers(2, 7), t=st.integers(0, 5), seed=st.integers(0, 10_000))
def test_causal_output_ignores_later_inputs(T, t, seed) -> None:
    t = min(t, T - 2)
    torch.manual_seed(seed)
    module = MultiHeadAttention(8, 2).double()
    x = torch.randn(1, T, 8).double()
    changed = x.clone()
    changed[:, t + 1:] = 100 * torch.randn(1, T - t - 1, 8).double()
    out, _ = module(x, x, x, mask=causal_mask(T)[None])
    out_changed, _ = module(changed, changed, changed, mask=causal_mask(T)[None])
    torch.testing.assert_close(out_changed[:, : t + 1], out[:, : t + 1], atol=1e-12, rtol=0)
    assert not torch.allclose(out_changed[:, t + 1:], out[:, t + 1:])


# ---- bad input ---------------------------------------------------------------------------------


AMBIGUOUS = r"a mask with fewer dimensions is ambiguous: \(B, T_k\) or \(T_q, T_k\)\?"


@pytest.mark.parametrize("need_weights", [True, False])
def test_two_dimensional_mask_is_refused(need_weights: bool) -> None:
    module = MultiHeadAttention(8, 2)
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"\bmask\b"):
        module(x, memory, memory, mask=torch.ones(3, 5, dtype=torch.bool),
               need_weights=need_weights)  # a (T_q, T_k) pattern: pass mask[None]
    with pytest.raises(ValueError, match=r"\bmask\b"):
        module(x, memory, memory, mask=torch.ones(2, 5, dtype=torch.bool),
               need_weights=need_weights)  # a (B, T_k) padding mask: pass mask[:, None]
    with pytest.raises(ValueError, match=r"\bmask\b"):
        module(x, x, x, mask=causal_mask(3), need_weights=need_weights)


def test_padding_mask_with_batch_equal_to_length_is_refused_not_misread() -> None:
    # B == T_q == T_k == 3: a (B, T_k) padding mask has the shape of a (T_q, T_k) mask. The first
    # edition broadcast it as (T_q, T_k), so query i used sequence i's padding; now it is refused.
    torch.manual_seed(0)
    module = MultiHeadAttention(8, 2).double()
    x = torch.randn(3, 3, 8, dtype=torch.float64)
    padding = torch.tensor([[True, True, True], [True, True, False], [True, False, False]])
    with pytest.raises(ValueError, match=r"\bmask\b"):
        module(x, x, x, mask=padding)
    out, weights = module(x, x, x, mask=padding[:, None], need_weights=True)  # (B, 1, T_k)
    for b in range(3):  # sequence b's padded keys get no weight from any of its queries
        assert torch.all(weights[b][..., ~padding[b]] == 0)
        one, _ = module(x[b:b + 1], x[b:b + 1, padding[b]], x[b:b + 1, padding[b]])
        torch.testing.assert_close(out[b:b + 1], one, atol=1e-12, rtol=0)
    misread, _ = module(x, x, x, mask=padding[None])  # (1, T_q, T_k): the old reading
    assert (misread - out).abs().max() > 1e-6


def test_load_weights_rejects_mismatches() -> None:
    ours = MultiHeadAttention(8, 2)
    with pytest.raises(TypeError, match=r"\btheirs\b"):
        load_torch_mha_weights(ours, nn.Linear(8, 8))
    with pytest.raises(TypeError, match=r"\bours\b"):
        load_torch_mha_weights(nn.Linear(8, 8), nn.MultiheadAttention(8, 2))
    with pytest.raises(ValueError, match=r"num_heads(?!\w)"):
        load_torch_mha_weights(ours, nn.MultiheadAttention(8, 4))
    with pytest.raises(ValueError, match=r"bias(?!\w)"):
        load_torch_mha_weights(ours, nn.MultiheadAttention(8, 2, bias=False))
    with pytest.raises(ValueError, match=r"\btheirs\b"):
        load_torch_mha_weights(ours, nn.MultiheadAttention(8, 2, kdim=4, vdim=4))
