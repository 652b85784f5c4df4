"""Every chapter's downloaded notebook runs to its end on other CPUs, claims strict.

The build executes each chapter on this machine's own kernels. A reader's CPU picks others
(oneDNN and MKL choose by instruction set and vendor), so the same seed gives other bits and
training amplifies them until a run is a new draw. This machine plays other CPUs
(``tools/other_cpus.py``, which ``make other-cpus`` runs), each differing in two ways at once:
another numeric path (``ATEN_CPU_CAPABILITY=default``, torch's plain kernels;
``MKL_CBWR=COMPATIBLE``, MKL's vendor-neutral code) and a simulated CPU
(``TRANSFORMER_COURSE_DRAW``: every initial weight moved by one float32 ulp), drawn apart from the
draws the claims' margins were calibrated on. CI runs two settings (``other_cpus.CI_SETTINGS``):
MKL's vendor-neutral code and draw 1002 here, draw 1003 on the oldest torch
(``tests/test_oldest_torch.py``); torch's plain kernels are ``make other-cpus``'. Under each, every
chapter's download (``_build/html/_sources/book/*.ipynb``) runs top to bottom in a fresh kernel
whose working folder is a temporary folder outside the repository, with the build's strictness,
so every claim the prose makes must hold there too. The glued numbers of each run are kept in
``_build/numeric_paths/`` (``python -m bench --only numeric-paths`` reports how far they move).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import pytest
from site_utils import BUILD, REPO

sys.path.insert(0, str(REPO / "tools"))
import other_cpus  # noqa: E402
import run_chapters  # noqa: E402
import toc_chapters  # noqa: E402

CHAPTERS = toc_chapters.chapters(REPO, notebooks_only=True)
ON_THIS_TORCH = [name for name in other_cpus.CI_SETTINGS
                 if name != other_cpus.OLDEST_TORCH_SETTING]

pytestmark = pytest.mark.pipeline


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
@pytest.mark.parametrize("setting", ON_THIS_TORCH)
def test_the_download_runs_to_its_end_with_every_claim_holding(built_site, setting, chapter):
    env = other_cpus.setting(setting)
    outcome = run_chapters.run_one(str(other_cpus.download(chapter)), 1800,
                                   {**other_cpus.STRICT, **env})
    out = BUILD / "numeric_paths" / setting / f"{chapter.stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"settings": env, "outcomes": [asdict(outcome)]}, indent=1))
    assert outcome.passed, outcome.error
