"""Argument checks: good input passes; errors name the argument, the expectation and the input."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.checks import (
    Shapes,
    check_array,
    check_broadcastable,
    check_dim,
    check_fraction,
    check_instance,
    check_int,
    check_number,
    check_positive,
    check_positive_int,
    check_token_ids,
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
    with pytest.raises(TypeError, match=r"^final_norm must be a bool or None; got int$"):
        check_instance("final_norm", 1, (bool, type(None)), "bool or None")
    with pytest.raises(TypeError, match=r"^batches must be an iterator of Batch; got list$"):
        check_instance("batches", [], Iterator, "iterator of Batch")
    with pytest.raises(TypeError, match=r"^n must be an int; got bool$"):
        check_instance("n", True, int)  # a bool is not accepted as a number


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
    with pytest.raises(ValueError, match=r"^dropout must be a number in \[0, 1\); got 1$"):
        check_fraction("dropout", 1)
    check_fraction("label_smoothing", 1.0, include_one=True)
    with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\]; got 1.5$"):
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


# --- Shapes: named dimensions bound across the arguments of one call ---------------------------


def test_shapes_binds_names_across_arguments() -> None:
    shapes = Shapes(d_model=8)
    assert shapes.tensor("query", torch.zeros(2, 3, 8), "B T_q d_model") == \
        {"d_model": 8, "B": 2, "T_q": 3}
    assert shapes.describe("B T_k d_model") == "(B=2, T_k, d_model=8)"
    assert shapes.tensor("key", torch.zeros(2, 5, 8), "B T_k d_model")["T_k"] == 5
    with pytest.raises(ValueError, match=r"^value must have shape \(B=2, T_k=5, d_model=8\); got "
                                         r"shape \(2, 4, 8\) \(T_k does not match\)$"):
        shapes.tensor("value", torch.zeros(2, 4, 8), "B T_k d_model")


@pytest.mark.parametrize(("shape", "which"), [
    ((3, 5, 8), "B does not match"), ((2, 5, 4), "d_model does not match"),
    ((3, 5, 4), "B, d_model do not match"),
])
def test_shapes_names_every_dimension_that_disagrees(shape: tuple[int, ...], which: str) -> None:
    shapes = Shapes(d_model=8)
    shapes.tensor("query", torch.zeros(2, 3, 8), "B T_q d_model")
    with pytest.raises(ValueError, match=r"^key must have shape \(B=2, T_k, d_model=8\); got shape "
                       + re.escape(f"{shape} ({which})") + "$"):
        shapes.tensor("key", torch.zeros(shape), "B T_k d_model")


def test_shapes_rank_kind_dtype_and_empty_dimensions() -> None:
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, shape \(B, T, d_model\); got "
                                         r"2 dimensions, shape \(5, 8\)$"):
        Shapes().tensor("x", torch.zeros(5, 8), "B T d_model")
    with pytest.raises(ValueError, match=r"^x must have at least 2 dimensions, shape \(\.\.\., T, "
                                         r"d\); got 1 dimensions, shape \(4,\)$"):
        Shapes().tensor("x", np.zeros(4), "... T d", kind=np.ndarray)
    with pytest.raises(TypeError, match=r"^x must be a floating-point torch\.Tensor of shape "
                                        r"\(B, T\); got ndarray$"):
        Shapes().tensor("x", np.zeros((2, 3)), "B T")
    with pytest.raises(TypeError, match=r"^lengths must be an integer torch\.Tensor of shape "
                                        r"\(B\); got list$"):
        Shapes().tensor("lengths", [1, 2], "B", dtype="int")
    with pytest.raises(TypeError, match=r"^tokens must have an integer dtype; got torch\.float32$"):
        Shapes().tensor("tokens", torch.zeros(2, 3), "B T", dtype="int")
    with pytest.raises(ValueError, match=r"^tokens must have a positive size in every dimension, "
                                         r"shape \(B, T\); got shape \(2, 0\)$"):
        Shapes().tensor("tokens", torch.zeros(2, 0, dtype=torch.long), "B T", dtype="int")
    with pytest.raises(ValueError, match=r"^x must have shape \(n, n\); got shape \(2, 3\) "
                                         r"\(n does not match\)$"):
        Shapes().tensor("x", torch.zeros(2, 3), "n n")  # one name, two sizes
    shapes = Shapes()
    shapes.tensor("q", np.zeros((2, 3, 4)), "... T_q d_k", kind=np.ndarray)
    with pytest.raises(ValueError, match=r"^k must have shape \(\.\.\., T_k, d_k=4\) with "
                                         r"\.\.\. = \(2,\); got shape \(3, 5, 4\) "
                                         r"\(\.\.\. does not match\)$"):
        shapes.tensor("k", np.zeros((3, 5, 4)), "... T_k d_k", kind=np.ndarray)


def test_shapes_mask_needs_every_dimension_unless_it_broadcasts() -> None:
    shapes = Shapes(d_model=8)
    shapes.tensor("query", torch.zeros(2, 3, 8), "B T_q d_model")
    shapes.tensor("key", torch.zeros(2, 5, 8), "B T_k d_model")
    for good in ((2, 3, 5), (2, 1, 5), (1, 3, 5), (1, 1, 1)):
        shapes.mask("mask", torch.ones(good, dtype=torch.bool), "B T_q T_k")
    with pytest.raises(ValueError, match=r"^mask must have 3 dimensions \(B=2, T_q=3, T_k=5\), "
                                         r"each of size 1 or the full size; got shape \(3, 5\); "
                                         r"a mask with fewer dimensions is ambiguous"):
        shapes.mask("mask", torch.ones(3, 5, dtype=torch.bool), "B T_q T_k")
    with pytest.raises(ValueError, match=r"^mask must have 3 dimensions .*; got shape "
                                         r"\(2, 3, 4\)$"):
        shapes.mask("mask", torch.ones(2, 3, 4, dtype=torch.bool), "B T_q T_k")
    with pytest.raises(TypeError, match=r"^mask must be boolean \(True = may attend\); got dtype "
                                        r"torch\.float32$"):
        shapes.mask("mask", torch.ones(2, 1, 5), "B T_q T_k")
    with pytest.raises(TypeError, match=r"^mask must be a boolean torch\.Tensor of shape "
                                        r"\(B=2, T_q=3, T_k=5\); got list$"):
        shapes.mask("mask", [[True]], "B T_q T_k")
    # With "..." first, a mask broadcasts by NumPy's rules: fewer dimensions are allowed.
    loose = Shapes()
    loose.tensor("scores", torch.zeros(2, 3, 5), "... T_q T_k")
    loose.mask("mask", torch.ones(3, 5, dtype=torch.bool), "... T_q T_k")
    with pytest.raises(ValueError, match=r"^mask must broadcast to \(\.\.\., T_q=3, T_k=5\); got "
                                         r"shape \(4, 5\)$"):
        loose.mask("mask", torch.ones(4, 5, dtype=torch.bool), "... T_q T_k")


# --- Scalars --------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "value", "error", "message"), [
    ({}, 0, ValueError, "step must be a positive int; got 0"),
    ({}, True, TypeError, "step must be a positive int; got bool True"),
    ({}, 2.0, TypeError, "step must be a positive int; got float 2.0"),
    ({"low": 0}, -1, ValueError, "step must be a non-negative int; got -1"),
    ({"low": 3}, 2, ValueError, "step must be an int >= 3; got 2"),
    ({"low": -2, "high": 1}, 5, ValueError, "step must be an int in [-2, 1]; got 5"),
])
def test_check_int(kwargs: dict, value: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        check_int("step", value, **kwargs)


def test_check_int_accepts_the_bounds() -> None:
    check_int("axis", -2, low=-2, high=1)
    check_int("axis", 1, low=-2, high=1)
    check_int("seed", np.int64(0), low=0)


@pytest.mark.parametrize(("kwargs", "value", "error", "message"), [
    ({"low": 0}, -1.0, ValueError, "alpha must be a finite number in [0, inf]; got -1.0"),
    ({"low": 0}, math.nan, ValueError, "alpha must be a finite number in [0, inf]; got nan"),
    ({"low": 0, "high": 1, "low_open": True, "high_open": True}, 1.0, ValueError,
     "alpha must be a finite number in (0, 1); got 1.0"),
    ({"low": 0, "high": 1, "low_open": True, "high_open": True}, 0, ValueError,
     "alpha must be a finite number in (0, 1); got 0"),
    ({}, "0.5", TypeError, "alpha must be a finite number in [-inf, inf]; got str '0.5'"),
    ({}, False, TypeError, "alpha must be a finite number in [-inf, inf]; got bool False"),
    ({"words": "a positive finite number", "low": 0, "low_open": True}, math.inf, ValueError,
     "alpha must be a positive finite number; got inf"),
])
def test_check_number(kwargs: dict, value: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        check_number("alpha", value, **kwargs)


def test_check_positive() -> None:
    check_positive("scale", 1e-12)
    check_positive("scale", np.float32(2.0))
    for bad in (0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^scale must be a positive finite number; got "):
            check_positive("scale", bad)
    with pytest.raises(TypeError, match=r"^scale must be a positive finite number; got str '1'$"):
        check_positive("scale", "1")


def test_check_token_ids() -> None:
    assert check_token_ids("src", torch.tensor([[1, 4], [0, 2]]), 5) == {"B": 2, "T": 2}
    with pytest.raises(ValueError, match=r"^src must hold token ids in \[0, 5\); got ids from 1 "
                                         r"to 5$"):
        check_token_ids("src", torch.tensor([[1, 5]]), 5)
    with pytest.raises(ValueError, match=r"^src must hold token ids in \[0, 6\); got ids from -1 "):
        check_token_ids("src", torch.tensor([[-1, 5]]), 6)
    with pytest.raises(ValueError, match=r"^src must be at most max_len=1 tokens long, shape "
                                         r"\(B=1, T=2\); got shape \(1, 2\)$"):
        check_token_ids("src", torch.tensor([[1, 5]]), 6, max_len=1)
    with pytest.raises(TypeError, match=r"^src must have an integer dtype; got torch\.float32$"):
        check_token_ids("src", torch.tensor([[1.0, 5.0]]), 6)
    shapes = Shapes()
    check_token_ids("src", torch.ones(2, 3, dtype=torch.long), 5, "B S", shapes)
    with pytest.raises(ValueError, match=r"^tgt must have shape \(B=2, T\); got shape \(3, 4\) "
                                         r"\(B does not match\)$"):
        check_token_ids("tgt", torch.ones(3, 4, dtype=torch.long), 5, "B T", shapes)
