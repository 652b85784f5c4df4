"""Tests for rotary position embeddings: the rotation is R_t, scores depend on offsets only."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.exercises import Passed, check_rotary
from transformer_course.experiments.ch4_positional_encoding.relative_position import (
    relative_position_map,
)
from transformer_course.experiments.ch4_positional_encoding.rotary import rotate


def test_row_t_is_multiplied_by_the_chapters_rotation():
    x = torch.randn(3, 2, 20, 8, dtype=torch.float64)
    rotated = rotate(x)
    for t in (0, 1, 7, 19):
        want = x[..., t, :] @ torch.from_numpy(relative_position_map(t, 8)).T
        assert torch.allclose(rotated[..., t, :], want, atol=1e-12)
    assert torch.equal(rotated[..., 0, :], x[..., 0, :])  # R_0 is the identity


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200), st.integers(-50, 50),
       st.integers(1, 8).map(lambda n: 2 * n))
def test_scores_depend_only_on_the_offset(t, s, shift, d):
    q, k = torch.randn(2, 1, d, dtype=torch.float64)
    def score(a: int, b: int) -> float:
        q_a = rotate(q, torch.tensor([a]))
        k_b = rotate(k, torch.tensor([b]))
        return float(q_a[0] @ k_b[0])

    moved_t, moved_s = t + shift, s + shift
    if min(moved_t, moved_s) >= 0:
        assert score(t, s) == pytest.approx(score(moved_t, moved_s), abs=1e-9)


def test_norms_are_kept_and_positions_can_be_given():
    x = torch.randn(5, 6, dtype=torch.float32)
    rotated = rotate(x, torch.tensor([3, 1, 4, 1, 5]))
    assert rotated.dtype == torch.float32
    assert torch.allclose(rotated.norm(dim=-1), x.norm(dim=-1), atol=1e-5)
    assert torch.allclose(rotated[1], rotate(x[1:2], torch.tensor([1]))[0])


def test_check_rotary_passes_the_package_and_fails_wrong_answers():
    result = check_rotary(rotate)
    assert isinstance(result, Passed) and result.largest_difference == 0
    with pytest.raises(AssertionError, match=r"largest difference from the reference"):
        check_rotary(lambda x: x)  # no rotation at all
    with pytest.raises(AssertionError, match=r"largest difference from the reference"):
        check_rotary(lambda x: rotate(x.flip(-2)).flip(-2))  # positions counted backwards
    with pytest.raises(TypeError, match="fn must be callable"):
        check_rotary(3)
