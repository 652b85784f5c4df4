"""Argument checks for the public entry points of the package.

Each check raises ``TypeError`` (wrong kind of object) or ``ValueError`` (wrong shape or value)
with a message that names the argument, what was expected and what arrived.

Shapes are checked declaratively: a :class:`Shapes` binds named dimensions across the arguments
of one call, so ``shapes.tensor("key", key, "B T_k d_model")`` after the query has fixed ``B`` and
``d_model`` reads as the documentation of the shape and rejects any other::

    key must be a floating-point torch.Tensor of shape (B=2, T_k, d_model=16); got (3, 5, 16)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import torch

ArrayKind = type[np.ndarray] | type[torch.Tensor]
DTYPES = ("float", "int", "bool", None)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in x.shape)


@functools.lru_cache(maxsize=256)
def _parse_spec(spec: str) -> tuple[bool, tuple[str, ...]]:
    """``"... T_q d_k"`` as (True, ("T_q", "d_k")): whether leading dimensions are free, and
    the named ones."""
    dims = tuple(spec.split())
    return (True, dims[1:]) if dims and dims[0] == "..." else (False, dims)


def _a(words: str) -> str:
    """``words`` with its indefinite article: "an integer ...", "a boolean ..."."""
    return f"{'an' if words[:1].lower() in tuple('aeiou') else 'a'} {words}"


def _kind_words(kinds: tuple[ArrayKind, ...]) -> str:
    return " or ".join("NumPy array" if k is np.ndarray else "torch.Tensor" for k in kinds)


def _dtype_kind(x: np.ndarray | torch.Tensor) -> str:
    """'float', 'int', 'bool' or 'other' for an array's dtype."""
    if isinstance(x, np.ndarray):
        if x.dtype == np.bool_:
            return "bool"
        return ("float" if np.issubdtype(x.dtype, np.floating)
                else "int" if np.issubdtype(x.dtype, np.integer) else "other")
    if x.dtype == torch.bool:
        return "bool"
    if x.is_floating_point():
        return "float"
    return "other" if x.is_complex() else "int"


_DTYPE_WORDS = {"float": "floating-point", "int": "integer", "bool": "boolean"}


def check_dtype(name: str, x: np.ndarray | torch.Tensor, dtype: str | torch.dtype | None,
                ) -> None:
    """Check that ``x`` has a floating-point, integer or boolean dtype (``dtype`` None: any).

    A torch dtype (a module's parameters') asks for exactly that dtype, or for any floating-point
    one while autocast is on for ``x``'s device (autocast casts inside the module).
    """
    if isinstance(dtype, torch.dtype):
        check_dtype(name, x, "float")
        if x.dtype != dtype and not torch.is_autocast_enabled(x.device.type):
            raise TypeError(f"{name} must have dtype {dtype} (the module's); got {x.dtype}")
    elif dtype is not None and _dtype_kind(x) != dtype:
        raise TypeError(f"{name} must have a{'n' if dtype == 'int' else ''} "
                        f"{_DTYPE_WORDS[dtype]} dtype; got {x.dtype}")


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
        ndim: allowed number(s) of dimensions. min_ndim: smallest allowed number of dimensions.
        shape: the expected shape in words, e.g. ``"(B, T, d_model)"``, quoted in the error.
        floating: require a floating-point dtype.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(x, kinds):
        raise TypeError(f"{name} must be a {_kind_words(kinds)} of shape {shape or '(...)'}; "
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
        check_dtype(name, x, "float")


class Shapes:
    """Named dimensions shared by the arguments of one call, bound by the first that has them.

    Args:
        **sizes: dimensions known in advance, e.g. ``d_model=16``.
    """

    def __init__(self, **sizes: int) -> None:
        self.sizes: dict[str, int] = dict(sizes)
        self.batch: tuple[int, ...] | None = None  # what "..." stands for, once bound

    def describe(self, spec: str) -> str:
        """``"B T d_model"`` as ``"(B=2, T, d_model=16)"``, with the sizes bound so far."""
        parts = [f"{d}={self.sizes[d]}" if d in self.sizes else d for d in spec.split()]
        return f"({', '.join(parts)})"

    def tensor(self, name: str, x: Any, spec: str, *, dtype: str | torch.dtype | None = "float",
               kind: ArrayKind | tuple[ArrayKind, ...] = torch.Tensor) -> dict[str, int]:
        """Check ``x`` against ``spec`` (dimension names, ``...`` for any leading dimensions),
        bind the names it fixes, and return every size bound so far.

        Args:
            dtype: "float", "int", "bool", None (any) or a torch dtype (see :func:`check_dtype`).
            kind: the allowed array type(s).
        """
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(x, kinds):
            words = _DTYPE_WORDS["float"] if isinstance(dtype, torch.dtype) else \
                _DTYPE_WORDS.get(dtype)
            what = f"{words + ' ' if words else ''}{_kind_words(kinds)}"
            raise TypeError(f"{name} must be {_a(what)} of shape {self.describe(spec)}; "
                            f"got {type(x).__name__}")
        lead, named = _parse_spec(spec)
        shape = tuple(x.shape)
        lead_dims = shape[:len(shape) - len(named)]
        own = shape[len(shape) - len(named):]
        fits = (len(shape) >= len(named) if lead else len(shape) == len(named)) \
            and 0 not in shape and (not lead or self.batch is None or lead_dims == self.batch)
        sizes, before = self.sizes, dict(self.sizes)
        for d, size in zip(named, own, strict=False):
            if sizes.get(d, size) != size:
                fits = False
                break
            sizes[d] = size  # binds a repeated name too, so its second size must match it
        if not fits:
            self.sizes = before
            self._shape_error(name, spec, _shape(x))
        check_dtype(name, x, dtype)
        if lead:
            self.batch = lead_dims
        return dict(sizes)

    def _shape_error(self, name: str, spec: str, shape: tuple[int, ...]) -> None:
        """Raise the ValueError that says how ``shape`` fails ``spec``."""
        lead, named = _parse_spec(spec)
        bound = {d: v for d, v in self.sizes.items()}
        expected = self.describe(spec)
        if len(shape) < len(named) or (not lead and len(shape) != len(named)):
            rank = f"at least {len(named)}" if lead else str(len(named))
            raise ValueError(f"{name} must have {rank} dimensions, shape {expected}; got "
                             f"{len(shape)} dimensions, shape {shape}")
        if 0 in shape:
            raise ValueError(f"{name} must have a positive size in every dimension, shape "
                             f"{expected}; got shape {shape}")
        own = shape[len(shape) - len(named):]
        clash = [d for d, size in zip(named, own, strict=True) if bound.get(d, size) != size]
        repeats = [d for d in dict.fromkeys(named)
                   if len({s for n, s in zip(named, own, strict=True) if n == d}) > 1]
        batch_clash = lead and self.batch is not None and shape[:len(shape) - len(named)] != \
            self.batch
        bound_text = f" with ... = {self.batch}" if batch_clash else ""
        names = list(dict.fromkeys(clash + repeats))
        which = ", ".join(names) or "..."
        verb = "do" if len(names) > 1 else "does"
        raise ValueError(f"{name} must have shape {expected}{bound_text}; got shape {shape} "
                         f"({which} {verb} not match)")

    def mask(self, name: str, mask: Any, spec: str, *, example: str = "",
             kind: ArrayKind | tuple[ArrayKind, ...] = torch.Tensor) -> None:
        """Check a boolean mask whose dimensions are each 1 or the named size.

        With ``...`` first in ``spec`` the mask broadcasts as in NumPy (fewer dimensions allowed);
        without it the mask must have exactly ``len(spec)`` dimensions: a mask with fewer is
        ambiguous (is a (B, T_k) padding mask, or a (T_q, T_k) mask, meant?), so it is refused.

        Args:
            example: shapes that work, quoted in the error, e.g. "(B, 1, S) for padding".
        """
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(mask, kinds):
            raise TypeError(f"{name} must be a boolean {_kind_words(kinds)} of shape "
                            f"{self.describe(spec)}; got {type(mask).__name__}")
        dims = spec.split()
        lead = dims[0] == "..."
        named = dims[1:] if lead else dims
        target = (*(self.batch or ()), *(self.sizes[d] for d in named))
        shape = _shape(mask)
        hint = f" ({example})" if example else ""
        if lead:
            fits = len(shape) <= len(target) and all(
                s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))
            if not fits:
                raise ValueError(f"{name} must broadcast to {self.describe(spec)}{hint}; "
                                 f"got shape {shape}")
        elif len(shape) != len(target) or any(s not in (1, t) for s, t in zip(shape, target,
                                                                                 strict=False)):
            ambiguous = ("; a mask with fewer dimensions is ambiguous: (B, T_k) or (T_q, T_k)? "
                         "Index it as mask[:, None] or mask[None]") if len(shape) < len(target) \
                else ""
            raise ValueError(f"{name} must have {len(target)} dimensions "
                             f"{self.describe(spec)}, each of size 1 or the full size{hint}; "
                             f"got shape {shape}{ambiguous}")
        if _dtype_kind(mask) != "bool":
            raise TypeError(f"{name} must be boolean (True = may attend); got dtype {mask.dtype}")


def check_token_ids(name: str, tokens: Any, vocab_size: int | None, spec: str = "B T",
                    shapes: Shapes | None = None, *, max_len: int | None = None,
                    ) -> dict[str, int]:
    """Check integer token ids in [0, vocab_size) of shape ``spec``, at most ``max_len`` long
    (and ``vocab_size`` itself, a positive int; None: any non-negative id).

    Returns the sizes bound by ``shapes`` (a new :class:`Shapes` if None).
    """
    if vocab_size is not None:
        check_int("vocab_size", vocab_size)
    shapes = Shapes() if shapes is None else shapes
    sizes = shapes.tensor(name, tokens, spec, dtype="int")
    if max_len is not None and tokens.shape[-1] > max_len:
        raise ValueError(f"{name} must be at most max_len={max_len} tokens long, shape "
                         f"{shapes.describe(spec)}; got shape {tuple(tokens.shape)}")
    if tokens.device.type != "meta":
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or (vocab_size is not None and high >= vocab_size):
            ids = (f"token ids in [0, {vocab_size})" if vocab_size is not None
                   else "non-negative token ids")
            raise ValueError(f"{name} must hold {ids}; got ids from {low} to {high}")
    return sizes


def check_ids(*, high: int | None = None, **ids: Any) -> None:
    """Check special token ids (``bos_id=1, eos_id=2, ...``): ints in [0, high], all different."""
    for name, value in ids.items():
        check_int(name, value, low=0, high=high)
    for i, (a, value) in enumerate(ids.items()):
        same = [b for b in list(ids)[i + 1:] if ids[b] == value]
        if same:
            raise ValueError(f"{a} and {same[0]} must differ; got {a}={value}, "
                             f"{same[0]}={ids[same[0]]}")


def check_device(name: str, device: Any) -> None:
    """Check a device argument: None, a torch.device or a string torch can parse."""
    if device is not None and not isinstance(device, str | torch.device):
        raise TypeError(f"{name} must be a torch.device, a device string such as 'cpu', or None; "
                        f"got {type(device).__name__} {device!r}")
    if isinstance(device, str):
        try:
            torch.device(device)
        except RuntimeError as error:
            raise ValueError(f"{name} must be a device torch knows, such as 'cpu' or 'cuda:0'; "
                             f"got {device!r}") from error


def check_labels(name: str, labels: Any, vocab_size: int, pad_id: int, shapes: Shapes,
                 spec: str = "B T") -> None:
    """Check integer labels of shape ``spec``: ``pad_id`` (ignored) or ids in [0, vocab_size),
    with at least one label that is not padding (a mean over no labels is NaN)."""
    check_int("pad_id", pad_id, low=0)
    shapes.tensor(name, labels, spec, dtype="int")
    real = labels[labels != pad_id]
    if real.numel() == 0:
        raise ValueError(f"{name} must hold at least one label other than pad_id={pad_id}; "
                         f"got only padding")
    check_token_ids(f"{name} (other than padding)", real, vocab_size, "N")


def check_instance(name: str, value: Any, kind: type | tuple[type, ...], what: str = "") -> None:
    """Check that ``value`` is an instance of ``kind``; the TypeError names both types.

    Args:
        what: the expected kind in words, when the class name alone does not say it.
    """
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float)):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{name} must be {_a(what or names)}; got {type(value).__name__}")


def check_int(name: str, value: Any, *, low: int = 1, high: int | None = None) -> None:
    """Check that ``value`` is an int (not a bool) in [low, high]."""
    words = (f"an int in [{low}, {high}]" if high is not None else "a positive int" if low == 1
             else "a non-negative int" if low == 0 else f"an int >= {low}")
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be {words}; got {type(value).__name__} {value!r}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {words}; got {value}")


def check_positive_ints(**values: Any) -> None:
    """Check that each keyword argument is a positive int, e.g. ``check_positive_ints(T=T)``."""
    for name, value in values.items():
        check_int(name, value, low=1)


def check_positive_int(name: str, value: Any) -> None:
    """Check that ``value`` is an int (not a bool) greater than zero."""
    check_int(name, value, low=1)


def check_number(name: str, value: Any, *, low: float = -math.inf, high: float = math.inf,
                 low_open: bool = False, high_open: bool = False, words: str = "") -> None:
    """Check that ``value`` is a finite real number (not a bool) in the given interval.

    Args:
        low, high: the bounds; ``low_open``/``high_open`` exclude them.
        words: the expected value in words, e.g. "a positive number"; default: the interval.
    """
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    words = words or f"a finite number in {interval}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be {words}; got {type(value).__name__} {value!r}")
    inside = (value > low if low_open else value >= low) and \
        (value < high if high_open else value <= high)
    if not (math.isfinite(value) and inside):
        raise ValueError(f"{name} must be {words}; got {value}")


def check_positive(name: str, value: Any) -> None:
    """Check that ``value`` is a finite real number greater than zero."""
    check_number(name, value, low=0, low_open=True, words="a positive finite number")


def check_fraction(name: str, value: Any, *, include_one: bool = False) -> None:
    """Check that ``value`` is a real number in [0, 1) (or [0, 1] with ``include_one``)."""
    bracket = "]" if include_one else ")"
    check_number(name, value, low=0, high=1, high_open=not include_one,
                 words=f"a number in [0, 1{bracket}")


def check_dim(name: str, x: Any, axis: int, expected: int, shape: str = "") -> None:
    """Check that ``x.shape[axis] == expected``."""
    actual = int(x.shape[axis])
    if actual != expected:
        raise ValueError(f"{name} must have size {expected} in dimension {axis}"
                         f"{', shape ' + shape if shape else ''}; got shape {_shape(x)}")


def check_broadcastable(name: str, shape: Sequence[int], target: Sequence[int],
                        expected: str = "") -> None:
    """Check that an array of ``shape`` broadcasts to ``target`` without changing it."""
    shape, target = tuple(int(s) for s in shape), tuple(int(s) for s in target)
    ok = len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))
    if not ok:
        raise ValueError(f"{name} must broadcast to {expected or target} {target}; "
                         f"got shape {shape}")
