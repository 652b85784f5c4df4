"""The processes the fresh-environment tests start (tests/fresh_envs.py), and those the Makefile's
targets start, write the bytecode of what they import, whatever the shell says: every
environment is installed without it (pip --no-compile)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import fresh_envs

ROOT = Path(__file__).resolve().parents[1]


IMPORT = [sys.executable, "-c", "import probe_module"]


def _import_in(folder: Path, env: dict[str, str], command: list[str] = IMPORT,
               cwd: Path | None = None) -> list[Path]:
    """Import a new module from ``folder`` in a fresh process (``command``, run in ``cwd``,
    defaulting to ``folder``); the bytecode files it left."""
    folder.mkdir()
    (folder / "probe_module.py").write_text("VALUE = 1\n")
    subprocess.run(command, cwd=cwd or folder, env=env, check=True, timeout=60,
                   capture_output=True)
    return list(folder.glob("__pycache__/probe_module.*.pyc"))


def test_a_fresh_environment_process_writes_bytecode_the_shell_would_not(tmp_path,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert _import_in(tmp_path / "shell", dict(os.environ)) == []  # what the variable does
    assert len(_import_in(tmp_path / "fresh", fresh_envs.environ())) == 1


def test_the_environment_keeps_the_shells_and_adds_the_extras(monkeypatch) -> None:
    monkeypatch.setenv("SOME_SETTING", "kept")
    env = fresh_envs.environ(TRANSFORMER_COURSE_STRICT="")
    assert env["SOME_SETTING"] == "kept" and env["TRANSFORMER_COURSE_STRICT"] == ""
    assert env["PATH"] == os.environ["PATH"]


def test_the_makefiles_commands_write_bytecode_the_shell_would_not(tmp_path) -> None:
    # a target of a makefile that includes the course's: its commands get make's environment
    folder, probe = tmp_path / "probe", tmp_path / "probe.mk"
    probe.write_text(f"include {ROOT / 'Makefile'}\n"
                     f"probe-import:\n\tcd {folder} && {shlex.join(IMPORT)}\n")
    make = ["make", "--no-print-directory", "-f", str(probe), "probe-import"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    assert len(_import_in(folder, env, make, cwd=ROOT)) == 1
