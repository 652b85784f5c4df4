"""One measurement of the attention benchmark, in a process of its own, printed as JSON.

    python -m bench.attention_worker time PATHS B h T d_k REPEATS THREADS
    python -m bench.attention_worker memory PATH B h T d_k THREADS
    python -m bench.attention_worker matmul N REPEATS THREADS

``time`` runs the comma-separated paths interleaved round by round (``notebook.time_interleaved``)
and prints each path's per-round seconds; ``memory`` prints one call's peak memory growth
(``notebook.peak_memory_growth_mib``); ``matmul`` times an (N, N) @ (N, N) product. The calls come
from ``attention_stats.attention_calls``, the chapter's own measuring code.
"""

from __future__ import annotations

import json
import sys

import torch

from transformer_course.experiments.ch2_scaled_dot_product_attention.attention_stats import (
    attention_calls,
)
from transformer_course.notebook import (
    peak_memory_growth_mib,
    set_threads,
    time_call,
    time_interleaved,
)

# The benchmark's short names for attention_stats' paths.
PATHS = {"numpy": "numpy", "explicit": "torch explicit", "fast": "torch fused", "sdpa": "F.sdpa"}


def main(argv: list[str]) -> dict:
    mode, *args = argv
    if mode == "time":
        names = args[0].split(",")
        B, h, T, d_k, repeats, threads = map(int, args[1:])
        set_threads(threads)
        calls = attention_calls((B, h, T, d_k), paths=[PATHS[n] for n in names])
        samples = time_interleaved({n: calls[PATHS[n]] for n in names}, repeats=repeats)
        return {"samples": samples}
    if mode == "memory":
        name = args[0]
        B, h, T, d_k, threads = map(int, args[1:])
        set_threads(threads)
        call = attention_calls((B, h, T, d_k), paths=[PATHS[name]])[PATHS[name]]
        return {"peak_mib": peak_memory_growth_mib(call)}
    if mode == "matmul":
        n, repeats, threads = map(int, args)
        set_threads(threads)
        a, b = torch.randn(n, n), torch.randn(n, n)
        return time_call(lambda: a @ b, repeats=repeats, warmup=1).as_dict()
    raise SystemExit(f"mode must be time, memory or matmul; got {mode!r}")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
