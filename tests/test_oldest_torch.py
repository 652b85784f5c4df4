"""The oldest torch the package accepts (pyproject.toml's floor), which is what lets Colab keep
its own torch: in a fresh environment with that release, every chapter's download runs to its
end with every claim holding (strict, as the build runs).

The chapters are written and built against the pinned torch. An older release is one more other
CPU: its kernels round differently, so a trained number is a new draw, and the claims, calibrated
to hold for every draw, must hold on it too. It plays the third of ``tools/other_cpus.py``'s
settings (a simulated CPU, draw 1003), so that CI's three runs of each chapter cover both numeric
paths and three draws without a fourth (``tests/test_numeric_paths.py`` runs the other two).
PyPI's Linux build of an older torch is its CUDA build, with its libraries
(about 3.5 GB, 90 s here on a fast network; pip's cache keeps them): the test pays that once per
machine.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.pipeline
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import other_cpus  # noqa: E402
import toc_chapters  # noqa: E402


def torch_floor() -> str:
    """The lowest torch release pyproject.toml admits ("2.5")."""
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (floor,) = [re.fullmatch(r"torch>=(\d+\.\d+)", d).group(1) for d in dependencies
                if d.startswith("torch")]
    return floor


@pytest.fixture(scope="module")
def old_torch_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment: the floor's newest patch release of torch, the student set's other
    pins (its sympy pin is torch's to choose), jupytext to read the chapters, the package."""
    from site_utils import package_source

    work = tmp_path_factory.mktemp("old-torch")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, timeout=300)
    python = work / "venv" / "bin" / "python"
    rest = work / "requirements.txt"
    rest.write_text("\n".join(
        line for line in (REPO / "requirements-student.txt").read_text().splitlines()
        if not line.startswith(("torch", "sympy", "--extra-index-url", "#"))) + "\n")
    # no bytecode written ahead: the run compiles only what it imports (a minute less here)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--retries", "0", "--no-compile"]
    for args in ([f"torch=={torch_floor()}.*"], ["-r", str(rest), "jupytext"],
                 ["--no-deps", "--no-build-isolation", str(package_source(work / "source"))]):
        done = subprocess.run(pip + args, capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, f"pip install {args[0]} failed:\n{done.stderr[-3000:]}"
    return python


def test_every_chapter_runs_to_its_end_on_the_oldest_torch(built_site: None,
                                                           old_torch_python: Path) -> None:
    probe = "import torch; print(torch.__version__)"
    version = subprocess.run([str(old_torch_python), "-c", probe], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert version.startswith(torch_floor() + "."), version
    chapters = [str(other_cpus.download(source))
                for source in toc_chapters.chapters(REPO, notebooks_only=True)]
    env = {**other_cpus.STRICT, **other_cpus.setting(other_cpus.OLDEST_TORCH_SETTING)}
    done = subprocess.run([str(old_torch_python), str(REPO / "tools" / "run_chapters.py"),
                           "--strict", "--jobs", "2", *[f"--set={k}={v}" for k, v in env.items()],
                           *chapters], cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"on torch {version}:\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.count("passed") == len(chapters), done.stdout
