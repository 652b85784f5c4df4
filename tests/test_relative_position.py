"""Tests for the shift-as-rotation property, the least-squares fit and offset similarity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.positional import sinusoidal_encoding_numpy
from transformer_course.exercises import Passed, check_relative_position_map
from transformer_course.experiments.ch4_positional_encoding.relative_position import (
    fit_shift_map,
    offset_similarity,
    position_similarity,
    relative_position_map,
)


@settings(max_examples=40, deadline=None)
@given(st.integers(-300, 300), st.integers(1, 40).map(lambda n: 2 * n))
def test_shift_is_the_rotation_for_every_position(k, d_model):
    table = sinusoidal_encoding_numpy(700, d_model)
    rotation = relative_position_map(k, d_model)
    lo = max(0, -k)
    positions = np.arange(lo, lo + 350)  # pos and pos + k both inside the table
    moved = table[positions] @ rotation.T  # (350, d_model): R_k PE(pos) per row
    assert np.allclose(moved, table[positions + k], atol=1e-10, rtol=0)


@settings(max_examples=25, deadline=None)
@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.integers(1, 32).map(lambda n: 2 * n))
def test_rotation_group_properties(j, k, d_model):
    r_j, r_k = relative_position_map(j, d_model), relative_position_map(k, d_model)
    assert np.allclose(r_k @ r_k.T, np.eye(d_model), atol=1e-12)
    assert np.allclose(relative_position_map(-k, d_model), r_k.T, atol=1e-12)
    assert np.allclose(r_j @ r_k, relative_position_map(j + k, d_model), atol=1e-9)


def test_rotation_structure():
    assert np.array_equal(relative_position_map(0, 6), np.eye(6))
    rotation = relative_position_map(3, 6, base=100.0)
    block_mask = np.kron(np.eye(3), np.ones((2, 2))).astype(bool)
    assert np.all(rotation[~block_mask] == 0)
    omega = 100.0 ** (-2 / 6)
    expected = [[np.cos(3 * omega), np.sin(3 * omega)], [-np.sin(3 * omega), np.cos(3 * omega)]]
    assert np.allclose(rotation[2:4, 2:4], expected, atol=1e-15)


def test_fit_recovers_rotation_and_agrees_with_numpy_lstsq():
    table = sinusoidal_encoding_numpy(3000, 8)
    for k in (1, 7, 40):
        fit = fit_shift_map(table, k)
        assert fit.max_residual < 1e-11
        assert fit.condition < 1e3
        assert np.allclose(fit.matrix, relative_position_map(k, 8), atol=1e-9, rtol=0)
        reference, *_ = np.linalg.lstsq(table[:-k], table[k:], rcond=None)
        assert np.allclose(fit.matrix, reference.T, atol=1e-9, rtol=0)
        assert fit.condition == pytest.approx(np.linalg.cond(table[:-k]))


def test_fit_over_short_window_is_exact_on_data_but_not_unique():
    table = sinusoidal_encoding_numpy(1000, 32)
    fit = fit_shift_map(table, 5)
    assert fit.max_residual < 1e-10
    assert fit.condition > 1e12
    assert np.abs(fit.matrix - relative_position_map(5, 32)).max() > 1e-3
    # no singular value sits near the cutoff, so every numeric path keeps the same directions
    singular = np.linalg.svd(table[:-5], compute_uv=False)
    cutoff = np.finfo(np.float64).eps * (len(table) - 5) * singular[0]
    assert fit.cutoff_margin == pytest.approx(np.exp(np.abs(np.log(singular / cutoff)).min()))
    assert fit.cutoff_margin > 2


def test_fit_cannot_be_exact_for_odd_d_model():
    table = sinusoidal_encoding_numpy(10_000, 9)
    fit = fit_shift_map(table, 1000)
    per_column = np.abs(table[:-1000] @ fit.matrix.T - table[1000:]).max(axis=0)
    assert per_column[-1] > 0.1
    assert per_column[:-1].max() < 1e-10


def test_similarity_matches_explicit_dot_products():
    table = sinusoidal_encoding_numpy(60, 10)
    starts, offsets = [3, 20], [-3, 0, 5, 39]
    dots = position_similarity(table, starts, offsets)
    cosines = position_similarity(table, starts, offsets, cosine=True)
    for a, s in enumerate(starts):
        for b, o in enumerate(offsets):
            u, v = table[s], table[s + o]
            assert dots[a, b] == pytest.approx(u @ v, abs=1e-12)
            assert cosines[a, b] == pytest.approx(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40).map(lambda n: 2 * n),
       st.lists(st.integers(100, 900), min_size=2, max_size=4))
def test_similarity_depends_only_on_offset(d_model, starts):
    table = sinusoidal_encoding_numpy(1000, d_model)
    offsets = np.arange(-100, 100)
    similarity = position_similarity(table, starts, offsets)
    closed = offset_similarity(offsets, d_model)
    assert np.allclose(similarity, closed[None, :], atol=1e-9, rtol=0)
    assert np.allclose(offset_similarity(offsets, d_model), offset_similarity(-offsets, d_model))
    assert offset_similarity([0], d_model)[0] == pytest.approx(d_model / 2)


def test_similarity_for_odd_d_model_depends_on_start():
    table = sinusoidal_encoding_numpy(2000, 5)
    similarity = position_similarity(table, [0, 1500], [10])
    assert abs(similarity[0, 0] - similarity[1, 0]) > 1e-3


def test_closed_form_refuses_an_odd_d_model():
    # an odd d_model's unpaired sine would silently drop out of the sum
    with pytest.raises(ValueError, match="d_model"):
        offset_similarity([1, 2], 5)


def test_check_relative_position_map():
    result = check_relative_position_map(relative_position_map)
    assert isinstance(result, Passed) and result.cases == 4
    assert 0.0 <= result.largest_difference <= 1e-9
    with pytest.raises(AssertionError, match="misses PE"):
        check_relative_position_map(lambda k, d: relative_position_map(k, d).T)
    with pytest.raises(AssertionError, match="misses PE"):
        check_relative_position_map(lambda k, d: np.eye(d))
    with pytest.raises(AssertionError, match="must have shape"):
        check_relative_position_map(lambda k, d: np.eye(d + 1))
    with pytest.raises(TypeError, match="fn must be callable"):
        check_relative_position_map(None)
