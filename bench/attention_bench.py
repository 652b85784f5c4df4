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

PATHS = ("numpy", "explicit", "fast", "sdpa")
# NumPy runs in a process of its own: OpenBLAS threads keep spinning after a call and would slow
# the torch calls interleaved with them.
TIMING_GROUPS = (("numpy",), ("explicit", "fast", "sdpa"))

_SETUP = r"""
import json, sys
import numpy as np, torch, torch.nn.functional as F
from transformer_course.core.attention import scaled_dot_product_attention, scaled_dot_product_attention_numpy
B, h, T, d_k, repeats, threads = map(int, sys.argv[2:8])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(B, h, T, d_k, generator=g) for _ in range(3))
qn, kn, vn = q.numpy(), k.numpy(), v.numpy()
CALLS = {
    "numpy": lambda: scaled_dot_product_attention_numpy(qn, kn, vn),
    "explicit": lambda: scaled_dot_product_attention(q, k, v, need_weights=True),
    "fast": lambda: scaled_dot_product_attention(q, k, v, need_weights=False),
    "sdpa": lambda: F.scaled_dot_product_attention(q, k, v),
}
"""

# Peak memory: one call of one path in a fresh process, so no other allocation is mixed in.
_MEMORY = _SETUP + r"""
fn = CALLS[sys.argv[1]]

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak (VmHWM) to the current RSS: imports' peaks do not count
before = status_kib("VmRSS")
with torch.no_grad():
    fn()
print(json.dumps({"peak_mib": (status_kib("VmHWM") - before) / 1024}))
"""

# Time: every path in one process, calls interleaved round by round (the order rotating), so
# drift in the machine's load falls on all paths alike and their ratios are like for like.
_TIME = _SETUP + r"""
import statistics, time
paths = sys.argv[1].split(",")
samples = {p: [] for p in paths}
with torch.no_grad():
    for p in paths:
        CALLS[p]()  # warm-up
    for r in range(repeats):
        for p in paths[r % len(paths):] + paths[: r % len(paths)]:
            start = time.perf_counter()
            CALLS[p]()
            samples[p].append(time.perf_counter() - start)
print(json.dumps({p: {"median": statistics.median(s), "min": min(s), "max": max(s), "n": len(s)}
                  for p, s in samples.items()}))
"""

_MATMUL = r"""
import json, sys, torch
from transformer_course.notebook import time_call
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
    repeats: int = 7
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
        shape = (s.batch, s.heads, T, s.d_k, s.repeats, s.threads)
        times = {}
        for group in TIMING_GROUPS:
            times |= _run(_TIME, ",".join(group), *shape)
        for path in PATHS:
            peak = _run(_MEMORY, path, *shape)["peak_mib"]
            t = times[path]
            gflops = attention_flops(s.batch, s.heads, T, s.d_k) / t["median"] / 1e9
            rows.append({"path": path, "T": T, **t, "peak_mib": peak, "gflops": gflops,
                         "fraction_of_matmul": gflops / matmul_gflops,
                         "ratio_to_sdpa": t["median"] / times["sdpa"]["median"]})
    return {"settings": s.__dict__ | {"lengths": list(s.lengths)},
            "matmul": mm | {"gflops": matmul_gflops, "n": s.matmul_n}, "rows": rows}
