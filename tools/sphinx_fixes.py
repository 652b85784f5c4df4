"""A Sphinx extension that works around bugs of the pinned documentation stack.

Repeated inline scripts (Sphinx 7.4).

An inline script registered after the HTML builder starts reaches the builder twice, once with
filename ``None`` and once with ``''``, so every page would carry it twice. Since
``launch_site.py`` unhooks sphinx-thebe (whose repeated ``const THEBE_JS_URL`` made the browser
report "Identifier 'THEBE_JS_URL' has already been declared"), the script this still concerns is
sphinx-togglebutton's (``let toggleHintShow``, ``var togglebuttonSelector``): a repeated ``let``
is the same error. This drops the repeats from each page.

Repeated ids (sphinx-exercise 1.2). Every exercise and solution wraps its content in a
``<section id="exercise-content">`` (``"solution-content"``), so a page with four exercises has
each id four times: invalid HTML, and a fragment link or an assistive technology that follows
ids lands on the first. Those ids are made unique (``<label>-content``), keeping the old name as
a class for styling.

Lost node handlers in ``singlehtml`` (Sphinx 7.4 with sphinx-exercise 1.2). Sphinx gives a
builder the node handlers registered for its name and falls back to its format ("html") only when
none are; sphinx-exercise registers three for ``singlehtml``, so that builder loses every other
extension's HTML handlers (MyST-NB's folded cells first) and fails. The ``html`` handlers it
lacks are copied to it.

A folded cell's name that is not its label (MyST-NB 1.4). MyST-NB writes each folded cell as
``<summary aria-label="Toggle hidden content">`` around the visible "Show code cell source":
the accessible name leaves out the visible words, which WCAG 2.5.3 (Label in Name; axe-core's
``label-content-name-mismatch``) forbids. The label is dropped from the page's body, so a
summary is named by what it shows.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
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


def inherit_html_handlers(app: Any) -> list[str]:
    """Give the running builder, when it has node handlers of its own name, every ``html``
    handler it lacks (an HTML builder only); return the node names added."""
    builder = app.builder
    handlers = app.registry.translation_handlers
    if builder.format != "html" or builder.name == "html" or builder.name not in handlers:
        return []
    own = handlers[builder.name]
    added = [name for name in handlers.get("html", {}) if name not in own]
    for name in added:
        own[name] = handlers["html"][name]
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


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: run after the themes' own page hooks (default priority 500)."""
    app.add_transform(UniqueExerciseIds)
    app.connect("builder-inited", inherit_html_handlers)
    app.connect("html-page-context", _dedupe_page_scripts, priority=900)
    app.connect("html-page-context", name_summaries_by_their_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
