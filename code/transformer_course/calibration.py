"""How far each trained number moves between CPUs: the calibration file the margins come from.

A trained number (a stopping step, a test accuracy, a share of aligned heads) is one draw from a
distribution: on another CPU the same seed trains a slightly different model. ``make calibrate``
(``python -m bench.calibration``) runs every chapter on this CPU as it is and under at least 20
simulated other CPUs (:mod:`transformer_course.draws`), records every trained statistic a chapter
claims something about (:func:`transformer_course.claims.claim_trained`) or shows beside its
distribution (:func:`transformer_course.claims.observe`), and writes them all to
:data:`CALIBRATION_PATH`, with the bounds each claim states.

A claim's bounds must leave room beyond the calibrated draws: the range they span, widened on
each side by :data:`ROOM` times its width, lies inside the bounds, strictly where every draw gave
the same value (:meth:`Statistic.has_room`). A count that sits at its ceiling in every draw
("in all four examples") has no room however many draws agree: claim a share over many cases,
or a margin that moves with the draw (how far the right answer leads), instead.
``tests/test_calibration.py`` checks that for every claim, and the build checks that each claim
still states the bounds it was calibrated with.
"""

from __future__ import annotations

import json
import math
import statistics as statistics_module
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")
RECORD_ENV = "TRANSFORMER_COURSE_CALIBRATION_OUT"  # a JSON-lines file a calibration run writes
MIN_DRAWS = 20  # simulated other CPUs a claim is calibrated on, at least
# A new draw may land outside the range that N draws spanned (with N = 21, about one time in
# eleven). Widening the range by half its width on each side makes that rare for any
# distribution without heavy tails (for a normal one, beyond about 3.7 standard deviations).
ROOM = 0.5


@dataclass(frozen=True)
class Statistic:
    """One trained statistic as calibrated: its value in each run, and the bounds its claim
    states (None where a side is open, or where the page only shows it beside its draws)."""

    key: str
    chapter: str
    text: str
    values: tuple[float, ...]  # one per run, in the order of the file's "runs"
    low: float | None
    high: float | None

    @property
    def claimed(self) -> bool:
        """Whether a claim rests on it (else the page shows the run beside the draws)."""
        return self.low is not None or self.high is not None

    def span(self) -> tuple[float, float]:
        """The smallest and largest calibrated value (runs that never got there, NaN, left
        out; NaN twice where no run got there)."""
        finite = [v for v in self.values if math.isfinite(v)]
        return (min(finite), max(finite)) if finite else (math.nan, math.nan)

    def median(self) -> float:
        """The median calibrated value."""
        return statistics_module.median(self.values)

    def counts(self) -> dict[float, int]:
        """How many runs gave each value, smallest first (for a statistic of few values, such
        as a stopping step)."""
        return dict(sorted(Counter(self.values).items()))

    def padded(self) -> tuple[float, float]:
        """The calibrated span widened by :data:`ROOM` times its width on each side."""
        lowest, highest = self.span()
        width = highest - lowest
        return lowest - ROOM * width, highest + ROOM * width

    def has_room(self) -> bool:
        """Whether the padded span lies inside the claim's bounds (and no run gave NaN). A span
        of no width must lie strictly inside: where every draw sits on the bound (a count at its
        ceiling, "all four of four"), padding adds nothing, and the next draw may fall off it."""
        if any(math.isnan(v) for v in self.values):
            return False
        lowest, highest = self.padded()
        if lowest == highest:
            return ((self.low is None or self.low < lowest)
                    and (self.high is None or highest < self.high))
        return ((self.low is None or self.low <= lowest)
                and (self.high is None or highest <= self.high))


@cache
def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {"runs": [], "statistics": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def load(path: Path | None = None) -> dict[str, Any]:
    """The calibration file (:data:`CALIBRATION_PATH` unless ``path``) as read, once."""
    return _load(path or CALIBRATION_PATH)


def runs(path: Path | None = None) -> list[str]:
    """The calibration's runs, in order: ``"native"`` (this CPU as it is) and ``"draw k"``."""
    return list(load(path)["runs"])


def draws(path: Path | None = None) -> list[int]:
    """The simulated CPUs (draw numbers) the calibration ran."""
    return [int(run.split()[1]) for run in runs(path) if run.startswith("draw ")]


def statistics(path: Path | None = None) -> dict[str, Statistic]:
    """Every calibrated statistic, by key."""
    return {key: Statistic(key=key, chapter=entry["chapter"], text=entry["text"],
                           values=tuple(math.nan if v is None else v for v in entry["values"]),
                           low=entry["low"], high=entry["high"])
            for key, entry in load(path)["statistics"].items()}


def statistic(key: str, path: Path | None = None) -> Statistic | None:
    """The calibrated statistic ``key``, or None where it was never calibrated."""
    return statistics(path).get(key)


# A page shows a trained number of its own run beside the same statistic's calibrated draws.
# Before a statistic is first calibrated (a new claim, in a build before `make calibrate`), the
# run stands alone, so the page still reads and says "1 run".


def beside(key: str, this_run: float, path: Path | None = None) -> Statistic:
    """The calibrated draws of ``key`` to show ``this_run`` beside; before any calibration of
    it, a stand-in whose only run is ``this_run``."""
    return statistic(key, path) or Statistic(key=key, chapter="", text="", values=(this_run,),
                                             low=None, high=None)


def span_text(key: str, spec: str = ".3f", path: Path | None = None) -> str:
    """The calibrated span of ``key`` as words ("1.787 to 1.790"), runs that never got there
    left out; "not yet calibrated" where no run did."""
    entry = statistic(key, path)
    lowest, highest = entry.span() if entry else (math.nan, math.nan)
    if math.isnan(lowest):
        return "not yet calibrated"
    return f"{lowest:{spec}} to {highest:{spec}}"
