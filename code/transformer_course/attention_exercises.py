"""Checks for the coding exercises of chapter 2: call one on your function, read what fails.

Each ``check_*`` function runs the reader's function on a handful of cases, compares it with the
package's reference and raises ``AssertionError`` naming the first case that disagrees. It returns
the number of cases passed, so a solution cell can show that the check ran.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .attention import scaled_dot_product_attention_numpy, softmax


def _check_callable(fn: object) -> None:
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")


def _compare(case: str, got: object, want: np.ndarray, atol: float) -> None:
    if isinstance(got, torch.Tensor):
        got = got.detach().cpu().numpy()
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"case '{case}': expected a NumPy array of shape {want.shape}; "
                             f"got {type(got).__name__}")
    if got.shape != want.shape:
        raise AssertionError(f"case '{case}': expected shape {want.shape}; got {got.shape}")
    if not np.all(np.isfinite(got)):
        raise AssertionError(f"case '{case}': the result holds NaN or inf: {got}")
    err = float(np.max(np.abs(got - want)))
    if err > atol:
        raise AssertionError(f"case '{case}': largest difference from the reference is {err:.3g} "
                             f"(allowed {atol:g});\nexpected\n{want}\ngot\n{got}")


def check_softmax(fn: Callable[[np.ndarray], np.ndarray]) -> int:
    """Check a softmax over the last axis: values, large logits, -inf entries, all -inf rows.

    Args:
        fn: takes x (..., n) float64 and returns softmax(x) over the last axis, same shape.

    Returns:
        the number of cases passed.
    """
    _check_callable(fn)
    rng = np.random.default_rng(2)
    cases = {
        "random logits": rng.standard_normal((3, 5)),
        "large logits (1000)": np.array([[1000.0, 999.0, 998.0]]),
        "very negative logits (-1000)": np.array([[-1000.0, -1001.0, -1002.0]]),
        "some -inf entries": np.array([[0.5, -np.inf, 1.5, -np.inf]]),
        "a row of only -inf (must give zeros)": np.array([[-np.inf, -np.inf], [0.0, 0.0]]),
        "extra batch dimensions": rng.standard_normal((2, 3, 4)),
    }
    for case, x in cases.items():
        with np.errstate(all="ignore"):
            got = fn(x.copy())
        _compare(case, got, softmax(x), atol=1e-12)
    return len(cases)


def check_attention(fn: Callable[..., np.ndarray]) -> int:
    """Check a NumPy scaled dot-product attention against the package's reference.

    Args:
        fn: ``fn(q, k, v, mask=None)`` with q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v)
            float64 and mask boolean broadcastable to (..., T_q, T_k), True = may attend; returns
            the output (..., T_q, d_v). A query allowed to attend to nothing must output zeros.

    Returns:
        the number of cases passed.
    """
    _check_callable(fn)
    rng = np.random.default_rng(3)

    def qkv(batch: tuple[int, ...], T_q: int, T_k: int, d_k: int, d_v: int, size: float = 1.0):
        return (size * rng.standard_normal((*batch, T_q, d_k)),
                size * rng.standard_normal((*batch, T_k, d_k)),
                rng.standard_normal((*batch, T_k, d_v)))

    padding = np.array([True, True, True, False, False])[None, None, :]  # (1, 1, T_k)
    causal = np.tril(np.ones((4, 4), dtype=bool))  # (T, T)
    empty_row = np.ones((3, 5), dtype=bool)
    empty_row[1] = False  # query 1 may attend to nothing
    cases = {
        "no mask, one sequence": (qkv((), 3, 3, 4, 4), None),
        "T_q != T_k and d_v != d_k": (qkv((2,), 3, 5, 4, 6), None),
        "extra batch dimensions": (qkv((2, 3), 4, 4, 8, 2), None),
        "padding mask": (qkv((2,), 3, 5, 4, 4), padding),
        "causal mask": (qkv((2,), 4, 4, 4, 4), causal),
        "large scores (needs a stable softmax)": (qkv((1,), 3, 5, 4, 4, size=40.0), None),
        "a fully masked query row (must output zeros)": (qkv((1,), 3, 5, 4, 4), empty_row),
    }
    for case, ((q, k, v), mask) in cases.items():
        want, _ = scaled_dot_product_attention_numpy(q, k, v, mask)
        with np.errstate(all="ignore"):
            got = fn(q.copy(), k.copy(), v.copy(), None if mask is None else mask.copy())
        _compare(case, got, want, atol=1e-10)
    return len(cases)


def check_local_causal_mask(fn: Callable[[int, int], torch.Tensor]) -> int:
    """Check a causal mask restricted to a window: query i may attend to keys i - window + 1 .. i.

    Args:
        fn: ``fn(T, window)`` returning a (T, T) boolean torch tensor, True = may attend.

    Returns:
        the number of cases passed.
    """
    _check_callable(fn)
    cases = [(1, 1), (5, 1), (5, 2), (6, 3), (4, 4), (4, 10)]
    for T, window in cases:
        want = np.array([[i - window < j <= i for j in range(T)] for i in range(T)])
        got = fn(T, window)
        if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
            raise AssertionError(f"case T={T}, window={window}: expected a boolean torch tensor; "
                                 f"got {type(got).__name__} {getattr(got, 'dtype', '')}")
        if tuple(got.shape) != (T, T):
            raise AssertionError(f"case T={T}, window={window}: expected shape {(T, T)}; "
                                 f"got {tuple(got.shape)}")
        if not np.array_equal(got.cpu().numpy(), want):
            raise AssertionError(f"case T={T}, window={window}: expected\n{want.astype(int)}\n"
                                 f"got\n{got.cpu().numpy().astype(int)}")
    return len(cases)
