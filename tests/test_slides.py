"""The slide decks' words (tools/instructor_pack.py): which paragraphs become a slide's key
sentence and speaker notes, read from a page's article as the built site renders it.
(tests/test_pdf.py opens a real deck in Chromium at 1280x720.)"""

from __future__ import annotations

import sys
from pathlib import Path

from bs4 import BeautifulSoup

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import instructor_pack  # noqa: E402

PAGE = """<article class="bd-article">
<h1>Chapter</h1>
<p>The chapter opens here. It says why.</p>
<section><h2>Pictures</h2>
<p>First we look. Then we compute.</p>
<p>As <a href="#fig-a">Figure 1</a> shows, the weights peak. They sum to one.</p>
<figure id="fig-a"><img src="a.png" alt="A chart"><figcaption><p>Figure 1: a chart.</p>
</figcaption></figure>
<p>After the figure.</p>
<div class="math notranslate">\\[x = 1\\]</div>
<details><p>Folded lab work.</p></details>
<div class="admonition"><p>An aside.</p></div>
</section>
<section><h2>Words only</h2><p>Nothing drawn here. Only prose.</p></section>
<section><h2>Summary</h2><p>Not on the slides.</p></section>
</article>"""


def slides() -> tuple[str, list[instructor_pack.Slide]]:
    article = BeautifulSoup(PAGE, "html.parser").select_one("article")
    return instructor_pack.main_path_slides(article, {"fig-a": "ch0-a"})


def test_each_figure_equation_and_wordy_section_is_a_slide_up_to_the_summary():
    title, deck = slides()
    assert title == "Chapter"
    assert [(s.section, "img" in s.body, "equation" in s.body) for s in deck] == [
        ("Chapter", False, False), ("Pictures", True, False), ("Pictures", False, True),
        ("Words only", False, False)]


def test_a_figure_carries_the_sentence_that_cites_it_and_the_prose_before_it():
    _, deck = slides()
    figure = deck[1]
    assert figure.key == "As Figure 1 shows, the weights peak."
    assert figure.notes == ("First we look. Then we compute.",
                            "As Figure 1 shows, the weights peak. They sum to one.")


def test_notes_take_every_main_path_paragraph_once_and_no_fold():
    _, deck = slides()
    notes = [note for slide in deck for note in slide.notes]
    assert notes.count("After the figure.") == 1 and deck[2].notes == ("After the figure.",)
    assert not any("Folded" in n or "aside" in n or "Not on the slides" in n for n in notes)
    assert deck[3].key == "Nothing drawn here." and deck[3].notes == (
        "Nothing drawn here. Only prose.",)
    assert deck[0].key == "The chapter opens here." and len(notes) == 5


def test_an_equation_takes_its_sections_first_sentence():
    _, deck = slides()
    assert deck[2].key == "First we look."


def test_the_deck_shows_key_sentences_and_hides_notes_for_the_speaker_view():
    title, deck = slides()
    page = BeautifulSoup(instructor_pack.deck(title, deck, "Course", "https://x"), "html.parser")
    sections = page.select(".slides > section")
    assert len(sections) == len(deck) + 2
    assert [s.select_one("p.key").get_text() for s in sections[1:-1]] == [s.key for s in deck]
    assert [len(s.select("aside.notes p")) for s in sections[1:-1]] == [len(s.notes)
                                                                        for s in deck]


def test_a_figure_with_no_prose_before_it_takes_the_paragraph_citing_it_as_notes():
    page = PAGE.replace("<p>First we look. Then we compute.</p>\n<p>As <a href=\"#fig-a\">"
                        "Figure 1</a> shows, the weights peak. They sum to one.</p>\n", "")
    page = page.replace("<p>After the figure.</p>",
                        '<p>After it. <a href="#fig-a">Figure 1</a> peaks.</p>')
    article = BeautifulSoup(page, "html.parser").select_one("article")
    _, deck = instructor_pack.main_path_slides(article, {"fig-a": "ch0-a"})
    figure = next(s for s in deck if "img" in s.body)
    assert figure.key == "Figure 1 peaks." and figure.notes == ("After it. Figure 1 peaks.",)
