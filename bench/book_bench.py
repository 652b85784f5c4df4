"""Build times of `make book`: clean (serial against parallel, paired in each round), after editing
one chapter-specific module, and with no change; and whether serial and parallel builds executed
the chapters identically."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from transformer_course.notebook import Timing

from .determinism import compare_executed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from build_book import usable_cores  # noqa: E402  (tools/ is no package)

# One line per executed chapter, from MyST-NB (serial builds) or tools/build_book.py (parallel).
_EXECUTED = re.compile(r"^(?P<path>\S+?\.(?:md|ipynb)): Executed notebook in (?P<s>[\d.]+) seconds",
                       re.MULTILINE)
_BUILD_ARTEFACTS = ("html", "jupyter_execute", ".doctrees", ".jupyter_cache",
                    ".jupyter_cache.chapters.json", ".site-inputs", "build.log")
CORES = usable_cores()  # what `make book` uses by default, on any platform


@dataclass(frozen=True)
class BookSettings:
    repo: Path                      # the folder with the Makefile
    book: Path                      # the folder with _config.yml (BOOK=)
    touch_module: Path              # a chapter-specific module edited for the "touched" rebuild
    cache_inputs: tuple[str, ...] = ()   # CACHE_INPUTS= override; empty keeps the Makefile's
    repeats: int = 3
    jobs: int = CORES               # parallel chapter executions (JOBS=) of the parallel builds
    make_args: tuple[str, ...] = field(default_factory=tuple)


def timed_make_book(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Run a `make ... book` command line; its wall time and its log (stdout and stderr).

    Raises:
        RuntimeError: the build failed (with the ends of its log).
    """
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout[-3000:]}"
                           f"\n{out.stderr[-3000:]}")
    return seconds, out.stdout + out.stderr


def _make_book(s: BookSettings, jobs: int | None = None) -> tuple[float, str]:
    cmd = ["make", "-C", str(s.repo), "book", f"BOOK={s.book}",
           f"JOBS={s.jobs if jobs is None else jobs}", *s.make_args]
    if s.cache_inputs:
        cmd.append("CACHE_INPUTS=" + " ".join(s.cache_inputs))
    return timed_make_book(cmd)


def executed_chapters(log: str) -> dict[str, float]:
    """Seconds per executed chapter, read from the "Executed notebook in" log lines."""
    return {Path(m["path"]).name: float(m["s"]) for m in _EXECUTED.finditer(log)}


def _clean(book: Path) -> None:
    for name in _BUILD_ARTEFACTS:
        target = book / "_build" / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _edited_rebuilds(s: BookSettings) -> list[dict]:
    """Append a comment to the module, rebuild, note which chapters re-executed; restore."""
    runs, original = [], s.touch_module.read_text()
    try:
        for i in range(s.repeats):
            s.touch_module.write_text(original + f"\n# benchmark edit {i}\n")
            seconds, log = _make_book(s)
            executed = executed_chapters(log)
            runs.append({"seconds": seconds, "executed": executed,
                         "slowest_chapter_s": max(executed.values(), default=0.0)})
    finally:
        s.touch_module.write_text(original)
    return runs


def run_book_bench(s: BookSettings) -> dict:
    """Edited-module rebuilds first, then clean builds (serial and parallel, the order alternating
    from round to round), then no-change rebuilds.

    The order leaves the cache matching the restored code, so no extra build is needed afterwards.
    The first round's executed notebooks of the serial and the parallel build are compared.
    """
    _make_book(s)  # start from an up-to-date build
    edits = _edited_rebuilds(s)
    clean: dict[str, list[float]] = {"serial": [], "parallel": []}
    chapters: dict[str, dict[str, list[float]]] = {"serial": {}, "parallel": {}}
    with tempfile.TemporaryDirectory() as keep:
        for round_ in range(s.repeats):
            modes = ("serial", "parallel") if round_ % 2 == 0 else ("parallel", "serial")
            for mode in modes:
                _clean(s.book)
                seconds, log = _make_book(s, jobs=0 if mode == "serial" else s.jobs)
                clean[mode].append(seconds)
                for name, t in executed_chapters(log).items():
                    chapters[mode].setdefault(name, []).append(t)
                if round_ == 0:
                    shutil.copytree(s.book / "_build" / "jupyter_execute", Path(keep) / mode)
        determinism = compare_executed(Path(keep) / "serial", Path(keep) / "parallel")
    if modes[-1] == "serial":  # after a serial build the first rebuild looks its chapters up
        _make_book(s)          # in the cache; after a parallel one it is already a no-op
    noop = [_make_book(s)[0] for _ in range(s.repeats)]
    slowest = statistics.median(e["slowest_chapter_s"] for e in edits)
    return {
        "jobs": s.jobs,
        "clean": Timing.of(clean["parallel"]).as_dict(),
        "clean_serial": Timing.of(clean["serial"]).as_dict(),
        "serial_over_parallel": statistics.median(
            a / b for a, b in zip(clean["serial"], clean["parallel"], strict=True)),
        "no_change": Timing.of(noop).as_dict(),
        "after_module_edit": Timing.of([e["seconds"] for e in edits]).as_dict(),
        "edited_module": _shown(s.touch_module, s.repo),
        "re_executed": sorted({name for e in edits for name in e["executed"]}),
        "slowest_affected_chapter_s": slowest,
        "chapters": {name: Timing.of(ts).as_dict()
                     for name, ts in sorted(chapters["serial"].items())},
        "chapters_parallel": {name: Timing.of(ts).as_dict()
                              for name, ts in sorted(chapters["parallel"].items())},
        "determinism": determinism,
    }


def run_test_bench(repo: Path, jobs: int = CORES) -> dict:
    """Time `make test` once, after the book is built (its book step is then a no-op)."""
    start = time.perf_counter()
    out = subprocess.run(["make", "-C", str(repo), "test", f"JOBS={jobs}"], capture_output=True,
                         text=True)
    seconds = time.perf_counter() - start
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    summary = next((line.strip("= ") for line in reversed(lines)
                    if " passed" in line or " failed" in line), lines[-1] if lines else "")
    return {"seconds": seconds, "returncode": out.returncode, "summary": summary, "jobs": jobs}


def _shown(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(path)
