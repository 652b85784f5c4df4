"""Argument checks for the functions and classes a reader calls directly (the boundary).

Each raises ``TypeError`` (wrong kind) or ``ValueError`` (wrong value or shape), its message
starting with the argument's name. Shapes read as documentation: after the query has bound
``B`` and ``d_model``, ``shapes.tensor("key", key, "B T_k d_model")`` rejects any other."""

from __future__ import annotations

import contextvars
import functools
import math
from collections.abc import Callable, Collection
from numbers import Integral, Real
from typing import Any

import numpy as np
import torch

ArrayType = type[np.ndarray] | type[torch.Tensor]
Method = Callable[..., Any]
_WORDS = {"float": "floating-point", "int": "integer", "bool": "boolean",
          np.ndarray: "NumPy array", torch.Tensor: "torch.Tensor"}


def check_instance(name: str, value: Any, kind: type | tuple[type, ...]) -> None:
    """TypeError unless ``value`` is an instance of ``kind`` (a bool counts as a bool only)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"{name} must be {names}; got {type(value).__name__}")


def check_int(name: str, value: Any, low: int = 1, high: int | None = None) -> None:
    """An int (not a bool) in [low, high]; by default a positive int."""
    expected = f"an int in [{low}, {'inf' if high is None else high}]"
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be {expected}; got {type(value).__name__} {value!r}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {expected}; got {value}")


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                 low_open: bool = False, high_open: bool = False) -> None:
    """A finite real number (not a bool) between ``low`` and ``high`` (open ends excluded)."""
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    expected = f"a finite number in {interval}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be {expected}; got {type(value).__name__} {value!r}")
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    if not (math.isfinite(value) and above and below):
        raise ValueError(f"{name} must be {expected}; got {value}")


def check_choice(name: str, value: Any, choices: Collection[Any]) -> None:
    """ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}")


def _dtype_kind(x: np.ndarray | torch.Tensor) -> str:
    """'bool', 'float', 'int' or 'other' for an array's dtype."""
    if isinstance(x, torch.Tensor):
        return ("bool" if x.dtype == torch.bool else "float" if x.is_floating_point()
                else "other" if x.is_complex() else "int")
    return {"b": "bool", "f": "float", "i": "int", "u": "int"}.get(x.dtype.kind, "other")


class Shapes:
    """Named dimensions shared by the arguments of one call, bound by the first that has them
    (``Shapes(d_model=16)`` binds one in advance)."""

    def __init__(self, **sizes: int) -> None:
        self.sizes: dict[str, int] = dict(sizes)
        self.batch: tuple[int, ...] | None = None  # what "..." stands for, once bound

    def describe(self, spec: str) -> str:
        """``"B T d_model"`` as ``"(B=2, T, d_model=16)"``, with the sizes bound so far."""
        dims = (f"{d}={self.sizes[d]}" if d in self.sizes else d for d in spec.split())
        return f"({', '.join(dims)})"

    def tensor(self, name: str, x: Any, spec: str, dtype: str | torch.dtype | None = "float",
               kind: ArrayType = torch.Tensor) -> dict[str, int]:
        """Check ``x`` (a ``kind``) against ``spec`` (names, ``...`` first for any leading
        dimensions; no size 0) and ``dtype`` ("float", "int", "bool", None: any, or a module's
        torch dtype, any float under autocast); bind the sizes it fixes and return all."""
        if not isinstance(x, kind):
            raise TypeError(f"{name} must be a {_WORDS[kind]} of shape {self.describe(spec)}; "
                            f"got {type(x).__name__}")
        lead = spec.startswith("...")  # any leading dimensions
        named = spec.split()[lead:]
        shape = tuple(int(s) for s in x.shape)
        cut = len(shape) - len(named)
        fits = (cut >= 0 if lead else cut == 0) and 0 not in shape
        fits = fits and (not lead or self.batch is None or shape[:cut] == self.batch)
        sizes = dict(self.sizes)
        for d, size in zip(named, shape[max(cut, 0):], strict=False):
            fits = fits and sizes.setdefault(d, size) == size  # a repeated name must match too
        if not fits:
            raise ValueError(f"{name} must have shape {self.describe(spec)}; got {shape}")
        self.sizes = sizes
        if lead:
            self.batch = shape[:cut]
        if isinstance(dtype, torch.dtype):
            autocast = x.is_floating_point() and x.device.type != "meta" and \
                torch.is_autocast_enabled(x.device.type)
            if x.dtype != dtype and not autocast:
                raise TypeError(f"{name} must have dtype {dtype} (the module's); got {x.dtype}")
        elif dtype is not None and _dtype_kind(x) != dtype:
            raise TypeError(f"{name} must hold {_WORDS[dtype]} values; got dtype {x.dtype}")
        return dict(sizes)

    def mask(self, name: str, mask: Any, spec: str, kind: ArrayType = torch.Tensor) -> None:
        """A boolean mask (True = may attend), each dimension 1 or the bound size; with ``...``
        first it may have fewer dimensions (NumPy broadcasting), else all: a 2-D mask could mean
        (B, T_k) or (T_q, T_k), so the caller says which (``mask[:, None]`` or ``mask[None]``)."""
        if not isinstance(mask, kind):
            raise TypeError(f"{name} must be a boolean {_WORDS[kind]} of shape "
                            f"{self.describe(spec)}; got {type(mask).__name__}")
        lead = spec.startswith("...")  # any leading dimensions
        named = spec.split()[lead:]
        target = (*(self.batch or ()), *(self.sizes[d] for d in named))
        shape = tuple(int(s) for s in mask.shape)
        fits = len(shape) <= len(target) if lead else len(shape) == len(target)
        pairs = zip(shape[::-1], target[::-1], strict=False)
        if not fits or any(s not in (1, t) for s, t in pairs):
            raise ValueError(f"{name} must have shape {self.describe(spec)}, each dimension of "
                             f"size 1 or that size; got {shape}")
        if _dtype_kind(mask) != "bool":
            raise TypeError(f"{name} must be boolean (True = may attend); got {mask.dtype}")


def check_token_ids(name: str, tokens: Any, vocab_size: int | None, spec: str = "B T",
                    shapes: Shapes | None = None, max_len: int | None = None) -> dict[str, int]:
    """Integer ids in [0, vocab_size) (None: >= 0) of shape ``spec``, at most ``max_len`` long;
    returns the sizes ``shapes`` (a new one if None) has bound."""
    sizes = (shapes or Shapes()).tensor(name, tokens, spec, dtype="int")
    if max_len is not None and tokens.shape[-1] > max_len:
        raise ValueError(f"{name} must be at most max_len={max_len} long; got {tokens.shape}")
    if tokens.device.type != "meta":  # a meta tensor has no values
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or (vocab_size is not None and high >= vocab_size):
            raise ValueError(f"{name} must hold ids in [0, {vocab_size or 'inf'}); "
                             f"got ids from {low} to {high}")
    return sizes


def check_ids(high: int | None = None, **ids: Any) -> None:
    """Special token ids (``bos_id=1, eos_id=2, ...``): ints in [0, high], all different."""
    for name, value in ids.items():
        check_int(name, value, low=0, high=high)
        if list(ids.values()).count(value) > 1:
            raise ValueError(f"{name} must differ from the other special ids {ids}; got {value}")


# The checks of the modules' entry points, run by their ``@checked_by`` lines (the modules are
# passed in, so this module imports none of them).

def check_attention_arguments(module: Any, query: torch.Tensor,
                              key: torch.Tensor, value: torch.Tensor,
                              mask: torch.Tensor | None = None,
                              need_weights: bool = False) -> None:
    """The checks of :meth:`MultiHeadAttention.forward`: shapes, the module's dtype, the mask."""
    shapes, dtype = Shapes(d_model=module.d_model), module.w_q.weight.dtype
    shapes.tensor("query", query, "B T_q d_model", dtype=dtype)
    shapes.tensor("key", key, "B T_k d_model", dtype=dtype)
    shapes.tensor("value", value, "B T_k d_model", dtype=dtype)
    if mask is not None:
        shapes.mask("mask", mask, "B T_q T_k")
    check_instance("need_weights", need_weights, bool)


def check_encode_arguments(model: Any, src: torch.Tensor,
                           src_mask: torch.Tensor | None = None) -> None:
    """The checks of :meth:`Transformer.encode`: token ids in range, a mask that fits."""
    shapes = Shapes()
    check_token_ids("src", src, model.config.src_vocab_size, "B S", shapes, model.config.max_len)
    if src_mask is not None:
        shapes.mask("src_mask", src_mask, "B S S")


def check_decode_arguments(model: Any, tgt: torch.Tensor, memory: torch.Tensor,
                           src_mask: torch.Tensor | None = None,
                           tgt_mask: torch.Tensor | None = None) -> None:
    """The checks of :meth:`Transformer.decode`: the memory's shape and the model's dtype, token
    ids in range, masks that fit."""
    shapes = Shapes(d_model=model.config.d_model)  # memory first: its B is src's
    shapes.tensor("memory", memory, "B S d_model", dtype=model.output_projection.weight.dtype)
    check_token_ids("tgt", tgt, model.config.tgt_vocab_size, "B T", shapes, model.config.max_len)
    for name, mask, spec in (("src_mask", src_mask, "B T S"), ("tgt_mask", tgt_mask, "B T T")):
        if mask is not None:
            shapes.mask(name, mask, spec)


def checked_by(check: Callable[..., None]) -> Callable[[Method], Method]:
    """Decorate a method so that ``check(self, *args, **kwargs)`` runs first and raises on a bad
    call; the method's own body then reads as the math, without the checks.

    Only the outermost checked call is checked: the reader's. A checked module called while
    another checked call runs (the attention inside ``Transformer.encode``) trusts its caller,
    so a training step checks its batch once, not once per layer."""
    def decorate(method: Method) -> Method:
        @functools.wraps(method)
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _INSIDE_A_CHECKED_CALL.get():
                return method(self, *args, **kwargs)
            check(self, *args, **kwargs)
            inside = _INSIDE_A_CHECKED_CALL.set(True)
            try:
                return method(self, *args, **kwargs)
            finally:
                _INSIDE_A_CHECKED_CALL.reset(inside)
        return checked
    return decorate


_INSIDE_A_CHECKED_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "inside_a_checked_call", default=False)
