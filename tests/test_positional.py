"""Tests for the sinusoidal encoding and the positional modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_encoding,
    sinusoidal_encoding_numpy,
    sinusoidal_frequencies,
    sinusoidal_wavelengths,
)
from transformer_course.exercises import Passed, check_sinusoidal_encoding


def test_numpy_and_torch_agree():
    table = sinusoidal_encoding_numpy(300, 64)
    assert np.array_equal(sinusoidal_encoding(300, 64, dtype=torch.float64).numpy(), table)
    single = sinusoidal_encoding(300, 64)
    assert single.dtype == torch.float32
    assert np.allclose(single.numpy(), table, atol=1e-7, rtol=0)


@pytest.mark.parametrize(("pos", "dim", "d_model"),
                         [(0, 0, 8), (0, 1, 8), (1, 0, 8), (7, 3, 8), (123, 6, 8), (45, 63, 64),
                          (999, 100, 512), (2, 4, 5)])
def test_matches_formula_entry_by_entry(pos, dim, d_model):
    angle = pos / 10000 ** (2 * (dim // 2) / d_model)
    expected = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
    assert sinusoidal_encoding_numpy(pos + 1, d_model)[pos, dim] == pytest.approx(expected,
                                                                               abs=1e-12)


def test_known_values():
    table = sinusoidal_encoding_numpy(3, 4)
    assert table[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert table[1, 0] == pytest.approx(math.sin(1.0))
    assert table[1, 3] == pytest.approx(math.cos(0.01))  # 1 / 10000^(2/4)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 80), st.floats(1.01, 1e6))
def test_values_in_unit_interval_and_pairs_on_circle(num_positions, d_model, base):
    table = sinusoidal_encoding_numpy(num_positions, d_model, base)
    assert table.shape == (num_positions, d_model)
    assert np.all(np.abs(table) <= 1.0)
    pairs = d_model // 2
    radius = table[:, 0:2 * pairs:2] ** 2 + table[:, 1:2 * pairs:2] ** 2
    assert np.allclose(radius, 1.0, atol=1e-12)


def test_odd_d_model_last_column_is_unpaired_sine():
    odd, even = sinusoidal_encoding_numpy(50, 7), sinusoidal_encoding_numpy(50, 8)
    positions = np.arange(50)
    assert odd.shape == (50, 7)
    assert np.allclose(odd[:, 6], np.sin(positions / 10000 ** (6 / 7)), atol=1e-14, rtol=0)
    for dim in range(6):  # pairs use the odd width's own frequencies, not the even width's
        angle = positions / 10000 ** (2 * (dim // 2) / 7)
        expected = np.sin(angle) if dim % 2 == 0 else np.cos(angle)
        assert np.allclose(odd[:, dim], expected, atol=1e-14, rtol=0)
    assert not np.allclose(odd[:, 2], even[:, 2])
    assert sinusoidal_encoding_numpy(4, 1)[:, 0].tolist() == pytest.approx(np.sin(np.arange(4)))


def test_frequencies_and_wavelengths():
    freqs = sinusoidal_frequencies(512)
    assert freqs.shape == (256,)
    assert freqs[0] == 1.0
    assert np.allclose(freqs[1:] / freqs[:-1], 10000 ** (-2 / 512))
    waves = sinusoidal_wavelengths(512)
    assert waves[0] == pytest.approx(2 * math.pi)
    assert waves[-1] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert waves[-1] < 2 * math.pi * 10000
    assert sinusoidal_frequencies(7).shape == (4,)
    # Pair 1 of a 4-wide encoding with base 100 has omega = 1/10, so its wavelength is 20 pi.
    wave = sinusoidal_wavelengths(4, base=100.0)[1]
    assert wave == pytest.approx(2 * math.pi * 10.0)


def test_sinusoidal_module_adds_exactly_the_encoding():
    torch.manual_seed(0)
    module = SinusoidalPositionalEncoding(16, max_len=40)
    x = torch.randn(3, 25, 16)
    encoding = sinusoidal_encoding(25, 16)
    assert torch.equal(module(x), x + encoding)
    assert torch.allclose(module(x) - x, encoding.expand(3, 25, 16), atol=1e-6, rtol=0)
    x64 = torch.randn(2, 40, 16, dtype=torch.float64)
    out = module(x64)
    assert out.dtype == torch.float64
    # A float64 model gets the encoding to float64 rounding, not a float32 table cast up.
    expected = x64 + sinusoidal_encoding(40, 16, dtype=torch.float64)
    assert torch.equal(out, expected)
    added = module(torch.zeros(1, 40, 16, dtype=torch.float64))[0]
    np.testing.assert_allclose(added.numpy(), sinusoidal_encoding_numpy(40, 16), atol=1e-15,
                               rtol=0)
    float32_table = sinusoidal_encoding(40, 16).double().numpy()
    assert np.abs(float32_table - sinusoidal_encoding_numpy(40, 16)).max() > 1e-9
    assert list(module.parameters()) == []
    assert "encoding" not in module.state_dict()


def test_learned_module_parameters_and_gradients():
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(8, max_len=10)
    assert sum(p.numel() for p in module.parameters()) == 10 * 8
    x = torch.randn(2, 6, 8, requires_grad=True)
    out = module(x)
    assert torch.equal(out, x + module.embedding.weight[:6])
    out.pow(2).sum().backward()
    grad = module.embedding.weight.grad
    assert torch.all(grad[:6].abs().sum(dim=1) > 0)
    assert torch.all(grad[6:] == 0)
    assert x.grad is not None and torch.all(x.grad.abs().sum(dim=-1) > 0)


def test_check_sinusoidal_encoding_accepts_correct_and_rejects_wrong():
    assert check_sinusoidal_encoding(sinusoidal_encoding_numpy) == \
        Passed(cases=4, largest_difference=0.0)
    float32 = check_sinusoidal_encoding(sinusoidal_encoding)  # float32: rounding, within 1e-5
    assert isinstance(float32, Passed) and float32.cases == 4
    assert 0.0 < float32.largest_difference <= 1e-5

    def swapped(num_positions: int, d_model: int) -> np.ndarray:
        return sinusoidal_encoding_numpy(num_positions, d_model)[:, ::-1]

    def base_1000(num_positions: int, d_model: int) -> np.ndarray:
        return sinusoidal_encoding_numpy(num_positions, d_model, base=1000.0)

    with pytest.raises(AssertionError, match=r"expected"):
        check_sinusoidal_encoding(swapped)
    with pytest.raises(AssertionError, match=r"sin of pair i=1"):
        check_sinusoidal_encoding(base_1000)
    with pytest.raises(AssertionError, match="must have shape"):
        check_sinusoidal_encoding(lambda p, d: np.zeros((d, p)))
    with pytest.raises(TypeError, match="fn must be callable"):
        check_sinusoidal_encoding("not a function")
