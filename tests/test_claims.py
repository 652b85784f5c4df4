"""claim(): strict in the build (a failing claim stops it, naming claim, numbers and numeric
path), friendly in a reader's notebook (one line, and the chapter goes on)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from transformer_course import claims
from transformer_course.claims import ClaimError, claim, environment, numeric_path


@pytest.fixture
def strict(monkeypatch):
    monkeypatch.setenv(claims.STRICT_ENV, "1")


@pytest.fixture
def reader(monkeypatch):
    monkeypatch.delenv(claims.STRICT_ENV, raising=False)


def test_a_failing_claim_stops_a_strict_run_naming_claim_numbers_and_path(strict):
    with pytest.raises(ClaimError) as failure:
        claim("every seed aligns at least 0.95", 0.931 >= 0.95, worst_seed=0.931)
    message = str(failure.value)
    assert "every seed aligns at least 0.95" in message
    assert "0.931" in message
    assert torch.backends.cpu.get_cpu_capability() in message
    assert torch.__version__ in message


def test_a_holding_claim_is_silent_in_a_strict_run(strict, capsys):
    claim("two plus two is four", 2 + 2 == 4, total=4)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("holds", [True, False, np.bool_(False), torch.tensor(True)])
def test_a_reader_run_never_raises_and_reports_one_line(reader, capsys, holds):
    claim("accuracy above 0.9", holds, accuracy=0.87)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    assert "accuracy above 0.9" in lines[0] and "0.87" in lines[0]
    assert ("NOT" in lines[0]) is not bool(holds)


def test_arrays_and_tables_are_shown_short(reader, capsys):
    claim("shown", True, weights=torch.arange(100.0), table=pd.Series([0.123456, 1.0]))
    out = capsys.readouterr().out
    assert "..." in out and "0.1235" in out and len(out) < 700


@pytest.mark.parametrize("text", ["", "   ", None, 3])
def test_a_claim_must_say_what_it_claims(reader, text):
    with pytest.raises(TypeError, match="text"):
        claim(text, True)


def test_the_numeric_path_names_the_settings_that_change_kernels(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    env = environment()
    assert env["env"]["MKL_CBWR"] == "COMPATIBLE"
    assert env["threads"] == torch.get_num_threads()
    assert "MKL_CBWR=COMPATIBLE" in numeric_path(env)
    monkeypatch.delenv("MKL_CBWR")
    assert "MKL_CBWR" not in numeric_path()
