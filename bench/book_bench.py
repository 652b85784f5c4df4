"""Build times of `make book`: clean, no change, and after editing one package module."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from transformer_course.notebook import Timing

_EXECUTED = re.compile(r"^(?P<path>\S+?\.(?:md|ipynb)): Executed notebook in (?P<s>[\d.]+) seconds",
                       re.MULTILINE)
_BUILD_ARTEFACTS = ("html", "jupyter_execute", ".doctrees", ".jupyter_cache",
                    ".jupyter_cache.code-hash")


@dataclass(frozen=True)
class BookSettings:
    repo: Path                      # the folder with the Makefile
    book: Path                      # the folder with _config.yml (BOOK=)
    touch_module: Path              # a package module edited for the "touched" rebuild
    cache_inputs: tuple[str, ...] = ()   # CACHE_INPUTS= override; empty keeps the Makefile's
    repeats: int = 3
    make_args: tuple[str, ...] = field(default_factory=tuple)


def _make_book(s: BookSettings) -> tuple[float, str]:
    cmd = ["make", "-C", str(s.repo), "book", f"BOOK={s.book}", *s.make_args]
    if s.cache_inputs:
        cmd.append("CACHE_INPUTS=" + " ".join(s.cache_inputs))
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"make book failed ({out.returncode}):\n{out.stdout[-3000:]}"
                           f"\n{out.stderr[-3000:]}")
    return seconds, out.stdout + out.stderr


def executed_chapters(log: str) -> dict[str, float]:
    """Seconds per executed chapter, read from myst-nb's "Executed notebook in" log lines."""
    return {Path(m["path"]).name: float(m["s"]) for m in _EXECUTED.finditer(log)}


def _clean(book: Path) -> None:
    for name in _BUILD_ARTEFACTS:
        target = book / "_build" / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def run_book_bench(s: BookSettings) -> dict:
    """Edited-module rebuilds first, then clean builds, then no-change rebuilds.

    The order leaves the cache matching the restored code, so no extra build is needed afterwards.
    """
    _make_book(s)  # start from an up-to-date build
    touched, original = [], s.touch_module.read_text()
    try:
        for i in range(s.repeats):
            s.touch_module.write_text(original + f"\n# benchmark edit {i}\n")
            touched.append(_make_book(s)[0])
    finally:
        s.touch_module.write_text(original)
    clean, chapters = [], {}
    for _ in range(s.repeats):
        _clean(s.book)
        seconds, log = _make_book(s)
        clean.append(seconds)
        for name, t in executed_chapters(log).items():
            chapters.setdefault(name, []).append(t)
    noop = [_make_book(s)[0] for _ in range(s.repeats)]
    return {
        "clean": Timing.of(clean).as_dict(),
        "no_change": Timing.of(noop).as_dict(),
        "after_module_edit": Timing.of(touched).as_dict(),
        "chapters": {name: Timing.of(ts).as_dict() for name, ts in sorted(chapters.items())},
    }
