"""Wall-clock timing with repeats, reported as median, min and max.

The machines these chapters run on are shared and noisy, so every measured figure is a median of
repeated runs, and comparisons are made between figures measured in the same run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from .checks import check_positive_int


@dataclass(frozen=True)
class Timing:
    """Seconds per call over ``repeats`` timed calls."""

    median: float
    min: float
    max: float
    repeats: int


def time_call(fn: Callable[[], object], *, repeats: int = 5, warmup: int = 1,
              clock: Callable[[], float] | None = None) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    ``clock`` defaults to wall-clock time (``time.perf_counter``); ``time.process_time`` measures
    the CPU time of the process instead, which excludes time spent waiting for other programs on
    a busy machine.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    clock = time.perf_counter if clock is None else clock
    if not callable(clock):
        raise TypeError(f"clock must be callable; got {type(clock).__name__}")
    check_positive_int("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative int; got {warmup!r}")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = clock()
        fn()
        samples.append(clock() - start)
    return Timing(statistics.median(samples), min(samples), max(samples), repeats)
