"""Sphinx extension: what a chapter costs its reader, stated at its top.

A chapter places the ``{chapter-facts}`` directive under its opening paragraph; the built page
shows there how long its main path takes to read (its prose words outside the closing "Lab notes"
section, code, math and solutions, at a careful reader's pace, plus time to look at each figure
and table and to read each line of code it shows) and how long the chapter took to run when the
site was built (MyST-NB's execution record). The landing page's chapter table gives the same two
figures per chapter through the ``{chapter-cost}`` role (its target is a chapter, as for
``{doc}``). The downloaded notebooks get the same text (``chapter_summary``, ``chapter_cost``,
used by tools/launch_site.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

# A careful reader's pace. Words: technical prose read closely (the usual 200-250 a minute is
# skimming). Figures, tables and code: fitted to one careful learner who read chapters 1-8 and
# timed it (about 7.8 hours in all, about 80 minutes for chapter 5), against this site's counts
# for those pages then (28,893 words, 81 figures and tables, 830 lines of code; chapter 5: 3,962,
# 11 and 209). A minute per figure or table and 6 lines of code a minute give 7.7 hours and 79
# minutes; the earlier half a minute and 15 lines gave 5.8 hours and 55 minutes.
WORDS_PER_MINUTE = 120
MINUTES_PER_EXHIBIT = 1.0  # to read a figure or a table
CODE_LINES_PER_MINUTE = 6  # code shown on the main path, traced line by line
LAB_NOTES = "lab-notes"  # the closing section's id ends with this


class ChapterFactsNode(nodes.General, nodes.Element):
    """Placeholder, replaced once the whole page (and its execution record) is known."""


class ChapterFactsDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        return [ChapterFactsNode()]


_SKIPPED = (nodes.literal_block, nodes.math, nodes.math_block, nodes.raw, nodes.image,
            nodes.comment, nodes.system_message, nodes.target)


def _off_the_main_path(node: nodes.Node) -> bool:
    """In the lab notes, a solution, a cell's output or a folded cell. (MyST-NB folds a cell
    into a ``HideCodeCellNode`` whose parent it does not set: the walk up stops there.)"""
    while node is not None:
        if isinstance(node, nodes.section) and any(i.endswith(LAB_NOTES) for i in node["ids"]):
            return True
        if isinstance(node, nodes.Element) and (
                type(node).__name__ == "HideCodeCellNode"
                or type(node).__name__.startswith("solution")
                or {"cell_output", "tag_hide-input", "tag_hide-cell"} & set(node["classes"])):
            return True
        node = node.parent
    return False


def _skipped(node: nodes.Node) -> bool:
    """Code, math, raw HTML, and anything off the main path are not the main path's prose."""
    ancestor = node
    while ancestor is not None:
        if isinstance(ancestor, _SKIPPED):
            return True
        ancestor = ancestor.parent
    return _off_the_main_path(node)


def main_path_words(doctree: nodes.document) -> int:
    """Words a reader of the main path reads: prose, captions and tables, outside the skipped."""
    return sum(len(text.astext().split()) for text in doctree.findall(nodes.Text)
               if not _skipped(text.parent))


@dataclass(frozen=True)
class MainPath:
    """What a reader of a chapter's main path reads and looks at."""

    words: int
    exhibits: int  # figures and tables
    code_lines: int

    @property
    def minutes(self) -> int:
        """Minutes to read it all, rounded up to five."""
        minutes = (self.words / WORDS_PER_MINUTE + self.exhibits * MINUTES_PER_EXHIBIT
                   + self.code_lines / CODE_LINES_PER_MINUTE)
        return max(5, 5 * math.ceil(minutes / 5))


def main_path(doctree: nodes.document) -> MainPath:
    """The main path's words, figures and tables, and lines of code shown."""
    exhibits = sum(1 for kind in (nodes.figure, nodes.table) for node in doctree.findall(kind)
                   if not _off_the_main_path(node))
    code = sum(len(node.astext().splitlines()) for node in doctree.findall(nodes.literal_block)
               if not _off_the_main_path(node))
    return MainPath(main_path_words(doctree), exhibits, code)


def run_seconds(app: Sphinx, docname: str) -> float | None:
    """How long the chapter's execution took when the site was built (None: not executed)."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return (NbMetadataCollector.get_exec_data(app.env, docname) or {}).get("runtime")


_COUNTED: WeakKeyDictionary[Sphinx, dict[str, MainPath]] = WeakKeyDictionary()  # per build


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"about {max(10, round(seconds / 10) * 10)} s"
    return f"about {round(seconds / 30) / 2:g} min"


def chapter_main_path(app: Sphinx, docname: str, doctree: nodes.document | None = None,
                      ) -> MainPath:
    """The main path of ``docname``, counted once per build: from ``doctree`` (its resolved
    doctree) when given, else resolving it (a whole doctree, which loads the doctree of every
    page a numbered reference in it points to: seconds per chapter)."""
    counted = _COUNTED.setdefault(app, {})
    if docname not in counted:
        if doctree is None:
            doctree = app.env.get_and_resolve_doctree(docname, app.builder)
        counted[docname] = main_path(doctree)
    return counted[docname]


def chapter_summary(app: Sphinx, docname: str, doctree: nodes.document | None = None) -> str:
    """``"Reading time ... Run time ..."`` for one chapter (``doctree``: as for
    :func:`chapter_main_path`)."""
    path = chapter_main_path(app, docname, doctree)
    line = (f"**Reading time:** about {path.minutes} min for the main path ({path.words:,} words "
            f"at {WORDS_PER_MINUTE} a minute, {path.exhibits} figures and tables at "
            f"{MINUTES_PER_EXHIBIT:g} min each, {path.code_lines} lines of code at "
            f"{CODE_LINES_PER_MINUTE} a minute)")
    seconds = run_seconds(app, docname)
    if seconds is not None:
        line += (f"; **run time:** {_duration(seconds)} to execute every cell, as measured when "
                 "this site was built")
    return line + ". The lab notes at the end are optional."


def chapter_cost(app: Sphinx, docname: str) -> str:
    """``"25 min read, runs in about 40 s"`` for the landing page's table."""
    text = f"{chapter_main_path(app, docname).minutes} min read"
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
