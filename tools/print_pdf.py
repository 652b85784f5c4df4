"""Print the book's single-page HTML (Sphinx's ``singlehtml`` build) to one PDF with Chromium.

No LaTeX is needed: headless Chromium, driven by Playwright, opens the page from a local HTTP
server (so MathJax and the explorer load as on the site), waits until MathJax has typeset every
formula and every image has loaded, and prints with the page's print stylesheet
(``_static/print.css``: no navigation or buttons, solutions and folded outputs shown, the
interactive explorers as the static map they first draw). Used by ``build_edition.py pdf``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HOST = "127.0.0.1"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MATH_TIMEOUT_MS = 120_000  # MathJax typesets the whole book in one page
# Every formula typeset (no .math element left without an <mjx-container>), every image loaded.
READY_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await Promise.all(Array.from(document.images, i => i.decode().catch(() => null)));
  const untypeset = Array.from(document.querySelectorAll('.math'))
    .filter(e => !e.querySelector('mjx-container') && !e.closest('mjx-container')
                 && e.tagName !== 'MJX-CONTAINER').length;
  const broken = Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  return {untypeset, broken, explorers: document.querySelectorAll('.ae-mount').length,
          mounted: document.querySelectorAll('.ae-mount[data-mounted]').length};
}"""


# A display formula wider than the printed column is scaled down to fit it (on screen it scrolls,
# which paper cannot); returns how many were.
FIT_MATH_JS = """() => {
  let scaled = 0;
  document.querySelectorAll('div.math mjx-container[display="true"]').forEach(formula => {
    const fits = formula.clientWidth, needs = formula.scrollWidth;
    if (needs > fits + 1) {
      formula.style.zoom = (fits / needs).toFixed(3);
      formula.style.overflow = "visible";
      scaled += 1;
    }
  });
  return scaled;
}"""
A4_MM = (210, 297)
MARGIN_MM = {"top": 18, "bottom": 18, "left": 16, "right": 16}
PX_PER_MM = 96 / 25.4  # CSS pixels


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


class _Server(ThreadingHTTPServer):
    # A page asks for dozens of files at once. With socketserver's listen backlog of 5, a
    # connection that arrives while this thread is slow to accept (a busy machine) is dropped,
    # and the browser retries it only after seconds of TCP back-off: a test that loaded a page
    # in 4 s waited over two minutes for it beside the chapter runs.
    request_queue_size = 128


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 (an ephemeral port) while the block runs; yields its URL."""
    server = _Server((HOST, 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _local_only(route: Any) -> None:
    """Let requests to the local server (and inline data) through; refuse the rest at once, so
    that nothing waits on a network the build machine may not have."""
    url = urlsplit(route.request.url)
    if url.hostname == HOST or url.scheme in ("data", "blob"):
        route.continue_()
    else:
        route.abort("blockedbyclient")


def single_page(folder: Path) -> Path:
    """The one page of a ``singlehtml`` build: the HTML file that is not a redirect."""
    pages = [p for p in sorted(Path(folder).rglob("*.html")) if "_static" not in p.parts
             and 'http-equiv="refresh"' not in p.read_text(encoding="utf-8")[:2000].lower()]
    if len(pages) != 1:
        raise ValueError(f"folder: expected one page in a singlehtml build; found {pages}")
    return pages[0]


def print_pdf(folder: Path, pdf: Path, chromium: str) -> int:
    """Print the ``singlehtml`` build in ``folder`` to ``pdf`` (A4) with ``chromium``; return
    the number of pages. Raises RuntimeError when a formula was not typeset, an image did not
    load or an explorer did not draw, rather than print a PDF that lacks them.

    Args:
        folder: the ``singlehtml`` output folder. pdf: the PDF to write.
        chromium: path of a Chromium or Chrome executable.
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader

    folder, pdf = Path(folder), Path(pdf)
    page_path = single_page(folder).relative_to(folder).as_posix()
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with serve(folder) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             chromium_sandbox=False, args=LAUNCH_ARGS)
        try:
            # laid out as on paper: the viewport is the printed column
            column = round((A4_MM[0] - MARGIN_MM["left"] - MARGIN_MM["right"]) * PX_PER_MM)
            page = browser.new_page(viewport={"width": column, "height": 1400})
            page.set_default_timeout(MATH_TIMEOUT_MS)
            page.route("**/*", _local_only)  # nothing the offline book needs is elsewhere
            page.goto(f"{url}/{page_path}", wait_until="load")
            ready = page.evaluate(READY_JS)
            if ready["untypeset"] or ready["broken"] or ready["mounted"] < ready["explorers"]:
                raise RuntimeError(f"the page is not ready to print: {ready}")
            page.emulate_media(media="print")
            page.evaluate(FIT_MATH_JS)
            page.pdf(path=str(pdf), format="A4", print_background=True, outline=True, tagged=True,
                     margin={side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
                     display_header_footer=True, header_template="<span></span>",
                     footer_template='<div style="font-size:8px;width:100%;text-align:center">'
                                     '<span class="pageNumber"></span></div>')
        finally:
            browser.close()
    return len(PdfReader(pdf).pages)
