"""Claims a chapter's prose makes, checked wherever the chapter runs; the numeric path it ran on.

A chapter states a claim ("scaled attention stays above 99 % from d_k = 64 on") and then checks it
with the numbers it rests on. Claims come in three kinds, each checked as it deserves:

* **Exact** (:func:`claim`): counts, algebra, identities and settings. They hold on any CPU.
  (A claim that only re-reads a stored study is a data test in pytest, run once, not here.)
* **Float** (:func:`claim_float`): a deterministic computation, compared with a margin that comes
  from rounding error (float32's 2^-24 times what the sum's terms allow), never from training.
* **Trained** (:func:`claim_trained`): a number a training run produced. On another CPU the
  same seed is a new draw, so the claim's bounds must hold for every draw with room to spare:
  ``make calibrate`` runs the chapters under many simulated other CPUs
  (:mod:`transformer_course.draws`) and writes the values each statistic took to the calibration
  file (:mod:`transformer_course.calibration`), and the bounds must contain them with room.
  A statistic no bound holds for is shown beside its calibrated draws instead
  (:func:`observe`), never compared with one stored run.

What happens when a claim does not hold depends on who runs the chapter:

* **The build is strict.** ``make book`` (and every test that executes a chapter) sets
  :data:`STRICT_ENV`; a claim that fails there raises :class:`ClaimError`, whose message names
  the claim, its numbers and the numeric path, and the build stops. A trained claim also stops
  it when it is not calibrated or states other bounds than it was calibrated with.
* **A reader's run is friendly.** A downloaded notebook, the student edition, Binder, Colab and
  ``make lab`` run without it: each claim prints one line ("holds" or "does not hold on this
  machine", with the numbers) and the chapter goes on. A reader's CPU may pick other kernels than
  the build's, so a trained number may move; it never stops a reader's notebook.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import torch

from . import calibration
from .draws import DRAW_ENV, current_draw

STRICT_ENV = "TRANSFORMER_COURSE_STRICT"
# Environment variables that change which kernels torch, oneDNN and MKL use on the same CPU.
# A simulated other CPU (draws.py) is named with them.
NUMERIC_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS",
               DRAW_ENV)


class ClaimError(AssertionError):
    """A claim the prose makes does not hold in a strict (build) run."""


def strict() -> bool:
    """Whether a failing claim stops the run (the build) or is only reported (a reader's run)."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


@cache
def cpu_model() -> str:
    """The CPU's marketing name where the OS tells it (Linux, macOS), else the architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        import subprocess

        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], text=True,
                                  capture_output=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            pass
    return platform.processor() or platform.machine()


def environment() -> dict[str, Any]:
    """What decides a run's bits: CPU, torch's kernel level, versions, threads, numeric settings."""
    return {
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "env": {name: os.environ[name] for name in NUMERIC_ENV if name in os.environ},
    }


def numeric_path(env: Mapping[str, Any] | None = None) -> str:
    """One line naming a numeric path: ``"Intel Xeon (AVX512), torch 2.13.0, 1 thread"``."""
    env = environment() if env is None else env
    threads = env["threads"]
    line = (f"{env['cpu']} ({env['cpu_capability']}), torch {env['torch']}, "
            f"numpy {env['numpy']}, {threads} thread{'s' if threads != 1 else ''}")
    settings = ", ".join(f"{name}={value}" for name, value in env.get("env", {}).items())
    return f"{line}; {settings}" if settings else line


def _shown(value: Any) -> str:
    """A number, array or table short enough for one line of a message."""
    if hasattr(value, "to_dict") and hasattr(value, "round"):  # pandas
        value = value.round(4).to_dict()
        return str(value)[:300]
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, separator=", ", threshold=12)
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    return repr(value)[:300]


def _report(kind: str, text: Any, held: bool, numbers: dict[str, Any], note: str = "") -> None:
    """Raise (strict) or print one line (a reader's run) for a claim of ``kind``."""
    if not isinstance(text, str) or not text.strip():
        raise TypeError(f"text must be a non-empty string naming the claim; got {text!r}")
    shown = ", ".join(f"{name} = {_shown(value)}" for name, value in numbers.items())
    if strict():
        if not held:
            raise ClaimError(f"the {kind} claim {text!r} does not hold on this numeric path "
                             f"[{numeric_path()}]" + (f": {shown}" if shown else "") + note)
        return
    verdict = "holds" if held else "does NOT hold on this machine (the chapter goes on)"
    print(f"{'✓' if held else '✗'} claim {text!r} {verdict}"
          + (f"; the numbers: {shown}" if shown else "") + note)


def claim(text: str, holds: Any, **numbers: Any) -> None:
    """Check an *exact* claim the prose makes (a count, an identity, a setting): ``text`` quotes
    or names it, ``holds`` is whether this run bears it out, and ``numbers`` are the values it
    rests on (shown when it is reported).

    Strict (the build): raises :class:`ClaimError` when it does not hold, and says nothing when
    it does. Otherwise prints one line saying whether it holds on this machine. Returns nothing,
    so a claim that ends a cell adds no output to it.
    """
    _report("exact", text, bool(holds), numbers)


def claim_float(text: str, holds: Any, **numbers: Any) -> None:
    """Check a *float* claim: a deterministic computation within a margin set by rounding
    error (the comment beside the call says which). Reported as :func:`claim` reports."""
    _report("float", text, bool(holds), numbers)


def _number(value: Any) -> float:
    """A trained statistic as a float; None (a run that never got there) is NaN."""
    if value is None:
        return math.nan
    if isinstance(value, torch.Tensor | np.ndarray | np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"value must be a single real number or None; got {value!r}")
    return float(value)


def _record(key: str, text: str, value: float, low: float | None, high: float | None) -> None:
    """Append the statistic to the calibration run's record, when this run is one."""
    out = os.environ.get(calibration.RECORD_ENV)
    if not out:
        return
    with open(out, "a", encoding="utf-8") as record:
        record.write(json.dumps({"key": key, "text": text, "low": low, "high": high,
                                 "value": None if math.isnan(value) else value,
                                 "draw": current_draw()}) + "\n")


def claim_trained(key: str, text: str, value: Any, *, low: float | None = None,
                  high: float | None = None, **numbers: Any) -> None:
    """Check a *trained* claim: the statistic ``value`` (None counts as NaN: a run that never got
    there) lies within ``[low, high]`` (either side may be open). ``key`` names the statistic
    in the calibration file, whose draws the bounds must contain with room to spare.

    Strict (the build): raises :class:`ClaimError` when the value falls outside the bounds,
    when the statistic was never calibrated, or when the bounds differ from the calibrated ones
    (run ``make calibrate``). A reader's run prints one line, with the calibrated span.
    """
    if not isinstance(key, str) or not key or any(c.isspace() for c in key):
        raise ValueError(f"key must be a non-empty string without spaces; got {key!r}")
    if low is None and high is None:
        raise ValueError("low or high must bound the claim; got neither")
    number = _number(value)
    _record(key, text, number, low, high)
    held = ((low is None or low <= number) and (high is None or number <= high))
    entry, note = calibration.statistic(key), ""
    if strict() and entry is None:
        raise ClaimError(f"the trained claim {text!r} is not calibrated: statistic {key!r} is "
                         f"not in {calibration.CALIBRATION_PATH.name} (run make calibrate)")
    if strict() and (entry.low, entry.high) != (low, high):
        raise ClaimError(f"the trained claim {text!r} states bounds {(low, high)}, but was "
                         f"calibrated with {(entry.low, entry.high)} (run make calibrate)")
    if entry is not None:
        lowest, highest = entry.span()
        note = f" (in {len(entry.values)} calibrated runs: {lowest:.4g} to {highest:.4g})"
    _report("trained", text, held, {"value": number, "low": low, "high": high, **numbers}, note)


def observe(key: str, value: Any) -> None:
    """Record a trained statistic the page shows beside its calibrated draws without claiming
    anything about it ("your run"); checks nothing."""
    if not isinstance(key, str) or not key or any(c.isspace() for c in key):
        raise ValueError(f"key must be a non-empty string without spaces; got {key!r}")
    _record(key, "", _number(value), None, None)
