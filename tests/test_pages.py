"""The teaching edition's page checks, on every chapter it covers: the map is the first figure, the
reading and run time sit at the top, the lab notes close the chapter, no glue call shows in code a
reader sees without unfolding it (and the notebooks collapse the code the site folds), every
figure has alt text that describes it, and every table has plain headers and as many cells per row
as its header.
"""

from __future__ import annotations

import json
import re

import pytest
import readable_notebook  # tools/, on the path from conftest
from site_utils import (
    HTML,
    chapter_numbers,
    code_cell_lines,
    glue_figures,
    glue_json_path,
    html_path,
    parse_html,
    source_path,
    toc_docnames,
)

# Every chapter is in the teaching edition's form.
TEACHING_EDITION = list(chapter_numbers())
pytestmark = pytest.mark.usefixtures("built_site")
FOLDED = {"remove-cell", "remove-input", "hide-input", "hide-cell"}  # code a reader never sees
GLUE_CALL = re.compile(r"\bglue\w*\s*\(")
FILE_NAME = re.compile(r"^[\w./-]*\.(png|svg|jpe?g|gif)$|^[0-9a-f]{16,}", re.IGNORECASE)
TUPLE_HEADER = re.compile(r"^\(.*,.*\)$")
FLOAT_TEXT = re.compile(r"-?\d+\.\d*(e[+-]?\d+)?")


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_the_map_is_the_first_figure(docname: str) -> None:
    number = chapter_numbers()[docname]
    figures = glue_figures(source_path(docname).read_text())
    assert figures and figures[0].key == f"ch{number}-map", "the chapter opens with the map"
    first = parse_html(html_path(docname)).select_one("figure")
    assert first is not None and first.get("id") == figures[0].name, "it renders first"


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_reading_and_run_time_open_the_chapter(docname: str) -> None:
    soup = parse_html(html_path(docname))
    facts = soup.select_one("p.chapter-facts")
    assert facts is not None, "the chapter states its reading and run time"
    first_section = soup.select_one("section section")
    assert first_section is not None and facts.sourceline < first_section.sourceline
    assert re.search(r"\d+ min", facts.get_text()) and re.search(r"\d+ (s|min)\b.*run|run.*"
                                                                  r"\d+ (s|min)\b",
                                                                  facts.get_text())


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_lab_notes_close_the_chapter(docname: str) -> None:
    sections = parse_html(html_path(docname)).select("main section > section")
    titles = [section.find(re.compile("^h2$")).get_text(" ", strip=True) for section in sections
              if section.find(re.compile("^h2$"))]
    assert titles and titles[-1].rstrip("#").strip() == "Lab notes", titles


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_no_glue_call_in_visible_code(docname: str) -> None:
    visible = [f"line {line.line}: {line.text}"
               for line in code_cell_lines(source_path(docname).read_text())
               if GLUE_CALL.search(line.text) and not FOLDED & set(line.tags)]
    assert not visible


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_code_the_site_folds_is_collapsed_in_the_notebooks_students_open(docname: str) -> None:
    """The chapter opened as a notebook (the source through jupytext, the site's download): a
    cell the site removes or folds shows its output and a collapsed source, the rest in full
    (``:jupyter: {source_hidden: true}`` beside the cell's tags)."""
    import jupytext
    import nbformat

    for notebook in (jupytext.read(source_path(docname)),
                     nbformat.read(HTML / "_sources" / f"{docname}.ipynb", as_version=4)):
        wrong = [(index, cell.source.splitlines()[:1]) for index, cell in
                 enumerate(notebook.cells) if cell.cell_type == "code" and
                 bool(FOLDED & set(cell.metadata.get("tags", [])))
                 != cell.metadata.get("jupyter", {}).get("source_hidden", False)]
        assert not wrong


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_a_number_quoted_without_a_format_is_a_whole_number(docname: str) -> None:
    """A glued float shows as Python prints it: a count glued as one reads "0 of 12 runs" as
    "0.0 of 12.0 runs". So a number the prose quotes with no format spec is glued as an int, and
    a float carries a spec (``key:.1f``)."""
    glued = json.loads(glue_json_path(docname).read_text())
    bare = [f"{role['text']} = {text}"
            for role in readable_notebook.ROLE.finditer(source_path(docname).read_text())
            if role["name"] == "glue:text" and ":" not in role["text"]
            and FLOAT_TEXT.fullmatch(text := glued[role["text"]]["data"]["text/plain"])]
    assert not bare, f"floats quoted without a format: {bare}"


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_every_figure_has_descriptive_alt_text(docname: str) -> None:
    bad = []
    for image in parse_html(html_path(docname)).select("article.bd-article img"):
        alt = (image.get("alt") or "").strip()
        if len(alt.split()) < 4 or FILE_NAME.search(alt):
            bad.append((image.get("src"), alt))
    assert not bad


def _width(row) -> int:
    return sum(int(cell.get("colspan", 1)) for cell in row.find_all(["td", "th"], recursive=False))


@pytest.mark.parametrize("docname", TEACHING_EDITION)
def test_tables_are_rectangular_with_plain_headers(docname: str) -> None:
    problems = []
    for table in parse_html(html_path(docname)).select("main table"):
        rows = table.find_all("tr")
        header = [cell.get_text(" ", strip=True) for cell in rows[0].find_all(["th", "td"])]
        widths = {_width(row) for row in rows}
        if len(widths) != 1:
            problems.append(("ragged rows", header, sorted(widths)))
        problems += [("tuple header", cell) for cell in header if TUPLE_HEADER.match(cell)]
    assert not problems


def test_landing_page_gives_each_chapter_its_reading_and_run_time() -> None:
    rows = parse_html(html_path(toc_docnames()[0])).select("main table tbody tr")
    linked = {row.select_one("a")["href"].split("#")[0]: row.find_all("td")[-1].get_text()
              for row in rows if row.select_one("a")}
    assert len(linked) == len(chapter_numbers())
    for cost in linked.values():
        assert re.fullmatch(r"\d+ min read, runs in about [\d.]+ (s|min)", cost.strip()), cost


MAIN_PATH_WORDS = 4000  # the most a chapter's main path may hold (its lab notes aside)


@pytest.mark.parametrize("docname", sorted(chapter_numbers()))
def test_a_chapters_main_path_stays_within_its_word_budget(docname: str) -> None:
    """The count the page states under its opening (chapter_facts), read off the built page."""
    text = " ".join(parse_html(html_path(docname)).select_one("p.chapter-facts").get_text().split())
    words = int(re.search(r"\(([\d,]+) words at", text)[1].replace(",", ""))
    assert words <= MAIN_PATH_WORDS, f"{docname}: {words:,} words on the main path"


def test_reading_time_counts_figures_tables_and_code_shown_on_the_main_path() -> None:
    from chapter_facts import CODE_LINES_PER_MINUTE, WORDS_PER_MINUTE, MainPath, main_path
    from docutils import nodes
    from docutils.utils import new_document

    doctree = new_document("page")
    folded = nodes.container("", nodes.literal_block(text="a\nb\nc\nd\ne"),
                             classes=["cell", "tag_hide-input"])
    doctree += nodes.section(
        "", nodes.title(text="Title"), nodes.paragraph(text="Words."), nodes.figure(),
        nodes.table(), nodes.literal_block(text="x = 1\ny = 2\nz = 3"), folded,
        nodes.section("", nodes.title(text="Lab notes"), nodes.figure(),
                      nodes.literal_block(text="hidden\nlines"), ids=["ch9-lab-notes"]),
        ids=["page"])
    from myst_nb.sphinx_ import HideCodeCellNode

    # MyST-NB's fold for the HTML page: the cell's children move into it, its own parent unset
    fold = HideCodeCellNode(prompt_show="Show", prompt_hide="Hide")
    fold.append(nodes.literal_block(text="import torch\nimport numpy"))
    doctree[0].append(nodes.container("", classes=["cell"]))
    doctree[0][-1].children = [fold]
    path = main_path(doctree)
    assert (path.exhibits, path.code_lines) == (2, 3)
    assert MainPath(20 * WORDS_PER_MINUTE, 0, 0).minutes == 20
    assert MainPath(20 * WORDS_PER_MINUTE, 0, 10 * CODE_LINES_PER_MINUTE).minutes == 30
    assert MainPath(20 * WORDS_PER_MINUTE, 12, 0).minutes > 20


def test_main_path_words_leave_out_code_math_and_the_lab_notes() -> None:
    from chapter_facts import main_path_words
    from docutils import nodes
    from docutils.utils import new_document

    def section(ident: str, title: str, *body: nodes.Node) -> nodes.section:
        return nodes.section("", nodes.title(text=title), *body, ids=[ident])

    doctree = new_document("page")
    doctree += section("page", "Title", nodes.paragraph(text="One two three."),
                       nodes.literal_block(text="not counted at all"),
                       nodes.math_block(text="x = y + z"),
                       section("main-path", "Main path", nodes.paragraph(text="Four five.")),
                       section("ch9-lab-notes", "Lab notes",
                               nodes.paragraph(text="Six seven eight nine ten.")))
    assert main_path_words(doctree) == len("Title One two three. Main path Four five.".split())
