"""time_call: warm-up and repeat counts, median/min/max from the clock, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from transformer_course import notebook as timing
from transformer_course.notebook import Timing, time_call


def _fake_clock(monkeypatch: pytest.MonkeyPatch, durations: list[float]) -> None:
    """Make perf_counter return start/stop pairs that differ by ``durations``."""
    def ticks() -> Iterator[float]:
        now = 100.0
        for duration in durations:
            yield now
            now += duration
            yield now
            now += 1000.0  # time between calls must not count
    clock = ticks()
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock))


def test_time_call_counts_warmup_and_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    _fake_clock(monkeypatch, [1.0] * 4)
    result = time_call(lambda: calls.append(1), repeats=4, warmup=3)
    assert len(calls) == 7
    assert result.repeats == 4


def test_time_call_reports_median_min_max(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_clock(monkeypatch, [0.5, 0.125, 2.0, 0.25, 1.0])
    result = time_call(lambda: None, repeats=5, warmup=0)
    assert result == Timing(median=0.5, min=0.125, max=2.0, repeats=5)
    _fake_clock(monkeypatch, [4.0, 1.0])
    assert time_call(lambda: None, repeats=2, warmup=0).median == 2.5  # even count: mean of two


def test_time_call_on_the_real_clock() -> None:
    result = time_call(lambda: sum(range(1000)), repeats=3, warmup=1)
    assert 0 < result.min <= result.median <= result.max


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    ({"fn": 3}, TypeError, "fn"), ({"fn": None}, TypeError, "fn"),
    ({"repeats": 0}, ValueError, "repeats"), ({"repeats": 2.0}, TypeError, "repeats"),
    ({"repeats": True}, TypeError, "repeats"), ({"warmup": -1}, ValueError, "warmup"),
    ({"warmup": 0.5}, TypeError, "warmup"), ({"warmup": True}, TypeError, "warmup"),
])
def test_time_call_rejects_bad_arguments(kwargs: dict[str, Any], error: type[Exception],
                                         name: str) -> None:
    calls = []
    arguments: dict[str, Any] = {"fn": lambda: calls.append(1), "repeats": 2, "warmup": 0}
    arguments.update(kwargs)
    with pytest.raises(error, match=rf"^{name}\b"):
        time_call(arguments.pop("fn"), **arguments)
    assert not calls, "fn must not run when the arguments are bad"
