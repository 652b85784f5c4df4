"""The attention explorer in headless Chromium: the JavaScript model equals the Python one, the
viewer responds to the keyboard and the mouse, and a page needs nothing from the network.

These tests build their own pages from small random models, so they do not need the book.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from num2words import num2words
from playwright.sync_api import Browser, Page
from test_browser import PageProblems

from transformer_course import Transformer, TransformerConfig, greedy_decode
from transformer_course.explorer.export import export_model, model_from_payload, payload_json
from transformer_course.explorer.html import _asset, attention_viewer, translator

pytestmark = pytest.mark.browser
TOLERANCE = 1e-4  # the bar for logits and attention weights; we see about 1e-6
CONFIGS = {  # post-norm (the paper) and pre-norm; tied and untied; each positional kind
    "post-norm, tied, sinusoidal": dict(norm_first=False, share_embeddings=True),
    "pre-norm, untied, learned": dict(norm_first=True, share_embeddings=False,
                                      positional="learned"),
    "post-norm, no positions, unscaled": dict(positional="none", scaled_attention=False),
}


def small_model(seed: int, src_vocab: int = 20, **changes: object) -> Transformer:
    torch.manual_seed(seed)
    vocab = 17 if changes.get("share_embeddings") is False else src_vocab
    config = TransformerConfig(src_vocab, vocab, d_model=16, num_heads=4, num_encoder_layers=2,
                               num_decoder_layers=2, d_ff=32, dropout=0.0, max_len=24, **changes)
    model = Transformer(config).eval()
    with torch.no_grad():  # large weights, so that outputs differ from token to token
        for p in model.parameters():
            p.normal_(0.0, 0.5)
    return model


def _library_page(page: Page) -> None:
    page.set_content(f"<html><body><script>{_asset('explorer.js')}</script></body></html>")


JS_RUN = """([payload, src, maxLen]) => {
    const m = new AttentionExplorer.Transformer(payload);
    const r = m.greedy(src, maxLen);
    const enc = m.encode(src);
    const dec = m.decode(r.tokens.slice(0, -1), enc.memory);
    const flat = maps => maps.map(layer => layer.map(w => Array.from(w.data)));
    return {tokens: r.tokens, logits: Array.from(dec.logits.data),
            encoder: flat(enc.maps), self: flat(dec.self), cross: flat(dec.cross)};
}"""


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_javascript_model_equals_python(page: Page, name: str, dtype: str) -> None:
    payload = json.loads(payload_json(export_model(small_model(3, **CONFIGS[name]),
                                                   dtype=dtype)))
    model = model_from_payload(payload)  # the exported (for float16: rounded) weights
    _library_page(page)
    for src_ids in ([1, 5, 7, 9, 11, 2], [1, 3, 2], [1, 19, 4, 4, 8, 12, 15, 6, 2]):
        src = torch.tensor([src_ids])
        out = greedy_decode(model, src, 12, 1, 2)
        tgt_in = out[:, :-1]
        logits = model(src, tgt_in)[0]
        maps = model.attention_maps(src, tgt_in)
        js = page.evaluate(JS_RUN, [payload, src_ids, 12])
        assert js["tokens"] == out[0].tolist()
        assert (torch.tensor(js["logits"]).view(logits.shape) - logits.double()).abs().max() \
            < TOLERANCE
        for kind in ("encoder", "self", "cross"):
            ours = maps["decoder_self" if kind == "self" else kind]
            for layer, weights in enumerate(js[kind]):
                got = torch.tensor(weights).view(ours[layer][0].shape)
                assert (got - ours[layer][0].double()).abs().max() < TOLERANCE, (kind, layer)
    assert not page.problems.console_errors


def test_smaller_exports_are_smaller_and_stay_close() -> None:
    model = small_model(4)
    full, half, quarter = (export_model(model, dtype=d) for d in ("float32", "float16", "int8"))
    assert len(half["data"]) < 0.55 * len(full["data"])
    assert len(quarter["data"]) < 0.8 * len(half["data"])  # vectors stay float32
    src, tgt = torch.tensor([[1, 5, 7, 2]]), torch.tensor([[1, 3, 4]])
    for payload in (half, quarter):
        difference = (model_from_payload(payload)(src, tgt) - model(src, tgt)).abs().max()
        assert 0 < difference < 0.1
    assert (model_from_payload(full)(src, tgt) - model(src, tgt)).abs().max() == 0


def test_int8_rows_keep_their_largest_weight_exactly() -> None:
    """Symmetric per-row rounding: each row's largest |weight| is level 127 times its scale."""
    model = small_model(8)
    rebuilt = model_from_payload(export_model(model, dtype="int8"))
    original = model.encoder[0].self_attn.w_q.weight
    copy = rebuilt.encoder[0].self_attn.w_q.weight
    peak = original.abs().argmax(dim=1)
    rows = torch.arange(original.shape[0])
    assert torch.allclose(copy[rows, peak].abs(), original[rows, peak].abs(), rtol=1e-6)
    assert (copy - original).abs().max() <= original.abs().max() / 254 + 1e-7


def test_export_is_deterministic_and_ties_are_stored_once() -> None:
    a, b = payload_json(export_model(small_model(5))), payload_json(export_model(small_model(5)))
    assert a == b
    payload = json.loads(a)
    assert payload["aliases"] == {"tgt_embed.token.weight": "src_embed.token.weight",
                                  "output_projection.weight": "src_embed.token.weight"}
    assert payload_json(export_model(small_model(6))) != a


def test_english_numbers_match_num2words(page: Page) -> None:
    _library_page(page)
    numbers = [0, 1, 7, 10, 11, 13, 19, 20, 21, 45, 97, 99, 100, 101, 110, 115, 999, 1000, 1001,
               1010, 1099, 1100, 1234, 2000, 10000, 12345, 100000, 100001, 110000, 999999]
    numbers += list(torch.randint(0, 1_000_000, (500,), generator=torch.Generator()
                                  .manual_seed(0)).tolist())
    got = page.evaluate("ns => ns.map(n => AttentionExplorer.englishNumber(n))", numbers)
    assert got == [num2words(n, lang="en") for n in numbers]
    error = page.evaluate("() => { try { AttentionExplorer.englishNumber(1e6) } "
                          "catch (e) { return e.message } }")
    assert "999,999" in error


def _contrast(first: str, second: str) -> float:
    """WCAG contrast ratio of two colours given as CSS ``rgb(r,g,b)`` or ``#rgb``/``#rrggbb``."""
    def luminance(colour: str) -> float:
        if colour.startswith("#"):
            digits = colour[1:] if len(colour) == 7 else "".join(c * 2 for c in colour[1:])
            channels = [int(digits[i:i + 2], 16) for i in (0, 2, 4)]
        else:
            channels = [int(c) for c in colour[colour.index("(") + 1:-1].split(",")]
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
                  for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_map_numbers_are_readable_on_every_cell_colour(page: Page) -> None:
    """A weight's number on its viridis cell meets WCAG AA (4.5:1) whatever the weight."""
    _library_page(page)
    weights = [i / 200 for i in range(201)]
    pairs = page.evaluate("ws => ws.map(w => [AttentionExplorer.colour(w), "
                          "AttentionExplorer.textColour(w)])", weights)
    ratios = {w: _contrast(*pair) for w, pair in zip(weights, pairs, strict=True)}
    worst = min(ratios, key=ratios.get)
    assert ratios[worst] >= 4.5, f"weight {worst}: {pairs[weights.index(worst)]} is " \
                                 f"{ratios[worst]:.2f}:1"


def _viewer_page(page: Page, tmp_path: Path, markup: str, via_file: bool) -> None:
    document = f"<!doctype html><html><body><h1>test</h1>{markup}</body></html>"
    if via_file:
        path = tmp_path / "explorer.html"
        path.write_text(document, encoding="utf-8")
        page.goto(path.as_uri())
    else:
        page.set_content(document)


@pytest.mark.parametrize("via_file", [False, True], ids=["inline", "file-url"])
def test_viewer_hover_keyboard_and_selection(page: Page, tmp_path: Path, via_file: bool) -> None:
    torch.manual_seed(0)
    layers = [("layer 1", torch.softmax(torch.randn(2, 3, 4), -1)),
              ("layer 2", torch.softmax(torch.randn(2, 3, 4), -1))]
    markup = attention_viewer(layers, ["a", "b", "c"], ["w", "x", "y", "z"])._repr_html_()
    _viewer_page(page, tmp_path, markup, via_file)
    cells = page.locator(".ae-map td")
    assert cells.count() == 12
    first = [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.dataset.weight)")]
    assert first == pytest.approx(layers[0][1][0].flatten().tolist(), abs=1e-4)
    page.hover(".ae-map tbody tr:nth-child(2) th")
    assert page.locator("tr.ae-active").get_attribute("data-row") == "1"
    assert "\u201cb\u201d looks most at" in page.locator(".ae-readout").inner_text()
    page.focus(".ae-map tbody tr:nth-child(1) th")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.locator("tr.ae-active").get_attribute("data-row") == "2"
    page.click("text=head 2")
    second = [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.dataset.weight)")]
    assert second == pytest.approx(layers[0][1][1].flatten().tolist(), abs=1e-4)
    page.select_option(".ae-controls select", "1")
    third = [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.dataset.weight)")]
    assert third == pytest.approx(layers[1][1][1].flatten().tolist(), abs=1e-4)
    assert page.locator(".ae-legend").count() == 1
    assert page.locator(".ae-map td").first.get_attribute("title").startswith("a \u2192 w: ")
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests


def test_without_javascript_the_fallback_table_shows(browser: Browser, tmp_path: Path) -> None:
    weights = torch.softmax(torch.randn(1, 2, 2), -1)
    markup = attention_viewer([("layer 1", weights)], ["a", "b"], ["x", "y"])._repr_html_()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    path = tmp_path / "nojs.html"
    path.write_text(f"<html><body>{markup}</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    assert "the interactive viewer needs JavaScript" in page.inner_text("body")
    assert page.locator("table td").count() == 4
    context.close()


ENGLISH = sorted({w for n in range(0, 1000, 7) for w in
                  num2words(n, lang="en").replace(",", " ").replace("-", " ").split()}
                 | {"thousand"})


def test_translator_translates_in_the_page_as_python_does(page: Page, tmp_path: Path) -> None:
    """A random model with an English number vocabulary: the page's greedy output for a typed
    number equals Python's, and the cross-attention viewer shows it."""
    vocab = {w: i + 3 for i, w in enumerate(ENGLISH)}
    model = small_model(7, src_vocab=len(vocab) + 3, share_embeddings=False)
    payload = export_model(model)
    python_model = model_from_payload(payload)
    targets = ["<pad>", "<s>", "</s>"] + [f"t{i}" for i in range(3, 17)]
    markup = translator(payload, vocab, targets, pattern="[^\\s,-]+", examples=[45, 1234],
                        max_len=10)._repr_html_()
    _viewer_page(page, tmp_path, markup, via_file=True)

    def python_tokens(n: int) -> list[int]:
        words = num2words(n, lang="en").replace(",", " ").replace("-", " ").split()
        src = torch.tensor([[1, *(vocab[w] for w in words), 2]])
        return greedy_decode(python_model, src, 10, 1, 2)[0].tolist()

    inner = page.locator(".ae-translator")
    assert json.loads(inner.get_attribute("data-tokens")) == python_tokens(45)
    page.fill(".ae-translator input", "97")
    page.keyboard.press("Enter")
    assert json.loads(inner.get_attribute("data-tokens")) == python_tokens(97)
    page.click(".ae-examples button:has-text('1234')")
    assert json.loads(inner.get_attribute("data-tokens")) == python_tokens(1234)
    assert page.locator(".ae-translator .ae-map th[scope=col]").count() >= 5
    page.fill(".ae-translator input", "forty-two zebras")
    page.keyboard.press("Enter")
    assert "not in the vocabulary: zebras" in page.locator(".ae-output").inner_text()
    first_ms = float(inner.get_attribute("data-first-translation-ms"))
    assert first_ms > 0
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests


def test_trained_input_accepts_exactly_the_training_language(page: Page) -> None:
    """trainedInput, for a model trained on 1..999,999 as num2words writes them: every such
    number, in digits or words, passes as num2words' words; anything else is refused."""
    _library_page(page)
    numbers = [1, 7, 13, 45, 97, 100, 115, 1000, 1234, 13000, 100001, 512345, 999999]
    numbers += torch.randint(1, 1_000_000, (200,), generator=torch.Generator()
                             .manual_seed(1)).tolist()
    typed = [*(str(n) for n in numbers), *(f"{n:,}" for n in numbers),
             *(num2words(n, lang="en") for n in numbers), " Forty-Five "]
    got = page.evaluate("ts => ts.map(t => AttentionExplorer.trainedInput(t, 1, 999999))", typed)
    want = [num2words(n, lang="en") for n in numbers] * 3 + ["forty-five"]
    assert [g.get("words") for g in got] == want
    refused = {"zero": "range", "0": "range", "1000000": "range", "1,000,000": "range",
               "one million": "unknown", "forty-two zebras": "unknown", "12.5": "unknown",
               "forty five": "form", "five five": "form", "": "empty",
               "one thousand two hundred thirty-four": "form"}
    got = page.evaluate("ts => ts.map(t => AttentionExplorer.trainedInput(t, 1, 999999))",
                        list(refused))
    assert [g.get("refused") for g in got] == list(refused.values())
    assert all("999,999" in g["message"] and "words" not in g for g in got)
    # a form the model never saw is answered with the form it did see
    assert "forty-five" in got[list(refused).index("forty five")]["message"]


def test_translator_refuses_what_its_model_was_not_trained_on(page: Page, tmp_path: Path,
                                                              ) -> None:
    """With ``numbers``, the page translates the training language as Python does and, for
    an input outside it, shows a message and no translation or attention."""
    vocab = {w: i + 3 for i, w in enumerate(ENGLISH)}
    model = small_model(7, src_vocab=len(vocab) + 3, share_embeddings=False)
    payload = export_model(model)
    targets = ["<pad>", "<s>", "</s>"] + [f"t{i}" for i in range(3, 17)]
    markup = translator(payload, vocab, targets, pattern="[^\\s,-]+",
                        examples=[45, "forty five"], max_len=10, numbers=(1, 999_999))
    _viewer_page(page, tmp_path, markup._repr_html_(), via_file=False)
    inner = page.locator(".ae-translator")
    translated = inner.get_attribute("data-tokens")
    assert translated and inner.get_attribute("data-refused") is None
    page.click(".ae-examples button:has-text('forty five')")
    assert inner.get_attribute("data-refused") == "form"
    assert inner.get_attribute("data-tokens") is None
    assert "forty-five" in page.locator(".ae-output").inner_text()
    assert page.locator(".ae-translator .ae-map").count() == 0
    for text in ("zero", "1000000", "one million"):
        page.fill(".ae-translator input", text)
        page.keyboard.press("Enter")
        assert inner.get_attribute("data-refused") in {"range", "unknown"}, text
        assert "999,999" in page.locator(".ae-output").inner_text()
    page.fill(".ae-translator input", "forty-five")
    page.keyboard.press("Enter")
    assert inner.get_attribute("data-tokens") == translated
    assert inner.get_attribute("data-refused") is None
    problems: PageProblems = page.problems
    assert not problems.console_errors and not problems.offsite_requests


def test_translator_numbers_are_checked() -> None:
    payload = export_model(small_model(0))
    for bad in [(0, 1_000_000), (5, 1), (1.0, 10)]:
        with pytest.raises(ValueError, match="numbers"):
            translator(payload, {}, [], pattern=".", examples=[1], max_len=5, numbers=bad)


# --- The viewers on the built site ------------------------------------------------------------


def _pages_with_viewers() -> list[str]:
    from site_utils import HTML, toc_docnames

    return [d for d in toc_docnames()
            if (HTML / f"{d}.html").is_file()
            and 'class="ae-mount"' in (HTML / f"{d}.html").read_text(encoding="utf-8")]


@pytest.mark.usefixtures("built_site")
def test_the_site_has_viewers_and_a_translator() -> None:
    from site_utils import HTML

    pages = _pages_with_viewers()
    assert {"book/03_multi_head_attention", "book/06_training"} <= set(pages)
    kinds = {d: (HTML / f"{d}.html").read_text(encoding="utf-8").count('data-kind="translator"')
             for d in pages}
    if (HTML / "book/07_translation.html").is_file():
        assert kinds["book/07_translation"] == 1


@pytest.mark.usefixtures("built_site")
@pytest.mark.parametrize("docname", _pages_with_viewers())
def test_built_page_viewers_respond(page: Page, docname: str) -> None:
    """On the built page (from file://, no server): every viewer answers hover, keyboard, head and
    layer selection; every translator gives Python's translation for the numbers it carries."""
    from site_utils import HTML

    page.goto((HTML / f"{docname}.html").as_uri())
    mounts = page.locator(".ae-mount")
    assert mounts.count() >= 1
    for i in range(mounts.count()):
        mount = mounts.nth(i)
        mount.scroll_into_view_if_needed()
        data = json.loads(mount.locator("script[type='application/json']").text_content())
        if mount.get_attribute("data-kind") == "translator":
            assert data["checks"], "a translator must carry Python's outputs to compare with"
            for check in data["checks"]:
                mount.locator("input").fill(str(check["number"]))
                mount.locator("input").press("Enter")
                tokens = json.loads(mount.locator(".ae-translator").get_attribute("data-tokens"))
                assert tokens == check["tokens"], check["number"]
            # a picture of the live translator after its last translation, for reviewers
            from site_utils import SCREENSHOTS

            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            mount.screenshot(path=str(SCREENSHOTS / f"{Path(docname).name}-translator-{i}.png"))
        rows = mount.locator(".ae-map tbody th")
        rows.nth(rows.count() - 1).hover()
        assert mount.locator("tr.ae-active").get_attribute("data-row") == str(rows.count() - 1)
        rows.first.focus()
        page.keyboard.press("ArrowDown")
        assert mount.locator("tr.ae-active").get_attribute("data-row") == str(min(1, rows.count()
                                                                                  - 1))
        cells = mount.locator(".ae-map td")
        before = cells.evaluate_all("cs => cs.map(c => c.dataset.weight)")
        heads = mount.locator(".ae-heads button")
        if heads.count() > 1:
            heads.nth(1).click()
            assert cells.evaluate_all("cs => cs.map(c => c.dataset.weight)") != before
    problems: PageProblems = page.problems
    assert not problems.console_errors, problems.console_errors
    assert not problems.offsite_requests and not problems.failed_requests


def test_every_float16_value_decodes_exactly(page: Page) -> None:
    """Both decoders of float16 weights (the browser's Float16Array and the table fallback) give
    NumPy's value for every one of the 65,536 bit patterns (NaNs as NaN)."""
    import numpy as np

    bits = np.arange(65536, dtype=np.uint16)
    expected = bits.view(np.float16).astype(np.float64)
    _library_page(page)
    got = page.evaluate("""() => {
        const bytes = new Uint8Array(2 * 65536);
        for (let h = 0; h < 65536; h++) { bytes[2 * h] = h & 255; bytes[2 * h + 1] = h >> 8; }
        const native = Array.from(AttentionExplorer.halves(bytes), String);
        const saved = window.Float16Array;
        window.Float16Array = undefined;
        const table = Array.from(AttentionExplorer.halves(bytes), String);
        window.Float16Array = saved;
        return {native, table};
    }""")
    for path in ("native", "table"):
        values = np.array([float(v) for v in got[path]])
        assert np.array_equal(values, expected, equal_nan=True), path
