"""`make other-cpus`: every chapter, claims strict, on the other CPUs this machine can play.

Another CPU rounds differently, and a seeded training run there is a new draw. This machine plays
others in two ways: by taking another numeric path through the same libraries (torch's plain
kernels, ``ATEN_CPU_CAPABILITY=default``; MKL's vendor-neutral code, ``MKL_CBWR=COMPATIBLE``:
what an older or a non-Intel CPU takes) and by simulating a CPU (``TRANSFORMER_COURSE_DRAW``:
every initial weight moved by one float32 ulp; transformer_course.draws), with draws chosen apart
from those the calibration file was made on. Each setting below is one other CPU that differs in
both ways at once, so three runs of a chapter cover both paths and three draws:

- ``aten-default+draw-1001``: plain kernels and draw 1001;
- ``mkl-compatible+draw-1002``: MKL's vendor-neutral path and draw 1002;
- ``draw-1003``: draw 1003 on this machine's own paths.

CI (``make check``) plays one other CPU, on every chapter: the last setting on the oldest torch the
package accepts (``tests/test_oldest_torch.py``), whose kernels round in ways of their own, so
that run differs from this machine's in its numeric path and in its draw. The other two settings
are this tool's (CI's half hour): run it before a release, and after a change to a claim, a
calibration or a chapter's training.

Every chapter runs under each, top to bottom in a fresh kernel in a temporary folder, with the
build's strictness, so every claim must hold on each. ``--only`` takes any of them, or one path
or draw alone (``aten-default``, ``mkl-compatible``, ``draw-K``; ``+`` joins them):

    python tools/other_cpus.py                       # the chapters' downloads (the built site's)
    python tools/other_cpus.py --sources             # their MyST sources, as the build runs them
    python tools/other_cpus.py --only draw-1004,aten-default book/06_training.md

Exits 1 when any chapter fails anywhere.
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
PATHS: dict[str, dict[str, str]] = {
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
}
# Draws chosen after the calibration, apart from its own (tests/test_calibration.py checks that).
SETTINGS = ("aten-default+draw-1001", "mkl-compatible+draw-1002", "draw-1003")
OLDEST_TORCH_SETTING = SETTINGS[-1]  # what `make check` plays, on the oldest torch


def setting(name: str) -> dict[str, str]:
    """The environment of a setting: paths and draws joined by "+" ("aten-default+draw-1001");
    ValueError for a part that is neither a path of :data:`PATHS` nor ``draw-K``."""
    env: dict[str, str] = {}
    for part in name.split("+"):
        if part in PATHS:
            env.update(PATHS[part])
        elif part.startswith("draw-") and part[5:].isdigit():
            env["TRANSFORMER_COURSE_DRAW"] = part[5:]
        else:
            raise ValueError(f"setting: unknown part {part!r} of {name!r}; choose from "
                             f"{list(PATHS)} or draw-K, joined by +")
    return env


CHECK_DRAWS = tuple(int(setting(name)["TRANSFORMER_COURSE_DRAW"]) for name in SETTINGS)


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
                        help=f"comma-separated settings (default {', '.join(SETTINGS)}); a "
                             f"setting joins with + any of {', '.join(PATHS)} and draw-K")
    parser.add_argument("--jobs", type=int, default=1, help="chapters run at once")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a cell may take")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    try:
        settings = {name: setting(name) for name in names}
    except ValueError as error:
        parser.error(f"--only: {error}")
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
