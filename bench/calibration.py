"""`make calibrate`: every trained statistic over this CPU and many simulated other CPUs.

Runs every chapter (its MyST source, in a fresh kernel in a temporary folder, as a reader runs
it, claims not strict so that every statistic is recorded) on this CPU as it is and under draws
1..N of ``TRANSFORMER_COURSE_DRAW`` (each moves every initial weight by one float32 ulp:
:mod:`transformer_course.draws`). Each :func:`~transformer_course.claims.claim_trained` and
:func:`~transformer_course.claims.observe` call records its statistic; this collects them into
the calibration file (:data:`transformer_course.calibration.CALIBRATION_PATH`) with its
environment record beside it, prints each statistic's span against its claim's bounds, and exits
1 when a claim has no room (its bounds do not contain the padded span) or a chapter failed.

    python -m bench.calibration                       # every chapter, 20 draws (about 1.5 h
                                                      # on a 2-core machine)
    python -m bench.calibration --chapters 06 --jobs 2  # one chapter again, the rest kept

The draws the CI checks (``tools/other_cpus.py``) are chosen apart from the calibrated ones.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import fcntl
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from transformer_course import calibration
from transformer_course.calibration import CALIBRATION_PATH, MIN_DRAWS, RECORD_ENV, Statistic
from transformer_course.claims import STRICT_ENV, environment
from transformer_course.draws import DRAW_ENV
from transformer_course.stored import environment_path, machine_of, record_environment

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import run_chapters  # noqa: E402
import toc_chapters  # noqa: E402

NATIVE = "native"
TRAINED = re.compile(r"(?<!def )\b(claim_trained|observe)\(")  # a call: a trained statistic
PACKAGE = REPO / "code"


def imported_sources(chapter: Path) -> list[Path]:
    """The package's source files that ``chapter``'s code cells import by name: ``from a.b import
    c`` gives ``a/b/c.py`` where that is a module, else ``a/b.py`` or ``a/b/__init__.py``."""
    found: dict[Path, None] = {}  # each once, in the order first imported
    for cell in run_chapters.read(chapter).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                            if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:  # an exercise's unfinished code: it imports nothing
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                base = PACKAGE.joinpath(*name.split("."))
                source = next((p for p in (base.with_suffix(".py"), base / "__init__.py",
                                           base.parent.with_suffix(".py"),
                                           base.parent / "__init__.py") if p.is_file()), None)
                if source is not None:
                    found[source] = None
    return list(found)


def has_trained_statistics(chapter: Path) -> bool:
    """Whether ``chapter`` (a MyST source) records a trained statistic: in its own cells, or in a
    module of the package it imports (each chapter's ``page.py`` makes its claims)."""
    return any(TRAINED.search(path.read_text(encoding="utf-8"))
               for path in (chapter, *imported_sources(chapter)))


def record_machines(path: Path, ran: set[str], kept: set[str]) -> None:
    """Write the environment record of the calibration file ``path``, with the machine each of
    its chapters (``kept``) was calibrated on: this one for those that ``ran``, the previous
    record's for the others (a file recalibrated a few chapters at a time is made in parts)."""
    record = environment_path(path)
    before = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None
    earlier = (before.get("machines") or {c: machine_of(before) for c in kept}) if before else {}
    here = machine_of(environment())
    record_environment(path, machines={c: here if c in ran else earlier.get(c, "unrecorded")
                                       for c in sorted(kept)})


def run_label(draw: int | None) -> str:
    """How the calibration file names a run: ``"native"`` or ``"draw k"``."""
    return NATIVE if draw is None else f"draw {draw}"


def read_record(path: Path) -> dict[str, dict]:
    """The statistics one run recorded, by key (the last value where a key repeats)."""
    entries: dict[str, dict] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            entries[entry["key"]] = entry
    return entries


def calibrate(chapters: list[Path], draws: list[int | None], jobs: int, timeout: int,
              ) -> tuple[dict[str, dict], list[str]]:
    """Run every chapter on every draw; the statistics by key, and the failed runs."""
    pairs = [(chapter, draw) for draw in draws for chapter in chapters]
    statistics: dict[str, dict] = {}
    values: dict[str, dict[str, float | None]] = defaultdict(dict)
    failures = []
    with tempfile.TemporaryDirectory(prefix="calibration-") as folder:
        records = [Path(folder) / f"{chapter.stem}-{run_label(draw).replace(' ', '')}.jsonl"
                   for chapter, draw in pairs]
        # never strict, whatever the caller's environment: a calibration run records every
        # statistic, a claim not calibrated yet among them
        runs = [(str(chapter), {RECORD_ENV: str(record), "OMP_NUM_THREADS": "1", STRICT_ENV: "0",
                                **({} if draw is None else {DRAW_ENV: str(draw)})})
                for (chapter, draw), record in zip(pairs, records, strict=True)]
        for i, outcome in run_chapters.run_many(runs, jobs, timeout):
            chapter, record, label = pairs[i][0], records[i], run_label(pairs[i][1])
            print(f"{chapter.stem} {label}: {'ran' if outcome.passed else 'FAILED'} in "
                  f"{outcome.seconds:.0f} s", flush=True)
            if not outcome.passed:
                failures.append(f"{chapter.stem} {label}: {outcome.error}")
            for key, entry in read_record(record).items():
                statistics[key] = {"chapter": chapter.stem, "text": entry["text"],
                                   "low": entry["low"], "high": entry["high"]}
                values[key][label] = entry["value"]
    labels = [run_label(draw) for draw in draws]
    for key, entry in statistics.items():
        entry["values"] = [values[key].get(label) for label in labels]
    return statistics, failures


def report(statistics: dict[str, Statistic]) -> list[str]:
    """One line per statistic (span, padded span, bounds); the keys of claims without room."""
    without_room = []
    for key, stat in sorted(statistics.items()):
        lowest, highest = stat.span()
        bounds = f"[{stat.low}, {stat.high}]" if stat.claimed else "shown, not claimed"
        ok = not stat.claimed or stat.has_room()
        if not ok:
            without_room.append(key)
        print(f"{'  ' if ok else '!!'} {key}: {lowest:.4g} .. {highest:.4g} over "
              f"{len(stat.values)} runs; padded {stat.padded()[0]:.4g} .. {stat.padded()[1]:.4g}; "
              f"bounds {bounds}")
    return without_room


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on a file beside ``path`` while the block runs."""
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.calibration",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=MIN_DRAWS,
                        help=f"simulated other CPUs, draws 1..N (default {MIN_DRAWS})")
    parser.add_argument("--chapters", default="",
                        help="comma-separated chapter prefixes (e.g. 06,07): recalibrate only "
                             "these and keep the file's other chapters")
    parser.add_argument("--jobs", type=int, default=2, help="chapters run at once")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may take")
    parser.add_argument("--out", type=Path, default=CALIBRATION_PATH)
    args = parser.parse_args(argv)
    if args.draws < MIN_DRAWS:
        parser.error(f"--draws must be at least {MIN_DRAWS}; got {args.draws}")
    chapters = [c for c in toc_chapters.chapters(REPO, notebooks_only=True)
                if has_trained_statistics(REPO / c)]
    wanted = [c.strip() for c in args.chapters.split(",") if c.strip()]
    if wanted:
        chapters = [c for c in chapters if any(c.stem.startswith(w) for w in wanted)]
        if not chapters:
            parser.error(f"--chapters: no chapter starts with {wanted}")
    draws: list[int | None] = [None, *range(1, args.draws + 1)]
    found, failures = calibrate([REPO / c for c in chapters], draws, args.jobs, args.timeout)
    labels = [run_label(draw) for draw in draws]
    with _locked(args.out):  # calibrations of other chapters may finish at the same time
        old = json.loads(args.out.read_text()) if args.out.is_file() else {"statistics": {}}
        if wanted:  # keep the other chapters' statistics, which need the same runs
            if old.get("runs") not in (None, labels):
                parser.error(f"--chapters: the file was calibrated on other runs "
                             f"({old['runs']}); recalibrate every chapter")
            ran = {c.stem for c in chapters}
            found = {**{k: v for k, v in old["statistics"].items() if v["chapter"] not in ran},
                     **found}
        document = {"runs": labels, "statistics": dict(sorted(found.items()))}
        args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        record_machines(args.out, {c.stem for c in chapters},
                        {stat["chapter"] for stat in found.values()})
    without_room = report(calibration.statistics(args.out))
    print(f"wrote {args.out} ({len(found)} statistics over {len(labels)} runs)")
    for failure in failures:
        print(f"FAILED {failure}")
    if without_room:
        print(f"no room for {len(without_room)} claim(s): {', '.join(without_room)}")
    return 1 if failures or without_room else 0


if __name__ == "__main__":
    sys.exit(main())
