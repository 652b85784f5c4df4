"""`make student`: the student edition holds every exercise and no solution, in its pages, its
search index, its page sources and its notebooks, while the full site keeps them.

The edition is built once for this module by ``tools/build_edition.py student`` into
``_build/student``, from the full site's execution cache (so after `make book`; about 10 s on an
idle 2-core machine, none when the site has not changed since the last student build).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import fresh_envs
import jupytext
import nbformat
import pytest
from bs4 import BeautifulSoup
from IPython.core.inputtransformer2 import TransformerManager
from site_utils import HTML, REPO, package_source, parse_html, student_edition, toc_docnames

pytestmark = [pytest.mark.site, pytest.mark.pipeline, pytest.mark.usefixtures("built_site")]
SOLUTION_MARK = "**Solution to"  # how a readable notebook heads a solution (readable_notebook.py)
SOLUTION_END = "*End of the solution.*"  # and ends a gated one


@pytest.fixture(scope="module")
def student() -> Path:
    """The student edition, built (or found current) by tools/build_edition.py."""
    return student_edition()


def _words(text: str) -> str:
    return " ".join(text.split())


def _solution_passages(page: BeautifulSoup) -> list[str]:
    """Text of every paragraph and code block inside the page's solutions (long enough to be
    unmistakable)."""
    passages = []
    for solution in page.select("div.solution"):
        for block in solution.select("p, pre"):
            text = _words(block.get_text())
            if len(text) >= 40 and not text.startswith("Solution to"):
                passages.append(text)
    return passages


def test_pages_keep_every_exercise_and_lose_every_solution(student: Path) -> None:
    solutions = 0
    for docname in toc_docnames():
        full = parse_html(HTML / f"{docname}.html")
        edition = BeautifulSoup((student / "html" / f"{docname}.html").read_text(encoding="utf-8"),
                                "html.parser")
        solutions += len(full.select("div.solution"))
        assert len(edition.select("div.exercise")) == len(full.select("div.exercise")), docname
        assert not edition.select("div.solution"), f"{docname}: a solution in the student page"
        text = _words(edition.get_text())
        leaked = [p for p in _solution_passages(full) if p in text]
        assert not leaked, f"{docname}: solution text in the student page: {leaked[:2]}"
        launch = [a["href"] for a in edition.select("a[href]") if re.search(
            r"mybinder\.org/v2/|colab\.research\.google\.com/github/", a["href"])]
        if (HTML / "_sources" / f"{docname}.ipynb").is_file():  # a notebook page: Binder, Colab
            assert len(launch) == 2, f"{docname}: {launch}"
            assert all(href.endswith(f"student/_sources/{docname}.ipynb") for href in launch), \
                f"{docname}: the student page must open the student notebook: {launch}"
            assert (student / "html" / "_sources" / f"{docname}.ipynb").is_file()
        else:
            assert not launch, f"{docname}: {launch}"
    assert solutions > 0, "the full site has no solutions to leave out: nothing was checked"


def test_no_link_of_the_student_edition_leads_to_the_full_one(student: Path) -> None:
    """A class given the student edition's address stays in it: every relative link and asset of
    every page resolves inside the edition's folder, and no button opens a chapter's full source
    (the "edit this page" button, which the full edition has, is gone)."""
    site = (student / "html").resolve()
    outside, edits, checked = [], [], 0
    for page in sorted(site.rglob("*.html")):
        if page.parent.name == "_static":  # the theme's templates, not pages
            continue
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for element in soup.select("a[href], link[href], script[src], img[src]"):
            url = element.get("href") or element.get("src")
            parts = urlsplit(url)
            if re.search(r"github\.com/.+/(edit|blob)/[^/]+/book/", url):
                edits.append(f"{page.name}: {url}")
            if parts.scheme or url.startswith("//") or not parts.path:
                continue
            checked += 1
            target = (page.parent / parts.path).resolve()
            if not target.is_relative_to(site) or not target.exists():
                outside.append(f"{page.relative_to(site)}: {url}")
    assert checked > 100 and not outside, outside[:10]
    assert not edits, edits[:5]
    full = parse_html(HTML / f"{toc_docnames()[1]}.html")
    assert full.select("a[href*='/edit/']"), "the full edition has an edit button to leave out"


def test_the_student_landing_page_speaks_to_students(student: Path) -> None:
    """The full edition's landing page says solutions follow the exercises and how to build
    the editions; the student edition's says neither, and that it is the student edition."""
    full = _words(parse_html(HTML / "book" / "index.html").get_text())
    edition = _words(BeautifulSoup((student / "html" / "book" / "index.html").read_text(
        encoding="utf-8"), "html.parser").get_text())
    for told in ("A solution follows each exercise", "make student"):
        assert told in full and told not in edition, told
    assert "This is the student edition" in edition and "This is the student edition" not in full


def _solution_only_names() -> set[str]:
    """snake_case names (code identifiers: Sphinx indexes them whole, lower-cased) that the
    full site uses in its solutions and nowhere else."""
    snake = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
    inside, outside = set(), set()
    for docname in toc_docnames():
        page = BeautifulSoup((HTML / f"{docname}.html").read_text(encoding="utf-8"),
                             "html.parser")
        for solution in page.select("div.solution"):
            inside |= set(snake.findall(solution.get_text(" ").lower()))
            solution.decompose()
        outside |= set(snake.findall(page.get_text(" ").lower()))
    return inside - outside


def test_search_index_and_page_sources_hold_no_solution(student: Path) -> None:
    full_index = (HTML / "searchindex.js").read_text(encoding="utf-8")
    index = (student / "html" / "searchindex.js").read_text(encoding="utf-8")
    names = {name for name in _solution_only_names() if f'"{name}"' in full_index}
    assert names, "no name of the solutions is in the full site's index: nothing was checked"
    assert not [name for name in names if f'"{name}"' in index], "solutions in the search index"
    sources = sorted((student / "html" / "_sources").rglob("*.md"))
    assert sources
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\{solution(-start|-end)?\}", text), f"{path.name} keeps a solution"
        full = HTML / path.relative_to(student / "html")  # the full site's copy of the source
        if "{exercise}" in full.read_text(encoding="utf-8"):  # the chapters, not the references
            assert "{exercise}" in text, f"{path.name} lost its exercises"


def _solution_code(chapter: Path) -> list[str]:
    """Sources of the code cells a chapter's MyST source places inside a gated solution (between
    ``{solution-start}`` and ``{solution-end}``: only those hold code cells)."""
    inside, code = False, []
    for cell in jupytext.read(chapter).cells:
        if cell.cell_type == "markdown":  # the later of the two marks in the cell decides
            start = cell.source.rfind("{solution-start}")
            end = cell.source.rfind("{solution-end}")
            inside = start > end if max(start, end) >= 0 else inside
        elif inside and cell.source.strip():
            code.append(cell.source)
    return code


def test_notebooks_lose_the_solutions_and_keep_everything_else(student: Path) -> None:
    notebooks = sorted((student / "notebooks").glob("*.ipynb"))
    chapters = [d for d in toc_docnames() if (HTML / "_sources" / f"{d}.ipynb").is_file()]
    assert [p.stem for p in notebooks] == sorted(Path(d).name for d in chapters)
    dropped = 0
    for path in notebooks:
        full = nbformat.read(HTML / "_sources" / "book" / path.name, as_version=4)
        edition = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in edition.cells if c.cell_type == "markdown")
        assert SOLUTION_MARK not in markdown and SOLUTION_END not in markdown
        assert markdown.count("**Exercise") == "\n".join(
            c.source for c in full.cells if c.cell_type == "markdown").count("**Exercise")
        solution_code = _solution_code(REPO / "book" / f"{path.stem}.md")
        code = [c.source for c in edition.cells if c.cell_type == "code"]
        assert not set(solution_code) & set(code), f"{path.name}: a solution's code cell kept"
        others = [c.source for c in full.cells if c.cell_type == "code"
                  and c.source not in solution_code]
        assert code == others, f"{path.name}: code outside the solutions changed"
        assert any(c.get("outputs") for c in edition.cells if c.cell_type == "code")
        assert not re.search(r"^\s*assert\b", "\n".join(c.source for c in edition.cells),
                             re.MULTILINE), f"{path.name}: an assert would stop a student's run"
        dropped += len(solution_code)
    assert dropped > 0, "no solution code cells in the full notebooks: nothing was checked"


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a code cell binds and the names it reads."""
    tree = ast.parse(TransformerManager().transform_cell(source))  # magics as Python
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    bound |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
              if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return bound, read


def test_the_notebooks_run_without_what_the_solutions_defined(student: Path) -> None:
    """A student's notebook never reads a name that only a (removed) solution cell bound."""
    for path in sorted((student / "notebooks").glob("*.ipynb")):
        full = nbformat.read(HTML / "_sources" / "book" / path.name, as_version=4)
        solution_code = set(_solution_code(REPO / "book" / f"{path.stem}.md"))
        only_solutions: set[str] = set()
        for cell in full.cells:
            if cell.cell_type != "code":
                continue
            bound, read = _names(cell.source)
            if cell.source in solution_code:
                only_solutions |= bound
                continue
            missing = (read & only_solutions) - bound
            assert not missing, f"{path.name}: a cell reads {sorted(missing)}, which only a " \
                                f"solution defines:\n{cell.source[:300]}"
            only_solutions -= bound


# --- the student's set-up: requirements-student.txt alone ------------------------------------
SITE_TOOLCHAIN = ("sphinx", "jupyter_book", "myst_nb")
# The plainest chapter. Every chapter runs in the student set's other pins on the oldest torch
# (tests/test_oldest_torch.py), the translation chapters' tokenizers and sacrebleu among them.
RUN_IN_STUDENT_SET = ("01_why_attention",)


@pytest.fixture(scope="module")
def student_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the student set and the package (not editable, as a
    student's `pip install .` or Colab's install has it), as the README's student route makes
    (tests/fresh_envs.py)."""
    work = tmp_path_factory.mktemp("student-venv")
    return fresh_envs.prepared_or_built("student", work / "env", package_source(work / "source"))


def test_the_student_set_has_no_site_toolchain(student_python: Path) -> None:
    probe = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None "
             f"for m in {SITE_TOOLCHAIN + ('transformer_course', 'jupyterlab', 'jupytext')!r}}}))")
    found = json.loads(subprocess.run([str(student_python), "-c", probe], capture_output=True,
                                      text=True, check=True, env=fresh_envs.environ()).stdout)
    assert found == {**dict.fromkeys(SITE_TOOLCHAIN, False), "transformer_course": True,
                     "jupyterlab": True, "jupytext": True}


def test_the_student_set_opens_the_chapters_as_notebooks(student_python: Path) -> None:
    """The README's route: jupytext reads every chapter's source as a notebook with code, and its
    JupyterLab extension (which .jupyter's settings make the default viewer of book/*.md) is
    installed."""
    chapters = sorted(str(path) for path in (REPO / "book").glob("0*.md"))
    probe = ("import json, sys, jupytext; print(json.dumps({p: sum(c.cell_type == 'code' for c in "
             "jupytext.read(p).cells) for p in sys.argv[1:]}))")
    found = json.loads(subprocess.run([str(student_python), "-c", probe, *chapters],
                                      capture_output=True, text=True, check=True,
                                      env=fresh_envs.environ()).stdout)
    assert len(found) == len(chapters) >= 8 and all(found.values()), found
    prefix = subprocess.run([str(student_python), "-c", "import sys; print(sys.prefix)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    extension = Path(prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    assert (extension / "package.json").is_file(), extension


def test_the_set_up_check_passes_in_the_student_set(student_python: Path) -> None:
    """The README's one-line check, in the student set with a non-editable install: every
    check passes, and JupyterLab and jupytext are found (no "note" line)."""
    done = subprocess.run([str(student_python), "-m", "transformer_course.check_setup"],
                          capture_output=True, text=True, timeout=300, env=fresh_envs.environ())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and "\nnote " not in done.stdout  # nothing left out


@pytest.mark.parametrize("chapter", RUN_IN_STUDENT_SET)
def test_a_student_notebook_runs_to_its_end_with_the_student_set(
        student: Path, student_python: Path, chapter: str, tmp_path: Path) -> None:
    """Run as a student runs it: a copy in a fresh folder, the student environment's kernel."""
    notebook = tmp_path / f"{chapter}.ipynb"
    notebook.write_bytes((student / "notebooks" / notebook.name).read_bytes())
    done = subprocess.run(
        [str(student_python), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--inplace", "--ExecutePreprocessor.timeout=900", notebook.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200,
        env=fresh_envs.environ(TRANSFORMER_COURSE_STRICT=""))  # a student's run is not strict
    assert done.returncode == 0, f"{chapter} stopped:\n{done.stderr[-4000:]}"
    ran = nbformat.read(notebook, as_version=4)
    code = [c for c in ran.cells if c.cell_type == "code"
            and "skip-execution" not in c.metadata.get("tags", [])]
    assert all(c.execution_count for c in code), f"{chapter}: cells left unrun"
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
               for c in code for o in c.outputs), f"{chapter}: no figure shown"


def test_every_launch_button_opens_a_file_of_the_launch_branch(student: Path,
                                                               tmp_path: Path) -> None:
    """tools/launch_branch.py writes what the publishing workflow pushes to the launch branch:
    every Binder and Colab button of both editions opens a notebook in it, and Binder finds
    there what it installs (the pins, the package, postBuild) without building the book."""
    sys.path.insert(0, str(REPO / "tools"))
    import launch_branch

    branch = launch_branch.write_launch_branch(REPO, tmp_path / "branch")
    opened = 0
    for site in (HTML, student / "html"):
        for docname in toc_docnames():
            page = BeautifulSoup((site / f"{docname}.html").read_text(encoding="utf-8"),
                                 "html.parser")
            for anchor in page.select("a[href]"):
                href = anchor["href"]
                binder = re.search(r"mybinder\.org/v2/gh/[^/]+/[^/]+/[^?]+\?urlpath=lab/tree/(.+)$",
                                   href)
                colab = re.search(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/"
                                  r"(.+)$", href)
                for found in filter(None, (binder, colab)):
                    target = branch / found.group(1)
                    assert target.is_file(), f"{docname}: {href} opens nothing"
                    nbformat.validate(nbformat.read(target, as_version=4))
                    opened += 1
    assert opened >= 2 * 2 * len(list((student / "notebooks").glob("*.ipynb")))
    assert os.access(branch / "binder" / "postBuild", os.X_OK)
    for needed in ("binder/requirements.txt", "requirements.txt", "pyproject.toml",
                   "code/transformer_course/__init__.py", ".jupyter/labconfig"):
        assert (branch / needed).exists(), needed
