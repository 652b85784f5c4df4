"""Accessibility of the built pages that axe-core does not check (tests/test_browser.py runs
axe-core itself): every id once per page, every figure's alt text a description rather than a
file name."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

import pytest
from site_utils import html_path, parse_html, site_pages, toc_docnames

DOCNAMES = toc_docnames()
# an alt text that names a file or a digest rather than what the image shows
FILE_LIKE = re.compile(r"(\.(png|jpe?g|svg|gif|webp)$)|(^[0-9a-f]{16,}$)|(^\S*/\S*$)",
                       re.IGNORECASE)  # a path has a slash and no space


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
