"""tools/readable_notebook.py: MyST the site renders becomes Markdown a notebook renders."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from citations import read_bibliography  # noqa: E402
from readable_notebook import (  # noqa: E402
    SiteFacts,
    UnreadableMySTError,
    leftover_myst,
    readable_markdown,
    readable_notebook,
    without_solutions,
)

FACTS = SiteFacts(
    numbers={"fig-x": "Figure 4.2", "tbl-y": "Table 4.1", "ex-a": "Exercise 4.3"},
    titles={"book/05_full_model": "The full model", "sec-z": "Masks"},
    glued={"n": {"text/plain": "0.123456"}, "k": {"text/plain": "1234"},
           "t": {"text/markdown": "| a |\n|---|\n| 1 |", "text/plain": "<table>"}},
    docname="book/04_positional_encoding",
    read_include=lambda path, options: f"def {options['pyobject']}():\n    return 1\n")
BIB = """
@article{one2001, author = {Elman, Jeffrey L.}, title = {T}, year = {1990}}
@article{two2019, author = {Jain, Sarthak and Wallace, Byron C.}, title = {T}, year = {2019}}
@article{many2017, author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki}, title = {T},
         year = {2017}}
@article{von2014, author = {van Merri{\\"e}nboer, Bart and Cho, Kyunghyun}, title = {T},
         year = {2014}}
"""


def test_numbers_references_and_links_become_text() -> None:
    text = ("Loss {glue:text}`n:.2f` after {glue:text}`k:,` steps ({glue:text}`n`); see "
            "{numref}`fig-x`, {numref}`Table %s <tbl-y>`, {ref}`sec-z`, {ref}`here <sec-z>`, "
            "{doc}`05_full_model` and {doc}`the model <05_full_model>`.")
    assert readable_markdown(text, FACTS) == (
        "Loss 0.12 after 1,234 steps (0.123456); see Figure 4.2, Table 4.1, Masks, here, "
        "[The full model](05_full_model.ipynb) and [the model](05_full_model.ipynb).")


def test_directives_become_headed_blocks() -> None:
    text = "\n".join([
        "(fig-x)=", "```{glue:figure} f", ":name: fig-x", "", "A caption with {glue:text}`k`.",
        "```", "", "::::{table} Seeds {glue:text}`k`", ":name: tbl-y", "", ":::{glue:md} t",
        ":format: myst", ":::", "::::", "", ":::{exercise}", ":label: ex-a", "", "Do it.", ":::",
        "", ":::{solution-start} ex-a", ":class: dropdown", ":::", "", "Done.", "",
        ":::{solution-end}", ":::", "", "```{literalinclude} ../code/m.py", ":pyobject: f", "```",
        "", ":::{important}", "Mind it.", ":::"])
    out = readable_markdown(text, FACTS)
    assert "**Figure 4.2** (shown above): *A caption with 1234.*" in out
    assert "**Table 4.1.** Seeds 1234\n\n| a |\n|---|\n| 1 |" in out
    assert "**Exercise 4.3**\n\nDo it." in out and "**Solution to Exercise 4.3**" in out
    assert "*End of the solution.*" in out
    assert "```python\ndef f():\n    return 1\n```" in out
    assert "> **Important.** Mind it." in out
    assert "(fig-x)=" not in out and "{" not in out.replace("{glue", "")


def test_citations_become_author_year_text(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    facts = replace(FACTS, works=read_bibliography([tmp_path / "refs.bib"]))
    text = ("{cite:t}`many2017` kept it; {cite:p}`one2001`, {cite:t}`two2019{\"Title\"}`, "
            "{cite:p}`{see}many2017{section 3}`, {cite:p}`one2001,two2019` and {cite:t}`von2014`.")
    assert readable_markdown(text, facts) == (
        "Vaswani et al. (2017) kept it; (Elman, 1990), Jain and Wallace (2019, \"Title\"), "
        "(see Vaswani et al., 2017, section 3), (Elman, 1990; Jain and Wallace, 2019) and "
        "van Merriënboer and Cho (2014).")
    with pytest.raises(UnreadableMySTError):
        readable_markdown("{cite:p}`nobody1999`", facts)


def test_a_link_to_a_page_that_is_no_notebook_is_its_title() -> None:
    facts = replace(FACTS, titles={**FACTS.titles, "book/references": "References"},
                    notebooks=frozenset({"book/05_full_model"}))
    assert readable_markdown("{doc}`05_full_model`; {doc}`references`.", facts) == (
        "[The full model](05_full_model.ipynb); References.")


@pytest.mark.parametrize("text", ["{cite}`vaswani`", "{cite:p}`vaswani{x`",
                                  "```{mermaid}\ngraph\n```", "{glue:text}`missing`",
                                  "{numref}`fig-unknown`"])
def test_what_it_cannot_write_is_an_error(text: str) -> None:
    with pytest.raises(UnreadableMySTError):
        readable_markdown(text, FACTS)


def test_a_notebook_keeps_its_code_and_outputs_and_gains_first_cells() -> None:
    code = nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output(
        "display_data", {"image/png": "iVBOR"})])
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("See {numref}`fig-x`."), code])
    first = [nbformat.v4.new_markdown_cell("How to run this.")]
    readable = readable_notebook(notebook, FACTS, first)
    assert [c.source for c in readable.cells] == ["How to run this.", "See Figure 4.2.", "x = 1"]
    assert readable.cells[2].outputs == code.outputs
    assert notebook.cells[0].source == "See {numref}`fig-x`."  # the input is left alone
    assert leftover_myst(readable) == [] and leftover_myst(notebook) == ["{numref}`fig-x`"]


def test_exercise_title_and_difficulty_are_written_out() -> None:
    text = ":::{exercise} Warm-up by hand\n:label: ex-a\n:class: difficulty-1\n\nDo it.\n:::"
    assert readable_markdown(text, FACTS) == "**Exercise 4.3** (Warm-up by hand) ★☆☆ warm-up\n\n" \
                                             "Do it."
    timed = text.replace("difficulty-1", "difficulty-1 minutes-15")
    assert readable_markdown(timed, FACTS).startswith(
        "**Exercise 4.3** (Warm-up by hand) ★☆☆ warm-up, about 15 min\n\n")
    plain = ":::{exercise}\n:label: ex-a\n:class: dropdown\n\nDo it.\n:::"
    assert readable_markdown(plain, FACTS) == "**Exercise 4.3**\n\nDo it."


def test_without_solutions_drops_both_kinds_of_solution_and_keeps_the_rest() -> None:
    text = "\n".join([
        "Intro.", "", ":::{exercise}", ":label: ex-a", "", "Do it.", ":::", "",
        "::::{solution} ex-a", ":class: dropdown", "", "Inline answer.", ":::{note}", "Nested.",
        ":::", "::::", "", "Between.", "", ":::{solution-start} ex-a", ":class: dropdown", ":::",
        "", "Gated answer.", "", "```{code-cell} ipython3", "answer = 42", "```", "",
        ":::{solution-end}", ":::", "", "After."])
    kept, inside = without_solutions(text)
    assert not inside
    assert kept.splitlines() == ["Intro.", "", ":::{exercise}", ":label: ex-a", "", "Do it.",
                                 ":::", "", "", "Between.", "", "", "After."]


def test_without_solutions_in_a_notebook_drops_the_code_cells_of_a_gated_solution() -> None:
    cells = [nbformat.v4.new_markdown_cell(":::{exercise}\n:label: ex-a\n\nDo it.\n:::\n\n"
                                           ":::{solution-start} ex-a\n:::\n\nFirst, this:"),
             nbformat.v4.new_code_cell("answer = 42"),
             nbformat.v4.new_markdown_cell("Then that."),
             nbformat.v4.new_code_cell("answer += 1"),
             nbformat.v4.new_markdown_cell(":::{solution-end}\n:::\n\nNext section."),
             nbformat.v4.new_code_cell("print('kept')")]
    notebook = nbformat.v4.new_notebook(cells=cells)
    solved = readable_notebook(notebook, FACTS)
    student = readable_notebook(notebook, FACTS, solutions=False)
    assert [c.source for c in solved.cells if c.cell_type == "code"] == [
        "answer = 42", "answer += 1", "print('kept')"]
    assert [c.source for c in student.cells] == ["**Exercise 4.3**\n\nDo it.", "Next section.",
                                                 "print('kept')"]
    assert len(notebook.cells) == 6  # the input is left alone
    _, inside = without_solutions(cells[0].source)
    assert inside  # the solution goes on in the next cell


def test_only_keeps_what_the_edition_s_tags_select() -> None:
    text = ("Before.\n\n```{only} not student\nA solution follows.\n```\n\n"
            "```{only} student\nThe student edition.\n```\n\nAfter.")
    full = readable_markdown(text, FACTS)
    student = readable_markdown(text, replace(FACTS, tags=frozenset({"student", "html"})))
    assert "A solution follows." in full and "The student edition." not in full
    assert "The student edition." in student and "A solution follows." not in student
    assert full.startswith("Before.") and full.endswith("After.") and "only" not in full
    with pytest.raises(UnreadableMySTError):
        readable_markdown("```{only} student or html\nx\n```", FACTS)
