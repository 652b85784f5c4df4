"""Sphinx extension: the student edition of the site, built with the Sphinx tag ``student``.

``make student`` (``tools/build_edition.py student``) builds the book with ``-t student`` into its
own folder; this extension then leaves every solution out of it, and does nothing otherwise:

- every sphinx-exercise solution leaves the pages: ``{solution}`` blocks, and what
  ``{solution-start}`` .. ``{solution-end}`` enclose (prose, code cells, their outputs and glued
  figures), removed from the doctree once sphinx-exercise has merged the gated blocks, so neither
  the pages nor the search index hold them;
- the page sources offered for download (``_sources/<page>.md``) lose their solutions too
  (``readable_notebook.without_solutions``); the ``.ipynb`` downloads are written without them
  by ``launch_site.py``;
- the Binder and Colab buttons open the student edition's own notebooks (``launch_site.py``:
  ``student/_sources/`` on the launch branch), never the full ones;
- no "edit this page" button: it opens the chapter's full source, solutions included, on GitHub.
  The repository and issue buttons stay (the course's code is open, and a student may report a
  problem); every link within the site stays within the edition.

The chapters still execute whole (from the same execution cache as the full site), so every
number the exercises quote is that run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from readable_notebook import without_solutions
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx_exercise.nodes import solution_node, solution_start_node

STUDENT_TAG = "student"


def is_student_edition(app: Sphinx) -> bool:
    """Whether this build is the student edition (``-t student``)."""
    return app.tags.has(STUDENT_TAG)


class DropSolutions(SphinxTransform):
    """Remove every solution from a page of the student edition."""

    default_priority = 11  # after sphinx-exercise's MergeGatedSolutions (10)

    def apply(self, **kwargs: Any) -> None:
        if not is_student_edition(self.app):
            return
        for node in list(self.document.findall(
                lambda n: isinstance(n, (solution_node, solution_start_node)))):
            node.parent.remove(node)


def solution_count(doctree: nodes.Node) -> int:
    """How many solutions a doctree still holds."""
    return sum(1 for _ in doctree.findall(
        lambda n: isinstance(n, (solution_node, solution_start_node))))


def strip_page_sources(app: Sphinx, exception: Exception | None) -> None:
    """Rewrite the student edition's ``_sources/*.md`` downloads without their solutions."""
    if exception is not None or not is_student_edition(app) or app.builder.format != "html":
        return
    for path in sorted((Path(app.outdir) / "_sources").rglob("*.md")):
        text, _ = without_solutions(path.read_text(encoding="utf-8"))
        path.write_text(text + "\n", encoding="utf-8")


def drop_edit_button(app: Sphinx, config: Any) -> None:
    """The student edition has no "edit this page" button (it shows the full source)."""
    if is_student_edition(app):
        config.html_theme_options = {**config.html_theme_options, "use_edit_page_button": False}


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the transform and the hooks (all of them idle unless ``-t student``)."""
    app.add_transform(DropSolutions)
    app.connect("config-inited", drop_edit_button)
    app.connect("build-finished", strip_page_sources)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
