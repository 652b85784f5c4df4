"""Claims a chapter's prose makes, checked wherever the chapter runs; the numeric path it ran on.

A chapter states a claim ("scaled attention stays above 99 % from d_k = 64 on") and then checks it
with :func:`claim`, giving the numbers the claim rests on. What happens when the claim does not
hold depends on who runs the chapter:

* **The build is strict.** ``make book`` (and every test that executes a chapter) sets
  :data:`STRICT_ENV`; a claim that fails there raises :class:`ClaimError`, whose message names
  the claim, its numbers and the numeric path, and the build stops.
* **A reader's run is friendly.** A downloaded notebook, the student edition, Binder, Colab and
  ``make lab`` run without it: each claim prints one line ("holds" or "does not hold on this
  machine", with the numbers) and the chapter goes on. A reader's CPU may pick other kernels than
  the build's, so a trained number may move; it never stops a reader's notebook.

A claim about a trained model holds with a margin measured across numeric paths and seeds, stated
in a comment beside the check; counts, algebra and identities hold exactly on any CPU.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import torch

STRICT_ENV = "TRANSFORMER_COURSE_STRICT"
# Environment variables that change which kernels torch, oneDNN and MKL use on the same CPU.
NUMERIC_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS")


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


def claim(text: str, holds: Any, **numbers: Any) -> None:
    """Check a claim the prose makes: ``text`` quotes or names it, ``holds`` is whether this run
    bears it out, and ``numbers`` are the values it rests on (shown when it is reported).

    Strict (the build): raises :class:`ClaimError` when it does not hold, and says nothing when
    it does. Otherwise prints one line saying whether it holds on this machine. Returns nothing,
    so a claim that ends a cell adds no output to it.
    """
    if not isinstance(text, str) or not text.strip():
        raise TypeError(f"text must be a non-empty string naming the claim; got {text!r}")
    held = bool(holds)
    shown = ", ".join(f"{name} = {_shown(value)}" for name, value in numbers.items())
    if strict():
        if not held:
            raise ClaimError(f"the claim {text!r} does not hold on this numeric path "
                              f"[{numeric_path()}]" + (f": {shown}" if shown else ""))
        return
    verdict = "holds" if held else "does NOT hold on this machine (the chapter goes on)"
    print(f"{'✓' if held else '✗'} claim {text!r} {verdict}" + (f"; the numbers: {shown}" if shown
                                                                 else ""))
