"""Fixtures shared by the pipeline tests (helpers live in site_utils.py), and the hook that tells
pytest-xdist how `make test` spreads the tests over its workers (xdist_groups.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from site_utils import REPO, require_site
from xdist_groups import pytest_xdist_make_scheduler  # noqa: F401 (the xdist hook)

sys.path.insert(0, str(REPO / "tools"))
import run_chapters  # noqa: E402

# The longest tests, by module, first. pytest-xdist hands tests to its workers in the
# order they were collected, so a long test collected late runs alone at the end while the other
# workers idle; started first, the short tests fill in around it (`make check` runs every test in
# one session for that reason). The two that run in fresh environments come after the editions'
# and the browsers' (each a few minutes on one worker): by then `make check`'s background builds
# of those environments (a 3.5 GB download for the oldest torch, on a machine with an empty pip
# cache) are done (tests/fresh_envs.py), so no worker waits on the network.
LONG_FIRST = ("test_pdf.py", "test_browser.py", "test_binder.py", "test_oldest_torch.py",
              "test_student_edition.py")


def _order(item: pytest.Item) -> tuple[int, float]:
    """Where ``item`` runs: by module (LONG_FIRST), then the longest chapter first."""
    module = item.path.name
    chapter = getattr(item, "callspec", None) and item.callspec.params.get("chapter")
    seconds = run_chapters.expected_seconds(str(chapter)) if isinstance(chapter, Path) else 0.0
    return (LONG_FIRST.index(module) if module in LONG_FIRST else len(LONG_FIRST), -seconds)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reads the built site ``site`` (`make test-fast` leaves them out);
    put the longest tests first."""
    for item in items:
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.site)
    items.sort(key=_order)  # stable: the rest keep their order


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """One torch thread, as in the chapters: tiny models gain nothing from a second, and on a
    busy 2-core machine a waiting thread spins and slows everything down."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def close_figures():
    """Close the figures a test drew: pyplot keeps every open figure (and warns past 20)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")  # imported only by tests that draw
    if pyplot is not None:
        pyplot.close("all")


@pytest.fixture(scope="session")
def built_site() -> None:
    """Fail with 'run make book first' when the site has not been built."""
    require_site()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (playwright), one per test module."""
    from playwright.sync_api import sync_playwright
    from test_browser import LAUNCH_ARGS, chromium_path

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                             chromium_sandbox=False, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records console errors and refuses requests off the machine
    (``page.problems``, test_browser.PageProblems)."""
    from test_browser import PAGE_TIMEOUT_MS, PageProblems

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    page.problems = PageProblems()
    page.problems.watch(page)
    page.problems.guard(page)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def untrained_ch7() -> tuple[Any, Any]:
    """An untrained chapter 7 model (seed 0) and a small split prepared as chapter 7 prepares its
    own: 300 training, 30 validation and 40 test numbers."""
    from transformer_course import Transformer
    from transformer_course.experiments.ch7_translation import number_corpus, prepared, recipe

    split = number_corpus.split_numbers(train=300, validation=30, test=40, seed=2)
    chapter = prepared.prepare(split)
    config = recipe.model_config(len(chapter.pipeline.source_vocab),
                                 len(chapter.pipeline.target_vocab))
    torch.manual_seed(0)
    return Transformer(config).eval(), chapter
