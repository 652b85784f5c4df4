"""Lint every chapter's code cells with ruff, reporting each finding at its line in the source.

``make lint`` runs this. Each notebook chapter of ``_toc.yml`` (MyST Markdown, read with jupytext)
is written as a notebook into a scratch folder, and ruff checks those notebooks with the
repository's own settings (``pyproject.toml``): ruff reads a notebook's cells as one module, so a
name defined in one cell and used in a later one is not undefined, and an import may open any
cell. Each finding is printed at its line in the chapter's Markdown, as ``PATH:LINE:COLUMN: CODE
message``.

Usage: python tools/lint_chapters.py [BOOK_DIR] [--ruff PATH]
  exits 1 when ruff finds anything, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lean_jsonschema  # noqa: E402
import toc_chapters  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}")


def code_starts(text: str) -> list[int]:
    """The 1-based line, in a MyST chapter, of the first line of each code cell's source (the
    line after the fence, its ``:option:`` lines or ``---`` block, and one blank line)."""
    lines = text.splitlines()
    starts, number = [], 0
    while number < len(lines):
        if not CODE_CELL.match(lines[number]):
            number += 1
            continue
        number += 1
        if number < len(lines) and lines[number].strip() == "---":
            number += 1
            while number < len(lines) and lines[number].strip() != "---":
                number += 1
            number += 1
        else:
            while number < len(lines) and lines[number].startswith(":"):
                number += 1
            if number < len(lines) and not lines[number].strip():
                number += 1
        starts.append(number + 1)
    return starts


def as_notebook(chapter: Path, folder: Path) -> tuple[Path, list[int]]:
    """Write ``chapter`` as a notebook into ``folder``; returns its path and, for each of its
    cells, the chapter line its source starts at (0 for a Markdown cell)."""
    lean_jsonschema.load()  # before jupytext, which imports nbformat and so jsonschema
    import jupytext

    notebook = jupytext.read(chapter)
    # ruff skips a notebook that does not say it is Python; a chapter's cells always are
    notebook.metadata["language_info"] = {"name": "python"}
    starts = iter(code_starts(chapter.read_text(encoding="utf-8")))
    lines = [next(starts) if cell.cell_type == "code" else 0 for cell in notebook.cells]
    path = folder / (chapter.stem + ".ipynb")
    jupytext.write(notebook, path)
    return path, lines


def lint(book: Path, ruff: str) -> list[str]:
    """Ruff's findings in every notebook chapter of ``book``, one line each."""
    chapters = [book / path for path in toc_chapters.chapters(book, notebooks_only=True)]
    findings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lint-chapters-") as scratch:
        written = dict(as_notebook(chapter, Path(scratch)) for chapter in chapters)
        by_path = {path.resolve(): chapter for chapter, path in
                   zip(chapters, written, strict=True)}
        # --config: the notebooks lie outside the repository, where ruff would find no settings;
        # the settings' excludes do not apply to files named on the command line.
        result = subprocess.run(
            [ruff, "check", "--config", str(REPO / "pyproject.toml"), "--output-format", "json",
             "--no-cache", *map(str, written)], capture_output=True, text=True)
        if result.returncode not in (0, 1):
            raise RuntimeError(f"ruff failed: {result.stderr.strip()}")
        for finding in json.loads(result.stdout or "[]"):
            path = Path(finding["filename"]).resolve()
            chapter = by_path[path]
            start = written[path][finding["cell"] - 1]
            line = start + finding["location"]["row"] - 1
            shown = chapter.relative_to(book) if chapter.is_relative_to(book) else chapter
            findings.append(f"{shown}:{line}:{finding['location']['column']}: "
                            f"{finding['code']} {finding['message']}")
    return findings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", nargs="?", type=Path, default=Path("."))
    parser.add_argument("--ruff", default=shutil.which("ruff", path=str(Path(sys.executable)
                                                                         .parent)) or "ruff")
    args = parser.parse_args(argv)
    findings = lint(args.book.resolve(), args.ruff)
    print("\n".join(findings) if findings else "chapters: ruff found nothing")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
