"""tools/lint_chapters.py (`make lint`): ruff over every chapter's code cells, each finding at its
line in the chapter's Markdown; and every cell and function of the course passes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lint_chapters  # noqa: E402

RUFF = str(Path(sys.executable).with_name("ruff"))
HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n# T\n\n"
CELLS = ("```{code-cell} ipython3\n:tags: [remove-cell]\n\nimport os\nimport sys\n```\n\n"
         "Some prose.\n\n"
         "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nx = 1\n\nprint(x, y)\n"
         "```\n\n"
         "```{code-cell} ipython3\nz = [os.sep for _ in range(x)]\n```\n")


def book(tmp_path: Path, chapter: str) -> Path:
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n- file: ch\n")
    (tmp_path / "index.md").write_text("# Index\n")
    (tmp_path / "ch.md").write_text(HEADER + chapter)
    return tmp_path


def test_each_finding_is_reported_at_its_line_in_the_chapter(tmp_path: Path) -> None:
    text = HEADER + CELLS
    lines = text.splitlines()
    findings = lint_chapters.lint(book(tmp_path, CELLS), RUFF)
    # an unused import in the first cell (os is used in the last), an undefined name in the
    # second: each at the line of the Markdown that holds it
    assert [f.split(" ")[1] for f in findings] == ["F401", "F821"]
    for finding, word in zip(findings, ("sys", "y"), strict=True):
        path, line, column = finding.split(" ")[0].rstrip(":").split(":")
        assert path == "ch.md"
        assert word in lines[int(line) - 1][int(column) - 1:]


def test_a_clean_chapter_passes_and_the_command_says_so(tmp_path: Path) -> None:
    clean = CELLS.replace("import sys\n", "").replace("x, y", "x")
    assert lint_chapters.lint(book(tmp_path, clean), RUFF) == []
    dirty = subprocess.run([sys.executable, str(ROOT / "tools" / "lint_chapters.py"),
                            str(book(tmp_path, CELLS)), "--ruff", RUFF],
                           capture_output=True, text=True)
    assert dirty.returncode == 1 and "ch.md:" in dirty.stdout


@pytest.mark.parametrize("where", ["chapters", "code"])
def test_the_course_passes_ruff(where: str) -> None:
    if where == "chapters":
        assert lint_chapters.lint(ROOT, RUFF) == []
    else:
        result = subprocess.run([RUFF, "check", "--no-cache", "code", "tests", "tools", "bench"],
                                cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout
