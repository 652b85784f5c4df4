"""Sphinx extension: what a chapter costs its reader, stated at its top.

A chapter places the ``{chapter-facts}`` directive under its opening paragraph; the built page
shows there how long its main path takes to read (prose words outside the closing "Lab notes"
section, code, math and solutions) and how long the chapter took to run when the site was built
(MyST-NB's execution record). The landing page's chapter table gives the same two figures per
chapter through the ``{chapter-cost}`` role (its target is a chapter, as for ``{doc}``). The
downloaded notebooks get the same text (``chapter_summary``, ``chapter_cost``, used by
tools/launch_site.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WORDS_PER_MINUTE = 180  # technical prose with figures to look at: slower than the usual 200-250
LAB_NOTES = "lab-notes"  # the closing section's id ends with this


class ChapterFactsNode(nodes.General, nodes.Element):
    """Placeholder, replaced once the whole page (and its execution record) is known."""


class ChapterFactsDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        return [ChapterFactsNode()]


_SKIPPED = (nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.image,
            nodes.comment, nodes.system_message, nodes.target)


def _skipped(node: nodes.Node) -> bool:
    """Code, math, raw HTML, solutions and the lab notes are not the main path's prose."""
    while node is not None:
        if isinstance(node, _SKIPPED):
            return True
        if isinstance(node, nodes.section) and any(i.endswith(LAB_NOTES) for i in node["ids"]):
            return True
        if isinstance(node, nodes.Element) and (
                "cell_output" in node.get("classes", ())
                or type(node).__name__.startswith("solution")):
            return True
        node = node.parent
    return False


def main_path_words(doctree: nodes.document) -> int:
    """Words a reader of the main path reads: prose, captions and tables, outside the skipped."""
    return sum(len(text.astext().split()) for text in doctree.findall(nodes.Text)
               if not _skipped(text.parent))


def reading_minutes(words: int) -> int:
    """Minutes to read ``words``, rounded up to five."""
    return max(5, 5 * math.ceil(words / WORDS_PER_MINUTE / 5))


def run_seconds(app: Sphinx, docname: str) -> float | None:
    """How long the chapter's execution took when the site was built (None: not executed)."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return (NbMetadataCollector.get_exec_data(app.env, docname) or {}).get("runtime")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"about {max(10, round(seconds / 10) * 10)} s"
    return f"about {round(seconds / 30) / 2:g} min"


def chapter_words(app: Sphinx, docname: str, doctree: nodes.document | None = None) -> int:
    """The main path's words of ``docname``, counted once per build: from ``doctree`` (its
    resolved doctree) when given, else resolving it (a whole doctree, which loads the doctree of
    every page a numbered reference in it points to: seconds per chapter)."""
    counted = app.__dict__.setdefault("_chapter_words", {})
    if docname not in counted:
        if doctree is None:
            doctree = app.env.get_and_resolve_doctree(docname, app.builder)
        counted[docname] = main_path_words(doctree)
    return counted[docname]


def chapter_summary(app: Sphinx, docname: str, doctree: nodes.document | None = None) -> str:
    """``"Reading time ... Run time ..."`` for one chapter (``doctree``: as for
    :func:`chapter_words`)."""
    words = chapter_words(app, docname, doctree)
    line = (f"**Reading time:** about {reading_minutes(words)} min for the main path "
            f"({words:,} words)")
    seconds = run_seconds(app, docname)
    if seconds is not None:
        line += (f"; **run time:** {_duration(seconds)} to execute every cell, as measured when "
                 "this site was built")
    return line + ". The lab notes at the end are optional."


def chapter_cost(app: Sphinx, docname: str) -> str:
    """``"25 min read, runs in about 40 s"`` for the landing page's table."""
    text = f"{reading_minutes(chapter_words(app, docname))} min read"
    seconds = run_seconds(app, docname)
    return text if seconds is None else f"{text}, runs in {_duration(seconds)}"


class ChapterCostNode(nodes.Inline, nodes.Element):
    """Placeholder for a chapter's cost, filled once every chapter has been read."""


def chapter_cost_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{chapter-cost}`01_x``` -> a placeholder for chapter ``01_x`` (relative, as ``{doc}``)."""
    env = inliner.document.settings.env
    target = str(Path(env.docname).parent / text.strip())
    return [ChapterCostNode(target=target)], []


def fill_chapter_facts(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(ChapterFactsNode)):
        paragraph = nodes.paragraph(classes=["chapter-facts"])
        # The summary's Markdown emphasis, rendered as docutils nodes.
        for i, part in enumerate(chapter_summary(app, docname, doctree).split("**")):
            paragraph += nodes.strong(text=part) if i % 2 else nodes.Text(part)
        node.replace_self(paragraph)
    for node in list(doctree.findall(ChapterCostNode)):
        node.replace_self(nodes.Text(chapter_cost(app, node["target"])))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(ChapterFactsNode)
    app.add_directive("chapter-facts", ChapterFactsDirective)
    app.add_node(ChapterCostNode)
    app.add_role("chapter-cost", chapter_cost_role)
    app.connect("doctree-resolved", fill_chapter_facts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
