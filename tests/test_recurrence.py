"""Tests for ch1 recurrence: the Elman layer and the gradient-decay measurement."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.experiments.ch1_why_attention.recurrence import (
    ElmanRNN,
    GradientDecay,
    GradientDecayConfig,
    last_position_jacobian_norms,
    load_torch_rnn_weights,
    measure_gradient_decay,
    per_step_factor,
)


def _pair(input_size: int, hidden_size: int, dtype=torch.float64) -> tuple[ElmanRNN, nn.RNN]:
    theirs = nn.RNN(input_size, hidden_size, batch_first=True).to(dtype)
    ours = ElmanRNN(input_size, hidden_size).to(dtype)
    load_torch_rnn_weights(ours, theirs)
    return ours, theirs


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 4), T=st.integers(1, 12), input_size=st.integers(1, 9),
       hidden_size=st.integers(1, 9), with_h0=st.booleans())
def test_elman_matches_torch_rnn(B, T, input_size, hidden_size, with_h0):
    torch.manual_seed(B * 1000 + T)
    ours, theirs = _pair(input_size, hidden_size)
    x = torch.randn(B, T, input_size, dtype=torch.float64)
    h0 = torch.randn(B, hidden_size, dtype=torch.float64) if with_h0 else None
    states, last = ours(x, h0)
    their_states, their_last = theirs(x, None if h0 is None else h0[None])
    torch.testing.assert_close(states, their_states, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(last, their_last[0], rtol=1e-12, atol=1e-12)


def test_elman_gradients_match_torch_rnn():
    torch.manual_seed(1)
    ours, theirs = _pair(5, 7)
    x = torch.randn(3, 11, 5, dtype=torch.float64, requires_grad=True)
    (grad_ours,) = torch.autograd.grad(ours(x)[0].square().sum(), x)
    (grad_theirs,) = torch.autograd.grad(theirs(x)[0].square().sum(), x)
    torch.testing.assert_close(grad_ours, grad_theirs, rtol=1e-12, atol=1e-12)


def test_elman_float32_close_to_torch():
    torch.manual_seed(2)
    ours, theirs = _pair(16, 32, torch.float32)
    x = torch.randn(4, 50, 16)
    torch.testing.assert_close(ours(x)[0], theirs(x)[0], rtol=1e-5, atol=1e-6)


def test_elman_init_matches_rnn_bounds():
    torch.manual_seed(3)
    layer = ElmanRNN(10, 25)
    bound = 1 / math.sqrt(25)
    for p in layer.parameters():
        assert p.abs().max() <= bound
        assert p.std() > bound / 4  # spread over the interval, not constant


def test_elman_steps_are_causal():
    torch.manual_seed(4)
    layer = ElmanRNN(3, 4)
    x = torch.randn(1, 6, 3)
    changed = x.clone()
    changed[0, 4] += 1.0
    before, after = layer(x)[0], layer(changed)[0]
    torch.testing.assert_close(before[:, :4], after[:, :4])
    assert not torch.allclose(before[:, 4:], after[:, 4:])


def _reference_norms(layer, x):
    jacobian = torch.autograd.functional.jacobian(lambda s: layer(s[None])[0][0, -1], x)
    return jacobian.pow(2).sum(dim=(0, 2)).sqrt()  # jacobian: (d_out, T, d_model)


@pytest.mark.parametrize("kind", ["rnn", "attention"])
def test_jacobian_norms_match_autograd_jacobian(kind):
    torch.manual_seed(5)
    if kind == "rnn":
        layer = ElmanRNN(6, 5).double()
    else:
        mha = MultiHeadAttention(6, 2).double()
        layer = lambda b: mha(b, b, b)  # noqa: E731
    x = torch.randn(9, 6, dtype=torch.float64)
    torch.testing.assert_close(last_position_jacobian_norms(layer, x), _reference_norms(layer, x),
                               rtol=1e-10, atol=1e-14)


def test_jacobian_norms_of_a_linear_map():
    weight = torch.randn(4, 3, dtype=torch.float64)
    layer = lambda b: b @ weight.T  # noqa: E731, position-wise: only the last position counts
    norms = last_position_jacobian_norms(layer, torch.randn(5, 3, dtype=torch.float64))
    expected = torch.zeros(5, dtype=torch.float64)
    expected[-1] = torch.linalg.matrix_norm(weight)
    torch.testing.assert_close(norms, expected)


def test_gradient_decay_recurrent_vanishes_attention_does_not():
    config = GradientDecayConfig(seq_len=40, d_model=16, num_heads=2, num_seeds=4)
    result = measure_gradient_decay(config)
    assert isinstance(result, GradientDecay)
    assert result.recurrent.shape == result.attention.shape == (4, 40)
    np.testing.assert_array_equal(result.distances, np.arange(40))
    rnn_factor = per_step_factor(result.recurrent, result.distances)
    att_factor = per_step_factor(result.attention, result.distances)
    assert rnn_factor < 0.8  # the default init shrinks the gradient at every step
    assert 0.97 < att_factor < 1.03  # no trend with distance
    for seed in range(4):  # far inputs get a tiny share in every seed
        assert result.recurrent[seed, -1] < 1e-6 * result.recurrent[seed, 1]
        assert 0.2 < result.attention[seed, -1] / result.attention[seed, 1] < 5


def test_gradient_decay_large_gain_explodes():
    config = GradientDecayConfig(seq_len=30, d_model=16, num_heads=2, num_seeds=3,
                                 recurrent_gain=4.0)
    result = measure_gradient_decay(config)
    assert per_step_factor(result.recurrent, result.distances) > 1.0


def test_gradient_decay_is_deterministic_and_keeps_global_rng():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    config = GradientDecayConfig(seq_len=8, d_model=8, num_heads=2, num_seeds=2)
    first, second = measure_gradient_decay(config), measure_gradient_decay(config)
    assert torch.equal(state, torch.get_rng_state())
    np.testing.assert_array_equal(first.recurrent, second.recurrent)
    np.testing.assert_array_equal(first.attention, second.attention)


@settings(max_examples=30, deadline=None)
@given(factor=st.floats(0.05, 3.0), scale=st.floats(1e-3, 1e3), seeds=st.integers(1, 3))
def test_per_step_factor_recovers_a_geometric_sequence(factor, scale, seeds):
    distances = np.arange(12)
    norms = np.tile(scale * factor ** distances.astype(float), (seeds, 1))
    norms[:, 0] = 1e9  # distance 0 is excluded from the fit
    assert per_step_factor(norms, distances) == pytest.approx(factor, rel=1e-9)
