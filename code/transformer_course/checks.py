"""Argument checks for the package's public functions.

Each check raises ``TypeError`` (wrong kind of object) or ``ValueError`` (wrong shape or value)
with a message that names the argument, what was expected and what arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

ArrayKind = type[np.ndarray] | type[torch.Tensor]


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in x.shape)


def check_array(
    name: str,
    x: Any,
    *,
    kind: ArrayKind | tuple[ArrayKind, ...] = (np.ndarray, torch.Tensor),
    ndim: int | Sequence[int] | None = None,
    min_ndim: int | None = None,
    shape: str = "",
    floating: bool = False,
) -> None:
    """Check that ``x`` is an array of an allowed kind and rank.

    Args:
        name: the argument's name, quoted in the error.
        kind: allowed array types (NumPy array, torch tensor or both).
        ndim: allowed number(s) of dimensions.
        min_ndim: smallest allowed number of dimensions.
        shape: the expected shape in words, e.g. ``"(B, T, d_model)"``, quoted in the error.
        floating: require a floating-point dtype.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    want = " or ".join("NumPy array" if k is np.ndarray else "torch.Tensor" for k in kinds)
    if not isinstance(x, kinds):
        raise TypeError(f"{name} must be a {want} of shape {shape or '(...)'}; "
                        f"got {type(x).__name__}")
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim) if ndim is not None else None
    if allowed is not None and x.ndim not in allowed:
        dims = " or ".join(str(n) for n in allowed)
        raise ValueError(f"{name} must have {dims} dimensions, shape {shape or '(...)'}; "
                         f"got {x.ndim} dimensions, shape {_shape(x)}")
    if min_ndim is not None and x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, shape "
                         f"{shape or '(...)'}; got {x.ndim} dimensions, shape {_shape(x)}")
    if floating:
        is_float = (np.issubdtype(x.dtype, np.floating) if isinstance(x, np.ndarray)
                    else x.is_floating_point())
        if not is_float:
            raise TypeError(f"{name} must have a floating-point dtype; got {x.dtype}")


def check_instance(name: str, value: Any, kind: type) -> None:
    """Check that ``value`` is an instance of ``kind``; the TypeError names both types."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}; got {type(value).__name__}")


def check_dim(name: str, x: Any, axis: int, expected: int, shape: str = "") -> None:
    """Check that ``x.shape[axis] == expected``."""
    actual = int(x.shape[axis])
    if actual != expected:
        raise ValueError(f"{name} must have size {expected} in dimension {axis}"
                         f"{', shape ' + shape if shape else ''}; got shape {_shape(x)}")


def check_positive_int(name: str, value: Any) -> None:
    """Check that ``value`` is an int (not a bool) greater than zero."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be a positive int; got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int; got {value}")


def check_fraction(name: str, value: Any, *, include_one: bool = False) -> None:
    """Check that ``value`` is a real number in [0, 1) (or [0, 1] with ``include_one``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a number in [0, 1{']' if include_one else ')'}; "
                        f"got {type(value).__name__} {value!r}")
    upper_ok = value <= 1 if include_one else value < 1
    if not (value >= 0 and upper_ok):
        raise ValueError(f"{name} must be in [0, 1{']' if include_one else ')'}; got {value}")


def check_broadcastable(name: str, shape: Sequence[int], target: Sequence[int],
                        expected: str = "") -> None:
    """Check that an array of ``shape`` broadcasts to ``target`` without changing it."""
    shape, target = tuple(int(s) for s in shape), tuple(int(s) for s in target)
    ok = len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))
    if not ok:
        raise ValueError(f"{name} must broadcast to {expected or target} {target}; "
                         f"got shape {shape}")
