"""How `make test` spreads the tests (tests/xdist_groups.py, hooked in by conftest.py): the browser
tests one after another on one worker, everything else on any worker."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from site_utils import REPO
from xdist_groups import xdist_group

RECORD = textwrap.dedent("""\
    import json, os, time
    import pytest

    @pytest.mark.parametrize("i", range({n}))
    def test_record(i):
        time.sleep(0.1)
        with open({log!r}, "a") as log:
            log.write(json.dumps([__name__, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
    """)


def test_groups_come_from_the_module() -> None:
    assert xdist_group("tests/test_browser.py::test_page_in_browser[book/index]") == "browser"
    assert xdist_group("tests/test_binder.py::test_binder_postbuild_and_runtime") == "browser"
    assert xdist_group("tests/test_site.py::test_page_exists[book/index]") is None
    assert xdist_group("tests/test_browser_tools.py::test_x") is None


def test_browser_tests_share_one_worker_and_the_rest_spread(tmp_path: Path) -> None:
    """Real pytest-xdist workers, the project's scheduler: browser modules on one worker."""
    log = tmp_path / "workers.jsonl"
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        from xdist_groups import pytest_xdist_make_scheduler
        """))
    for module, n in (("test_browser", 4), ("test_binder", 2), ("test_other", 8)):
        (suite / f"{module}.py").write_text(RECORD.format(n=n, log=str(log)))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-n", "2", "--dist", "loadgroup", "--rootdir", str(suite),
                             "-c", "/dev/null", str(suite)],
                            capture_output=True, text=True, timeout=300, cwd=suite)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 14
    browser = {worker for module, worker in runs if module in ("test_browser", "test_binder")}
    assert len(browser) == 1, f"browser tests ran on {sorted(browser)}"
    assert {worker for _, worker in runs} == {"gw0", "gw1"}, "the other tests did not spread"
