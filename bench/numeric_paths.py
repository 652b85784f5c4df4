"""How far every glued number moves across numeric paths: which digits a reader can trust.

Runs every chapter (its MyST source, in a fresh kernel in a temporary folder, claims strict) on
three numeric paths of this machine: its own kernels, ``ATEN_CPU_CAPABILITY=default`` and
``MKL_CBWR=COMPATIBLE`` (``tools/run_chapters.py``), and compares the numbers each glued. A
number's movement is its largest difference from the native value, absolute and relative.
Timed glue keys (``-timed``) are the machine's speed, not its arithmetic, and are left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from transformer_course.notebook import TIMED_SUFFIX

from .stats import format_table

REPO = Path(__file__).resolve().parent.parent
PATHS = {"native": [], "aten-default": ["ATEN_CPU_CAPABILITY=default"],
         "mkl-compatible": ["MKL_CBWR=COMPATIBLE"]}
# Numbers this small on every path are rounding differences (PyTorch parity, identities): their
# relative movement says nothing about which digits of a result to trust, so the table of the
# largest movements leaves them out (the JSON keeps them).
ROUNDING_LEVEL = 1e-4


def run_path(chapters: list[Path], settings: list[str], jobs: int) -> dict:
    """Run ``chapters`` on one numeric path; {chapter stem: {"passed", "seconds", "glued"}}."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "glued.json"
        command = [sys.executable, str(REPO / "tools" / "run_chapters.py"), "--strict",
                   "--jobs", str(jobs), "--glued", str(out)]
        for setting in settings:
            command += ["--set", setting]
        subprocess.run(command + [str(c) for c in chapters], cwd=REPO, check=False)
        outcomes = json.loads(out.read_text())["outcomes"]
    return {Path(o["chapter"]).stem: {"passed": o["passed"], "seconds": o["seconds"],
                                      "glued": o["glued"], "error": o["error"]}
            for o in outcomes}


def movements(runs: dict[str, dict]) -> list[dict]:
    """Per chapter and glue key, the native value and the largest move on another path."""
    rows = []
    native = runs["native"]
    for chapter, base in native.items():
        for key, value in base["glued"].items():
            if key.endswith(TIMED_SUFFIX) or not isinstance(value, int | float) \
                    or isinstance(value, bool):
                continue
            others = {name: run[chapter]["glued"].get(key) for name, run in runs.items()
                      if name != "native"}
            moved = max((abs(v - value) for v in others.values()
                         if isinstance(v, int | float)), default=0.0)
            rows.append({"chapter": chapter, "key": key, "native": value, **others,
                         "moved": moved, "relative": moved / abs(value) if value else moved})
    return rows


def run_numeric_paths_bench(book: Path, chapters: list[Path], jobs: int) -> dict:
    runs = {name: run_path([book / c for c in chapters], settings, jobs)
            for name, settings in PATHS.items()}
    return {"paths": {name: {c: {k: r[k] for k in ("passed", "seconds", "error")}
                             for c, r in run.items()} for name, run in runs.items()},
            "movements": movements(runs)}


def render_numeric_paths(results: dict, top: int = 5) -> str:
    rows = [[name, c, "passed" if r["passed"] else "FAILED", f"{r['seconds']:.1f}"]
            for name, run in results["paths"].items() for c, r in run.items()]
    parts = ["Numeric paths (every chapter, claims strict)\n"
             + format_table(["path", "chapter", "claims", "seconds"], rows)]
    def rounding(row: dict) -> bool:
        values = [row.get(name) for name in PATHS if name != "native"] + [row["native"]]
        return all(isinstance(v, int | float) and abs(v) < ROUNDING_LEVEL for v in values)

    moved = sorted((r for r in results["movements"] if not rounding(r)),
                   key=lambda r: (r["chapter"], -r["relative"]))
    table, seen = [], {}
    for row in moved:
        seen[row["chapter"]] = seen.get(row["chapter"], 0) + 1
        if seen[row["chapter"]] <= top and row["moved"] > 0:
            table.append([row["chapter"], row["key"], f"{row['native']:.4g}",
                          f"{row.get('aten-default', float('nan')):.4g}",
                          f"{row.get('mkl-compatible', float('nan')):.4g}",
                          f"{row['relative']:.1%}"])
    still = sum(1 for r in results["movements"] if r["moved"] == 0)
    small = sum(1 for r in results["movements"] if rounding(r))
    parts.append(f"Glued numbers that move most across paths ({top} per chapter; {still} of "
                 f"{len(results['movements'])} glued numbers did not move at all; {small} below "
                 f"{ROUNDING_LEVEL:g} on every path, rounding differences, left out)\n"
                 + format_table(["chapter", "key", "native", "aten-default", "mkl-compatible",
                                 "moved"], table))
    return "\n".join(parts)
