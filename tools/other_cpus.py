"""`make other-cpus`: every chapter, claims strict, on the other CPUs this machine can play.

Another CPU rounds differently, and a seeded training run there is a new draw. This machine plays
five others: torch's plain kernels (``ATEN_CPU_CAPABILITY=default``), MKL's vendor-neutral path
(``MKL_CBWR=COMPATIBLE``) and three simulated CPUs (``TRANSFORMER_COURSE_DRAW``: every initial
weight moved by one float32 ulp; transformer_course.draws), drawn apart from the draws the
calibration file was made on. Every chapter runs under each, top to bottom in a fresh kernel in a
temporary folder, with the build's strictness, so every claim must hold on each.

    python tools/other_cpus.py                       # the chapters' downloads (the built site's)
    python tools/other_cpus.py --sources             # their MyST sources, as the build runs them
    python tools/other_cpus.py --only draw-1001 book/06_training.md

``tests/test_numeric_paths.py`` runs the same settings on the downloads, one test per chapter and
setting. Exits 1 when any chapter fails anywhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import run_chapters
import toc_chapters

REPO = Path(__file__).resolve().parent.parent
HTML = REPO / "_build" / "html"
STRICT = {"TRANSFORMER_COURSE_STRICT": "1", "OMP_NUM_THREADS": "1"}
# Chosen after the calibration, apart from its draws (tests/test_calibration.py checks that).
CHECK_DRAWS = (1001, 1002, 1003)
SETTINGS: dict[str, dict[str, str]] = {
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    **{f"draw-{k}": {"TRANSFORMER_COURSE_DRAW": str(k)} for k in CHECK_DRAWS},
}


def download(source: Path) -> Path:
    """The built site's readable notebook of the chapter ``source`` (``book/NN_x.md``)."""
    return HTML / "_sources" / source.with_suffix(".ipynb")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", type=Path,
                        help="chapter sources (default: every chapter in _toc.yml)")
    parser.add_argument("--sources", action="store_true",
                        help="run the MyST sources instead of the built downloads")
    parser.add_argument("--only", default=",".join(SETTINGS),
                        help=f"comma-separated settings out of {', '.join(SETTINGS)}, or draw-K")
    parser.add_argument("--jobs", type=int, default=1, help="chapters run at once")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may take")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    settings = {}
    for name in names:
        if name in SETTINGS:
            settings[name] = SETTINGS[name]
        elif name.startswith("draw-") and name[5:].isdigit():
            settings[name] = {"TRANSFORMER_COURSE_DRAW": name[5:]}
        else:
            parser.error(f"--only: unknown setting {name!r}; choose from {list(SETTINGS)}")
    sources = args.chapters or toc_chapters.chapters(REPO, notebooks_only=True)
    paths = [str(REPO / s if args.sources else download(s)) for s in sources]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        parser.error(f"no such notebook: {missing[0]} (make book writes the downloads)")
    runs = [(path, {**STRICT, **env}) for env in settings.values() for path in paths]
    labels = [name for name in settings for _ in paths]
    failed = 0
    for i, outcome in run_chapters.run_many(runs, args.jobs, args.timeout):
        status = "passed" if outcome.passed else "FAILED"
        print(f"{Path(outcome.chapter).stem} ({labels[i]}): {status} in {outcome.seconds:.0f} s",
              flush=True)
        if not outcome.passed:
            failed += 1
            print("  " + outcome.error.replace("\n", "\n  "), flush=True)
    print(f"{len(runs) - failed} of {len(runs)} runs held every claim")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
