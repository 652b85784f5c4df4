"""The registry of stored studies covers every data file, each with its environment record and
a regeneration command that exists."""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import pytest

from transformer_course import stored
from transformer_course.claims import ClaimError, environment

DATA_SUFFIXES = {".csv", ".json"}


def data_files() -> set:
    return {p for p in stored.EXPERIMENTS.parent.rglob("*") if p.suffix in DATA_SUFFIXES
            and not p.name.endswith(".environment.json")}


def test_every_stored_data_file_is_a_registered_study():
    registered = {s.path for s in stored.STUDIES.values()}
    companions = {c for s in stored.STUDIES.values() for c in s.companions}
    assert data_files() == registered | {c for c in companions if c.suffix in DATA_SUFFIXES}
    assert all(c.exists() for c in companions)


@pytest.mark.parametrize("name", sorted(stored.STUDIES))
def test_each_study_records_where_it_was_made(name):
    env = stored.study(name).environment()
    assert set(environment()) <= set(env)
    assert env["recorded"] is True  # written by the study's own command
    made_on = stored.study(name).made_on()
    assert env.get("gpu", env["cpu_capability"]) in made_on
    assert env["torch"].split("+")[0] in made_on


@pytest.mark.parametrize("name", sorted(stored.STUDIES))
def test_each_command_names_a_runnable_module(name):
    command = stored.study(name).command.split()
    assert command[:2] == ["python", "-m"]
    spec = importlib.util.find_spec(command[2])
    assert spec is not None and spec.origin.endswith(".py")
    assert "__main__" in open(spec.origin, encoding="utf-8").read()


def test_record_environment_writes_this_process_beside_the_data(tmp_path):
    data = tmp_path / "sweep.csv"
    data.write_text("a\n1\n")
    record = stored.record_environment(data)
    assert record == tmp_path / "sweep.environment.json"
    written = json.loads(record.read_text())
    assert written["recorded"] is True and written["torch"] == environment()["torch"]


def test_a_chapter_table_lists_only_that_chapters_studies(monkeypatch):
    """Three real studies moved to chapters 1, 2 and both: each table holds its own."""
    first, second, both = (dataclasses.replace(study, chapters=chapters) for study, chapters in
                           zip(list(stored.STUDIES.values())[:3], [(1,), (2,), (1, 2)],
                               strict=True))
    monkeypatch.setattr(stored, "STUDIES", {s.name: s for s in (first, second, both)})
    assert list(stored.studies_table(1)["study"]) == [first.name, both.name]
    assert list(stored.studies_table(2)["study"]) == [second.name, both.name]
    assert stored.studies_table(3).empty and len(stored.studies_table()) == 3


@pytest.mark.parametrize("name", sorted(n for n, s in stored.STUDIES.items() if s.claims))
def test_what_the_pages_say_about_a_study_holds_on_its_data(name):
    claims = stored.study(name).data_claims()
    assert claims, f"{name} names a claims function that checks nothing"
    failing = [str(c) for c in claims if not c.holds]
    assert not failing, failing


def test_a_regeneration_stops_when_its_new_data_no_longer_bears_the_prose_out(monkeypatch):
    name = next(n for n, s in stored.STUDIES.items() if s.claims)
    monkeypatch.setattr(stored.StoredStudy, "data_claims", lambda self: [
        stored.data_claim("holds", True), stored.data_claim("every seed finished", False,
                                                            steps=[100, None])])
    with pytest.raises(ClaimError, match="every seed finished"):
        stored.check_data_claims(name)


def test_an_unknown_study_is_refused():
    with pytest.raises(ValueError, match="name"):
        stored.study("no-such-study")


def test_the_built_package_carries_every_stored_study(tmp_path):
    """A non-editable install (Colab's, a student's `pip install .`) has each study's data,
    environment record and companions (chapter 8's stored models): the wheel pip builds from
    this checkout holds them."""
    import subprocess
    import sys
    import zipfile

    from site_utils import package_source

    source = package_source(tmp_path / "source")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("transformer_course-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    root = stored.EXPERIMENTS.parents[1]  # the folder holding transformer_course/
    for study in stored.STUDIES.values():
        for path in (study.path, stored.environment_path(study.path), *study.companions):
            assert path.relative_to(root).as_posix() in inside, f"{study.name}: {path.name}"
