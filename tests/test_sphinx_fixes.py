"""tools/sphinx_fixes.py: repeated page scripts are dropped, distinct ones kept; exercise content
ids made unique; singlehtml keeps the html node handlers."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.html._assets import _JavaScript

from tools import sphinx_fixes
from tools.sphinx_fixes import drop_repeated_scripts, script_key

THEBE = 'const THEBE_JS_URL = "x"'
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # the local extensions, as _config.yml loads them


def sphinx_app(tmp_path: Path, extensions: list[str], pages: dict[str, str],
               builder: str = "html", conf: str = "") -> Sphinx:
    """A Sphinx application for ``pages`` (file name -> text) in a temporary folder."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f"extensions = {extensions!r}\nnb_execution_mode = 'off'\n"
                                 f"html_theme = 'alabaster'\n{conf}")
    for name, text in pages.items():
        (src / name).write_text(text)
    return Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), builder,
                  status=None, warning=io.StringIO(), freshenv=True)


def test_inline_script_registered_twice_is_kept_once() -> None:
    """The Sphinx 7.4 case: the same body once with filename None and once with ''."""
    scripts = [_JavaScript("_static/doctools.js", priority=200),
               _JavaScript(None, priority=500, body=THEBE),
               _JavaScript("_static/sphinx-thebe.js", priority=500, **{"async": "async"}),
               _JavaScript("", priority=500, body=THEBE)]
    kept = drop_repeated_scripts(scripts)
    assert kept == scripts[:3]
    assert [s.attributes.get("body") for s in kept].count(THEBE) == 1


def test_distinct_scripts_are_all_kept() -> None:
    scripts = [_JavaScript("", priority=500, body="var a = 1;"),
               _JavaScript("", priority=500, body="var b = 2;"),
               _JavaScript("", priority=800, body="var a = 1;"),  # another priority
               _JavaScript("_static/a.js", priority=500),
               _JavaScript("_static/a.js", priority=500, defer="defer")]
    assert drop_repeated_scripts(scripts) == scripts


def test_plain_string_entries_are_handled() -> None:
    assert drop_repeated_scripts(["_static/a.js", "_static/a.js", "_static/b.js"]) == \
        ["_static/a.js", "_static/b.js"]
    assert script_key(None) == script_key("")


@pytest.mark.parametrize("scripts", [None, ("a.js",), "a.js"])
def test_rejects_non_lists(scripts: Any) -> None:
    with pytest.raises(TypeError, match="scripts"):
        drop_repeated_scripts(scripts)


LATE_SCRIPT = """
def setup(app):
    app.connect("builder-inited", lambda app: app.add_js_file(None, body="let once = 1;"))
"""


@pytest.mark.parametrize("with_fix", [False, True], ids=["sphinx alone", "with sphinx_fixes"])
def test_a_script_added_after_the_builder_starts_is_on_the_page_once(tmp_path: Path,
                                                                     with_fix: bool) -> None:
    """Sphinx 7.4.7 puts an inline script registered in ``builder-inited`` on every page twice
    (as sphinx-togglebutton's is). The control fails, and drop_repeated_scripts can go, once
    Sphinx puts it there once (notes/sphinx_inline_script_twice.md)."""
    extensions = ["sphinx_fixes"] if with_fix else []
    sphinx_app(tmp_path, extensions, {"index.rst": "T\n=\n\nText.\n"}, conf=LATE_SCRIPT).build()
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert page.count("let once = 1;") == (1 if with_fix else 2)


def test_setup_hooks_page_context_after_the_themes() -> None:
    calls, transforms = [], []
    domains: list[tuple[Any, dict[str, Any]]] = []
    app = SimpleNamespace(connect=lambda *args, **kwargs: calls.append((args, kwargs)),
                          add_transform=transforms.append,
                          add_domain=lambda domain, **kwargs: domains.append((domain, kwargs)))
    metadata = sphinx_fixes.setup(app)
    assert metadata["parallel_read_safe"] and metadata["parallel_write_safe"]
    assert transforms == [sphinx_fixes.UniqueExerciseIds]
    assert domains == [(sphinx_fixes.NumrefReadsEachPageOnce, {"override": True})]
    hooks: dict[str, list] = {}
    for args, options in calls:
        hooks.setdefault(args[0], []).append((args[1], options))
    page_hooks = dict(hooks["html-page-context"])
    assert set(page_hooks) == {sphinx_fixes._dedupe_page_scripts,
                               sphinx_fixes.name_summaries_by_their_text}
    handler, options = sphinx_fixes._dedupe_page_scripts, page_hooks[
        sphinx_fixes._dedupe_page_scripts]
    assert options["priority"] > 500
    assert hooks["builder-inited"][0][0] is sphinx_fixes.register_singlehtml_visitors
    context = {"script_files": [_JavaScript(None, body=THEBE), _JavaScript("", body=THEBE)]}
    scripts = context["script_files"]
    handler(app, "page", "page.html", context, None)
    assert context["script_files"] is scripts and len(scripts) == 1  # edited in place


def test_exercise_content_ids_become_unique() -> None:
    document = nodes.section(ids=["page"])
    for label in ("ex-a", "ex-b"):
        block = nodes.container(label=label, ids=[label])
        block += nodes.section(ids=["exercise-content"])
        document += block
    unlabelled = nodes.container()
    unlabelled += nodes.section(ids=["solution-content"])
    document += unlabelled
    assert sphinx_fixes.unique_content_ids(document) == 3
    sections = list(document.findall(nodes.section))[1:]
    assert [s["ids"] for s in sections] == [["ex-a-content"], ["ex-b-content"], []]
    assert [s["classes"] for s in sections] == [["exercise-content"], ["exercise-content"],
                                                ["solution-content"]]
    assert sphinx_fixes.unique_content_ids(document) == 0  # nothing shared is left


TWO_EXERCISES = "T\n=\n\n" + "".join(f".. exercise::\n   :label: ex-{x}\n\n   {x}.\n\n"
                                       for x in "ab")


@pytest.mark.parametrize("with_fix", [False, True], ids=["sphinx-exercise alone", "with the fix"])
def test_two_exercises_have_content_ids_of_their_own(tmp_path: Path, with_fix: bool) -> None:
    """sphinx-exercise 1.2.1 gives every exercise's content the id "exercise-content". The
    control fails, and UniqueExerciseIds can go, once it does not
    (notes/sphinx_exercise_repeated_ids.md)."""
    extensions = ["sphinx_exercise"] + (["sphinx_fixes"] if with_fix else [])
    sphinx_app(tmp_path, extensions, {"index.rst": TWO_EXERCISES}).build()
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert page.count('id="exercise-content"') == (0 if with_fix else 2)
    assert ('id="ex-a-content"' in page and 'id="ex-b-content"' in page) is with_fix


def test_singlehtml_visitors_registered_only_where_sphinx_exercise_hides_the_html_ones() -> None:
    from myst_nb import sphinx_ as myst_nb_sphinx

    def app(builder: str, extensions: list[str]) -> SimpleNamespace:
        calls: list[tuple[Any, dict]] = []
        return SimpleNamespace(builder=SimpleNamespace(name=builder), calls=calls,
                               config=SimpleNamespace(extensions=extensions),
                               add_node=lambda node, **kw: calls.append((node, kw)))

    single = app("singlehtml", ["myst_nb", "sphinx_exercise"])
    assert sphinx_fixes.register_singlehtml_visitors(single) == ["HideCodeCellNode", "rubric"]
    assert single.calls[0] == (myst_nb_sphinx.HideCodeCellNode, {"override": True, "singlehtml": (
        myst_nb_sphinx.visit_HideCellInput, myst_nb_sphinx.depart_HideCellInput)})
    assert single.calls[1][0] is nodes.rubric
    for other in (app("html", ["myst_nb", "sphinx_exercise"]), app("singlehtml", ["myst_nb"])):
        assert sphinx_fixes.register_singlehtml_visitors(other) == [] and other.calls == []


def test_singlehtml_visitors_cover_the_books_extensions(tmp_path: Path) -> None:
    """With the extensions _config.yml loads, singlehtml gets every html visitor. Reads Sphinx's
    registry, which only this test does: it fails when an upgrade adds or renames an html-only
    node, before the PDF build does (add it to SINGLEHTML_VISITORS)."""
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(user_yaml=ROOT / "_config.yml", sourcedir=ROOT,
                                 use_external_toc=False,  # it registers no node (and needs a toc)
                                 cli_config={"latex_individualpages": False})
    (tmp_path / "refs.bib").write_text("")
    app = sphinx_app(tmp_path, config["extensions"], {"index.rst": "T\n=\n"}, "singlehtml",
                     f"bibtex_bibfiles = [{str(tmp_path / 'refs.bib')!r}]\n")
    handlers = app.registry.translation_handlers
    assert handlers["singlehtml"] == handlers["html"]


FOLDED_PAGE = """\
---
jupytext: {text_representation: {extension: .md, format_name: myst}}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# A page with a folded cell

```{code-cell} ipython3
:tags: [hide-input]
1 + 1
```
"""


SINGLE_PAGE = FOLDED_PAGE + """
```{exercise}
:label: ex-one

Add one and one.
```
"""


@pytest.mark.parametrize("with_fix", [False, True], ids=["sphinx-exercise alone", "with the fix"])
def test_singlehtml_renders_a_folded_cell_next_to_an_exercise(tmp_path: Path,
                                                              with_fix: bool) -> None:
    """Sphinx 7.4.7 drops the html visitors from singlehtml because sphinx-exercise 1.2.1 gives
    it three of its own, so MyST-NB's folded cell fails the build. The control fails, and
    SINGLEHTML_VISITORS can go, once Sphinx merges the two or sphinx-exercise stops registering
    singlehtml visitors (notes/sphinx_singlehtml_lost_handlers.md)."""
    extensions = ["myst_nb", "sphinx_exercise"] + (["sphinx_fixes"] if with_fix else [])
    app = sphinx_app(tmp_path, extensions, {"index.md": SINGLE_PAGE}, "singlehtml")
    if not with_fix:
        with pytest.raises(NotImplementedError, match="HideCodeCellNode"):
            app.build()
        return
    app.build()
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "<details" in page and "Show code cell source" in page and "Add one and one" in page


@pytest.mark.parametrize("with_fix", [False, True], ids=["myst-nb alone", "with sphinx_fixes"])
def test_a_folded_cell_is_named_by_what_it_shows(tmp_path, with_fix: bool) -> None:
    """MyST-NB names every folded cell "Toggle hidden content" (WCAG 2.5.3: the name must hold
    the visible "Show code cell source"); sphinx_fixes drops that name. The control fails, and
    this workaround can go, once MyST-NB no longer writes it (notes/myst_nb_summary_label.md)."""
    extensions = ["myst_nb"] + (["sphinx_fixes"] if with_fix else [])
    sphinx_app(tmp_path, extensions, {"index.md": FOLDED_PAGE}).build()
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "<summary" in page and "Show code cell source" in page
    assert (sphinx_fixes.FOLDED_CELL_SUMMARY in page) is not with_fix


FIGURE_PAGE = "Figures\n=======\n\n" + "".join(
    f".. _fig-{x}:\n\n.. figure:: missing-{x}.png\n\n   Caption {x}.\n\n" for x in "ab")
CITING_PAGE = "Text\n====\n\nSee :numref:`fig-a`, :numref:`fig-b` and :numref:`fig-a` again.\n"
TOC = "Book\n====\n\n.. toctree::\n\n   figures\n   text\n"


@pytest.mark.parametrize("with_fix", [False, True], ids=["Sphinx alone", "with the fix"])
def test_numbered_references_unpickle_the_target_page_once(tmp_path: Path, with_fix: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Sphinx 7.4.7 unpickles the whole doctree of a figure's page for each numbered reference
    to it. The control fails, and NumrefReadsEachPageOnce can go, once it does not
    (notes/sphinx_numref_unpickles_doctree.md). With the fix the page loads once and every
    reference still gets its figure's number."""
    from sphinx.environment import BuildEnvironment

    loads: list[str] = []  # the pages unpickled to resolve a numbered reference
    get_doctree = BuildEnvironment.get_doctree

    def counted(env: BuildEnvironment, docname: str) -> nodes.document:
        callers = (sys._getframe(1).f_code.co_name,  # Sphinx's resolver, or the fix's
                   sys._getframe(2).f_code.co_name)  # and Sphinx's above it
        if "_resolve_numref_xref" in callers:
            loads.append(docname)
        return get_doctree(env, docname)

    monkeypatch.setattr(BuildEnvironment, "get_doctree", counted)
    sphinx_app(tmp_path, ["sphinx_fixes"] if with_fix else [],
               {"index.rst": TOC, "figures.rst": FIGURE_PAGE, "text.rst": CITING_PAGE},
               conf="numfig = True\nsuppress_warnings = ['image.not_readable']\n").build()
    assert loads == (["figures"] if with_fix else ["figures"] * 3)
    page = (tmp_path / "out" / "text.html").read_text(encoding="utf-8")
    assert [page.count(f"Fig. {n}") for n in (1, 2)] == [2, 1]
