"""Grade a folder of submitted assignment notebooks into one CSV, with nbgrader.

    python tools/grade.py SUBMISSIONS [--work DIR] [--out CSV]
    (make grade SUBMISSIONS=folder: _build/grading/grades.csv)

SUBMISSIONS holds the notebooks students handed in: a folder per student (``<student>/...``, any
file name, at any depth) or one notebook per student (``<student>.ipynb``). Which assignment a
notebook answers is read from the ids of its cells, which nbgrader keeps in the students' copies,
so a renamed download is still graded. In a fresh course folder (WORK) the notebooks are laid out
as nbgrader expects (``submitted/<student>/<assignment>/<assignment>.ipynb``); ``nbgrader
autograde`` runs each, with its test cells (hidden tests included) put back as the instructor
wrote them, and ``nbgrader export`` writes the CSV: one row per student and assignment, with
``score`` and ``max_score`` (0 for an assignment a student handed nothing in for). The graded
notebooks stay in ``WORK/autograded/`` for feedback.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import assignment_notebooks  # noqa: E402

WORK = assignment_notebooks.REPO / "_build" / "grading"


def student_of(relative: Path) -> str:
    """The student a submission belongs to, from its path below the submissions folder, as a
    name nbgrader accepts as a folder and an id."""
    name = relative.parts[0] if len(relative.parts) > 1 else relative.stem
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "unnamed"


def handed_in(submissions: Path) -> dict[tuple[str, str], Path]:
    """Each submitted notebook by (student, assignment). A file that is no notebook of one
    assignment is reported and left out; two notebooks of one student for one assignment are an
    error."""
    owner = assignment_notebooks.owners()
    found: dict[tuple[str, str], Path] = {}
    for notebook in sorted(submissions.rglob("*.ipynb")):
        relative = notebook.relative_to(submissions)
        if any(part.startswith((".", "__MACOSX")) for part in relative.parts):
            continue  # Jupyter's checkpoints, macOS's zip leftovers
        try:
            names = {owner[i] for i in assignment_notebooks.grade_ids(notebook) if i in owner}
        except (ValueError, KeyError, TypeError, AttributeError):  # not a notebook
            names = set()
        if len(names) != 1:
            print(f"grade.py: skipped {relative}: not a notebook of one assignment",
                  file=sys.stderr)
            continue
        key = (student_of(relative), names.pop())
        if key in found:
            raise ValueError(f"{relative} and {found[key].relative_to(submissions)} are both "
                             f"{key[0]}'s {key[1]}: keep one")
        found[key] = notebook
    return found


def grade(submissions: Path, work: Path = WORK, out: Path | None = None) -> Path:
    """Grade the notebooks in ``submissions`` in the course folder ``work`` (replaced); write the
    grades to ``out`` (default ``work/grades.csv``) and return its path."""
    if not submissions.is_dir():
        raise ValueError(f"submissions: expected a folder of notebooks; got {submissions}")
    found = handed_in(submissions)
    if not found:
        raise ValueError(f"submissions: no assignment notebook in {submissions}")
    course = assignment_notebooks.prepare_course(work, sorted({name for _, name in found}))
    for (student, name), notebook in found.items():
        target = course / "submitted" / student / name / f"{name}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(notebook, target)
    graded = assignment_notebooks.nbgrader(course, "autograde", "*")
    if graded.returncode != 0:  # a notebook nbgrader could not run; the others are graded
        print(f"grade.py: nbgrader autograde reported errors:\n{graded.stderr[-4000:]}",
              file=sys.stderr)
    out = (out or work / "grades.csv").resolve()
    exported = assignment_notebooks.nbgrader(course, "export", f"--to={out}")
    if exported.returncode != 0:
        raise RuntimeError(f"nbgrader export failed:\n{exported.stderr[-4000:]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="the folder of submitted notebooks")
    parser.add_argument("--work", type=Path, default=WORK,
                        help="nbgrader's course folder for this grading (replaced)")
    parser.add_argument("--out", type=Path, help="the CSV to write (default: WORK/grades.csv)")
    args = parser.parse_args()
    try:
        print(grade(args.submissions.resolve(), args.work.resolve(), args.out))
    except ValueError as error:
        sys.exit(f"grade.py: {error}")


if __name__ == "__main__":
    main()
