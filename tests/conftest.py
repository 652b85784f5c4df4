"""Fixtures shared by the pipeline tests (helpers live in site_utils.py), and the hook that tells
pytest-xdist how `make test` spreads the tests over its workers (xdist_groups.py)."""

from __future__ import annotations

import pytest
import torch
from site_utils import require_site
from xdist_groups import pytest_xdist_make_scheduler  # noqa: F401 -- the hook, for pytest-xdist


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
