"""claim(): strict in the build (a failing claim stops it, naming claim, numbers and numeric
path), friendly in a reader's notebook (one line, and the chapter goes on); claim_trained():
bounds that must hold for every calibrated draw."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from transformer_course import calibration, claims
from transformer_course.claims import (
    ClaimError,
    claim,
    claim_trained,
    environment,
    numeric_path,
    observe,
)


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


# --- trained claims: bounds that hold for every calibrated draw -----------------------------


@pytest.fixture
def calibrated(tmp_path, monkeypatch):
    """A calibration file with one statistic: stopping steps 100..140 over five runs, claimed
    within [50, 200]."""
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"runs": ["native", "draw 1", "draw 2", "draw 3", "draw 4"],
                                "statistics": {"ch0-steps": {
                                    "chapter": "00_test", "text": "about a hundred steps",
                                    "low": 50, "high": 200,
                                    "values": [100, 110, 140, 120, 130]}}}))
    monkeypatch.setattr(calibration, "CALIBRATION_PATH", path)
    return path


def test_a_calibrated_trained_claim_that_holds_is_silent_in_a_strict_run(strict, calibrated,
                                                                           capsys):
    claim_trained("ch0-steps", "about a hundred steps", 130, low=50, high=200)
    assert capsys.readouterr().out == ""


def test_a_trained_value_outside_its_bounds_stops_a_strict_run(strict, calibrated):
    with pytest.raises(ClaimError) as failure:
        claim_trained("ch0-steps", "about a hundred steps", 230, low=50, high=200)
    assert "230" in str(failure.value) and "about a hundred steps" in str(failure.value)


def test_a_run_that_never_got_there_fails_its_bounds(strict, calibrated):
    with pytest.raises(ClaimError):
        claim_trained("ch0-steps", "about a hundred steps", None, low=50, high=200)


@pytest.mark.parametrize("key, low, high", [("ch0-unknown", 50, 200), ("ch0-steps", 60, 200),
                                            ("ch0-steps", 50, None)])
def test_a_strict_run_stops_on_an_uncalibrated_claim_or_changed_bounds(strict, calibrated, key,
                                                                       low, high):
    with pytest.raises(ClaimError, match="calibrat"):
        claim_trained(key, "about a hundred steps", 130, low=low, high=high)


def test_a_reader_sees_the_calibrated_span_beside_their_value(reader, calibrated, capsys):
    claim_trained("ch0-steps", "about a hundred steps", 230, low=50, high=200)
    line = capsys.readouterr().out
    assert "NOT" in line and "230" in line and "100" in line and "140" in line
    claim_trained("ch0-unknown", "not calibrated yet", 1.0, low=0)  # a reader never stops
    assert "holds" in capsys.readouterr().out


def test_a_calibration_run_records_each_statistic_with_its_bounds(reader, tmp_path,
                                                                  monkeypatch, capsys):
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv(calibration.RECORD_ENV, str(record))
    claim_trained("ch0-steps", "about a hundred steps", np.int64(120), low=50, high=200)
    observe("ch0-uniform-steps", None)
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert rows[0]["key"] == "ch0-steps" and rows[0]["value"] == 120
    assert (rows[0]["low"], rows[0]["high"]) == (50, 200)
    assert rows[1]["key"] == "ch0-uniform-steps" and rows[1]["value"] is None
    assert rows[1]["low"] is None and rows[1]["high"] is None


def test_a_trained_claim_needs_a_bound_and_a_key(reader):
    with pytest.raises(ValueError, match="low"):
        claim_trained("ch0-steps", "unbounded", 1.0)
    with pytest.raises(ValueError, match="key"):
        claim_trained("two words", "a key with a space", 1.0, low=0)


@pytest.mark.parametrize("values, low, high, room", [
    ([100, 110, 140], 50, 200, True),   # padded 80..160
    ([100, 110, 140], 90, 200, False),  # padded span reaches below 90
    ([1.0, 1.0, 1.0], 0.99, None, True),  # a value that never moved
    ([4, 4, 4], 4, None, False),  # every draw on the bound: the next may fall off it
    ([0, 0, 0], None, 0, False),
    ([100, 110, 140], 100, 140, False),  # on the bounds, with a width to pad by
    ([1.0, float("nan")], 0.5, None, False),  # a run that never got there
])
def test_room_means_the_padded_span_lies_inside_the_bounds(values, low, high, room):
    stat = calibration.Statistic("k", "00", "text", tuple(values), low, high)
    assert stat.has_room() is room
