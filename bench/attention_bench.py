"""The package's attention paths against F.scaled_dot_product_attention and a large matmul.

Each (path, T) runs in a fresh subprocess so its peak resident memory can be read from the kernel
(``ru_maxrss``) without the other runs' allocations mixed in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

PATHS = ("numpy", "explicit", "fast", "sdpa")

_WORKER = r"""
import json, resource, sys
import numpy as np, torch, torch.nn.functional as F
from transformer_course.attention import (scaled_dot_product_attention,
                                          scaled_dot_product_attention_numpy)
from transformer_course.timing import time_call
path, B, h, T, d_k, repeats, threads = sys.argv[1], *map(int, sys.argv[2:])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(B, h, T, d_k, generator=g) for _ in range(3))
if path == "numpy":
    qn, kn, vn = q.numpy(), k.numpy(), v.numpy()
    fn = lambda: scaled_dot_product_attention_numpy(qn, kn, vn)
elif path == "explicit":
    fn = lambda: scaled_dot_product_attention(q, k, v, need_weights=True)
elif path == "fast":
    fn = lambda: scaled_dot_product_attention(q, k, v, need_weights=False)
else:
    fn = lambda: F.scaled_dot_product_attention(q, k, v)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with torch.no_grad():
    fn()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time_call(fn, repeats=repeats, warmup=0)
print(json.dumps({"median": t.median, "min": t.min, "max": t.max, "n": t.repeats,
                  "peak_mib": (peak - before) / 1024}))
"""

_MATMUL = r"""
import json, sys, torch
from transformer_course.timing import time_call
n, repeats, threads = map(int, sys.argv[1:])
torch.set_num_threads(threads)
a, b = torch.randn(n, n), torch.randn(n, n)
t = time_call(lambda: a @ b, repeats=repeats, warmup=1)
print(json.dumps({"median": t.median, "min": t.min, "max": t.max, "n": t.repeats}))
"""


@dataclass(frozen=True)
class AttentionSettings:
    batch: int = 8
    heads: int = 8
    d_k: int = 64
    lengths: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048)
    repeats: int = 5
    matmul_n: int = 2048
    threads: int = 2


def _run(code: str, *args: object) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def attention_flops(B: int, h: int, T: int, d_k: int) -> int:
    """Multiply-adds of Q K^T and weights @ V, counted as 2 FLOPs each: 4·B·h·T²·d_k."""
    return 4 * B * h * T * T * d_k


def run_attention_bench(s: AttentionSettings) -> dict:
    """Time, peak memory and GFLOP/s for each path and length, and the matmul reference rate."""
    mm = _run(_MATMUL, s.matmul_n, s.repeats, s.threads)
    matmul_gflops = 2 * s.matmul_n**3 / mm["median"] / 1e9
    rows = []
    for T in s.lengths:
        for path in PATHS:
            r = _run(_WORKER, path, s.batch, s.heads, T, s.d_k, s.repeats, s.threads)
            gflops = attention_flops(s.batch, s.heads, T, s.d_k) / r["median"] / 1e9
            rows.append({"path": path, "T": T, **r, "gflops": gflops,
                         "fraction_of_matmul": gflops / matmul_gflops})
    by = {(r["path"], r["T"]): r for r in rows}
    for r in rows:
        r["ratio_to_sdpa"] = r["median"] / by[("sdpa", r["T"])]["median"]
    return {"settings": s.__dict__ | {"lengths": list(s.lengths)},
            "matmul": mm | {"gflops": matmul_gflops, "n": s.matmul_n}, "rows": rows}
