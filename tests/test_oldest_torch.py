"""The oldest torch the package accepts (pyproject.toml's floor), which is what lets Colab keep
its own torch: in a fresh environment with that release, every chapter's download runs to its
end with every claim holding (strict, as the build runs).

The chapters are written and built against the pinned torch. An older release is one more other
CPU: its kernels round differently, so a trained number is a new draw, and the claims, calibrated
to hold for every draw, must hold on it too. It plays one of ``tools/other_cpus.py``'s settings
as well (a simulated CPU, draw 1003), so that this run, the one other CPU CI plays, differs from
the build's in its numeric path and in its draw (``make other-cpus`` plays three more).
PyPI's Linux build of an older torch is its CUDA build, with its libraries (about 3.5 GB, from
90 s to several minutes here, by the network): `make check` starts that download before pytest
starts (tests/fresh_envs.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fresh_envs
import pytest
from fresh_envs import torch_floor
from site_utils import package_source

pytestmark = pytest.mark.pipeline
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import other_cpus  # noqa: E402
import toc_chapters  # noqa: E402


@pytest.fixture(scope="module")
def old_torch_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment: the floor's newest patch release of torch, the student set's other
    pins, jupytext to read the chapters, the package (tests/fresh_envs.py)."""
    work = tmp_path_factory.mktemp("old-torch")
    return fresh_envs.prepared_or_built("old-torch", work / "env",
                                        package_source(work / "source"))


def test_every_chapter_runs_to_its_end_on_the_oldest_torch(built_site: None,
                                                           old_torch_python: Path) -> None:
    probe = "import torch; print(torch.__version__)"
    version = subprocess.run([str(old_torch_python), "-c", probe], capture_output=True, text=True,
                             check=True, env=fresh_envs.environ()).stdout.strip()
    assert version.startswith(torch_floor() + "."), version
    chapters = [str(other_cpus.download(source))
                for source in toc_chapters.chapters(REPO, notebooks_only=True)]
    env = {**other_cpus.STRICT, **other_cpus.setting(other_cpus.OLDEST_TORCH_SETTING)}
    done = subprocess.run([str(old_torch_python), str(REPO / "tools" / "run_chapters.py"),
                           "--strict", "--jobs", "2", *[f"--set={k}={v}" for k, v in env.items()],
                           *chapters], cwd=REPO, capture_output=True, text=True, timeout=1800,
                          env=fresh_envs.environ())
    assert done.returncode == 0, f"on torch {version}:\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.count("passed") == len(chapters), done.stdout
