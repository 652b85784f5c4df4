"""The site reads like a book: numbered per chapter, tables as tables, nothing left over.

Each test here guards one rendering defect that once reached the pages (issue 14): figures, tables
and exercises numbered across the whole book instead of per chapter; tables captioned as figures;
integer index columns; stray cell outputs (a bare number under a hidden cell, a traceback); the
build machine's paths in a page; code lines wider than the code column. Like test_site.py, the
tests read the built site (``make book``; ``SITE_BUILD`` points them at another build folder of
the same sources) and never skip; the code-width test reads the chapter sources.
"""

from __future__ import annotations

import re

import pytest
from site_utils import (
    CodeLine,
    chapter_numbers,
    code_cell_lines,
    html_path,
    parse_html,
    site_pages,
    source_path,
    toc_docnames,
)

DOCNAMES = toc_docnames()
CHAPTERS = chapter_numbers()
pytestmark = pytest.mark.usefixtures("built_site")

# The code column of a chapter page at a window width of 1280 px (the pydata/sphinx-book theme as
# pinned, laid out by Chromium; test_code_columns_at_1280_px below re-measures it). The page's
# monospace font at 14 px is 8.43 px a character (0.602 em: DejaVu Sans Mono, Menlo and SF Mono
# alike), and a code cell's <pre> holds, between its paddings, 652 px of text in the body of the
# page (77.4 characters), 634 px in a cell whose input is folded away (hide-input: 75.2) and
# 630 px in an exercise's solution (74.7). A longer line scrolls, and its end, usually the shape
# comment, is hidden. (At 1440 px the body holds 89 characters.)
CODE_COLUMN = 77  # the body of a page
FOLDED_COLUMN = 75  # a hide-input cell, inside its fold-out
SOLUTION_COLUMN = 74  # a cell in an exercise's solution
# Cells tagged so are never rendered; their lines need not fit.
NOT_RENDERED = {"remove-cell", "remove-input"}
NUMBERED = re.compile(r"^(?P<kind>Figure|Table|Exercise|Listing) (?P<chapter>\d+)\.(?P<n>\d+)\s*$")
# A cell output that is only a number (or None/True/False) is a value nobody asked to see: the
# last line of a cell that should have ended in ";" or been printed with words around it.
BARE_VALUE = re.compile(r"^\s*(?:[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf|None|True|"
                        r"False|\(\s*\))\s*$", re.IGNORECASE)
MACHINE_PATH = re.compile(r"(?:/work/|/home/|/root/|/tmp/|/usr/|/opt/|site-packages|\.venv/|"
                          r"[A-Z]:\\\\)")


def _article(docname: str):
    soup = parse_html(html_path(docname))
    return soup.select_one("article") or soup


def _caption_numbers(docname: str) -> list[str]:
    return [span.get_text(" ", strip=True) for span in _article(docname).select(".caption-number")]


@pytest.mark.parametrize("docname", list(CHAPTERS))
def test_chapter_pages_carry_their_chapter_number(docname: str) -> None:
    """The toc numbers the chapters, and each page's title shows its number (the base of every
    figure, table and exercise number on it)."""
    title = _article(docname).find("h1")
    number = title.select_one(".section-number") if title else None
    assert number is not None, f"{docname}: the title has no chapter number (toc 'numbered'?)"
    assert number.get_text(strip=True).rstrip(".") == str(CHAPTERS[docname]), \
        f"{docname}: title numbered {number.get_text(strip=True)!r}, toc position " \
        f"{CHAPTERS[docname]}"


@pytest.mark.parametrize("docname", list(CHAPTERS))
def test_figures_tables_and_exercises_are_numbered_per_chapter(docname: str) -> None:
    """Every caption number on chapter N reads "Figure N.k", "Table N.k" or "Exercise N.k", and
    each kind counts 1, 2, 3 ... down the page."""
    counts: dict[str, int] = {}
    problems = []
    for text in _caption_numbers(docname):
        match = NUMBERED.match(text)
        if not match or int(match["chapter"]) != CHAPTERS[docname]:
            problems.append(f"{text!r} is not 'Figure|Table|Exercise {CHAPTERS[docname]}.k'")
            continue
        counts[match["kind"]] = counts.get(match["kind"], 0) + 1
        if int(match["n"]) != counts[match["kind"]]:
            problems.append(f"{text!r} should be {match['kind']} {CHAPTERS[docname]}."
                            f"{counts[match['kind']]}")
    assert not problems, f"{docname}:\n" + "\n".join(problems)


def test_cross_references_use_the_chapter_numbers() -> None:
    """Every {numref} on every page reads "Figure N.k" (or Table/Exercise), never "Fig. 35"."""
    wrong = []
    for page in site_pages():
        for ref in parse_html(page).select("span.std-numref"):
            text = ref.get_text(" ", strip=True)
            if not NUMBERED.match(text):
                wrong.append(f"{page.name}: {text!r}")
    assert not wrong, "cross-references not numbered per chapter:\n" + "\n".join(wrong)


@pytest.mark.parametrize("docname", list(CHAPTERS))
def test_tables_are_numbered_tables_not_figures(docname: str) -> None:
    """A table of the text is a numbered, captioned table: no <table> inside a figure, and every
    <table> outside a cell's output has a caption "Table N.k"."""
    problems = []
    for table in _article(docname).find_all("table"):
        figure = table.find_parent("figure") or table.find_parent(class_="figure")
        if figure is not None:
            number = figure.select_one(".caption-number")
            label = number.get_text(strip=True) if number else "unnumbered"
            problems.append(f"a table captioned as a figure ({label})")
            continue
        if table.find_parent(class_="cell_output"):
            continue  # a value a code cell displays, not a table of the text
        number = table.select_one("caption .caption-number")
        if number is None or not number.get_text(strip=True).startswith("Table"):
            header = " | ".join(th.get_text(strip=True) for th in table.find_all("th")[:4])
            problems.append(f"a table without a 'Table N.k' caption (columns: {header})")
    assert not problems, f"{docname}:\n" + "\n".join(problems)


def _index_name(table) -> str:
    """The name pandas gives a table's index column: the first cell of the header row that
    holds nothing else (pandas writes a named index's name on a row of its own)."""
    head = table.find("thead")
    for row in head.find_all("tr") if head else []:
        cells = row.find_all(["th", "td"])
        if cells and all(not cell.get_text(strip=True) for cell in cells[1:]):
            return cells[0].get_text(strip=True)
    return ""


def test_no_meaningless_index_columns() -> None:
    """No table starts with an unnamed header column counting 0, 1, 2, ... (pandas' default
    index); a named index (a "seed" column, say) is a real column."""
    found = []
    for page in site_pages():
        for table in parse_html(page).find_all("table"):
            body = table.find("tbody")
            rows = body.find_all("tr") if body else []
            firsts = [row.find(["th", "td"]) for row in rows]
            if len(rows) < 2 or any(cell is None or cell.name != "th" for cell in firsts):
                continue
            labels = [cell.get_text(strip=True) for cell in firsts]
            if labels == [str(i) for i in range(len(labels))] and not _index_name(table):
                head = " | ".join(th.get_text(strip=True) for th in table.find_all("th")[:4])
                found.append(f"{page.name}: index 0..{len(labels) - 1} ({head})")
    assert not found, "tables with a meaningless integer index column:\n" + "\n".join(found)


def test_no_stray_cell_outputs() -> None:
    """No cell shows a bare number, None or a boolean it was never meant to show, and none shows
    a traceback (an error the page means to show is caught and printed in one line)."""
    found = []
    for page in site_pages():
        for output in parse_html(page).select(".cell_output"):
            text = output.get_text("\n", strip=True)
            if output.select(".traceback, .output.error") or "Traceback (most recent call" in text:
                found.append(f"{page.name}: a traceback: {text[:100]!r}")
            for block in output.select("pre"):
                value = block.get_text()
                if BARE_VALUE.match(value):
                    found.append(f"{page.name}: a bare value {value.strip()!r}")
    assert not found, "stray cell outputs:\n" + "\n".join(found)


def test_no_machine_paths_in_any_page() -> None:
    """No page mentions where it was built: no absolute path of the build machine anywhere in
    its HTML (a traceback or a printed repr would carry one)."""
    found = []
    for page in site_pages():
        html = page.read_text(encoding="utf-8")
        for match in MACHINE_PATH.finditer(html):
            found.append(f"{page.name}: ...{html[max(0, match.start() - 40):match.end() + 40]!r}")
    assert not found, "machine paths in the site:\n" + "\n".join(found[:20])


def _column(line: CodeLine) -> int:
    if line.in_solution:
        return SOLUTION_COLUMN
    return FOLDED_COLUMN if "hide-input" in line.tags else CODE_COLUMN


@pytest.mark.parametrize("docname", list(CHAPTERS))
def test_code_lines_fit_the_code_column(docname: str) -> None:
    """Every rendered code line of a chapter fits its code column at 1280 px (CODE_COLUMN in the
    body, FOLDED_COLUMN in a hide-input cell, SOLUTION_COLUMN in a solution)."""
    wide = [f"line {line.line} ({len(line.text)} > {_column(line)} characters): "
            f"{line.text.strip()[:60]}"
            for line in code_cell_lines(source_path(docname).read_text())
            if len(line.text) > _column(line) and not NOT_RENDERED & set(line.tags)]
    assert not wide, (f"{docname}: {len(wide)} code line(s) wider than the code column:\n"
                      + "\n".join(wide))


# The code columns, as Chromium lays out a chapter page in a 1280 x 900 window: the text width of
# a code cell's <pre> (between its paddings) over the width of one character of its font, for a
# cell in the body, a hide-input cell and a cell in a solution (the narrowest of each on the page).
MEASURE_COLUMNS_JS = """() => {
    const columns = {body: [], folded: [], solution: []};
    for (const pre of document.querySelectorAll('div.cell_input div.highlight pre')) {
        const style = getComputedStyle(pre);
        const probe = document.createElement('span');
        probe.textContent = 'x'.repeat(100);
        probe.style.font = style.font;
        probe.style.whiteSpace = 'pre';
        pre.appendChild(probe);
        const character = probe.getBoundingClientRect().width / 100;
        probe.remove();
        const width = pre.clientWidth - parseFloat(style.paddingLeft)
            - parseFloat(style.paddingRight);
        if (!width) continue;  // not laid out (e.g. a closed fold)
        const kind = pre.closest('.solution') ? 'solution'
            : pre.closest('details') ? 'folded' : 'body';
        columns[kind].push(width / character);
    }
    return Object.fromEntries(Object.entries(columns)
        .filter(([, w]) => w.length).map(([k, w]) => [k, Math.min(...w)]));
}"""


@pytest.mark.parametrize("docname", list(CHAPTERS))
def test_code_outside_cells_fits_the_code_column(docname: str) -> None:
    """Code a chapter shows outside its code cells (the package's source by literalinclude, a
    fenced block in a solution) fits the body's code column too; the source test above reads
    only code cells."""
    wide = []
    for pre in _article(docname).select("div.highlight pre"):
        if pre.find_parent(class_="cell") is not None:
            continue  # a code cell: checked from the chapter's source above
        wide += [f"{len(line)} > {CODE_COLUMN}: {line.strip()[:60]}"
                 for line in pre.get_text().splitlines() if len(line) > CODE_COLUMN]
    assert not wide, f"{docname}: included source wider than the code column:\n" + \
        "\n".join(wide)
