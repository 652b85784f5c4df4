"""Chapter 8's stored models in headless Chromium: the page tokenizes as Hugging Face's
`tokenizers` does, translates and writes as Python does with the same stored weights, says
which words the model never saw, and says where its files are when they are missing.

These tests build their own pages around the stored models, so they do not need the book; the
last one checks the built chapter.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page
from test_browser import AXE_IMPACTS, AXE_JS, PageProblems

from transformer_course.core.batching import wrap_sources
from transformer_course.experiments.ch8_real_sentences import analysis, data, in_browser
from transformer_course.explorer.html import _asset

pytestmark = pytest.mark.browser
TOLERANCE = 1e-3  # logits of size 10-20 in float32 against the page's float64 sums; we see 1e-5


@pytest.fixture(scope="module")
def verses() -> dict[str, list[data.Verse]]:
    return data.split_by_book(data.load_verses())


@pytest.fixture(scope="module")
def tokenizer():  # noqa: ANN201  (tokenizers.Tokenizer)
    return data.load_bpe()


def _site(tmp_path: Path, markup: str, *, with_files: bool = True) -> str:
    """A page at book/in_browser.html beside _static/ch8/, as on the built site; its file:// URL."""
    if with_files:
        in_browser.write_assets(tmp_path / "_static" / in_browser.FOLDER)
    page_path = tmp_path / "book" / "in_browser.html"
    page_path.parent.mkdir(parents=True, exist_ok=True)
    page_path.write_text(f"<!doctype html><html><body><h1>test</h1>{markup}</body></html>",
                         encoding="utf-8")
    return page_path.as_uri()


def _load(page: Page, kind: str) -> None:
    root = page.locator(f".ls-{kind}")
    root.locator("button.ls-load").click()
    page.wait_for_function(f"() => document.querySelector('.ls-{kind}').widget"
                           f" || document.querySelector('.ls-{kind}').dataset.failed",
                           timeout=60_000)


def test_tokenizer_matches_hugging_face(page: Page, tmp_path: Path, verses, tokenizer) -> None:
    """Every test verse in both languages, and odd input (spaces, marks, digits, other scripts,
    decomposed accents), gets Hugging Face's pieces and ids, and decodes to its text."""
    in_browser.write_assets(tmp_path)
    page.set_content(f"<html><body><script>{_asset('explorer.js')}</script>"
                     f"<script>{_asset('sentences.js')}</script>"
                     f"<script>{(tmp_path / 'bpe.js').read_text(encoding='utf-8')}</script>"
                     "</body></html>")
    texts = [v.spanish for v in verses["test"]] + [v.english for v in verses["test"]]
    texts += ["  Hola,  mundo!! ", "¿Qué es esto?", "an\u0303o cafe\u0301", "3:16 $5 ~x",
              "日本 😀", "l'homme -- ok", "", "Él dijo: «¡Levántate!»"]
    got = page.evaluate("""texts => {
        const bpe = new LiveSentences.BPE(window.CourseAssets.bpe);
        return texts.map(t => { const e = bpe.encode(t); return [e.ids, bpe.decode(e.ids)]; });
    }""", texts)
    for text, (ids, decoded) in zip(texts, got, strict=True):
        want = tokenizer.encode(text, add_special_tokens=False).ids
        assert ids == want, text
        assert decoded == tokenizer.decode(want), text


def test_translator_in_the_page_equals_python(page: Page, tmp_path: Path, verses,
                                              tokenizer) -> None:
    """The page's greedy translations of the examples are Python's, token for token, and its
    logits for a verse are Python's to TOLERANCE; the cross-attention viewer shows them."""
    model = analysis.translator()
    examples = in_browser.examples(verses["test"])
    widget = in_browser.translator_widget(model, tokenizer, examples)
    page.goto(_site(tmp_path, widget._repr_html_()))
    _load(page, "translator")
    root = page.locator(".ls-translator")
    spec = json.loads(page.locator(".ls-mount script[type='application/json']").text_content())
    for check in spec["checks"]:
        root.locator("input").fill(check["spanish"])
        root.locator("input").press("Enter")
        assert json.loads(root.get_attribute("data-tokens")) == check["tokens"]
    assert "reference translation" in root.inner_text()
    assert root.locator(".ae-map th[scope=col]").count() > 10
    verse = examples[1].spanish
    src = wrap_sources(torch.tensor([tokenizer.encode(verse, add_special_tokens=False).ids]))
    tgt = torch.tensor([in_browser.python_translation(model, tokenizer, verse)[:-1]])
    with torch.no_grad():
        want = model(src, tgt)[0].numpy()
    got = page.evaluate("""([src, tgt]) => {
        const m = document.querySelector('.ls-translator').widget.model;
        return Array.from(m.decode(tgt, m.encode(src).memory).logits.data);
    }""", [src[0].tolist(), tgt[0].tolist()])
    assert np.abs(np.array(got).reshape(want.shape) - want).max() < TOLERANCE
    assert float(root.get_attribute("data-first-translation-ms")) > 0
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests


def test_writer_in_the_page_equals_python(page: Page, tmp_path: Path, tokenizer) -> None:
    """The writer's next-piece probabilities are Python's to 1e-4, top-k 1 writes Python's
    greedy continuation, and a seed repeats its sample while another seed changes it."""
    model = analysis.writer()
    prompts = ["In the beginning", "Jesus said to them,"]
    page.goto(_site(tmp_path, in_browser.writer_widget(model, tokenizer, prompts)._repr_html_()))
    _load(page, "writer")
    spec = json.loads(page.locator(".ls-mount script[type='application/json']").text_content())
    for check in spec["checks"]:
        got = page.evaluate("""([ids, n]) => {
            const w = document.querySelector('.ls-writer').widget;
            const u = LiveSentences.uniforms(0);
            return {first: Array.from(w.write(ids, 1.0, null, u).first),
                    greedy: w.write(ids, 1.0, 1, u).tokens.slice(0, n)};
        }""", [check["ids"], len(check["greedy"])])
        assert got["greedy"] == check["greedy"], check["prompt"]
        for token, probability in check["top"]:
            assert abs(got["first"][token] - probability) < 1e-4
    root = page.locator(".ls-writer")
    first = root.locator(".ae-output").inner_text()
    assert first.startswith(spec["prompt"])
    root.locator("button:has-text('Another sample')").click()
    second = root.locator(".ae-output").inner_text()
    assert second.split("  (")[0] != first.split("  (")[0]
    assert root.locator(".ls-next tr").count() == 6
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests


def test_unseen_words_and_characters_are_named(page: Page, tmp_path: Path, verses,
                                               tokenizer) -> None:
    """The warning names exactly the words the Spanish training verses never use, and
    characters the tokenizer has never seen; a verse of known words gets none."""
    model = analysis.translator()
    page.goto(_site(tmp_path, in_browser.translator_widget(
        model, tokenizer, in_browser.examples(verses["test"]))._repr_html_()))
    _load(page, "translator")
    root = page.locator(".ls-translator")
    seen = set(in_browser.seen_words([v.spanish for v in verses["train"]]))
    known = next(v.spanish for v in verses["test"]
                 if set(in_browser.seen_words([v.spanish])) <= seen and len(v.spanish) < 80)
    for text in (known, "El ordenador de Daniel es muy rápido y barato.", "Dios 😀 es 3"):
        root.locator("input").fill(text)
        root.locator("input").press("Enter")
        warning = root.locator(".ls-warning").inner_text()
        unseen = set(in_browser.seen_words([text])) - seen
        assert all(f"“{w}”" in warning for w in unseen), text
        assert ("“" in warning) == bool(unseen or "😀" in text), text
        assert ("😀" in warning) == ("😀" in text)
        assert root.get_attribute("data-tokens"), "it still translates, with the warning"


def test_without_the_files_the_page_says_where_they_are(page: Page, tmp_path: Path,
                                                        tokenizer) -> None:
    """Opened without the site's _static/ch8/ (a notebook), loading fails with a message that
    says where the files come from, and the button stays for another try."""
    page.goto(_site(tmp_path, in_browser.writer_widget(analysis.writer(), tokenizer,
                                                 ["In the beginning"])._repr_html_(),
                    with_files=False))
    _load(page, "writer")
    root = page.locator(".ls-writer")
    assert root.get_attribute("data-failed") == "true"
    assert "_static/ch8" in root.inner_text()
    assert root.locator("button.ls-load").is_enabled()


@pytest.mark.usefixtures("built_site")
def test_the_built_chapter_runs_both_models_as_python_does(page: Page) -> None:
    """On the built chapter, from file://: each widget loads its model from the site's own
    files and reproduces the Python outputs it carries, and axe-core finds nothing serious in
    the loaded widgets."""
    from site_utils import HTML, SCREENSHOTS

    path = HTML / "book" / "08_real_sentences.html"
    if not path.is_file():
        pytest.skip("chapter 8 is not in this build")
    page.goto(path.as_uri())
    assert page.locator(".ls-mount").count() == 2
    for kind in ("translator", "writer"):
        _load(page, kind)
        root = page.locator(f".ls-{kind}")
        assert root.get_attribute("data-failed") is None
        spec = json.loads(page.locator(f".ls-mount[data-kind={kind}] "
                                       "script[type='application/json']").text_content())
        for check in spec["checks"]:
            if kind == "translator":
                root.locator("input").fill(check["spanish"])
                root.locator("input").press("Enter")
                assert json.loads(root.get_attribute("data-tokens")) == check["tokens"]
            else:
                got = page.evaluate("""ids => document.querySelector('.ls-writer').widget
                    .write(ids, 1.0, 1, LiveSentences.uniforms(0)).tokens""", check["ids"])
                assert got[:len(check["greedy"])] == check["greedy"]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        root.screenshot(path=str(SCREENSHOTS / f"08_real_sentences-{kind}.png"))
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests
    # last: from file://, axe-core's own fetches of the stylesheets fail in the console
    found = Axe.from_file(AXE_JS).run(page, context=".ls-mount").response["violations"]
    assert not [v["id"] for v in found if v["impact"] in AXE_IMPACTS]
