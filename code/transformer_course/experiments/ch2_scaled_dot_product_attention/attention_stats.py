"""Measurements behind chapter 2: why scores are scaled, and what attention costs.

- :func:`dot_product_variance`: the variance of q . k for random unit-variance q, k grows like d_k;
  dividing by sqrt(d_k) brings it back to 1 (the argument of Vaswani et al., 2017, footnote 4).
- :func:`softmax_saturation`: the entropy of the attention weights and the size of the gradient that
  passes back through the softmax, with and without the scaling, as d_k grows.
- :func:`attention_time_samples` and :func:`attention_memory`: time and peak memory of attention
  against the sequence length T; :func:`growth_exponent` and :func:`loglog_slope` fit exponents.

Every function takes an explicit seed, so the tables (except wall-clock times) are reproducible.
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from transformer_course.core.attention import (
    scaled_dot_product_attention,
    scaled_dot_product_attention_numpy,
)
from transformer_course.notebook import time_call

#: The attention implementations :func:`attention_calls` can run, by name.
ATTENTION_PATHS = ("numpy", "torch explicit", "torch fused", "F.sdpa")
TIMED_PATHS = ATTENTION_PATHS[:3]  # the chapter's figure: the package's three paths
#: The clocks :func:`attention_time_samples` can read: process CPU time or elapsed wall time.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def dot_product_variance(d_k_values: Sequence[int], num_samples: int = 20_000,
                         seed: int = 0) -> pd.DataFrame:
    """Sample variance of q . k and of q . k / sqrt(d_k) for q, k with i.i.d. N(0, 1) entries.

    Args:
        d_k_values: the key widths d_k to measure.
        num_samples: independent (q, k) pairs per d_k.
        seed: seed of the NumPy generator.

    Returns:
        one row per d_k with columns ``d_k``, ``var_unscaled`` and ``var_scaled``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_k_values:
        q = rng.standard_normal((num_samples, d_k))  # (N, d_k)
        k = rng.standard_normal((num_samples, d_k))  # (N, d_k)
        dots = np.einsum("nd,nd->n", q, k)  # (N,)
        rows.append({"d_k": d_k, "var_unscaled": float(dots.var(ddof=1)),
                     "var_scaled": float((dots / math.sqrt(d_k)).var(ddof=1))})
    return pd.DataFrame(rows)


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of attention weights (0 log 0 counts as 0).

    Args:
        weights: (..., T_k) rows of non-negative weights that sum to one.

    Returns:
        (...) entropies, between 0 (one-hot) and log(T_k) (uniform).
    """
    return torch.special.entr(weights).sum(dim=-1)


def softmax_input_gradient(logits: torch.Tensor, upstream: torch.Tensor) -> torch.Tensor:
    """Gradient of sum(softmax(logits) * upstream) with respect to the logits, via autograd.

    It equals p * (g - sum(p * g)) with p = softmax(logits), g = upstream: the error signal that
    survives the softmax. When p is one-hot it is zero, whatever g is.

    Args:
        logits: (..., T_k) scores fed to the softmax. upstream: (..., T_k) the incoming gradient.

    Returns:
        (..., T_k) gradient with respect to ``logits``.
    """
    with torch.enable_grad():
        z = logits.detach().clone().requires_grad_(True)
        (torch.softmax(z, dim=-1) * upstream).sum().backward()
    return z.grad


def softmax_saturation(d_k_values: Sequence[int], T_k: int = 64, num_queries: int = 2_000,
                       seed: int = 0) -> pd.DataFrame:
    """Entropy of the attention weights and gradient through the softmax, scaled and unscaled.

    For each d_k, draws ``num_queries`` queries and ``T_k`` keys with i.i.d. N(0, 1) entries,
    computes scores q . k (unscaled) and q . k / sqrt(d_k) (scaled), and averages over queries:
    the entropy of the weights, the largest weight, and the L2 norm of the gradient that reaches
    the scores from a random N(0, 1) upstream gradient on the weights.

    Args:
        d_k_values: the key widths d_k to measure.
        T_k: number of keys each query attends over.
        num_queries: queries per d_k (rows averaged over).
        seed: seed of the torch generator.

    Returns:
        one row per (d_k, scaling) with columns ``d_k``, ``scaling`` ("scaled" or "unscaled"),
        ``entropy``, ``max_weight`` and ``grad_norm``.
    """
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for d_k in d_k_values:
        q = torch.randn(num_queries, d_k, generator=generator, dtype=torch.float64)  # (N, d_k)
        k = torch.randn(T_k, d_k, generator=generator, dtype=torch.float64)  # (T_k, d_k)
        upstream = torch.randn(num_queries, T_k, generator=generator, dtype=torch.float64)
        raw = q @ k.T  # (N, T_k)
        for scaling, scores in (("unscaled", raw), ("scaled", raw / math.sqrt(d_k))):
            weights = torch.softmax(scores, dim=-1)  # (N, T_k)
            grad = softmax_input_gradient(scores, upstream)  # (N, T_k)
            rows.append({"d_k": d_k, "scaling": scaling,
                         "entropy": attention_entropy(weights).mean().item(),
                         "max_weight": weights.max(dim=-1).values.mean().item(),
                         "grad_norm": grad.norm(dim=-1).mean().item()})
    return pd.DataFrame(rows)


def _random_qkv_numpy(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(3))


def attention_calls(shape: tuple[int, ...], *, seed: int = 0,
                    paths: Sequence[str] = ATTENTION_PATHS) -> dict[str, Callable[[], object]]:
    """A no-argument call per attention path, all on the same random float32 q, k, v of ``shape``
    (..., T, d_k): self-attention without a mask, no gradient. For timing and memory figures.

    Paths: "numpy" (:func:`scaled_dot_product_attention_numpy`), "torch explicit"
    (:func:`scaled_dot_product_attention`, weights returned), "torch fused" (the same with
    ``need_weights=False``) and "F.sdpa" (``torch.nn.functional.scaled_dot_product_attention``).
    """
    q, k, v = _random_qkv_numpy(tuple(shape), seed)
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    functions = {
        "numpy": lambda: scaled_dot_product_attention_numpy(q, k, v),
        "torch explicit": lambda: scaled_dot_product_attention(tq, tk, tv, need_weights=True),
        "torch fused": lambda: scaled_dot_product_attention(tq, tk, tv, need_weights=False),
        "F.sdpa": lambda: F.scaled_dot_product_attention(tq, tk, tv),
    }

    def no_grad(fn: Callable[[], object]) -> Callable[[], object]:
        def call() -> object:
            with torch.no_grad():
                return fn()
        return call

    return {path: no_grad(functions[path]) for path in paths}


def attention_time_samples(T_values: Sequence[int], *, d_k: int = 64, batch: int = 1,
                           paths: Sequence[str] = TIMED_PATHS, rounds: int = 7,
                           threads: int = 1, clock: str = "cpu", seed: int = 0,
                           ) -> pd.DataFrame:
    """Time one attention call (float32, no mask) per path and T, in interleaved rounds.

    Paths: "numpy" (:func:`scaled_dot_product_attention_numpy`), "torch explicit"
    (:func:`scaled_dot_product_attention`, weights returned) and "torch fused"
    (``need_weights=False``, i.e. ``F.scaled_dot_product_attention``); self-attention, T_q = T_k.
    Every round times each (T, path) once, in rotating order, so that a change in the machine's
    load falls on all of them alike and times from the same round can be compared. PyTorch runs on
    ``threads`` threads (restored afterwards). With one thread, ``clock="cpu"`` (process CPU
    time) measures the work itself, unaffected by other programs competing for the cores;
    ``clock="wall"`` measures elapsed time. NumPy's BLAS keeps its own thread pool.

    Args:
        T_values: sequence lengths. d_k: query/key/value width. batch: B.
        paths: which implementations to time. rounds: timed calls per (T, path).
        threads: PyTorch intra-op threads while timing. clock: "cpu" or "wall".
        seed: seed of the random inputs.

    Returns:
        one row per (round, T, path) with columns ``round``, ``T``, ``path``, ``seconds``.
    """
    calls = {(T, path): call for T in T_values
             for path, call in attention_calls((batch, T, d_k), seed=seed, paths=paths).items()}
    keys, rows = list(calls), []
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for key in keys:
            calls[key]()  # warm-up
        for r in range(rounds):
            for T, path in keys[r % len(keys):] + keys[:r % len(keys)]:
                timing = time_call(calls[T, path], repeats=1, warmup=0, clock=CLOCKS[clock])
                rows.append({"round": r, "T": T, "path": path, "seconds": timing.median})
    finally:
        torch.set_num_threads(previous_threads)
    return pd.DataFrame(rows)


def attention_time(samples: pd.DataFrame) -> pd.DataFrame:
    """The median and the minimum over rounds of :func:`attention_time_samples`' times.

    Returns:
        one row per (T, path) with columns ``T``, ``path``, ``seconds`` (median) and
        ``min_seconds``.
    """
    grouped = samples.groupby(["T", "path"], sort=False)["seconds"]
    return pd.DataFrame({"seconds": grouped.median(), "min_seconds": grouped.min()}).reset_index()


def growth_exponent(samples: pd.DataFrame, path: str, T_from: int, T_to: int) -> float:
    """The exponent p in time ~ T^p between two lengths, from rounds measured side by side.

    p = log(median over rounds of t(T_to) / t(T_from)) / log(T_to / T_from): each round's ratio
    compares two calls made moments apart, and the median ignores rounds a neighbour disturbed.
    """
    mine = samples[samples["path"] == path].pivot(index="round", columns="T", values="seconds")
    ratio = float((mine[T_to] / mine[T_from]).median())
    return math.log(ratio) / math.log(T_to / T_from)


def attention_memory(T_values: Sequence[int], *, d_k: int = 64, batch: int = 1,
                     seed: int = 0) -> pd.DataFrame:
    """Peak memory allocated by one NumPy attention call (float32, no mask) against T.

    The peak is measured with :mod:`tracemalloc` (NumPy reports its buffers to it) around
    :func:`scaled_dot_product_attention_numpy`, inputs excluded.

    Args:
        T_values: sequence lengths. d_k: query/key/value width. batch: B.
        seed: seed of the random inputs.

    Returns:
        one row per T with columns ``T``, ``peak_bytes``, ``weights_bytes`` (the (B, T, T) weights
        alone) and ``peak_over_weights``.
    """
    rows = []
    already_tracing = tracemalloc.is_tracing()
    for T in T_values:
        q, k, v = _random_qkv_numpy((batch, T, d_k), seed)
        if not already_tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        _, weights = scaled_dot_product_attention_numpy(q, k, v)
        _, peak = tracemalloc.get_traced_memory()
        if not already_tracing:
            tracemalloc.stop()
        rows.append({"T": T, "peak_bytes": peak - start, "weights_bytes": weights.nbytes,
                     "peak_over_weights": (peak - start) / weights.nbytes})
        del weights
    return pd.DataFrame(rows)


def loglog_slope(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Least-squares slope of log(y) against log(x): the exponent p in y ~ c x^p.

    Args:
        x, y: (n,) positive numbers, n >= 2, with at least two distinct x.
    """
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    slope, _ = np.polyfit(np.log(xs), np.log(ys), deg=1)
    return float(slope)
