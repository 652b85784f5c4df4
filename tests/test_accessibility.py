"""Accessibility of the built pages that axe-core does not check (tests/test_browser.py runs
axe-core itself): every id once per page, every figure's alt text a description rather than a
file name, and every exercise with a title and a difficulty (tools/exercise_difficulty.py)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

import pytest
from site_utils import html_path, parse_html, site_pages, source_path, toc_docnames

DOCNAMES = toc_docnames()
# an alt text that names a file or a digest rather than what the image shows
FILE_LIKE = re.compile(r"(\.(png|jpe?g|svg|gif|webp)$)|(^[0-9a-f]{16,}$)|/", re.IGNORECASE)
EXERCISE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise\}[ \t]*(?P<title>.*)$")
DIFFICULTY = re.compile(r"^:class:.*\bdifficulty-[123]\b")


def test_no_id_is_used_twice_on_a_page(built_site: None) -> None:
    repeated = {}
    for page in site_pages():
        counts = Counter(tag["id"] for tag in parse_html(page).find_all(id=True))
        twice = sorted(name for name, count in counts.items() if count > 1)
        if twice:
            repeated[page.name] = twice
    assert not repeated, f"ids used more than once: {repeated}"


def looks_like_a_file_name(alt: str) -> bool:
    """Whether an alt text is a path, a file name or a hex digest (Sphinx's default alt for an
    image without one is its path)."""
    alt = alt.strip()
    return bool(FILE_LIKE.search(alt)) or bool(re.fullmatch(r"[\w.-]+", alt)
                                                  and PurePosixPath(alt).suffix != "")


@pytest.mark.parametrize("docname", DOCNAMES)
def test_every_figure_has_alt_text_that_describes_it(built_site: None, docname: str) -> None:
    """Every image in the page's content has alt text, and it is not a file name or hash
    (``{glue:figure}`` takes an ``:alt:`` option)."""
    article = parse_html(html_path(docname)).select_one("article.bd-article")
    assert article is not None
    missing = [img.get("src") for img in article.find_all("img") if not img.get("alt", "").strip()]
    file_names = [img["alt"] for img in article.find_all("img")
                  if img.get("alt") and looks_like_a_file_name(img["alt"])]
    assert not missing, f"{docname}: images without alt text: {missing}"
    assert not file_names, f"{docname}: {len(file_names)} image(s) whose alt text is a file " \
                           f"name: {file_names[:3]}"


@pytest.mark.parametrize("docname", DOCNAMES)
def test_every_exercise_has_a_title_and_a_difficulty(docname: str) -> None:
    """The exercise convention of tools/exercise_difficulty.py: ``:::{exercise} Short title``
    with ``:class: difficulty-1``, ``-2`` or ``-3``."""
    lines = source_path(docname).read_text(encoding="utf-8").splitlines()
    problems = []
    for number, line in enumerate(lines, start=1):
        opening = EXERCISE.match(line)
        if not opening:
            continue
        options = []
        for option in lines[number:]:
            if not option.startswith(":") or option.startswith(opening["fence"]):
                break
            options.append(option)
        if not opening["title"].strip():
            problems.append(f"line {number}: no title")
        if not any(DIFFICULTY.match(option) for option in options):
            problems.append(f"line {number}: no :class: difficulty-1/2/3")
    assert not problems, f"{docname}: {problems}"
