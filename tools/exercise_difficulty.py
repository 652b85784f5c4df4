"""Sphinx extension: an exercise's difficulty and time estimate, written into its title.

The convention (the chapters follow it; ``tests/test_exercises_form.py`` checks it): every
exercise has a short title, the directive's argument, one difficulty class out of three and one
time estimate in minutes (``minutes-N``: reading, writing and running it, our estimate for a
student who has read the chapter):

    :::{exercise} Path length of a stack of convolutions
    :label: ch1-ex-conv-path
    :class: difficulty-2 minutes-15

    ...
    :::

- ``difficulty-1``, *warm-up*: checks the chapter's idea by hand or in a line or two (minutes);
- ``difficulty-2``, *practice*: writes or changes a piece of code, usually with a checker from
  ``transformer_course.exercises`` (a quarter of an hour);
- ``difficulty-3``, *challenge*: a new or changed experiment, or a derivation, argued from its
  result.

The site shows "Exercise 7.2 (Title) ★★☆ practice, about 15 min": the stars are hidden from
screen readers, which read "difficulty 2 of 3, practice" instead. The readable notebooks write
the same (``readable_notebook.py``), and the PDF prints it.
"""

from __future__ import annotations

import html
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node

LEVELS = {1: "warm-up", 2: "practice", 3: "challenge"}
CLASS = re.compile(r"^difficulty-(?P<level>\d+)$")
MINUTES = re.compile(r"^minutes-(?P<minutes>\d+)$")


def difficulty(classes: list[str]) -> int | None:
    """The difficulty an exercise's classes give (1 to 3), or None when they give none."""
    levels = [int(m["level"]) for c in classes if (m := CLASS.match(c))]
    return levels[0] if levels and levels[0] in LEVELS else None


def minutes(classes: list[str]) -> int | None:
    """The time estimate an exercise's classes give (minutes), or None when they give none."""
    found = [int(m["minutes"]) for c in classes if (m := MINUTES.match(c))]
    return found[0] if found else None


def estimate_text(estimate: int | None) -> str:
    """", about 15 min" (nothing without an estimate)."""
    return f", about {estimate} min" if estimate is not None else ""


def difficulty_markup(level: int, estimate: int | None = None) -> str:
    """The HTML shown after an exercise's title for ``level`` and the ``estimate`` (minutes)."""
    stars = "★" * level + "☆" * (len(LEVELS) - level)
    word = LEVELS[level]
    return (f'<span class="exercise-difficulty difficulty-{level}">'
            f'<span class="difficulty-stars" aria-hidden="true">{stars}</span> '
            f'<span class="visually-hidden">difficulty {level} of {len(LEVELS)}, </span>'
            f"{html.escape(word + estimate_text(estimate))}</span>")


class ShowDifficulty(SphinxPostTransform):
    """Append an exercise's difficulty to its title, once sphinx-exercise has resolved it."""

    default_priority = 21  # after sphinx-exercise's ResolveTitlesInExercises (20)
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        for node in self.document.findall(
                lambda n: isinstance(n, (exercise_node, exercise_enumerable_node))):
            classes = node.get("classes", [])
            level = difficulty(classes)
            if level is not None and node.children and isinstance(node[0], nodes.title):
                node[0] += nodes.raw("", difficulty_markup(level, minutes(classes)),
                                     format="html")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the post-transform."""
    app.add_post_transform(ShowDifficulty)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
