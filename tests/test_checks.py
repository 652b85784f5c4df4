"""Argument checks: good input passes; errors name the argument, the expectation and the input."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.checks import (
    check_array,
    check_broadcastable,
    check_dim,
    check_fraction,
    check_instance,
    check_positive_int,
)


@pytest.mark.parametrize("x", [np.zeros((2, 3, 4)), torch.zeros(2, 3, 4)])
def test_check_array_accepts_good_arrays(x: Any) -> None:
    check_array("query", x)
    check_array("query", x, ndim=3, min_ndim=2, shape="(B, T, d_model)", floating=True)
    check_array("query", x, ndim=(2, 3))


def test_check_array_wrong_kind_names_argument_kind_and_shape() -> None:
    with pytest.raises(TypeError) as info:
        check_array("query", torch.zeros(2), kind=np.ndarray, shape="(B, T, d_model)")
    message = str(info.value)
    assert message.startswith("query ")
    assert "NumPy array" in message and "(B, T, d_model)" in message and "Tensor" in message
    with pytest.raises(TypeError, match=r"^mask must be a NumPy array or torch\.Tensor.*got list"):
        check_array("mask", [[True]])


def test_check_array_wrong_rank_names_expected_and_actual_shape() -> None:
    with pytest.raises(ValueError) as info:
        check_array("keys", np.zeros((2, 5)), ndim=3, shape="(B, T, d_model)")
    message = str(info.value)
    assert message.startswith("keys ")
    assert "3 dimensions" in message and "(B, T, d_model)" in message
    assert "got 2 dimensions" in message and "(2, 5)" in message
    with pytest.raises(ValueError, match=r"^x must have 2 or 3 dimensions.*got 1 dimensions"):
        check_array("x", torch.zeros(4), ndim=[2, 3])


def test_check_array_min_ndim_and_floating() -> None:
    with pytest.raises(ValueError, match=r"^scores must have at least 2 dimensions.*\(7,\)"):
        check_array("scores", np.zeros(7), min_ndim=2, shape="(..., T_q, T_k)")
    with pytest.raises(TypeError, match=r"^value must have a floating-point dtype; got int64"):
        check_array("value", np.zeros(3, dtype=np.int64), floating=True)
    with pytest.raises(TypeError, match=r"^value must have a floating-point dtype; got torch\.int"):
        check_array("value", torch.zeros(3, dtype=torch.int32), floating=True)
    check_array("value", torch.zeros(3, dtype=torch.float16), floating=True)


def test_check_instance_names_argument_and_both_types() -> None:
    check_instance("config", {"a": 1}, dict)
    check_instance("flag", True, bool)
    with pytest.raises(TypeError, match=r"^config must be a dict; got list$"):
        check_instance("config", [1], dict)
    with pytest.raises(TypeError, match=r"^x must be a Tensor; got ndarray$"):
        check_instance("x", np.zeros(2), torch.Tensor)


def test_check_dim() -> None:
    x = torch.zeros(2, 3, 8)
    check_dim("query", x, -1, 8, "(B, T, d_model)")
    with pytest.raises(ValueError) as info:
        check_dim("query", x, -1, 16, "(B, T, d_model)")
    message = str(info.value)
    assert message.startswith("query must have size 16 in dimension -1")
    assert "(B, T, d_model)" in message and "(2, 3, 8)" in message
    with pytest.raises(ValueError, match=r"^k must have size 2 in dimension 0; got shape \(3,\)$"):
        check_dim("k", np.zeros(3), 0, 2)


@pytest.mark.parametrize("value", [1, 7, np.int64(3)])
def test_check_positive_int_accepts(value: Any) -> None:
    check_positive_int("num_heads", value)


@pytest.mark.parametrize(("value", "error"), [
    (0, ValueError), (-4, ValueError), (np.int32(0), ValueError), (1.0, TypeError),
    ("8", TypeError), (True, TypeError), (None, TypeError),
])
def test_check_positive_int_rejects(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^num_heads must be a positive int; got .*" +
                       re.escape(str(value))):
        check_positive_int("num_heads", value)


@pytest.mark.parametrize("value", [0, 0.0, 0.1, 0.999, np.float32(0.5), np.int64(0)])
def test_check_fraction_accepts(value: Any) -> None:
    check_fraction("dropout", value)


def test_check_fraction_upper_bound() -> None:
    with pytest.raises(ValueError, match=r"^dropout must be in \[0, 1\); got 1$"):
        check_fraction("dropout", 1)
    check_fraction("label_smoothing", 1.0, include_one=True)
    with pytest.raises(ValueError, match=r"^p must be in \[0, 1\]; got 1.5$"):
        check_fraction("p", 1.5, include_one=True)


@pytest.mark.parametrize(("value", "error"), [
    (-0.1, ValueError), (float("nan"), ValueError), (float("inf"), ValueError),
    ("0.1", TypeError), (True, TypeError), (None, TypeError), (torch.tensor(0.1), TypeError),
])
def test_check_fraction_rejects(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"^dropout must be .*\[0, 1\)"):
        check_fraction("dropout", value)


def test_check_broadcastable() -> None:
    check_broadcastable("mask", (1, 1, 5), (2, 4, 5))
    check_broadcastable("mask", (4, 5), (2, 4, 5))
    check_broadcastable("mask", torch.Size([2, 1, 5]), torch.Size([2, 4, 5]))
    with pytest.raises(ValueError) as info:
        check_broadcastable("mask", (3, 5), (2, 4, 5), "(B, T_q, T_k)")
    message = str(info.value)
    assert message.startswith("mask must broadcast to (B, T_q, T_k) (2, 4, 5)")
    assert message.endswith("got shape (3, 5)")
    with pytest.raises(ValueError, match=r"^mask must broadcast to \(4,\) \(4,\); got shape"):
        check_broadcastable("mask", (1, 4), (4,))  # more dims than the target


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 4), max_size=4), st.lists(st.integers(1, 4), max_size=4))
def test_check_broadcastable_agrees_with_numpy(shape: list[int], target: list[int]) -> None:
    """Broadcastable exactly when NumPy broadcasts ``shape`` against ``target`` to ``target``."""
    try:
        numpy_ok = np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        numpy_ok = False
    if numpy_ok:
        check_broadcastable("mask", shape, target)
    else:
        with pytest.raises(ValueError, match="^mask must broadcast"):
            check_broadcastable("mask", shape, target)
