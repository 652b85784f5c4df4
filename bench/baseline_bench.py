"""A clean `make book` of this checkout against a baseline checkout (an older commit: `git worktree
add --detach ../before REV`), built in alternating order in each round on the same machine, so
that the ratio compares like with like while the machine's load drifts.

Both builds use this checkout's virtual environment with its install step skipped (`INSTALLED=`);
the baseline's chapters import the baseline's own package (PYTHONPATH=<baseline>/code).
"""

from __future__ import annotations

import os
import statistics
import subprocess
from pathlib import Path

from transformer_course.notebook import Timing

from .book_bench import _clean, executed_chapters, timed_make_book


def _clean_build(checkout: Path, venv: Path, jobs: int) -> tuple[float, dict[str, float]]:
    _clean(checkout)
    seconds, log = timed_make_book(
        ["make", "-C", str(checkout), "book", f"JOBS={jobs}", f"VENV={venv}", "INSTALLED="],
        env={**os.environ, "PYTHONPATH": str(checkout / "code")})
    return seconds, executed_chapters(log)


def run_baseline_bench(current: Path, baseline: Path, venv: Path, jobs: int,
                       repeats: int) -> dict:
    """`repeats` rounds, each a clean build of both checkouts (order alternating by round).

    Returns the clean-build timings of each, the median of the paired ratios current/baseline, and
    each chapter's median execution time in each.
    """
    seconds: dict[str, list[float]] = {"current": [], "baseline": []}
    chapters: dict[str, dict[str, list[float]]] = {"current": {}, "baseline": {}}
    folders = {"current": current, "baseline": baseline}
    for round_ in range(repeats):
        order = ("baseline", "current") if round_ % 2 == 0 else ("current", "baseline")
        for which in order:
            took, executed = _clean_build(folders[which], venv, jobs)
            seconds[which].append(took)
            for name, t in executed.items():
                chapters[which].setdefault(name, []).append(t)
    names = sorted(chapters["current"].keys() | chapters["baseline"].keys())
    return {
        "jobs": jobs,
        "baseline": str(baseline),
        "baseline_commit": _commit(baseline),
        "current_commit": _commit(current),
        "clean_current": Timing.of(seconds["current"]).as_dict(),
        "clean_baseline": Timing.of(seconds["baseline"]).as_dict(),
        "current_over_baseline": statistics.median(
            a / b for a, b in zip(seconds["current"], seconds["baseline"], strict=True)),
        "chapters": {name: {which: (statistics.median(chapters[which][name])
                                    if name in chapters[which] else None)
                            for which in ("current", "baseline")} for name in names},
    }


def _commit(checkout: Path) -> str:
    out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def render_baseline(result: dict) -> str:
    def s(d: dict) -> str:
        return f"{d['median']:.1f} s [{d['min']:.1f}, {d['max']:.1f}] (n={d['repeats']})"

    lines = [f"Clean make book against a baseline ({result['jobs']} chapters at a time)",
             f"  this checkout ({result['current_commit']}): {s(result['clean_current'])}",
             f"  baseline ({result['baseline_commit']}):      {s(result['clean_baseline'])}",
             f"  this / baseline (median of paired rounds): "
             f"{result['current_over_baseline']:.2f}x",
             "  chapter execution, median s (this | baseline):"]
    for name, t in result["chapters"].items():
        cur, base = (f"{v:.1f}" if v is not None else "-" for v in (t["current"], t["baseline"]))
        lines.append(f"    {name}: {cur} | {base}")
    return "\n".join(lines)
