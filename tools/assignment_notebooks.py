"""The graded assignments: nbgrader's course folder ``assignments/``, and the students' notebooks.

    python tools/assignment_notebooks.py OUT     (make assignments: _build/assignments)

Every exercise of the book that a checker of ``transformer_course.exercises`` checks is one
assignment, named by the exercise's label (``ch2-ex-softmax``): one notebook of the same name in
``assignments/source/<label>/``, holding the solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` and, in its last test cell, tests between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS``. nbgrader's ``generate_assignment`` writes what students get: each
solution replaced by a stub, each hidden test removed. nbgrader runs in a copy of the course
folder, so its database and output folders never land in ``assignments/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE = REPO / "assignments"  # nbgrader's course folder: nbgrader_config.py, source/
SOURCE = COURSE / "source"
RUBRICS = COURSE / "RUBRICS.md"  # how to mark by hand every exercise that no test checks


def assignment_names() -> list[str]:
    """The assignments, in order: each folder of ``source/`` holding a notebook of its name."""
    return sorted(p.parent.name for p in SOURCE.glob("*/*.ipynb") if p.stem == p.parent.name)


def grade_ids(notebook: Path) -> set[str]:
    """The ids nbgrader gives the notebook's cells (kept in the students' copies too)."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    return {cell["metadata"]["nbgrader"]["grade_id"] for cell in cells
            if "grade_id" in cell.get("metadata", {}).get("nbgrader", {})}


def owners() -> dict[str, str]:
    """Each cell id of the source notebooks -> the assignment whose notebook holds it."""
    return {grade_id: name for name in assignment_names()
            for grade_id in grade_ids(SOURCE / name / f"{name}.ipynb")}


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Run an nbgrader command in the course folder ``course`` with this Python."""
    # nbgrader runs `alembic` (installed beside it) by name to create its database
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          capture_output=True, text=True, env={**os.environ, "PATH": path})


def prepare_course(work: Path, names: Iterable[str]) -> Path:
    """A fresh course folder ``work`` (replaced) with the configuration and the sources of
    ``names``, each released: ``release/<name>/<name>.ipynb``, and nbgrader's database holding
    every test, the hidden ones included, for grading."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copy2(COURSE / "nbgrader_config.py", work)
    for name in names:
        shutil.copytree(SOURCE / name, work / "source" / name)
    done = nbgrader(work, "generate_assignment", "*", "--force")
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{done.stderr[-4000:]}")
    return work


def write_release(out: Path) -> list[Path]:
    """The students' notebooks, ``out/<name>.ipynb`` for each assignment (``out`` replaced)."""
    names = assignment_names()
    with tempfile.TemporaryDirectory() as tmp:
        course = prepare_course(Path(tmp) / "course", names)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for name in names:
            shutil.copy2(course / "release" / name / f"{name}.ipynb", out / f"{name}.ipynb")
    return [out / f"{name}.ipynb" for name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the students' notebooks into")
    args = parser.parse_args()
    written = write_release(args.out.resolve())
    print(f"{len(written)} assignment notebooks in {args.out}")


if __name__ == "__main__":
    main()
