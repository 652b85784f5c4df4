"""A Sphinx extension that works around bugs of the pinned documentation stack, through Sphinx's
documented events and ``app.add_node`` only. Each workaround names the versions it is for, has a
control in ``tests/test_sphinx_fixes.py`` that fails once the bug is fixed (then delete it), and
a reproduction to report upstream in ``notes/``.

Repeated inline scripts (Sphinx 7.4.7; ``notes/sphinx_inline_script_twice.md``). An inline
script registered after the HTML builder starts reaches the builder twice, once with filename
``None`` and once with ``''``, so every page would carry it twice. sphinx-thebe's (whose repeated
``const THEBE_JS_URL`` made the browser report "Identifier 'THEBE_JS_URL' has already been
declared") is gone (``launch_site.py`` removes thebe's assets); the script this still concerns is
sphinx-togglebutton's (``let toggleHintShow``, ``var togglebuttonSelector``): a repeated ``let``
is the same error. This drops the repeats from each page (``html-page-context``).

Repeated ids (sphinx-exercise 1.2.1; ``notes/sphinx_exercise_repeated_ids.md``). Every exercise
and solution wraps its content in a ``<section id="exercise-content">`` (``"solution-content"``),
so a page with four exercises has each id four times: invalid HTML, and a fragment link or an
assistive technology that follows ids lands on the first. Those ids are made unique
(``<label>-content``, in a transform), keeping the old name as a class for styling.

Lost node handlers in ``singlehtml`` (Sphinx 7.4.7 with sphinx-exercise 1.2.1;
``notes/sphinx_singlehtml_lost_handlers.md``). Sphinx gives a builder the node handlers
registered for its name and falls back to its format ("html") only when none are; sphinx-exercise
registers three for ``singlehtml``, so that builder loses every other extension's HTML handlers
(MyST-NB's folded cells first) and fails, or renders sphinx-design's containers and MyST's
rubrics as plain Sphinx would. Sphinx offers no public way to read another extension's handlers,
so ``SINGLEHTML_VISITORS`` names the HTML visitors the book's other extensions register for
``html`` alone, registered for ``singlehtml`` too through the documented ``app.add_node``; a test
checks the table against what the book's extensions register.

A folded cell's name that is not its label (MyST-NB 1.4.0; ``notes/myst_nb_summary_label.md``).
MyST-NB writes each folded cell as ``<summary aria-label="Toggle hidden content">`` around the
visible "Show code cell source": the accessible name leaves out the visible words, which WCAG
2.5.3 (Label in Name; axe-core's ``label-content-name-mismatch``) forbids. The label is dropped
from the page's body (``html-page-context``), so a summary is named by what it shows.

A page unpickled at every numbered reference to it (Sphinx 7.4.7;
``notes/sphinx_numref_unpickles_doctree.md``). To number a ``{numref}``, Sphinx's standard domain
reads the whole doctree of the page the target is on from its pickle, once per reference. This
book's 244 numbered references, to chapters whose doctrees hold every cell's output, cost about
40 s of unpickling in each build (site, student edition, PDF). A subclass of the standard domain,
put in place with the documented ``app.add_domain(..., override=True)``, hands that resolver an
environment whose ``get_doctree`` unpickles each page once per build; the resolver only reads it.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import importlib
from typing import Any
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx.domains.std import StandardDomain
from sphinx.transforms import SphinxTransform

SHARED_IDS = ("exercise-content", "solution-content")  # what sphinx-exercise gives every block


def script_key(script: Any) -> tuple[str, int, tuple[tuple[str, str], ...]]:
    """What makes two page scripts the same: file (None and '' alike), priority, attributes."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), int(getattr(script, "priority", 500)),
            tuple(sorted((str(k), str(v)) for k, v in attributes.items())))


def drop_repeated_scripts(scripts: list[Any]) -> list[Any]:
    """``scripts`` without later repeats of an earlier script, order kept."""
    if not isinstance(scripts, list):
        raise TypeError(f"scripts must be a list; got {type(scripts).__name__}")
    seen: set[tuple[str, int, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        key = script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _dedupe_page_scripts(app: Any, pagename: str, templatename: str,
                         context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = drop_repeated_scripts(scripts)


def unique_content_ids(doctree: nodes.Node) -> int:
    """Give every exercise's and solution's content section an id of its own,
    ``<label>-content`` (the shared id becomes a class); return how many were renamed."""
    renamed = 0
    for section in list(doctree.findall(nodes.section)):
        shared = [i for i in section["ids"] if i in SHARED_IDS]
        if not shared:
            continue
        owner = section.parent
        label = owner.get("label") or (owner["ids"][0] if owner is not None and owner["ids"]
                                       else "")
        section["ids"] = [i for i in section["ids"] if i not in SHARED_IDS]
        if label:
            section["ids"].append(f"{label}-content")
        section["classes"] += [c for c in shared if c not in section["classes"]]
        renamed += 1
    return renamed


# The HTML visitors the book's extensions register for "html" alone (Sphinx 7.4.7, sphinx-exercise
# 1.2.1): extension -> module of the visitors -> "node visit depart" ("-": no depart). A node not
# in the module is docutils' own. MyST-NB sets up MyST-Parser, which overrides the rubric's.
SINGLEHTML_VISITORS: dict[str, dict[str, list[str]]] = {
    "myst_nb": {"myst_nb.sphinx_": ["HideCodeCellNode visit_HideCellInput depart_HideCellInput"],
                "myst_parser.parsers.docutils_": ["rubric visit_rubric_html depart_rubric_html"]},
    "sphinx_design": {
        "sphinx_design.extension": ["container visit_container depart_container",
                                    "PassthroughTextElement visit_depart_null visit_depart_null"],
        "sphinx_design.aside": ["aside_main visit_aside_main depart_aside_main"],
        "sphinx_design.badges_buttons": ["sd_badge visit_sd_badge_html depart_sd_badge_html",
                                         "sd_line_break visit_sd_line_break_html -"],
        "sphinx_design.dropdown": ["dropdown_main visit_dropdown_main depart_dropdown_main",
                                   "dropdown_title visit_dropdown_title depart_dropdown_title"],
        "sphinx_design.icons": ["fontawesome visit_fontawesome_html depart_fontawesome_html",
                                "sd_icon visit_sd_icon_html -"],
        "sphinx_design.steps": ["steps_list visit_steps_list_html depart_steps_list_html"],
        "sphinx_design.tabs": ["sd_tab_input visit_tab_input depart_tab_input",
                               "sd_tab_label visit_tab_label depart_tab_label"]},
    "sphinx_book_theme": {"sphinx_book_theme.nodes": [
        "SideNoteNode visit_SideNoteNode depart_SideNoteNode"]},
    "sphinx_thebe": {"sphinx_thebe": ["ThebeButtonNode visit_element_html -"]},
    "sphinx_jupyterbook_latex": {"sphinx_jupyterbook_latex.nodes": [
        "HiddenCellNode visit_HiddenCellNode -", "RootHeader visit_RootHeader depart_RootHeader"]},
}


def register_singlehtml_visitors(app: Any) -> list[str]:
    """In a ``singlehtml`` build with sphinx-exercise, register for ``singlehtml`` the HTML
    visitors of ``SINGLEHTML_VISITORS`` whose extension is loaded; return the node names."""
    loaded = set(app.config.extensions)
    if app.builder.name != "singlehtml" or "sphinx_exercise" not in loaded:
        return []
    added = []
    for extension, modules in SINGLEHTML_VISITORS.items():
        if extension not in loaded:
            continue
        for module_name, entries in modules.items():
            module = importlib.import_module(module_name)
            for name, visit, depart in (entry.split() for entry in entries):
                node = getattr(module, name, None) or getattr(nodes, name)
                depart_fn = None if depart == "-" else getattr(module, depart)
                app.add_node(node, override=True, singlehtml=(getattr(module, visit), depart_fn))
                added.append(name)
    return added


class UniqueExerciseIds(SphinxTransform):
    """Run :func:`unique_content_ids` once sphinx-exercise has merged its gated blocks."""

    default_priority = 12  # after sphinx-exercise's merges (10) and the student edition's (11)

    def apply(self, **kwargs: Any) -> None:
        unique_content_ids(self.document)


FOLDED_CELL_SUMMARY = '<summary aria-label="Toggle hidden content">'  # MyST-NB's, verbatim


def name_summaries_by_their_text(app: Any, pagename: str, templatename: str,
                                 context: dict[str, Any], doctree: Any) -> None:
    """Drop MyST-NB's fixed aria-label from the page's folded cells (see the module's notes)."""
    if FOLDED_CELL_SUMMARY in context.get("body", ""):
        context["body"] = context["body"].replace(FOLDED_CELL_SUMMARY, "<summary>")


class _DoctreesReadOnce:
    """A build environment as the numref resolver reads it: ``get_doctree`` unpickles each page
    once (into ``doctrees``), everything else is the environment's own."""

    def __init__(self, env: Any, doctrees: dict[str, nodes.document]) -> None:
        self._env, self._doctrees = env, doctrees

    def get_doctree(self, docname: str) -> nodes.document:
        if docname not in self._doctrees:
            self._doctrees[docname] = self._env.get_doctree(docname)
        return self._doctrees[docname]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


_NUMREF_DOCTREES: WeakKeyDictionary[Any, dict[str, nodes.document]] = WeakKeyDictionary()


class NumrefReadsEachPageOnce(StandardDomain):
    """Sphinx's standard domain, its numbered references resolved from doctrees unpickled once
    per build (see the module's notes)."""

    def _resolve_numref_xref(self, env: Any, *args: Any) -> Any:
        doctrees = _NUMREF_DOCTREES.setdefault(env, {})
        return super()._resolve_numref_xref(_DoctreesReadOnce(env, doctrees), *args)


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: run after the themes' own page hooks (default priority 500)."""
    app.add_domain(NumrefReadsEachPageOnce, override=True)
    app.add_transform(UniqueExerciseIds)
    app.connect("builder-inited", register_singlehtml_visitors)
    app.connect("html-page-context", _dedupe_page_scripts, priority=900)
    app.connect("html-page-context", name_summaries_by_their_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
