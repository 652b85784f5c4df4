"""A shape trace through every sub-module of a model, recorded by forward hooks.

A pre-hook on each sub-module records the call order and the input shapes; a forward hook records
the output shape. The rows come out in call order (a parent before its children), one per call;
containers that are never called themselves (``nn.ModuleList``) have no row.
"""

from __future__ import annotations

import inspect
from typing import Any

import pandas as pd
import torch
from torch import nn

from transformer_course.core.model import Transformer

COLUMNS = ("module", "type", "depth", "input shapes", "output shape")


def _describe(value: Any) -> str:
    """Shape(s) of a tensor, a sequence of tensors or None, as text like ``(2, 7, 32)``."""
    if isinstance(value, torch.Tensor):
        return str(tuple(int(s) for s in value.shape))
    if value is None:
        return "None"
    if isinstance(value, tuple | list):
        return ", ".join(_describe(v) for v in value)
    return type(value).__name__


def _inputs(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The tensor arguments of a call, named after the parameters of ``module.forward``.

    A single tensor argument is shown by its shape alone.
    """
    try:
        named = inspect.signature(module.forward).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # a signature we cannot bind: number the arguments
        named = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    tensors = {k: v for k, v in named.items() if isinstance(v, torch.Tensor)}
    if len(tensors) == 1:  # one input needs no name
        return _describe(next(iter(tensors.values())))
    return ", ".join(f"{k}={_describe(v)}" for k, v in tensors.items())


def shape_trace(model: Transformer, src: torch.Tensor, tgt: torch.Tensor,
                src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
                *, max_depth: int | None = None) -> pd.DataFrame:
    """Run ``model(src, tgt, ...)`` once without gradient and record every sub-module call.

    Args:
        model: a :class:`~transformer_course.core.model.Transformer`.
        src: (B, S) ids. tgt: (B, T) ids. src_mask, tgt_mask: as for ``model.forward``.
        max_depth: keep modules at most this many levels below the model (None: all); a layer
            of a stack, e.g. ``encoder.0``, counts as one level below the model.

    Returns:
        A DataFrame with columns module (dotted path), type, depth, input shapes (tensors only,
        masks included), output shape; one row per call, in call order.
    """
    rows: list[dict[str, Any]] = []
    handles = []

    def record(name: str, module: nn.Module) -> None:
        depth = sum(not part.isdigit() for part in name.split("."))  # "layers.0" is one level
        if max_depth is not None and depth > max_depth:
            return
        pending: list[dict[str, Any]] = []

        def pre_hook(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            row = {"module": name, "type": type(mod).__name__, "depth": depth,
                   "input shapes": _inputs(mod, args, kwargs), "output shape": ""}
            rows.append(row)
            pending.append(row)

        def hook(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any],
                 output: Any) -> None:
            pending.pop()["output shape"] = _describe(output)

        handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
        handles.append(module.register_forward_hook(hook, with_kwargs=True))

    for name, module in model.named_modules():
        if name:
            record(name, module)
    try:
        with torch.no_grad():
            model(src, tgt, src_mask, tgt_mask)
    finally:
        for handle in handles:
            handle.remove()
    return pd.DataFrame(rows, columns=list(COLUMNS))
