"""The calibration file the trained claims' margins come from: every claim has room beyond its
calibrated draws, the draws CI checks are apart from them, and the runner records what a chapter
claims under each draw."""

from __future__ import annotations

import json
import math
import sys
import textwrap

import pytest
from site_utils import CHAPTER_HEADER, REPO

from transformer_course import calibration, stored

sys.path.insert(0, str(REPO / "tools"))
import other_cpus  # noqa: E402
import toc_chapters  # noqa: E402

from bench import calibration as runner  # noqa: E402

STATISTICS = calibration.statistics()


def test_the_calibration_covers_this_cpu_and_enough_simulated_others():
    assert calibration.runs()[0] == runner.NATIVE
    assert len(calibration.draws()) >= calibration.MIN_DRAWS
    for key, stat in STATISTICS.items():
        assert len(stat.values) == len(calibration.runs()), key


@pytest.mark.parametrize("key", sorted(k for k, s in STATISTICS.items() if s.claimed))
def test_every_trained_claim_has_room_beyond_its_calibrated_draws(key):
    stat = STATISTICS[key]
    assert not any(math.isnan(v) for v in stat.values), f"{key}: a run never got there"
    assert stat.has_room(), (f"{key} ({stat.text!r}): calibrated {stat.span()}, padded "
                             f"{stat.padded()}, but the claim says [{stat.low}, {stat.high}]")


def test_ci_checks_draws_the_margins_were_not_calibrated_on():
    assert not set(other_cpus.CHECK_DRAWS) & set(calibration.draws())
    # every CI setting is a draw; between them they take both numeric paths
    assert len(other_cpus.CHECK_DRAWS) == len(other_cpus.SETTINGS) >= 3
    taken = {part for name in other_cpus.SETTINGS for part in name.split("+")}
    assert set(other_cpus.PATHS) <= taken


def test_a_setting_joins_paths_and_a_draw():
    assert other_cpus.setting("aten-default+mkl-compatible+draw-7") == {
        "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE",
        "TRANSFORMER_COURSE_DRAW": "7"}
    for bad in ("draw-x", "aten", "draw-1+nope"):
        with pytest.raises(ValueError):
            other_cpus.setting(bad)


def test_a_chapter_is_calibrated_when_it_or_a_module_it_imports_records_a_trained_statistic(
        tmp_path):
    def chapter(name: str, code: str):
        path = tmp_path / f"{name}.md"
        path.write_text(CHAPTER_HEADER + f"\n```{{code-cell}} ipython3\n{code}\n```\n")
        return path

    # the chapter's own cell calls observe
    assert runner.has_trained_statistics(chapter("own", (
        "from transformer_course.claims import observe\nobserve('x', 1.0)")))
    # a chapter's page module makes the trained claims (chapter 7's does)
    assert runner.has_trained_statistics(chapter("page", (
        "from transformer_course.experiments.ch7_translation import (\n    page,\n)")))
    # importing the module that defines claim_trained records nothing
    assert not runner.has_trained_statistics(chapter("defines", (
        "from transformer_course.claims import claim, claim_trained\nclaim('t', True)")))
    # nor do the page's sibling modules, nor an exercise's unfinished code
    assert not runner.has_trained_statistics(chapter("sibling", (
        "from transformer_course.experiments.ch7_translation import recipe\nx = [(")))


def test_a_file_recalibrated_in_parts_records_where_each_part_was_made(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text("{}")
    earlier = {"cpu": "Zilog Z80", "cpu_capability": "AVX2", "torch": "2.5.0", "threads": 1}
    (tmp_path / "calibration.environment.json").write_text(json.dumps(earlier))
    runner.record_machines(path, {"07_b"}, {"06_a", "07_b"})
    record = json.loads((tmp_path / "calibration.environment.json").read_text())
    here = stored.machine_of(stored.environment())
    assert record["machines"] == {"06_a": "Zilog Z80 (AVX2)", "07_b": here}
    made_on = stored.StoredStudy("calibration", (6, 7), path, "", "").made_on()
    assert made_on.startswith("Zilog Z80 (AVX2): chapter 6; ") and ": chapter 7; torch" in made_on
    # recalibrating the other part later keeps the first part's machine
    runner.record_machines(path, {"06_a"}, {"06_a", "07_b"})
    record = json.loads((tmp_path / "calibration.environment.json").read_text())
    assert record["machines"] == {"06_a": here, "07_b": here}


def test_every_chapter_with_a_trained_claim_is_calibrated():
    chapters = toc_chapters.chapters(REPO, notebooks_only=True)
    calibrated = {c.stem[:2] for c in chapters if runner.has_trained_statistics(REPO / c)}
    assert calibrated == {stat.chapter[:2] for stat in STATISTICS.values()}


@pytest.mark.pipeline
def test_the_runner_records_every_trained_statistic_under_each_draw(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_COURSE_STRICT", "1")  # as a build in the same process leaves it
    chapter = tmp_path / "tiny.md"
    chapter.write_text(CHAPTER_HEADER + textwrap.dedent('''
        ```{code-cell} ipython3
        import torch
        from transformer_course.claims import claim_trained, observe
        torch.manual_seed(0)
        model = torch.nn.Linear(64, 1)
        observe("tiny-weight", model.weight.double().sum())  # the initial weights, as drawn
        x = torch.randn(64, 64)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(20):
            optimizer.zero_grad()
            loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
            loss.backward()
            optimizer.step()
        claim_trained("tiny-loss", "the loss falls below 100", loss.item(), high=100.0)
        ```
        '''))
    found, failures = runner.calibrate([chapter], [None, 1, 2], jobs=2, timeout=300)
    assert not failures
    assert set(found) == {"tiny-loss", "tiny-weight"}
    loss = found["tiny-loss"]
    assert (loss["low"], loss["high"], loss["chapter"]) == (None, 100.0, "tiny")
    assert len(loss["values"]) == 3 and all(v < 100 for v in loss["values"])
    weight = found["tiny-weight"]
    assert weight["high"] is None and weight["low"] is None
    assert len(set(weight["values"])) == 3  # this CPU and two simulated others: three draws


def test_a_run_is_shown_beside_its_draws_or_alone_before_any_calibration(tmp_path):
    path = tmp_path / "calibration.json"
    entry = {"chapter": "tiny", "text": "t", "low": None, "high": None}
    path.write_text(json.dumps({"runs": ["native", "draw 1", "draw 2"], "statistics": {
        "a": {**entry, "values": [1.7902, None, 1.7871]},
        "never": {**entry, "values": [None, None, None]}}}))
    drawn = calibration.beside("a", 5.0, path)
    assert drawn.span() == (1.7871, 1.7902) and len(drawn.values) == 3
    assert calibration.span_text("a", ".3f", path) == "1.787 to 1.790"
    alone = calibration.beside("new", 5.0, path)
    assert alone.values == (5.0,) and alone.span() == (5.0, 5.0) and not alone.claimed
    assert calibration.span_text("new", path=path) == "not yet calibrated"
    assert calibration.span_text("never", path=path) == "not yet calibrated"
