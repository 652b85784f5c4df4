"""The package's attention paths against F.scaled_dot_product_attention and a large matmul.

Peak memory: each (path, T) runs once in a fresh subprocess; the kernel's peak-RSS mark (Linux
``VmHWM``) is reset just before the call, so the figure is the call's own growth over the inputs.
Time: for each T, all torch paths run in one subprocess with their calls interleaved, so their
ratios compare like with like (NumPy runs in a subprocess of its own).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from transformer_course.notebook import Timing, median_ratio

from .attention_worker import PATHS

# NumPy runs in a process of its own: OpenBLAS threads keep spinning after a call and would slow
# the torch calls interleaved with them.
TIMING_GROUPS = (("numpy",), ("explicit", "fast", "sdpa"))


@dataclass(frozen=True)
class AttentionSettings:
    batch: int = 8
    heads: int = 8
    d_k: int = 64
    lengths: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048)
    repeats: int = 7
    matmul_n: int = 2048
    threads: int = 1  # as in the chapters; with 2 on a shared 2-core machine ratios swing


def _run(*args: object) -> dict:
    """One measurement by ``bench.attention_worker`` in a fresh process."""
    out = subprocess.run([sys.executable, "-m", "bench.attention_worker", *map(str, args)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def attention_flops(B: int, h: int, T: int, d_k: int) -> int:
    """Multiply-adds of Q K^T and weights @ V, counted as 2 FLOPs each: 4·B·h·T²·d_k."""
    return 4 * B * h * T * T * d_k


def run_attention_bench(s: AttentionSettings) -> dict:
    """Time, peak memory and GFLOP/s for each path and length, and the matmul reference rate."""
    mm = _run("matmul", s.matmul_n, s.repeats, s.threads)
    matmul_gflops = 2 * s.matmul_n**3 / mm["median"] / 1e9
    rows = []
    for T in s.lengths:
        shape = (s.batch, s.heads, T, s.d_k)
        samples: dict[str, list[float]] = {}
        for group in TIMING_GROUPS:
            samples |= _run("time", ",".join(group), *shape, s.repeats, s.threads)["samples"]
        for path in PATHS:
            peak = _run("memory", path, *shape, s.threads)["peak_mib"]
            t = Timing.of(samples[path]).as_dict()
            gflops = attention_flops(s.batch, s.heads, T, s.d_k) / t["median"] / 1e9
            # torch paths ran interleaved with sdpa: the median of their per-round ratios
            ratio = (median_ratio(samples[path], samples["sdpa"]) if path != "numpy"
                     else t["median"] / Timing.of(samples["sdpa"]).median)
            rows.append({"path": path, "T": T, **t, "peak_mib": peak, "gflops": gflops,
                         "fraction_of_matmul": gflops / matmul_gflops, "ratio_to_sdpa": ratio})
    return {"settings": s.__dict__ | {"lengths": list(s.lengths)},
            "matmul": mm | {"gflops": matmul_gflops, "n": s.matmul_n}, "rows": rows}
