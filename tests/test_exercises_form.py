"""The exercise convention of tools/exercise_difficulty.py, read from the chapters' MyST sources:
every exercise opens with a short title (``:::{exercise} Short title``) and carries exactly one
difficulty class among its options (``:class: difficulty-1``, ``-2`` or ``-3``) and one time
estimate (``minutes-N``)."""

from __future__ import annotations

import re

import pytest
from site_utils import chapter_numbers, source_path

# Every chapter's exercises follow the convention.
TITLED_EXERCISES = list(chapter_numbers())
EXERCISE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise\}[ \t]*(?P<title>.*)$")
DIFFICULTY = re.compile(r"\bdifficulty-[123]\b")
MINUTES = re.compile(r"\bminutes-(\d+)\b")


def exercise_openings(text: str) -> list[tuple[int, str, list[str]]]:
    """Each ``{exercise}`` directive of a MyST source: its line number, its title (the
    directive's argument, possibly empty) and its option lines."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        opening = EXERCISE.match(line)
        if not opening:
            continue
        options = []
        for option in lines[number:]:
            if not option.startswith(":") or option.startswith(opening["fence"]):
                break
            options.append(option)
        found.append((number, opening["title"].strip(), options))
    return found


@pytest.mark.parametrize("docname", TITLED_EXERCISES)
def test_every_exercise_has_a_title_a_difficulty_and_a_time(docname: str) -> None:
    exercises = exercise_openings(source_path(docname).read_text(encoding="utf-8"))
    assert exercises, f"{docname}: no exercise directive found"
    problems = []
    for number, title, options in exercises:
        if not title:
            problems.append(f"line {number}: no title")
        levels = [level for option in options if option.startswith(":class:")
                  for level in DIFFICULTY.findall(option)]
        if len(levels) != 1:
            problems.append(f"line {number}: {len(levels)} difficulty classes, not one")
        estimates = [int(m) for option in options if option.startswith(":class:")
                     for m in MINUTES.findall(option)]
        if len(estimates) != 1 or not 1 <= estimates[0] <= 180:
            problems.append(f"line {number}: time estimates {estimates}, not one of 1-180 min")
    assert not problems, f"{docname}: {problems}"
