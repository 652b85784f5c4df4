"""Fixtures shared by the pipeline tests (helpers live in site_utils.py), and how `make test`
spreads the tests over its pytest-xdist workers."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from site_utils import require_site


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """One torch thread, as in the chapters: tiny models gain nothing from a second, and on a
    busy 2-core machine a waiting thread spins and slows everything down."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def built_site() -> None:
    """Fail with 'run make book first' when the site has not been built."""
    require_site()


# Tests that drive Chromium or JupyterLab run one after another on one worker (`--dist loadgroup`):
# two browsers at once on a 2-core machine starve each other into timeouts, and they write into
# the shared _build/screenshots. Every other test writes only under its own tmp_path, the build
# tests included: each `make book BOOK=<tmp>` has its own _build, cache and stamps, so they may
# run side by side. (What they do share, the .venv and its .installed stamp, `make test` brings up
# to date before pytest starts, so none of them reinstalls anything.)
SERIAL_GROUPS = {"browser": ("test_browser.py", "test_binder.py")}


def xdist_group_of(item: pytest.Item) -> str | None:
    """The xdist group a test must run in, or None when it may run beside any other."""
    if item.get_closest_marker("browser"):
        return "browser"
    name = Path(str(item.fspath)).name
    for group, modules in SERIAL_GROUPS.items():
        if name in modules:
            return group
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = xdist_group_of(item)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
