"""tools/toc_chapters.py: pages in _toc.yml order, and which of them execute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import toc_chapters  # noqa: E402

HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n# T\n"


def make_book(tmp_path: Path, toc: str, files: dict[str, str]) -> Path:
    (tmp_path / "_toc.yml").write_text(toc)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_order_follows_the_toc_through_parts_and_sections(tmp_path: Path) -> None:
    toc = """format: jb-book
root: book/index
parts:
  - caption: One
    chapters:
      - file: book/02_b
        sections:
          - file: book/02a_sub.ipynb
  - caption: Two
    chapters:
      - file: book/01_a
"""
    files = {"book/index.md": "# Home\n", "book/02_b.md": HEADER, "book/01_a.md": "# A\n",
             "book/02a_sub.ipynb": "{}"}
    book = make_book(tmp_path, toc, files)
    assert [p.as_posix() for p in toc_chapters.chapters(book)] == [
        "book/index.md", "book/02_b.md", "book/02a_sub.ipynb", "book/01_a.md"]
    assert [p.as_posix() for p in toc_chapters.chapters(book, notebooks_only=True)] == [
        "book/02_b.md", "book/02a_sub.ipynb"]


def test_is_notebook_reads_the_front_matter(tmp_path: Path) -> None:
    cases = {"nb.md": (HEADER, True), "plain.md": ("# Plain\n", False),
             "rule.md": ("# T\n\n---\nkernelspec: x\n---\n", False),
             "other.md": ("---\ntitle: x\n---\n# T\n", False)}
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text)
        assert toc_chapters.is_notebook(tmp_path / name) is expected, name


def test_the_real_toc_starts_at_the_landing_page() -> None:
    pages = toc_chapters.chapters(ROOT)
    assert pages[0].as_posix() == "book/index.md"
    assert all((ROOT / p).is_file() for p in pages)


def test_command_line_prints_the_notebooks(tmp_path: Path) -> None:
    toc = "format: jb-book\nroot: book/index\nchapters:\n  - file: book/01_a\n"
    book = make_book(tmp_path, toc, {"book/index.md": "# Home\n", "book/01_a.md": HEADER})
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "toc_chapters.py"),
                          "--notebooks", str(book)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["book/01_a.md"]


def test_bad_inputs_name_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="book"):
        toc_chapters.toc_files(tmp_path)
    (tmp_path / "_toc.yml").write_text("format: jb-book\n")
    with pytest.raises(ValueError, match="book"):
        toc_chapters.toc_files(tmp_path)
    with pytest.raises(ValueError, match="docname"):
        toc_chapters.source_path(tmp_path, "book/missing")


def test_chapters_are_the_numbered_part(tmp_path: Path) -> None:
    toc = """format: jb-book
root: book/index
parts:
  - numbered: 1
    chapters:
      - file: book/01_a
      - glob: book/02_*
  - chapters:
      - file: book/references
"""
    files = {"book/index.md": "# Home\n", "book/01_a.md": HEADER, "book/02_b.md": HEADER,
             "book/references.md": "# References\n"}
    book = make_book(tmp_path, toc, files)
    assert toc_chapters.numbered_files(book) == ["book/01_a", "book/02_b"]
    assert toc_chapters.toc_files(book)[-1] == "book/references"
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/index\noptions:\n"
                                       "  numbered: 1\nchapters:\n  - file: book/01_a\n")
    assert toc_chapters.numbered_files(book) == ["book/01_a"]
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/index\n"
                                       "chapters:\n  - file: book/01_a\n")
    assert toc_chapters.numbered_files(book) == []
