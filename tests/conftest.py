"""Fixtures shared by the pipeline tests (helpers live in site_utils.py)."""

from __future__ import annotations

import pytest
from site_utils import require_site


@pytest.fixture(scope="session")
def built_site() -> None:
    """Fail with 'run make book first' when the site has not been built."""
    require_site()
