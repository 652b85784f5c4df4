"""The build command fails loudly on every run (its execution cache: tests/test_build_book.py).

Each test builds a throwaway book (the real _config.yml, a tiny _toc.yml) with exactly the command
the project uses, ``make -C <repo> book BOOK=<tmp>``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import build_book  # tools/ is on sys.path (site_utils)
import pytest
from site_utils import CHAPTER_HEADER, REPO, book_config, strip_ansi, throwaway_book
from sphinx.util.matching import get_matching_files

pytestmark = pytest.mark.pipeline
HEADER = CHAPTER_HEADER
FAILING_CELL = 'raise RuntimeError("canary: this cell fails on purpose")'
PASSING_CELL = 'print("canary: " + "this cell passes")'
BAD_REFERENCE = "See {numref}`fig-canary-missing`."


def _chapter(cell: str, prose: str = "") -> str:
    return f"# Canary\n\n{prose}\n\n```{{code-cell}} ipython3\n{cell}\n```\n"


def _build(book: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["make", "-C", str(REPO), "book", f"BOOK={book}", *extra],
                            capture_output=True, text=True, timeout=600)
    result.stdout = strip_ansi(result.stdout + result.stderr)
    return result


def test_failing_cell_fails_every_build(tmp_path: Path) -> None:
    """A raising cell fails the first build AND the second one (the cache must not hide it)."""
    book = throwaway_book(tmp_path, _chapter(FAILING_CELL))
    for attempt in ("first", "second"):
        result = _build(book)
        assert result.returncode != 0, f"{attempt} build passed a failing chapter:\n" \
                                       + result.stdout[-3000:]
        assert "RuntimeError" in result.stdout, f"{attempt} build does not name the error"
        assert "canary: this cell fails on purpose" in result.stdout
    # the control: the same book with the cell fixed builds, so the failures were the fault's
    (book / "book" / "01_canary.md").write_text(HEADER + _chapter(PASSING_CELL))
    result = _build(book)
    assert result.returncode == 0, result.stdout[-3000:]
    page = (book / "_build" / "html" / "book" / "01_canary.html").read_text()
    assert "canary: this cell passes" in page


def test_warning_fails_every_build(tmp_path: Path) -> None:
    """A broken cross-reference (a warning under -W) fails the first and the second build."""
    book = throwaway_book(tmp_path, f"# Canary\n\n{BAD_REFERENCE}\n")
    for attempt in ("first", "second"):
        result = _build(book)
        assert result.returncode != 0, f"{attempt} build passed a broken reference:\n" \
                                       + result.stdout[-3000:]
        assert "undefined label: 'fig-canary-missing'" in result.stdout, \
            f"{attempt} build does not name the warning"
    (book / "book" / "01_canary.md").write_text(HEADER + "# Canary\n\nNo references.\n")
    result = _build(book)
    assert result.returncode == 0, result.stdout[-3000:]


def test_default_cache_inputs_include_the_package_code() -> None:
    """`make book` follows the imports into code/, and the pins, unless told otherwise; it
    executes one chapter per core."""
    inherited = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "JOBS", "CACHE_INPUTS", "BOOK")
    env = {name: value for name, value in os.environ.items() if name not in inherited}
    dry = subprocess.run(["make", "-n", "-C", str(REPO), "book"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert dry.returncode == 0, dry.stderr
    (line,) = [line for line in dry.stdout.splitlines() if "build_book.py" in line]
    arguments = line.split("build_book.py", 1)[1].split()
    assert arguments[:2] == ["--jobs", str(build_book.usable_cores())]  # nproc, or sysctl (macOS)
    assert arguments[2] == "."
    assert {"code", "requirements.txt", "pyproject.toml"} <= set(arguments[3:])


def _pages_sphinx_would_read(root: Path) -> list[str]:
    patterns = book_config()["exclude_patterns"]
    return [path for path in get_matching_files(root, exclude_patterns=patterns)
            if path.endswith((".md", ".ipynb"))]


def test_sphinx_sees_only_the_book_folder(tmp_path: Path) -> None:
    """exclude_patterns hide every Markdown/notebook outside book/ (caches, README, tests...)."""
    stray = [path for path in _pages_sphinx_would_read(REPO) if not path.startswith("book/")]
    assert not stray, f"Sphinx would read these as pages: {stray}"
    litter = [".pytest_cache/README.md", ".hidden/x.md", "book/.ipynb_checkpoints/a.ipynb",
              "book/.hidden/b.md", "code/c.md", "tests/d.md", "notebooks/e.ipynb", "README.md",
              "_build/jupyter_execute/book/f.ipynb", ".venv/lib/g.md"]
    for path in [*litter, "book/index.md"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("# page\n")
    assert _pages_sphinx_would_read(tmp_path) == ["book/index.md"]
