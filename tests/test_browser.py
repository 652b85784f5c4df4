"""Every page of the built site in headless Chromium: images load, math renders, nothing fails,
axe-core finds no serious or critical accessibility violation, and display math that is wider than
a 390 px phone scrolls instead of being cut off.

The site is served from 127.0.0.1; a request to any other host is recorded and refused, so a page
that needs the internet fails here. Chromium comes from $CHROMIUM, else tools/find_browser.sh;
without one the test fails with that script's message (it never skips). Screenshots of every page
go to _build/screenshots/. Each page is opened once; its three tests read what that visit found.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from npm_assets import ASSETS  # tools/ is on sys.path (site_utils)
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from print_pdf import HOST, serve
from site_utils import HTML, REPO, SCREENSHOTS, toc_docnames

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("built_site")]
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MATH_TIMEOUT_MS = 60_000  # MathJax typesets after the load event
QUIET_MS, SETTLE_TIMEOUT_S = 500, 120  # a page has settled once no request is open for QUIET_MS
# Every other wait (the network falling idle, a screenshot, axe-core): generous, because in
# `make check` a page loads beside chapters executing on every core (CI once took over 30 s to
# settle chapter 3's page). A page that never loads still fails, only later.
PAGE_TIMEOUT_MS = 120_000
# TeX errors MathJax renders instead of failing: <mjx-merror> (e.g. "Double exponent") and, from
# its noundefined extension, an unknown macro shown as red text starting with a backslash (5C).
TEX_ERRORS_JS = r"""() => [
  ...Array.from(document.querySelectorAll("mjx-merror"),
                e => e.getAttribute("data-mjx-error") || "merror"),
  ...Array.from(document.querySelectorAll(
      'mjx-mtext[style*="color: red"] > mjx-c.mjx-c5C:first-child'),
                () => "undefined TeX macro")]"""
# The current axe-core, which `make test` fetches (tools/npm_assets.py): the one
# axe-playwright-python bundles is older and misses rules (label-content-name-mismatch).
AXE_JS = Path(sys.prefix) / "axe-core" / "axe.min.js"
AXE_IMPACTS = ("serious", "critical")  # what must not be found; "minor"/"moderate" are reported
PHONE = {"width": 390, "height": 844}  # a phone's CSS viewport
# Display formulas cut off at the page's width: their box sticks out of the math block, which
# does not scroll, or out of the article (the page would scroll sideways).
CLIPPED_MATH_JS = """() => {
  const article = document.querySelector("article") || document.body;
  const right = article.getBoundingClientRect().right;
  const clipped = [];
  document.querySelectorAll("div.math").forEach(block => {
    const formula = block.querySelector("mjx-container");
    if (!formula) return;
    const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
    const box = block.getBoundingClientRect(), inner = formula.getBoundingClientRect();
    const wide = formula.scrollWidth > formula.clientWidth + 1;
    const cut = (inner.right > box.right + 1 && !scrolls(block)) || (wide && !scrolls(formula))
                || box.right > right + 1;
    if (cut) clipped.push(block.textContent.trim().slice(0, 60));
  });
  return clipped;
}"""


def chromium_path() -> str:
    """$CHROMIUM, or what tools/find_browser.sh finds or installs; fail with its message."""
    path = os.environ.get("CHROMIUM", "")
    if path and Path(path).is_file() and os.access(path, os.X_OK):
        return path
    found = subprocess.run([str(REPO / "tools" / "find_browser.sh"), sys.executable],
                           capture_output=True, text=True, timeout=900)
    path = found.stdout.strip().splitlines()[-1] if found.stdout.strip() else ""
    if found.returncode != 0 or not path:
        pytest.fail(f"no Chromium for the browser tests:\n{found.stderr}", pytrace=False)
    return path


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """The built site served over HTTP on 127.0.0.1 (an ephemeral port) while the tests run."""
    with serve(HTML) as url:
        yield url


@dataclass
class PageProblems:
    """What went wrong while a page loaded."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    offsite_requests: list[str] = field(default_factory=list)

    def watch(self, page: Page) -> None:
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(
            f"{m.text} ({m.location.get('url', '')})"))
        page.on("pageerror", lambda error: self.console_errors.append(f"uncaught: {error}"))
        page.on("requestfailed", lambda r: self.failed_requests.append(
            f"{r.url}: {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.failed_requests.append(
            f"{r.url}: HTTP {r.status}"))

    def guard(self, page: Page) -> None:
        """Let requests to 127.0.0.1 (and inline data, and local files) through; record and
        refuse the rest."""
        def route(route: Any) -> None:
            url = route.request.url
            if urlsplit(url).scheme in ("data", "blob", "file") or urlsplit(url).hostname == HOST:
                route.continue_()
            else:
                self.offsite_requests.append(url)
                route.abort("blockedbyclient")
        page.route("**/*", route)


def _screenshot_path(docname: str) -> Path:
    return SCREENSHOTS / (docname.replace("/", "__") + ".png")


def check_page(browser: Browser, url: str, screenshot: Path) -> dict[str, Any]:
    """Open ``url``; return what the tests assert on (problems, images, math, axe-core's
    violations, display math cut off on a phone)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    problems = PageProblems()
    problems.watch(page)
    problems.guard(page)
    pending: dict[Any, str] = {}  # requests sent and not yet answered, to name if one hangs
    page.on("request", lambda r: pending.__setitem__(r, r.url))
    page.on("requestfinished", lambda r: pending.pop(r, None))
    page.on("requestfailed", lambda r: pending.pop(r, None))
    try:
        response = page.goto(url, wait_until="load")
        math = page.locator(".math").count()
        if math:
            try:
                page.wait_for_function(
                    "n => document.querySelectorAll('mjx-container').length >= n", arg=math,
                    timeout=MATH_TIMEOUT_MS)
            except PlaywrightTimeoutError:
                pass  # reported below as math that did not render
        # settled: none of the page's own requests open for QUIET_MS (Playwright's "networkidle"
        # once never fired on a loaded machine with none open)
        quiet_since, deadline = None, time.monotonic() + SETTLE_TIMEOUT_S
        while quiet_since is None or time.monotonic() - quiet_since < QUIET_MS / 1000:
            if time.monotonic() > deadline:
                raise AssertionError(f"{url}: the network never fell idle; still waiting for "
                                     f"{sorted(pending.values())}")
            page.wait_for_timeout(100)  # lets Playwright deliver the request events
            if pending:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
        broken_images = page.evaluate("""async () => {
            const images = Array.from(document.images);
            await Promise.all(images.map(i => i.decode().catch(() => null)));
            return images.filter(i => !(i.complete && i.naturalWidth > 0))
                         .map(i => i.getAttribute('src'));
        }""")
        rendered = page.locator("mjx-container").count()
        tex_errors = page.evaluate(TEX_ERRORS_JS)
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=True)
        # what loading the page did; axe-core's own fetches of the stylesheets come after (it
        # resolves the theme's @import "../basic.css" against the page, not the stylesheet)
        problems = PageProblems(list(problems.console_errors), list(problems.failed_requests),
                                list(problems.offsite_requests))
        assert AXE_JS.is_file(), f"{AXE_JS} is missing: run `make test` (tools/npm_assets.py)"
        axe = Axe.from_file(AXE_JS).run(page).response
        violations, axe_version = axe["violations"], axe["testEngine"]["version"]
        page.set_viewport_size(PHONE)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        clipped_math = page.evaluate(CLIPPED_MATH_JS)
    finally:
        context.close()
    return {"status": response.status if response else None, "math": math,
            "rendered": rendered, "tex_errors": tex_errors, "broken_images": broken_images,
            "problems": problems, "violations": violations, "axe_version": axe_version,
            "clipped_math": clipped_math}


@pytest.fixture(scope="module")
def visited(browser: Browser, site_url: str) -> Any:
    """``visited(docname)``: what opening that page found (each page is opened once)."""
    found: dict[str, dict[str, Any]] = {}

    def visit(docname: str) -> dict[str, Any]:
        if docname not in found:
            found[docname] = check_page(browser, f"{site_url}/{docname}.html",
                                        _screenshot_path(docname))
        return found[docname]

    return visit


def describe_violations(violations: list[dict[str, Any]]) -> list[str]:
    """One line per axe-core violation: rule, impact, how many elements, the first of them."""
    return [f"{v['id']} ({v['impact']}, {len(v['nodes'])}x): {v['help']}; e.g. "
            f"{v['nodes'][0]['target'] if v['nodes'] else ''}" for v in violations]


@pytest.mark.parametrize("docname", toc_docnames())
def test_page_in_browser(visited: Any, docname: str) -> None:
    screenshot = _screenshot_path(docname)
    result = visited(docname)
    problems: PageProblems = result["problems"]
    assert result["status"] == 200
    assert not problems.offsite_requests, f"requests off the site: {problems.offsite_requests}"
    assert not problems.failed_requests, f"failed requests: {problems.failed_requests}"
    assert not problems.console_errors, f"console errors: {problems.console_errors}"
    assert not result["broken_images"], f"images that did not load: {result['broken_images']}"
    assert result["rendered"] >= result["math"], \
        f"MathJax rendered {result['rendered']} of {result['math']} math elements " \
        f"within {MATH_TIMEOUT_MS / 1000:.0f} s"
    assert not result["tex_errors"], f"TeX errors: {result['tex_errors']}"
    assert screenshot.is_file() and screenshot.stat().st_size > 0


@pytest.mark.parametrize("docname", toc_docnames())
def test_page_has_no_serious_accessibility_violation(visited: Any, docname: str) -> None:
    """axe-core (the rules of WCAG 2.x A/AA and its best practices) on the loaded page: the
    release tools/npm_assets.py pins, not the older one axe-playwright-python bundles."""
    assert visited(docname)["axe_version"] == ASSETS["axe-core"].version
    violations = [v for v in visited(docname)["violations"] if v["impact"] in AXE_IMPACTS]
    assert not violations, "\n".join([f"{docname}:"] + describe_violations(violations))


@pytest.mark.parametrize("docname", toc_docnames())
def test_display_math_scrolls_on_a_phone(visited: Any, docname: str) -> None:
    clipped = visited(docname)["clipped_math"]
    assert not clipped, f"{docname}: display math cut off at {PHONE['width']} px: {clipped}"
