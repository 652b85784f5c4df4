"""The student's set (requirements-student.txt) and the reader's (requirements.txt) resolve, as
pinned, for every platform the README supports, on every Python it names, and not for the ones it
says are unsupported.

pip evaluates environment markers for the machine it runs on, so these resolve with uv, which
resolves for another platform (``uv pip compile --python-platform``) from the package indexes'
metadata, downloading no wheel. A set passes on a platform when the resolution succeeds and adds
no package the set does not pin (a missing pin would float on a student's machine).

Both sets take Linux's torch from the PyTorch project's CPU index ("+cpu"). Where that index
cannot be reached (this project's CI machine reaches PyPI only), the sets are resolved with the
same torch release from PyPI, whose wheels cover the same platforms; PyPI's Linux build then pulls
in CUDA libraries, which are the only packages allowed beyond the pins in that case.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.pipeline
REPO = Path(__file__).resolve().parents[1]
SETS = {"student": REPO / "requirements-student.txt", "reader": REPO / "requirements.txt"}
SUPPORTED = {  # the README's platforms: name -> uv's target triple
    "windows-x86_64": "x86_64-pc-windows-msvc",
    "macos-arm64": "aarch64-apple-darwin",
    "linux-x86_64": "x86_64-manylinux_2_28",
    "linux-aarch64": "aarch64-manylinux_2_28",
}
PYTHONS = ("3.11.5", "3.12", "3.13", "3.14")  # the README's floor, and the releases after it
# (3.14: python.org's default download since October 2025)
MACOS = "14.0"  # torch's macOS wheels are built for macOS 14 and later
UNSUPPORTED = {"macos-x86_64": "x86_64-apple-darwin"}  # Intel Macs: the README sends them to Colab
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_LIBRARIES = re.compile(r"^(nvidia-|cuda-|triton$)")  # PyPI's Linux torch only


def _name(requirement: str) -> str:
    """The normalised project name a requirement line pins (PEP 503)."""
    name = re.split(r"[\s=<>!~;\[@]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned(path: Path) -> set[str]:
    """The names a requirement file (and the files it includes) pins."""
    names: set[str] = set()
    for line in path.read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if line.startswith("-r "):
            names |= _pinned(path.parent / line[3:].strip())
        elif line and not line.startswith(("#", "-")):
            names.add(_name(line))
    return names


@cache
def _cpu_index_reachable() -> bool:
    try:
        with urllib.request.urlopen(f"{CPU_INDEX}/torch/", timeout=5):
            return True
    except OSError:
        return False


def _as_resolvable(path: Path, folder: Path) -> Path:
    """``path`` as uv can resolve it from here: as it is where the CPU index answers, else with
    Linux's torch taken from PyPI (the same release, without the "+cpu" label)."""
    if _cpu_index_reachable():
        return path
    text = "\n".join(line.replace("+cpu", "") for line in path.read_text().splitlines()
                     if CPU_INDEX not in line)
    copy = folder / path.name
    copy.write_text(text + "\n")
    return copy


def resolve(path: Path, target: str, python: str, folder: Path) -> subprocess.CompletedProcess:
    """``uv pip compile`` of ``path`` for ``target`` and ``python`` (macOS: version 14)."""
    command = [sys.executable, "-m", "uv", "pip", "compile", "--quiet", "--no-header",
               "--python-platform", target, "--python-version", python,
               "--index-strategy", "unsafe-best-match",  # pip's rule with an extra index
               str(_as_resolvable(path, folder))]
    # UV_PYTHON_DOWNLOADS: uv would otherwise try to download the named Python (and, where it
    # cannot reach GitHub, retry for seconds) though resolving needs no interpreter of it
    env = {**os.environ, "MACOSX_DEPLOYMENT_TARGET": MACOS, "UV_NO_CONFIG": "1",
           "UV_PYTHON_DOWNLOADS": "never"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600,
                          cwd=folder)


def _resolved(output: str) -> set[str]:
    return {_name(line) for line in output.splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", sorted(SUPPORTED))
@pytest.mark.parametrize("which", sorted(SETS))
def test_the_set_resolves_as_pinned(which: str, platform: str, python: str,
                                    tmp_path: Path) -> None:
    done = resolve(SETS[which], SUPPORTED[platform], python, tmp_path)
    assert done.returncode == 0, \
        f"the {which} set does not resolve for {platform}, Python {python}:\n{done.stderr}"
    unpinned = _resolved(done.stdout) - _pinned(SETS[which])
    if not _cpu_index_reachable():
        unpinned = {name for name in unpinned if not CUDA_LIBRARIES.match(name)}
    assert not unpinned, f"the {which} set leaves {sorted(unpinned)} unpinned on {platform}, " \
                         f"Python {python}"


@pytest.mark.parametrize("platform", sorted(UNSUPPORTED))
def test_a_platform_the_readme_calls_unsupported_does_not_resolve(platform: str,
                                                                  tmp_path: Path) -> None:
    """If it ever resolves, the README's advice to use Colab there is out of date."""
    readme = (REPO / "README.md").read_text()
    assert "Intel Mac" in readme, "the README no longer says which platforms are unsupported"
    done = resolve(SETS["student"], UNSUPPORTED[platform], PYTHONS[-1], tmp_path)
    assert done.returncode != 0, f"the student set now resolves for {platform}: update the README"
    assert "torch" in done.stderr, done.stderr
