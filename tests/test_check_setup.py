"""`python -m transformer_course.check_setup`: every check passes on a working set-up, and each can
fail, with the exit status saying so."""
from __future__ import annotations

import subprocess
import sys

import pytest

from transformer_course import check_setup


def test_a_working_set_up_passes_every_check_and_names_the_machine() -> None:
    done = subprocess.run([sys.executable, "-m", "transformer_course.check_setup"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Python ") and "CPU " in lines[0]
    results = [line for line in lines if line.startswith(("ok", "FAIL"))]
    assert len(results) == len(check_setup.CHECKS)
    assert all(line.startswith("ok") for line in results)
    import torch
    assert f"torch {torch.__version__}" in done.stdout


def test_a_module_that_will_not_import_fails_the_set_up(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(check_setup, "CHAPTER_MODULES", ("numpy", "no_such_module_here"))
    results = check_setup.run_checks()
    assert [r.passed for r in results] == [False]  # the rest need what is missing: skipped
    assert "no_such_module_here" in results[0].detail
    assert check_setup.main([]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_attention_that_differs_from_pytorchs_fails_the_parity_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import transformer_course.pytorch_parity as parity

    monkeypatch.setattr(parity, "load_torch_mha_weights", lambda ours, theirs: None)
    result = check_setup.check_parity()  # the two modules keep their own random weights
    assert not result.passed


def test_a_check_that_raises_is_reported_as_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def check_broken() -> check_setup.Check:
        raise OSError("disk on fire")

    monkeypatch.setattr(check_setup, "CHECKS", (check_setup.check_imports, check_broken))
    results = check_setup.run_checks()
    assert results[0].passed and not results[1].passed
    assert results[1].name == "broken" and "disk on fire" in results[1].detail
