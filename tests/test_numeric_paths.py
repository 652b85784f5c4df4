"""Every chapter's downloaded notebook runs to its end on other numeric paths, claims strict.

The build executes each chapter on this machine's own kernels. A reader's CPU picks others
(oneDNN and MKL choose by instruction set and vendor), so the same seed gives other bits and
training amplifies them. Two settings reproduce other CPUs here: ``ATEN_CPU_CAPABILITY=default``
(torch's plain, unvectorised kernels) and ``MKL_CBWR=COMPATIBLE`` (MKL's vendor-neutral code
path). Under each, every chapter's download (``_build/html/_sources/book/*.ipynb``) runs top to
bottom in a fresh kernel whose working folder is a temporary folder outside the repository, with
the build's strictness, so every claim the prose makes must hold there too. The glued numbers of
each run are kept in ``_build/numeric_paths/`` (``python -m bench --only numeric-paths`` reports
how far they move).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from site_utils import BUILD, HTML, REPO

sys.path.insert(0, str(REPO / "tools"))
import toc_chapters  # noqa: E402

NUMERIC_PATHS = {"aten-default": "ATEN_CPU_CAPABILITY=default",
                 "mkl-compatible": "MKL_CBWR=COMPATIBLE"}
CHAPTERS = [p for p in toc_chapters.chapters(REPO) if toc_chapters.is_notebook(REPO / p)]

pytestmark = pytest.mark.pipeline


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
@pytest.mark.parametrize("path", sorted(NUMERIC_PATHS))
def test_the_download_runs_to_its_end_with_every_claim_holding(built_site, path, chapter):
    download = HTML / "_sources" / chapter.with_suffix(".ipynb")
    out = BUILD / "numeric_paths" / path / f"{chapter.stem}.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "tools" / "run_chapters.py"), "--strict",
         "--set", NUMERIC_PATHS[path], "--set", "OMP_NUM_THREADS=1", "--glued", str(out),
         str(download)], capture_output=True, text=True, timeout=1200, cwd=REPO)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert json.loads(out.read_text())["outcomes"][0]["passed"]
