"""Every page's download menu links to real files in the built site.

For each page in ``_toc.yml``: the source download is the page's own source, byte for byte; a
page that executes also offers an ``.ipynb`` that is valid nbformat, holds the page's code cells
(after a first cell that installs the package where it is missing) and was executed (every code
cell has an execution count, and the notebook has outputs), and reads as the page does: every
figure of the page is an image output with its numbered caption below, and no MyST is left.
Needs the built site (``make book``); fails, not skips, without it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from urllib.parse import urljoin, urlparse

import jupytext
import nbformat
import pytest
from bs4 import BeautifulSoup
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import toc_chapters  # noqa: E402
from readable_notebook import leftover_myst  # noqa: E402

SITE = ROOT / "_build" / "html"
PAGES = toc_chapters.chapters(ROOT)


def download_links(page: Path) -> dict[str, Path]:
    """The page's download-menu entries: label ('source', 'notebook') -> file in the site."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    menu = soup.select_one(".dropdown-download-buttons")
    assert menu is not None, f"{page} has no download menu"
    links = {}
    for anchor in menu.select("a[href]"):
        classes = " ".join(anchor.get("class", []))
        href = anchor["href"]
        assert not urlparse(href).scheme, f"{page}: download link leaves the site: {href}"
        target = Path(urlparse(urljoin(page.as_uri(), href)).path)
        for label in ("source", "notebook"):
            if f"download-{label}-button" in classes:
                links[label] = target
    return links


def test_toc_lists_pages() -> None:
    assert PAGES and PAGES[0].as_posix().startswith("book/"), PAGES


@pytest.mark.parametrize("source", PAGES, ids=[p.stem for p in PAGES])
def test_page_offers_its_source_and_executed_notebook(source: Path) -> None:
    assert (SITE / "index.html").is_file(), f"no built site in {SITE}: run `make book` first"
    page = SITE / source.with_suffix(".html")
    assert page.is_file(), f"{source} was not built"
    links = download_links(page)

    assert "source" in links, f"{page}: no source download"
    assert links["source"].is_file(), f"{page}: {links['source']} does not exist"
    assert links["source"].read_bytes() == (ROOT / source).read_bytes()

    if not toc_chapters.is_notebook(ROOT / source):
        assert "notebook" not in links, f"{page} is not a notebook but offers one"
        return
    assert "notebook" in links, f"{page}: no .ipynb download"
    target = links["notebook"]
    assert target.is_file() and target.suffix == ".ipynb", target
    notebook = nbformat.read(target, as_version=4)
    nbformat.validate(notebook)
    install, *code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert 'find_spec("transformer_course") is None' in install.source  # then %pip install
    expected = [c.source for c in jupytext.read(ROOT / source).cells if c.cell_type == "code"]
    assert [cell.source for cell in code] == expected, f"{target} is not {source}'s notebook"
    run = [c for c in code if "skip-execution" not in c.metadata.get("tags", [])]
    assert all(cell.execution_count for cell in run), f"{target} has unexecuted cells"
    if code:
        assert any(cell.outputs for cell in code), f"{target} has no outputs"
    assert notebook.metadata["kernelspec"]["name"] == "python3"


def _images(notebook: nbformat.NotebookNode) -> int:
    return sum(1 for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.get("outputs", []) if "image/png" in output.get("data", {}))


@pytest.mark.parametrize("source", [p for p in PAGES if toc_chapters.is_notebook(ROOT / p)],
                         ids=lambda p: p.stem)
def test_notebook_download_shows_every_figure_and_no_myst(source: Path) -> None:
    notebook = nbformat.read(SITE / "_sources" / source.with_suffix(".ipynb"), as_version=4)
    figures = (ROOT / source).read_text().count("```{glue:figure}")
    assert _images(notebook) >= figures > 0, (source, _images(notebook), figures)
    assert leftover_myst(notebook) == [], leftover_myst(notebook)[:5]
    captions = sum(cell.source.count("** (shown above): ") for cell in notebook.cells
                   if cell.cell_type == "markdown")
    assert captions == figures  # each figure's numbered caption, below it
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and "make lab" in first.source  # how to run it


@pytest.mark.parametrize("source", [p for p in PAGES if toc_chapters.is_notebook(ROOT / p)],
                         ids=lambda p: p.stem)
def test_notebook_download_cites_as_its_page_does(source: Path) -> None:
    """Every citation the page shows ("Vaswani et al. (2017)", linked to the references) reads
    the same in the notebook's Markdown."""
    soup = BeautifulSoup((SITE / source.with_suffix(".html")).read_text(encoding="utf-8"),
                         "html.parser")
    cited = {" ".join(span.get_text().split()) for span in soup.select("span.bibtex-citation")}
    notebook = nbformat.read(SITE / "_sources" / source.with_suffix(".ipynb"), as_version=4)
    markdown = " ".join(" ".join(cell.source.split()) for cell in notebook.cells
                        if cell.cell_type == "markdown")
    assert sorted(text for text in cited if text not in markdown) == []


ASSERT_LINE = re.compile(r"^\s*assert\b", re.MULTILINE)


def assert_lines(notebook: nbformat.NotebookNode) -> list[str]:
    """Every line of a notebook, code or Markdown (included source too), that is an ``assert``
    statement, and every ``assert`` node of its code cells however it is written."""
    found = [line for cell in notebook.cells for line in ASSERT_LINE.findall(cell.source)]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            tree = ast.parse(TransformerManager().transform_cell(cell.source))  # magics too
            found += [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    return found


@pytest.mark.parametrize("source", [p for p in PAGES if toc_chapters.is_notebook(ROOT / p)],
                         ids=lambda p: p.stem)
def test_a_downloaded_notebook_holds_no_assert(source: Path) -> None:
    """A reader's run must never stop because the reader's CPU rounds differently: checks in a
    download are claims (transformer_course.claims), strict only in the build."""
    notebook = nbformat.read(SITE / "_sources" / source.with_suffix(".ipynb"), as_version=4)
    assert assert_lines(notebook) == []


@pytest.mark.parametrize("source", [p for p in PAGES if toc_chapters.is_notebook(ROOT / p)],
                         ids=lambda p: p.stem)
def test_a_download_installs_the_package_at_a_commit_of_this_repository(source: Path) -> None:
    """Colab runs a download's first code cell: it must install a fixed commit (one of this
    repository's), not a branch that moves on after the notebook was built."""
    import subprocess

    notebook = nbformat.read(SITE / "_sources" / source.with_suffix(".ipynb"), as_version=4)
    install = next(cell for cell in notebook.cells if cell.cell_type == "code")
    found = re.search(r"transformer-course @ git\+\S+@([0-9a-f]+)\"", install.source)
    assert found and len(found.group(1)) == 40, install.source
    known = subprocess.run(["git", "cat-file", "-e", f"{found.group(1)}^{{commit}}"], cwd=ROOT,
                           capture_output=True)
    assert known.returncode == 0, f"{found.group(1)} is no commit of this repository"
