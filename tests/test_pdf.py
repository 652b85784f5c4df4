"""`make pdf`: the whole book as one PDF, with every chapter, every figure and its numbered
caption, the explorers as static maps, and no MyST left raw.

The PDF is built once for this module by ``tools/build_edition.py pdf`` into ``_build/pdf``
(Sphinx's singlehtml from the site's execution cache, printed by headless Chromium: about
1.5 minutes on an idle 2-core machine, nothing when the site has not changed since the last PDF;
reading its text with PDFium takes a few seconds).
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from site_utils import (
    BUILD,
    HTML,
    REPO,
    chapter_numbers,
    glue_figures,
    html_path,
    parse_html,
    source_path,
    student_edition,
    toc_docnames,
)
from test_browser import chromium_path

pytestmark = [pytest.mark.site, pytest.mark.pipeline, pytest.mark.browser,
              pytest.mark.usefixtures("built_site")]
PDF = BUILD / "pdf" / "book.pdf"
PAGES_PER_CHAPTER = 5  # the shortest chapter prints on more than this many A4 pages
RAW_MYST = re.compile(r"\{glue:|glue:text|\{numref\}|\{doc\}|\{cite|:::|```\{")


@pytest.fixture(scope="module")
def pdf() -> PdfReader:
    """The book's PDF, built (or found current) by tools/build_edition.py."""
    done = subprocess.run([sys.executable, str(REPO / "tools" / "build_edition.py"), "pdf",
                           str(REPO), "--out", str(PDF.parent), "--chromium", chromium_path()],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"the PDF did not build:\n{done.stdout[-3000:]}" \
                                 f"\n{done.stderr[-3000:]}"
    return PdfReader(PDF)


@cache
def pdf_text(path: Path, mtime: float) -> str:
    """The PDF's text, whitespace collapsed (cached per file version); read by PDFium, in about
    2 s where pypdf's extraction takes about 30."""
    import pypdfium2

    document = pypdfium2.PdfDocument(path)
    try:
        pages = [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()
    return " ".join(" ".join(pages).split())


def _text() -> str:
    return pdf_text(PDF, PDF.stat().st_mtime)


def image_count(resources: Any) -> int:
    """Images drawn from a page's (or a form's) resources, forms followed; without decoding
    them (pypdf's ``page.images`` decodes every one: seconds for the book)."""
    objects = (resources or {}).get("/XObject")
    if objects is None:
        return 0
    objects = objects.get_object()
    count = 0
    for name in objects:
        drawn = objects[name].get_object()
        if drawn.get("/Subtype") == "/Image":
            count += 1
        elif drawn.get("/Subtype") == "/Form":
            count += image_count(drawn.get("/Resources"))
    return count


def test_every_chapter_is_in_it_with_plausible_length(pdf: PdfReader) -> None:
    assert len(pdf.pages) > PAGES_PER_CHAPTER * len(chapter_numbers()), f"{len(pdf.pages)} pages"
    text = _text()
    for docname in toc_docnames()[1:]:  # the chapters, then the references
        title = " ".join(parse_html(html_path(docname)).find("h1").get_text().rstrip("#").split())
        assert title in text, f"chapter {title!r} is not in the PDF"


def test_its_bookmarks_open_each_chapter_and_its_sections(pdf: PdfReader) -> None:
    def squashed(text: str) -> str:  # a title wrapped on paper loses the space at the wrap
        return re.sub(r"\s+", "", text)

    def titles(entries: list, depth: int = 0) -> list[tuple[int, str]]:
        found = []
        for entry in entries:  # an entry, or the list of the entry before's children
            found += titles(entry, depth + 1) if isinstance(entry, list) else [
                (depth, squashed(entry.title))]
        return found

    bookmarks = titles(pdf.outline)
    for docname in toc_docnames()[1:]:
        page = parse_html(html_path(docname))
        chapter = squashed(page.find("h1").get_text().rstrip("#"))
        at = [i for i, (_, title) in enumerate(bookmarks)
              if re.fullmatch(rf"(\d+\.)?{re.escape(chapter)}", title)]
        assert at, f"no bookmark for {chapter!r}"
        section = page.select_one("section > h2")  # the first section (not the sidebar's)
        if section is not None:  # a bookmark one level under its chapter's, before the next
            name = squashed(section.get_text().rstrip("#"))
            depth = bookmarks[at[0]][0]
            after = bookmarks[at[0] + 1:]
            inside = after[:next((i for i, (d, _) in enumerate(after) if d <= depth),
                                 len(after))]
            assert any(name in title and d == depth + 1 for d, title in inside), \
                f"no bookmark for {name!r} under {chapter!r}"


def test_it_holds_every_figure_and_its_numbered_caption(pdf: PdfReader) -> None:
    figures = sum(len(glue_figures(source_path(d).read_text())) for d in toc_docnames())
    images = sum(image_count(page.get("/Resources")) for page in pdf.pages)
    assert figures > 0 and images >= figures, f"{images} images for {figures} figures"
    text = _text()
    numbers = sorted({" ".join(span.get_text().split()) for d in toc_docnames()
                      for span in parse_html(html_path(d)).select(".caption-number")})
    assert numbers, "the site has no numbered captions: nothing was checked"
    missing = [n for n in numbers if n not in text]
    assert not missing, f"captions missing from the PDF: {missing}"


def test_it_holds_the_references_the_chapters_cite(pdf: PdfReader) -> None:
    """Every entry of the site's references page is in the PDF."""
    pages = [d for d in toc_docnames()[1:] if d not in chapter_numbers()]
    entries = [" ".join(entry.get_text().split())[:60] for d in pages
               for entry in parse_html(html_path(d)).select("div.citation > p")]
    assert entries, "the site has no references page with entries: nothing was checked"
    text = unicodedata.normalize("NFKC", _text())  # the PDF's ligatures: "ﬀ" -> "ff"
    missing = [entry for entry in entries if entry not in text]
    assert not missing, f"references missing from the PDF: {missing[:3]}"


def test_no_raw_myst_or_folded_code_prompt(pdf: PdfReader) -> None:
    text = _text()
    raw = sorted(set(RAW_MYST.findall(text)))
    assert not raw, f"raw MyST in the PDF: {raw}"
    assert "Show code cell" not in text, "a folded cell's toggle was printed"
    assert "Solution to" in text, "the solutions (collapsed on the site) are missing"


def test_explorers_print_as_static_maps(pdf: PdfReader) -> None:
    explorers = sum(len(parse_html(html_path(d)).select(".ae-mount, .ls-mount"))
                    for d in toc_docnames())
    text = _text()
    assert explorers > 0
    assert text.count("Interactive in the web edition") == explorers
    assert " or try " not in text and "to read where it looks" not in text, \
        "the explorers' controls were printed"
    assert "Load the translator" not in text, "chapter 8's load buttons were printed"


# --- the instructor's pack (tools/instructor_pack.py, `make pack`) -----------------------------
PACK_CHAPTER = Path("book/04_positional_encoding.md")  # one chapter: the pack re-runs each


@pytest.fixture(scope="module")
def pack(pdf: PdfReader, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pack for chapter 4, from this module's PDF and the student edition (the one
    tests/test_student_edition.py reads: site_utils.student_edition)."""
    import instructor_pack

    work = tmp_path_factory.mktemp("pack")
    archive = instructor_pack.write_pack(REPO, work / "pack", student_edition(), PDF,
                                         only=[PACK_CHAPTER])
    assert archive.is_file()
    return work / "pack"


def test_the_pack_holds_the_student_edition_the_pdf_and_each_figure_twice(pack: Path) -> None:
    import csv
    import zipfile

    import instructor_pack
    from PIL import Image

    assert (pack / "site" / "index.html").is_file() and (pack / "book.pdf").is_file()
    assert sorted(p.name for p in (pack / "notebooks").glob("*.ipynb"))
    assert sorted(p.stem for p in (pack / "assignments").glob("*.ipynb")) == \
        instructor_pack.assignment_notebooks.assignment_names()
    assert (pack / "assignments" / "RUBRICS.md").is_file()
    keys = instructor_pack.figure_keys(REPO / PACK_CHAPTER).values()
    rows = list(csv.DictReader((pack / "figures" / "index.csv").open(encoding="utf-8")))
    assert sorted(row["svg"] for row in rows) == sorted(f"{key}.svg" for key in keys)
    config_url = instructor_pack.binder_links.load_config(REPO)["repository"]["url"]
    for row in rows:
        assert "CC BY 4.0" in row["attribution"] and config_url in row["attribution"]
        assert row["caption"].startswith("Figure 4.") and not row["caption"].endswith("#")
        assert "CC BY 4.0" in (pack / "figures" / row["svg"]).read_text(encoding="utf-8")
        with Image.open(pack / "figures" / row["png"]) as image:
            assert round(image.info["dpi"][0]) == 200 and "CC BY 4.0" in image.info["Copyright"]
    inside = set(zipfile.ZipFile(pack.with_name("instructor-pack.zip")).namelist())
    assert {f"instructor-pack/{p.relative_to(pack).as_posix()}" for p in pack.rglob("*")
            if p.is_file()} == inside


# every element of the slide shown, measured against the slide's box (reveal.js scales both);
# not the notes, nor MathJax's copy of each equation for screen readers (clipped to nothing)
OUTSIDE_THE_SLIDE = """() => {
  const box = document.querySelector('.reveal .slides').getBoundingClientRect();
  const out = [];
  for (const el of document.querySelectorAll('.slides > section.present *')) {
    if (el.closest('aside.notes, mjx-assistive-mml')) continue;
    const r = el.getBoundingClientRect();
    if (r.width && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
                    || r.bottom > box.bottom + 1 || el.scrollWidth > el.clientWidth + 1
                    && el.tagName.startsWith('MJX-CONTAINER'))) {
      out.push(el.tagName + ' ' + (el.textContent || el.getAttribute('src') || '').slice(0, 40));
    }
  }
  return out;
}"""


def test_a_slide_deck_opens_offline_with_its_figures_and_equations(pack: Path) -> None:
    """In Chromium at 1280x720 with every request off the pack's own files refused: reveal.js
    starts, each figure loads, MathJax typesets each equation, every slide between the title and
    the close carries a key sentence and speaker notes, and nothing on any slide reaches past
    its edges."""
    import instructor_pack
    from playwright.sync_api import sync_playwright

    deck = pack / "slides" / f"{PACK_CHAPTER.stem}.html"
    article = instructor_pack.read_article(HTML / PACK_CHAPTER.with_suffix(".html"))
    _, slides = instructor_pack.main_path_slides(article,
                                                 instructor_pack.figure_keys(REPO / PACK_CHAPTER))
    equations = sum('class="equation"' in s.body for s in slides)
    assert equations and len(slides) > equations, "chapter 4's main path has both"
    refused: list[str] = []
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
            "file://") else (refused.append(route.request.url), route.abort()))
        page.goto(deck.as_uri(), wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=30_000)
        page.wait_for_function(f"() => document.querySelectorAll('.equation mjx-container')"
                               f".length >= {equations}", timeout=60_000)
        page.wait_for_function("() => MathJax.startup.promise.then(() => true)", timeout=30_000)
        page.evaluate("() => Reveal.configure({ transition: 'none' })")  # no slide in motion
        total = page.evaluate("() => Reveal.getTotalSlides()")
        broken = page.evaluate("() => Array.from(document.images).filter(i => !i.naturalWidth)"
                               ".map(i => i.src)")
        words = page.evaluate("() => Array.from(document.querySelectorAll('.slides > section'))"
                              ".slice(1, -1).map(s => [s.querySelector('p.key')?.textContent"
                              " || '', s.querySelectorAll('aside.notes p').length])")
        outside = {}
        for index in range(total):
            page.evaluate(f"() => Reveal.slide({index})")
            page.wait_for_timeout(50)
            if spill := page.evaluate(OUTSIDE_THE_SLIDE):
                outside[index] = spill
        browser.close()
    assert total == len(slides) + 2  # a title slide and a closing one
    assert not broken, broken
    assert not refused, f"the deck reached for the network: {refused}"
    assert all(key and notes for key, notes in words), words
    assert not outside, f"slides reaching past their edges at 1280x720: {outside}"
