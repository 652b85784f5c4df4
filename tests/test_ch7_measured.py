"""Chapter 7's precomputed tables (``measured.py``) and their writer (``measure.py``).

The whole file costs about 2.5 CPU-hours, so the suite does not remeasure it. It checks instead
that the writer reproduces the stored file byte for byte, that each table's function returns a
table with the stored names (on a small corpus and a 4-step budget), that runs of the same
configuration stored in different tables agree, and it reruns one stored cell at full size.
"""

from __future__ import annotations

from typing import Any

import pytest

from transformer_course.experiments.ch7_translation import corpus, data, measure, measured, studies

SMALL = {"train": 2000, "validation": 30, "test": 30}  # every word seen in training
STEPS = 4


@pytest.fixture(scope="module")
def tiny_german() -> corpus.TranslationData:
    return corpus.prepare(data.split_numbers(**SMALL))


def keys(table: Any) -> Any:
    """The names a table holds, recursively (the chapter reads its cells by these names): dicts
    by their keys, a list of rows (MAIN) by its first row, anything else as a value."""
    if isinstance(table, dict):
        return {key: keys(item) for key, item in table.items()}
    if isinstance(table, list) and table and isinstance(table[0], dict):
        return [keys(table[0])]
    return "value"


def test_the_writer_reproduces_measured_py_byte_for_byte() -> None:
    assert measure.render(measure.stored()) == measure.MEASURED_PATH.read_text(encoding="utf-8")


def test_render_changes_with_a_table_and_rejects_a_wrong_set_of_tables() -> None:
    tables = measure.stored()
    changed = {**tables, "FRENCH": {"300 steps": {"test_exact": [1.0]}}}
    assert measure.render(changed) != measure.render(tables)
    with pytest.raises(ValueError, match="tables must hold exactly.*missing \\['FRENCH'\\]"):
        measure.render({k: v for k, v in tables.items() if k != "FRENCH"})
    with pytest.raises(ValueError, match="unknown \\['EXTRA'\\]"):
        measure.render({**tables, "EXTRA": 1})
    with pytest.raises(TypeError, match="tables"):
        measure.render([("MAIN", [])])


def test_every_stored_table_has_a_function() -> None:
    stored = {name for name in dir(measured) if name.isupper()}
    assert stored == set(measure.TABLES)


def test_the_command_line_refuses_bad_arguments(tmp_path) -> None:
    for argv in (["--only", "NOPE"], ["--seeds", "a"], ["--seeds", "-1"],
                 ["--seeds", "1"]):  # other seeds than the stored ones need --out
        with pytest.raises(SystemExit):
            measure.main(argv)
    with pytest.raises(ValueError, match="name must be one of"):
        measure.measure("NOPE")


@pytest.mark.parametrize("name", [n for n in measure.TABLES if n not in measure.OWN_DATA])
def test_each_table_function_returns_the_stored_names(name: str, tiny_german) -> None:
    function = measure.TABLES[name]
    extra: dict[str, Any] = {"seeds": (0,)}
    if name in ("BEAM_SHORT_BUDGET",):
        extra["budgets"] = (STEPS, STEPS + 2)
    else:
        extra["steps"] = STEPS
    table = function(tiny_german, **extra)
    stored = getattr(measured, name)
    if name == "BEAM_SHORT_BUDGET":  # keyed by budget: compare the budget-free part
        table = {k.split(" steps ")[1]: v for k, v in table.items() if k.startswith(f"{STEPS} ")}
        stored = {k.split(" steps ")[1]: v for k, v in stored.items() if k.startswith("150 ")}
    assert keys(table) == keys(stored)


def test_the_french_table_has_the_stored_names() -> None:
    prepared = corpus.prepare(data.split_numbers(**SMALL), "words", target_lang="fr")
    table = measure.french(prepared, seeds=(0,), budgets=(STEPS,))
    stored = measured.FRENCH["300 steps"]
    assert keys(table[f"{STEPS} steps"]) == keys(stored)
    with pytest.raises(ValueError, match="prepared must hold French targets"):
        measure.french(corpus.prepare(data.split_numbers(**SMALL)), seeds=(0,))


def test_the_extrapolation_table_has_the_stored_cells_and_names() -> None:
    table = measure.extrapolation(seeds=(0,), steps=STEPS,
                                  sizes={"train": 1000, "validation": 40, "test": 40})
    assert list(table) == list(measured.EXTRAPOLATION)  # the same cells, the same numbers added
    assert keys(table) == keys(measured.EXTRAPOLATION)


def test_added_numbers_lie_above_the_bound_outside_the_test_sets() -> None:
    split = data.extrapolation_split(100_000, train=1000, validation=40, test=40)
    extra = measure.numbers_above(split, 100_000, 3)
    assert len(extra) == 3 * 9 and extra.min() >= 100_000
    assert not set(extra.tolist()) & (set(split.test.tolist()) | set(split.test_shapes.tolist()))
    assert sorted(set(int(x) // measure.DIGIT_PLACE for x in extra)) == list(range(1, 10))


def test_runs_of_one_configuration_agree_across_tables() -> None:
    """The recipe appears in several tables, each measured separately: its deterministic figures
    (not its seconds) must be the same wherever it appears."""
    fields = ("exact_uniform", "exact_shapes", "perplexity", "reached_step")
    short = [measured.TABLE3_SHORT["baseline"], measured.SEGMENTATION_SHORT["morphemes"]]
    full = [measured.TABLE3_FULL["baseline"], measured.SCHEDULES["linear 0.003"]]
    for same in (short, full):
        assert [{f: cell[f] for f in fields} for cell in same[1:]] == [
            {f: same[0][f] for f in fields}] * (len(same) - 1)
    reached = measured.TABLE3_FULL["baseline"]["reached_step"]
    assert measured.SEGMENTATION_FULL["morphemes"]["reached_step"] == reached
    assert [row["reached_step"] for row in measured.MAIN] == reached
    assert measured.SEGMENTATION_FULL["morphemes"]["test_exact"] == [
        row["test"]["exact_match"] for row in measured.MAIN]


def test_one_stored_cell_remeasured_at_full_size() -> None:
    """TABLE3_SHORT's baseline, seed 0: the recipe for 200 steps on the chapter's data (about 10
    CPU s). Training is deterministic here; another CPU may round differently, hence the slack."""
    german = corpus.prepare(data.split_numbers())
    cell = measure.table3_short(german, seeds=(0,), variants=studies.TABLE3_VARIANTS[:1])
    stored = measured.TABLE3_SHORT["baseline"]
    assert cell["baseline"]["params"] == stored["params"]
    remeasured = cell["baseline"]
    assert remeasured["exact_uniform"][0] == pytest.approx(stored["exact_uniform"][0], abs=1.0)
    assert remeasured["perplexity"][0] == pytest.approx(stored["perplexity"][0], abs=0.01)
