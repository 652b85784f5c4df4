"""tools/cache_guard.py: the execution cache is cleared exactly when the code changes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from site_utils import REPO

SCRIPT = REPO / "tools" / "cache_guard.py"
spec = importlib.util.spec_from_file_location("cache_guard", SCRIPT)
cache_guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cache_guard)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small code folder and pin file, with the working directory at their parent."""
    code = tmp_path / "code" / "pkg"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("VALUE = 1\n")
    (code / "model.py").write_text("def f():\n    return 2\n")
    (tmp_path / "requirements.txt").write_text("numpy==2.0\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _fingerprint() -> str:
    return cache_guard.fingerprint([Path("code"), Path("requirements.txt")])


def _cache(project: Path) -> Path:
    cache = project / "_build" / ".jupyter_cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "global.db").write_text("cached")
    return cache


def test_fingerprint_is_stable_when_nothing_changes(project: Path) -> None:
    first = _fingerprint()
    assert len(first) == 64 and first == _fingerprint()


@pytest.mark.parametrize("change", ["edit", "add", "rename", "pins"])
def test_fingerprint_changes_with_the_sources(project: Path, change: str) -> None:
    before = _fingerprint()
    model = project / "code" / "pkg" / "model.py"
    if change == "edit":
        model.write_text("def f():\n    return 3\n")
    elif change == "add":
        (project / "code" / "pkg" / "extra.py").write_text("")
    elif change == "rename":
        model.rename(model.with_name("model2.py"))
    else:
        (project / "requirements.txt").write_text("numpy==2.1\n")
    assert _fingerprint() != before


def test_fingerprint_ignores_build_litter(project: Path) -> None:
    before = _fingerprint()
    litter = project / "code" / "pkg" / "__pycache__"
    litter.mkdir()
    (litter / "model.cpython-311.pyc").write_bytes(b"\0\1")
    egg = project / "code" / "pkg.egg-info"
    egg.mkdir()
    (egg / "SOURCES.txt").write_text("x")
    (project / "code" / "pkg" / "notes.png").write_bytes(b"png")
    assert _fingerprint() == before


def test_cache_cleared_only_when_code_changes(project: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    cache = _cache(project)
    args = [str(cache), "code", "requirements.txt"]
    assert cache_guard.main(args) == 0  # first run: no stamp yet, so the cache is not trusted
    assert not cache.exists()
    stamp = cache.parent / ".jupyter_cache.code-hash"
    assert stamp.read_text().strip() == _fingerprint()
    cache = _cache(project)
    capsys.readouterr()
    for _ in range(2):
        assert cache_guard.main(args) == 0
        assert (cache / "global.db").exists(), "unchanged code must keep the cache"
    assert capsys.readouterr().out == ""
    (project / "code" / "pkg" / "model.py").write_text("def f():\n    return 4\n")
    assert cache_guard.main(args) == 0
    assert not cache.exists()
    assert "code changed" in capsys.readouterr().out
    assert stamp.read_text().strip() == _fingerprint()


def test_missing_cache_is_fine(project: Path) -> None:
    cache = project / "_build" / ".jupyter_cache"
    assert cache_guard.main([str(cache), "code"]) == 0
    assert (project / "_build" / ".jupyter_cache.code-hash").is_file()


def test_bad_arguments(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cache_guard.main([]) == 2
    assert "Usage" in capsys.readouterr().err
    assert cache_guard.main(["_build/.jupyter_cache"]) == 2
    assert cache_guard.main(["_build/.jupyter_cache", "code", "nowhere"]) == 2
    assert "no such path: nowhere" in capsys.readouterr().err
    assert not (project / "_build").exists(), "bad arguments must not write anything"


def test_command_line(project: Path) -> None:
    cache = _cache(project)
    bad = subprocess.run([sys.executable, str(SCRIPT), str(cache), "missing"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no such path: missing" in bad.stderr
    assert (cache / "global.db").exists()
    good = subprocess.run([sys.executable, str(SCRIPT), str(cache), "code"],
                          capture_output=True, text=True)
    assert good.returncode == 0 and "cleared" in good.stdout
    assert not cache.exists()
