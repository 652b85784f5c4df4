"""Time to the first translation on a page with the live translator, in headless Chromium.

The translator records, on its container, the milliseconds from the start of its script (decoding
the weights included) to the first translation drawn. Each repeat opens the page afresh from
``file://``; the figure is the median. ``--quick`` (and a book without chapter 7) measures a page
made here from a small random model, so the figure always exists.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PAGE = "book/07_translation.html"
REPO = Path(__file__).resolve().parent.parent
# as in tests/test_browser.py: no background networking on a machine without internet
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """$CHROMIUM, else what tools/find_browser.sh finds (or installs)."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    found = subprocess.run([str(REPO / "tools" / "find_browser.sh"), sys.executable],
                           capture_output=True, text=True, check=True)
    return found.stdout.strip().splitlines()[-1]


def _random_translator_page(folder: Path) -> Path:
    import torch
    from num2words import num2words

    from transformer_course import Transformer, TransformerConfig
    from transformer_course.explorer.export import export_model
    from transformer_course.explorer.html import translator

    words = sorted({w for n in range(0, 1000, 7)
                    for w in num2words(n, lang="en").replace(",", " ").replace("-", " ").split()}
                   | {"thousand"})
    vocab = {w: i + 3 for i, w in enumerate(words)}
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(len(vocab) + 3, 40, d_model=128, num_heads=4,
                                          num_encoder_layers=2, num_decoder_layers=2, d_ff=256,
                                          dropout=0.0, share_embeddings=False)).eval()
    markup = translator(export_model(model), vocab, [f"t{i}" for i in range(40)],
                        pattern="[^\\s,-]+", examples=[45], max_len=20)._repr_html_()
    page = folder / "translator.html"
    page.write_text(f"<!doctype html><html><body>{markup}</body></html>", encoding="utf-8")
    return page


def run_explorer_bench(html_dir: Path, *, quick: bool = False, repeats: int = 5) -> dict:
    """Median milliseconds to the first translation over ``repeats`` fresh page loads."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        page_path = html_dir / PAGE
        source = "chapter 7 page"
        if quick or not page_path.is_file():
            page_path, source = _random_translator_page(Path(tmp)), "random model, d_model 128"
        samples = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), headless=True,
                                                 chromium_sandbox=False, args=LAUNCH_ARGS)
            try:
                for _ in range(repeats):
                    page = browser.new_page()
                    page.goto(page_path.as_uri())
                    root = page.locator(".ae-translator").first
                    root.wait_for(state="attached")
                    samples.append(float(root.get_attribute("data-first-translation-ms")))
                    page.close()
            finally:
                browser.close()
        size = page_path.stat().st_size
    return {"page": source, "median_ms": statistics.median(samples), "min_ms": min(samples),
            "max_ms": max(samples), "repeats": repeats, "bytes": size}
