"""How `make test` spreads the tests over its pytest-xdist workers (`-n JOBS --dist loadgroup`).

Kept apart from conftest.py, which imports torch, so that tests/test_test_workers.py can run it in
a small suite of its own.
"""

from __future__ import annotations

from typing import Any

import pytest

# Tests that drive Chromium or JupyterLab run one after another on one worker: two browsers at once
# on a 2-core machine starve each other into timeouts, and they write into the shared
# _build/screenshots. Every other test writes only under its own tmp_path, the build tests
# included: each `make book BOOK=<tmp>` has its own _build, cache and stamps, so they may run side
# by side. (What they do share, the .venv and its .installed stamp, `make test` brings up to date
# before pytest starts, so none of them reinstalls anything.)
# The editions are built once per module (into _build/student and _build/pdf), so each module's
# tests stay on one worker; the PDF's group runs beside the browser group (its Chromium prints for
# a few seconds, with no timeout short enough to starve).
SERIAL_GROUPS = {"browser": ("test_browser.py", "test_binder.py"),
                 "student": ("test_student_edition.py",), "pdf": ("test_pdf.py",)}


def xdist_group(nodeid: str) -> str | None:
    """The group a test must run in, one after another on one worker (None: anywhere)."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return next((group for group, modules in SERIAL_GROUPS.items() if module in modules), None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (what `make test` asks for), with the groups of SERIAL_GROUPS.

    pytest-xdist 3.8 carries a test's @pytest.mark.xdist_group to its scheduler by appending the
    group to the test's node id, which pytest 9.2 no longer lets it change: its groups silently
    fall apart (pytest-dev/pytest-xdist#1386). This scheduler takes the group from the test's
    module instead, and is xdist's own loadgroup scheduler otherwise.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid) or super()._split_scope(nodeid)

    return ModuleGroups(config, log)
