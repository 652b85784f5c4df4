"""tools/run_chapters.py: a chapter runs in a fresh kernel with the settings asked for, and the
kernel is gone when it is done (a pool worker runs many chapters, one kernel after another)."""

from __future__ import annotations

import sys
import textwrap

import psutil
from site_utils import CHAPTER_HEADER, REPO

sys.path.insert(0, str(REPO / "tools"))
import run_chapters  # noqa: E402

CHAPTER = CHAPTER_HEADER + textwrap.dedent('''
    ```{code-cell} ipython3
    import os
    if os.environ.get("COURSE_TEST_SETTING") != "on":
        raise RuntimeError("the setting did not reach the kernel")
    ```
    ''')


def test_a_run_gets_its_settings_and_leaves_no_kernel_behind(tmp_path):
    chapter = tmp_path / "tiny.md"
    chapter.write_text(CHAPTER)
    # what earlier tests on this worker left (a spawned pool's resource tracker lives on)
    before = set(psutil.Process().children(recursive=True))
    assert not run_chapters.run_one(str(chapter), 120).passed
    outcome = run_chapters.run_one(str(chapter), 120, {"COURSE_TEST_SETTING": "on"})
    assert outcome.passed, outcome.error
    assert not set(psutil.Process().children(recursive=True)) - before
