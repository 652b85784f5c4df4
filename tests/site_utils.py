"""Shared helpers for the pipeline tests: the book's pages, the built site and glue directives.

Everything here is derived from ``_toc.yml`` and the chapter sources, so the tests cover every
chapter the table of contents lists, with no edits when a chapter lands.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from toc_chapters import numbered_files, toc_files  # noqa: E402
from toc_chapters import source_path as toc_source_path  # noqa: E402

from transformer_course.notebook import TIMED_SUFFIX  # noqa: E402

# What `make book` writes; SITE_BUILD points the site tests at another build of the same sources
# (a private copy built elsewhere), without touching the repository's own _build.
BUILD = Path(os.environ.get("SITE_BUILD", REPO / "_build")).resolve()
HTML = BUILD / "html"  # the site
EXECUTED = BUILD / "jupyter_execute"  # executed notebooks and their glue (<doc>.glue.json)
BUILD_LOG = BUILD / "build.log"  # the last `make book` output (the Makefile tees it here)
SCREENSHOTS = BUILD / "screenshots"  # written by the browser test
NOT_PAGES = ("_static", "_sources", "_images")  # folders of assets, not pages
ANSI = re.compile(r"\x1b\[[0-9;]*m")
GLUE_FIGURE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{glue:figure\}\s+(?P<key>\S+)\s*$")
OPTION = re.compile(r"^:(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
CODE_CELL = re.compile(r"^(`{3,}|:{3,})\{code-cell\}", re.MULTILINE)
CHAPTER_HEADER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""  # the front matter every chapter starts with (common conventions)


def throwaway_book(root: Path, chapter: str, name: str = "01_canary") -> Path:
    """A throwaway book in ``root``: the real config (its local extensions and bibliography), a
    landing page and one chapter ``book/<name>.md`` whose body (after the jupytext header) is
    ``chapter``."""
    (root / "book").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "_config.yml", root / "_config.yml")
    for bib in book_config().get("bibtex_bibfiles") or []:  # the config's bibliography
        shutil.copy(REPO / bib, root / bib)
    (root / "tools").symlink_to(REPO / "tools")  # _config.yml's local Sphinx extensions
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/index\n"
                                   f"chapters:\n- file: book/{name}\n")
    (root / "book" / "index.md").write_text("# A throwaway book\n\nBuilt by a test.\n")
    (root / "book" / f"{name}.md").write_text(CHAPTER_HEADER + chapter)
    return root


def toc_docnames(toc: Path = REPO / "_toc.yml") -> list[str]:
    """Every document ``_toc.yml`` lists, root first, in reading order (globs expanded)."""
    return toc_files(toc.parent)


def source_path(docname: str, root: Path = REPO) -> Path:
    """The source file (.md or .ipynb) of ``docname``."""
    try:
        return root / toc_source_path(root, docname)
    except ValueError as error:
        raise FileNotFoundError(str(error)) from error


def html_path(docname: str) -> Path:
    """Where the built site holds the page of ``docname``."""
    return HTML / (docname + ".html")


def glue_json_path(docname: str) -> Path:
    """The glue data myst-nb extracted from the build's execution of ``docname``."""
    return EXECUTED / (docname + ".glue.json")


def require_site() -> None:
    """Fail (never skip) when there is no built site to test."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"no built site at {HTML}: run make book first", pytrace=False)


STUDENT = BUILD / "student"


def student_edition() -> Path:
    """The student edition in _build/student, built by tools/build_edition.py (or found current:
    it rebuilds only after the site did). Two test modules use it, maybe on two pytest workers at
    once: a lock makes the second wait for the first's build, then find it current."""
    STUDENT.parent.mkdir(parents=True, exist_ok=True)
    with (BUILD / ".student.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, str(REPO / "tools" / "build_edition.py"),
                               "student", str(REPO), "--out", str(STUDENT)],
                              capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"the student edition did not build:\n{done.stdout[-3000:]}" \
                                 f"\n{done.stderr[-3000:]}"
    return STUDENT


def site_pages() -> list[Path]:
    """Every HTML page of the built site (assets folders excluded)."""
    return sorted(p for p in HTML.rglob("*.html")
                  if not any(part in NOT_PAGES for part in p.relative_to(HTML).parts))


@dataclass(frozen=True)
class GlueFigure:
    """A ``{glue:figure}`` directive in a chapter source."""

    key: str  # the glue key it shows
    name: str | None  # its :name: option (the figure's id in the HTML), None when missing
    line: int  # 1-based line of the directive in the source


def glue_figures(text: str) -> list[GlueFigure]:
    """Every ``{glue:figure} KEY`` directive (backtick or colon fence) with its ``:name:``."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = GLUE_FIGURE.match(line.strip())
        if not match:
            continue
        name = None
        for option_line in lines[index + 1:]:
            option = OPTION.match(option_line.strip())
            if not option:
                break
            if option["name"] == "name":
                name = option["value"]
        found.append(GlueFigure(match["key"], name, index + 1))
    return found


@dataclass(frozen=True)
class CodeLine:
    """One line of a code cell in a chapter source."""

    line: int  # 1-based line number in the source
    text: str  # the line, without its newline
    tags: tuple[str, ...]  # the cell's tags (e.g. "remove-cell", "hide-input")
    in_solution: bool = False  # inside a solution (between solution-start and solution-end)


CELL_TAGS = re.compile(r"^:tags:\s*\[(?P<tags>[^\]]*)\]\s*$")


def code_cell_lines(text: str) -> list[CodeLine]:
    """Every line of every ``{code-cell}`` in a MyST source, with its cell's tags and whether it
    sits in an exercise's solution (the cell's option lines are not code)."""
    lines = text.splitlines()
    found: list[CodeLine] = []
    index, in_solution = 0, False
    while index < len(lines):
        if re.match(r"^:{3,}\{solution-(start|end)\}", lines[index]):
            in_solution = "solution-start" in lines[index]
        match = re.match(r"^(?P<fence>`{3,}|:{3,})\{code-cell\}", lines[index])
        index += 1
        if not match:
            continue
        tags: tuple[str, ...] = ()
        while index < len(lines) and lines[index].startswith(":"):
            option = CELL_TAGS.match(lines[index])
            if option:
                tags = tuple(tag.strip().strip("'\"") for tag in option["tags"].split(",")
                             if tag.strip())
            index += 1
        while index < len(lines) and lines[index].strip() != match["fence"]:
            found.append(CodeLine(index + 1, lines[index], tags, in_solution))
            index += 1
        index += 1
    return found


def chapter_numbers() -> dict[str, int]:
    """The number the table of contents gives each chapter: the pages of its numbered part, in
    order (the root page and the unnumbered back matter, the references, have none)."""
    return {docname: number
            for number, docname in enumerate(numbered_files(REPO), start=1)}


def count_code_cells(text: str) -> int:
    """Number of ``{code-cell}`` directives in a MyST Markdown source."""
    return len(CODE_CELL.findall(text))


def has_code_cells(docname: str) -> bool:
    """Whether ``docname`` has code cells (a notebook, or MyST with ``{code-cell}``)."""
    path = source_path(docname)
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return any(cell["cell_type"] == "code" for cell in cells)
    return count_code_cells(path.read_text()) > 0


def glue_outputs(outputs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The glued values among a cell's outputs: key -> mime bundle (glue prefix removed)."""
    glued = {}
    for output in outputs:
        info = output.get("metadata", {}).get("scrapbook")
        if not info:
            continue
        prefix = info.get("mime_prefix", "")
        glued[info["name"]] = {mime[len(prefix):]: value
                               for mime, value in output.get("data", {}).items()}
    return glued


@cache
def parse_html(path: Path) -> BeautifulSoup:
    """The parsed HTML of ``path`` (cached: the site does not change during a test run)."""
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def is_remote(url: str) -> bool:
    """Whether ``url`` points off the site (has a scheme other than data/mailto, or a host)."""
    parts = urlsplit(url.strip())
    return bool(parts.netloc) or parts.scheme not in ("", "data", "mailto", "javascript")


def resolve_local(page: Path, url: str) -> tuple[Path, str]:
    """The file and fragment a relative ``url`` on ``page`` points to."""
    parts = urlsplit(url.strip())
    target = page if not parts.path else (page.parent / unquote(parts.path))
    if parts.path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target.resolve(), unquote(parts.fragment)


def element_ids(path: Path) -> set[str]:
    """Every id (and legacy ``<a name>``) in an HTML file: what a #fragment may point to."""
    soup = parse_html(path)
    ids = {tag["id"] for tag in soup.find_all(id=True)}
    ids |= {tag["name"] for tag in soup.find_all("a", attrs={"name": True})}
    return ids


def book_config() -> dict[str, Any]:
    """The book's ``_config.yml``."""
    return yaml.safe_load((REPO / "_config.yml").read_text())


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour codes."""
    return ANSI.sub("", text)


def glued_values(notebook: Any) -> dict[str, dict[str, Any]]:
    """Every glued value in an executed notebook: key -> mime bundle."""
    glued: dict[str, dict[str, Any]] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for key, bundle in glue_outputs(cell.get("outputs", [])).items():
            assert key not in glued, f"glue key {key!r} is glued twice"
            glued[key] = bundle
    return glued


def _as_bytes(value: Any) -> bytes:
    return base64.b64decode(value) if isinstance(value, str) else bytes(value)


def glue_differences(first: dict[str, dict[str, Any]],
                     second: dict[str, dict[str, Any]]) -> list[str]:
    """How two executions' glued values differ (keys ending in TIMED_SUFFIX are not compared)."""
    problems = [f"{key}: glued by only one execution" for key in sorted(set(first) ^ set(second))]
    for key in sorted(set(first) & set(second)):
        if key.endswith(TIMED_SUFFIX):
            continue
        a, b = first[key], second[key]
        if set(a) != set(b):
            problems.append(f"{key}: mime types {sorted(a)} vs {sorted(b)}")
            continue
        for mime in sorted(a):
            if mime.startswith("image/") and mime != "image/svg+xml":
                same = _as_bytes(a[mime]) == _as_bytes(b[mime])
            else:
                same = a[mime] == b[mime]
            if not same:
                shown = "image bytes differ" if mime.startswith("image/") else \
                    f"{str(a[mime])[:80]!r} vs {str(b[mime])[:80]!r}"
                problems.append(f"{key} ({mime}): {shown}")
    return problems


def package_source(dest: Path) -> Path:
    """A copy of what pip builds the course's package from (pyproject.toml, README.md, LICENSE,
    code/) in ``dest``: building from the checkout itself would leave setuptools' build/ there."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, dest / name)
    shutil.copytree(REPO / "code", dest / "code",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    return dest
