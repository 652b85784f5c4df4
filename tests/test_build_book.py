"""tools/build_book.py: a chapter re-executes exactly when its cells, the code it imports, or the
pins change; the chapters execute in parallel into the cache the Sphinx build then reads.

The fast tests check the dependency analysis on a tiny package; the build test runs
``make -C <repo> book`` on a throwaway book of two chapters (one using the package's ``a``
subpackage, one its ``b`` module).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import textwrap
from pathlib import Path

import build_book  # tools/ is on sys.path (site_utils)
import pytest
from site_utils import CHAPTER_HEADER, REPO, strip_ansi, throwaway_book

PACKAGE = {  # a package whose two halves are used by one chapter each
    "canarypkg/__init__.py": "from . import core\n",
    "canarypkg/core.py": "BASE = 1000\n",
    "canarypkg/a/__init__.py": "",
    "canarypkg/a/exp.py": textwrap.dedent("""\
        from pathlib import Path

        from ..core import BASE


        def value():
            return BASE + int(Path(__file__).with_name("value.txt").read_text())
        """),
    "canarypkg/a/value.txt": "1\n",
    "canarypkg/b.py": "from .core import BASE\n\nVALUE = BASE + 2\n",
    "canarypkg/unused.py": "X = 0\n",
    "single.py": "import canarypkg.b\n",  # a top-level module of its own, importing the package
}
# what each throwaway chapter's code cells import
IMPORTS = {"A": "from canarypkg.a import exp", "B": "from canarypkg import b",
           "C": "import single"}


def write_package(root: Path) -> Path:
    for name, text in PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """(the code folder, the pins file)."""
    pins = tmp_path / "pins.txt"
    pins.write_text("numpy==2.0\n")
    return write_package(tmp_path / "code"), pins


def _fingerprints(code: Path, pins: Path) -> dict[str, str]:
    sources = build_book.Code.load([code, pins])
    return {chapter: build_book.fingerprint(sources.dependency_files(sources.closure(
        build_book.imported_names(statement))), code)[0]
        for chapter, statement in IMPORTS.items()}


def test_imported_names() -> None:
    names = build_book.imported_names(textwrap.dedent("""\
        %matplotlib inline
        import os, numpy as np
        import a.b.c
        from d.e import f, g as h
        from . import relative
        import importlib
        importlib.import_module("k.l")
        def later():
            from m import n
        """))
    assert names == {"os", "numpy", "a.b.c", "d.e", "d.e.f", "d.e.g", "importlib", "k.l", "m",
                     "m.n"}
    assert build_book.imported_names("import importlib\nimportlib.import_module(name)") is None
    assert build_book.imported_names("def broken(:\n") is None


def test_chapters_are_read_as_myst_nb_reads_them(tmp_path: Path) -> None:
    """MyST Markdown through MyST-NB's reader, notebooks as notebooks: the same code cells."""
    import nbformat

    markdown = tmp_path / "chapter.md"
    markdown.write_text(CHAPTER_HEADER + "# C\n\n```{code-cell} ipython3\nimport single\n```\n")
    notebook = tmp_path / "chapter.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# C"),
                                                   nbformat.v4.new_code_cell("import single")]),
                   notebook)
    for path in (markdown, notebook):
        assert build_book.notebook_imports(build_book.read_notebook(path)) == ["single"]


def test_dependencies_follow_imports_parents_and_package_data(project: tuple[Path, Path]) -> None:
    code, pins = project
    sources = build_book.Code.load([code, pins])
    a = sources.closure(build_book.imported_names(IMPORTS["A"]))
    assert a == {"canarypkg", "canarypkg.core", "canarypkg.a", "canarypkg.a.exp"}
    files = {p.relative_to(code).as_posix() if p.is_relative_to(code) else p.name
             for p in sources.dependency_files(a)}
    assert files == {"canarypkg/__init__.py", "canarypkg/core.py", "canarypkg/a/__init__.py",
                     "canarypkg/a/exp.py", "canarypkg/a/value.txt", "pins.txt"}
    assert sources.closure(build_book.imported_names(IMPORTS["C"])) == \
        {"single", "canarypkg", "canarypkg.core", "canarypkg.b"}
    assert sources.closure(None) == set(sources.files), "unknown imports: depend on everything"
    assert sources.closure({"numpy", "os"}) == set()


@pytest.mark.parametrize(("edit", "touched"), [
    ("canarypkg/a/value.txt", {"A"}),      # data beside the module chapter A imports
    ("canarypkg/a/exp.py", {"A"}),
    ("canarypkg/b.py", {"B", "C"}),        # C imports it through single.py
    ("single.py", {"C"}),
    ("canarypkg/core.py", {"A", "B", "C"}),  # the core: every chapter
    ("canarypkg/__init__.py", {"A", "B", "C"}),  # a parent package runs on every import
    ("pins", {"A", "B", "C"}),
    ("canarypkg/unused.py", set()),        # imported by no chapter
    ("canarypkg/new_module.py", set()),
    ("canarypkg/a/new_data.csv", {"A"}),
])
def test_an_edit_re_executes_the_chapters_that_import_it(project: tuple[Path, Path], edit: str,
                                                          touched: set[str]) -> None:
    code, pins = project
    before = _fingerprints(code, pins)
    assert before == _fingerprints(code, pins), "fingerprints must be stable"
    target = pins if edit == "pins" else code / edit
    target.write_text((target.read_text() if target.exists() else "") + "# edited\n")
    after = _fingerprints(code, pins)
    assert {chapter for chapter in IMPORTS if before[chapter] != after[chapter]} == touched


def test_build_litter_is_no_dependency(project: tuple[Path, Path]) -> None:
    code, pins = project
    before = _fingerprints(code, pins)
    (code / "canarypkg" / "__pycache__").mkdir()
    (code / "canarypkg" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0")
    (code / "canarypkg.egg-info").mkdir()
    (code / "canarypkg.egg-info" / "SOURCES.txt").write_text("x")
    assert _fingerprints(code, pins) == before


def test_site_inputs_are_the_sources_not_the_outputs(tmp_path: Path) -> None:
    """The no-change check: an edit anywhere in the book or the code counts, build outputs and
    caches do not, and a symlink loop does not hang it."""
    book = throwaway_book(tmp_path / "book", "# A chapter\n")
    code = write_package(tmp_path / "code")
    before = build_book.site_fingerprint(book, [code])
    for litter in ("_build/html/index.html", ".pytest_cache/x", "book/__pycache__/y.pyc",
                   "notebooks/01_canary.ipynb"):
        (book / litter).parent.mkdir(parents=True, exist_ok=True)
        (book / litter).write_text("output")
    (book / "book" / "loop").symlink_to(book / "book")
    assert build_book.site_fingerprint(book, [code]) == before
    (book / "book" / "01_canary.md").write_text("# A chapter, edited\n")
    edited = build_book.site_fingerprint(book, [code])
    assert edited != before
    (code / "canarypkg" / "unused.py").write_text("X = 1\n")
    assert build_book.site_fingerprint(book, [code]) != edited


def test_longest_first_uses_the_build_s_measurement_then_the_book_s_record(
        tmp_path: Path) -> None:
    """A clean build has no measurement of its own: the book's record orders it, and a chapter
    neither knows goes first, the largest source first."""
    def chapter(name: str, size: int, seconds: float | None = None) -> build_book.Chapter:
        (tmp_path / name).write_text("x" * size)
        return build_book.Chapter(path=tmp_path / name, name=name, source_hash="",
                                  previous={}, seconds=seconds)

    short, long_, measured = chapter("short.md", 900), chapter("long.md", 100), \
        chapter("measured.md", 500, seconds=20.0)
    new_small, new_big = chapter("new_small.md", 10), chapter("new_big.md", 50)
    recorded = {"short.md": 5.0, "long.md": 60.0, "measured.md": 1.0}
    order = build_book.longest_first([short, new_small, measured, long_, new_big], recorded)
    assert [c.name for c in order] == ["new_big.md", "new_small.md", "long.md", "measured.md",
                                       "short.md"]
    # without a record, the largest source goes first
    assert [c.name for c in build_book.longest_first([long_, short], {})] == ["short.md",
                                                                              "long.md"]


def test_command_line_rejects_bad_arguments(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_book.main([str(tmp_path / "nowhere")])
    assert exit_.value.code == 2 and "no such path" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_book.main(["--jobs", "-1", str(tmp_path)])
    assert not (tmp_path / "_build").exists(), "bad arguments must not write anything"


# --- the real build ---------------------------------------------------------------------------

def _chapter(name: str, work: Path, code: Path) -> str:
    """A chapter that logs its execution and, while ``work/rendezvous`` exists, waits until the
    other chapter has started too: executed one after the other, the first would time out."""
    other = {"a": "b", "b": "a"}[name]
    value = "exp.value()" if name == "a" else "b.VALUE"
    return textwrap.dedent(f"""\
        # Chapter {name}

        ```{{code-cell}} ipython3
        import pathlib, sys, time
        sys.path.insert(0, {str(code)!r})
        {IMPORTS[name.upper()]}
        work = pathlib.Path({str(work)!r})
        with open(work / "executions.txt", "a") as log:
            log.write("{name}\\n")
        if (work / "rendezvous").exists():
            (work / "started-{name}").touch()
            deadline = time.time() + 60
            while not (work / "started-{other}").exists():
                assert time.time() < deadline, "chapter {other} did not run beside {name}"
                time.sleep(0.1)
        print("chapter {name}: value", {value})
        print("chapter {name}: cwd", pathlib.Path.cwd())
        ```
        """)


def _make_book(book: Path, *extra: str) -> str:
    result = subprocess.run(["make", "-C", str(REPO), "book", f"BOOK={book}", *extra],
                            capture_output=True, text=True, timeout=600)
    out = strip_ansi(result.stdout + result.stderr)
    assert result.returncode == 0, out[-3000:]
    return out


@pytest.mark.pipeline
def test_parallel_execution_fills_the_cache_and_an_edit_re_executes_one_chapter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
) -> None:
    """The first build runs as on a laptop without Linux's ``os.sched_getaffinity`` (macOS),
    its workers spawned (macOS's and Windows' start method); the later ones as ``make book``."""
    code = write_package(tmp_path / "code")
    pins = tmp_path / "pins.txt"
    pins.write_text("numpy==2.0\n")
    book = throwaway_book(tmp_path / "book", _chapter("a", tmp_path, code), name="01_a")
    (book / "book" / "02_b.md").write_text(CHAPTER_HEADER + _chapter("b", tmp_path, code))
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/index\n"
                                   "chapters:\n- file: book/01_a\n- file: book/02_b\n")
    inputs = (f"CACHE_INPUTS={code} {pins}", "JOBS=2")
    executions = tmp_path / "executions.txt"
    pages = {name: book / "_build" / "html" / "book" / f"{name}.html" for name in ("01_a", "02_b")}

    (tmp_path / "rendezvous").touch()  # the first build must run both chapters at once
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(build_book, "START_METHOD", "spawn")
    started = []  # the start method of every context the build takes its workers from
    get_context = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda method=None: started.append(
        get_context(method).get_start_method()) or get_context(method))
    assert build_book.main(["--jobs", "2", str(book), str(code), str(pins)]) == 0
    monkeypatch.undo()
    assert started == ["spawn"]
    first = strip_ansi("".join(capfd.readouterr()))
    (tmp_path / "rendezvous").unlink()
    assert sorted(executions.read_text().split()) == ["a", "b"]
    assert first.count("Executed notebook in") == 2 and "[build_book]" in first
    assert first.count("Using cached notebook") == 2, "Sphinx did not use the pre-executed cache"
    assert "Executing notebook" not in first, "MyST-NB executed a chapter itself"
    assert "chapter a: value 1001" in pages["01_a"].read_text()
    assert "chapter b: value 1002" in pages["02_b"].read_text()
    for name, page in pages.items():  # run_in_temp: a chapter cannot lean on the book's files
        cwd = Path(re.search(r"chapter \w: cwd (\S+)", page.read_text())[1])
        assert not cwd.is_relative_to(book) and not book.is_relative_to(cwd), (name, cwd)

    executions.write_text("")
    (code / "canarypkg" / "a" / "value.txt").write_text("5\n")  # used by chapter a only
    second = _make_book(book, *inputs)
    assert executions.read_text().split() == ["a"], second[-3000:]
    assert "book/01_a.md: re-executes" in second and "value.txt changed" in second
    assert second.count("Using cached notebook") == 2 and "Executing notebook" not in second
    assert "chapter a: value 1005" in pages["01_a"].read_text()
    assert "chapter b: value 1002" in pages["02_b"].read_text()

    executions.write_text("")
    third = _make_book(book, *inputs)
    assert executions.read_text() == ""
    assert "nothing the site is made from changed" in third
    assert "chapter a: value 1005" in pages["01_a"].read_text()

    config = book / "_config.yml"  # an execution setting: every chapter re-executes
    settings = build_book.Settings.of(book)
    config.write_text(config.read_text().replace(f"timeout: {settings.timeout}",
                                                 f"timeout: {settings.timeout + 1}"))
    assert build_book.Settings.of(book).digest() != settings.digest()
    fourth = _make_book(book, *inputs)
    assert sorted(executions.read_text().split()) == ["a", "b"], fourth[-3000:]
    assert fourth.count("_config.yml's execute settings changed") == 2
