"""How a recurrent layer and a self-attention layer use a second CPU thread.

Wall-clock time against the thread count is the obvious measurement, but on a shared machine it
mostly measures the neighbours: a thread that is not running waits, and its partner waits with it.
So beside the wall clock, :func:`measure_thread_scaling` reads each thread's own CPU time (Linux
keeps one clock per thread). A thread's CPU time counts only the moments it ran, so the CPU time of
the busiest thread is what the call would take with every thread on a core of its own, whatever
else the machine is doing: the best case the split allows.

The measurement needs ``OMP_WAIT_POLICY=PASSIVE``, so that threads with nothing to do sleep
instead of spinning (a spinning thread burns CPU time without doing work). The policy is read when
torch starts its thread pool, so it must be in the environment before torch is imported, or the
measurement must run in a fresh process (``fresh_process=True``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import pandas as pd
import torch
from torch import nn

from transformer_course.core.multihead import MultiHeadAttention

LAYERS = ("recurrent (nn.RNN)", "recurrent (nn.LSTM)", "self-attention (MultiHeadAttention)")


@dataclass(frozen=True)
class ThreadConfig:
    """One layer width, batch and length, timed at each thread count."""

    length: int = 512  # n, positions per sequence
    d_model: int = 128  # width of every layer
    num_heads: int = 4  # heads of the attention layer
    batch: int = 4  # sequences per call
    threads: tuple[int, ...] = (1, 2)  # thread counts to compare; the first is the baseline
    rounds: int = 9  # timed calls per layer and thread count (medians are kept)


def thread_cpu_seconds() -> dict[int, float]:
    """CPU seconds used so far by each thread of this process, by thread id: the kernel's
    per-thread clocks on Linux (nanoseconds), psutil's elsewhere (Windows, macOS; coarser, about
    a scheduler tick)."""
    if not os.path.isdir("/proc/self/task"):
        return psutil_thread_cpu_seconds()
    seconds = {}
    for name in os.listdir("/proc/self/task"):
        tid = int(name)
        try:  # the CPU clock of thread tid, as the kernel encodes it: (~tid << 3) | 6
            seconds[tid] = time.clock_gettime_ns((~tid << 3) | 6) / 1e9
        except OSError:  # the thread ended in between
            continue
    return seconds


def psutil_thread_cpu_seconds() -> dict[int, float]:
    """:func:`thread_cpu_seconds` from psutil, which reads them on every OS it supports."""
    import psutil

    return {thread.id: thread.user_time + thread.system_time
            for thread in psutil.Process().threads()}


def time_with_thread_clocks(fn: Callable[[], object]) -> dict[str, float]:
    """One call of ``fn``: its wall-clock seconds, all threads' CPU seconds and the busiest's."""
    before, start = thread_cpu_seconds(), time.perf_counter()
    fn()
    wall, after = time.perf_counter() - start, thread_cpu_seconds()
    used = [after[tid] - before.get(tid, 0.0) for tid in after]
    return {"wall_s": wall, "cpu_total_s": sum(used), "cpu_busiest_s": max(used)}


def _layers(config: ThreadConfig) -> dict[str, Callable[[], object]]:
    torch.manual_seed(0)
    d, x = config.d_model, torch.randn(config.batch, config.length, config.d_model)  # (B, T, d)
    rnn = nn.RNN(d, d, batch_first=True)
    lstm = nn.LSTM(d, d, batch_first=True)
    attention = MultiHeadAttention(d, config.num_heads)
    return dict(zip(LAYERS, (lambda: rnn(x), lambda: lstm(x), lambda: attention(x, x, x)),
                    strict=True))


def measure_here(config: ThreadConfig) -> pd.DataFrame:
    """Time every layer at every thread count in this process, in rotating order per round.

    Returns:
        one row per (round, layer, threads): wall_s, cpu_total_s and cpu_busiest_s.
    """
    calls, previous = _layers(config), torch.get_num_threads()
    pairs = [(layer, count) for layer in calls for count in config.threads]
    rows = []
    try:
        with torch.no_grad():
            for layer, count in pairs:  # warm-up: first calls allocate and start threads
                torch.set_num_threads(count)
                calls[layer]()
            for r in range(config.rounds):  # a change in load falls on every pair alike
                for layer, count in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
                    torch.set_num_threads(count)
                    rows.append({"round": r, "layer": layer, "threads": count,
                                 **time_with_thread_clocks(calls[layer])})
    finally:
        torch.set_num_threads(previous)
    return pd.DataFrame(rows)


def measure_thread_scaling(config: ThreadConfig = ThreadConfig(), *,
                           fresh_process: bool = False) -> pd.DataFrame:
    """:func:`measure_here`, with idle threads sleeping instead of spinning (see the module).

    The wait policy is read once, when torch starts its thread pool. So either set
    ``OMP_WAIT_POLICY=PASSIVE`` in the environment before importing torch (chapter 1 does, in its
    first cell), or pass ``fresh_process=True`` to measure in a new Python process that has it.

    Returns:
        one row per (round, layer, threads): wall_s, cpu_total_s and cpu_busiest_s.
    """
    if not fresh_process:
        if os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":
            raise RuntimeError("set OMP_WAIT_POLICY=PASSIVE before importing torch, or pass "
                               "fresh_process=True; otherwise idle threads spin and their "
                               "spinning counts as work")
        return measure_here(config)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    done = subprocess.run([sys.executable, "-m", __name__, json.dumps(asdict(config))],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the timing process failed:\n{done.stderr[-2000:]}")
    return pd.DataFrame(json.loads(done.stdout))


def summarise_threads(raw: pd.DataFrame) -> pd.DataFrame:
    """Medians per layer and thread count, and two speed-ups over the first thread count.

    ``wall_speedup`` is the median over rounds of wall(baseline) / wall(threads), paired by round;
    ``best_case_speedup`` is the baseline's median CPU time over the median CPU time of the busiest
    thread: the speed-up if every thread had a core to itself and never waited for the others.
    """
    baseline = int(raw["threads"].min())
    rows = []
    for (layer, count), group in raw.groupby(["layer", "threads"], sort=False):
        one = raw[(raw["layer"] == layer) & (raw["threads"] == baseline)].set_index("round")
        mine = group.set_index("round")
        ratios = (one["wall_s"] / mine["wall_s"]).dropna()
        rows.append({
            "layer": layer, "threads": int(count),
            "wall_ms": 1e3 * mine["wall_s"].median(),
            "cpu_total_ms": 1e3 * mine["cpu_total_s"].median(),
            "cpu_busiest_ms": 1e3 * mine["cpu_busiest_s"].median(),
            "wall_speedup": float(statistics.median(ratios)),
            "best_case_speedup": float(one["cpu_total_s"].median()
                                       / mine["cpu_busiest_s"].median()),
        })
    return pd.DataFrame(rows)


if __name__ == "__main__":  # the timing process started by measure_thread_scaling
    arguments = json.loads(sys.argv[1])
    arguments["threads"] = tuple(arguments["threads"])
    print(measure_here(ThreadConfig(**arguments)).to_json(orient="records"))
