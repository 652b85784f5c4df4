"""Smoke test of the benchmark code at tiny sizes, so `make bench` cannot rot.

It checks that every section runs and that what it reports is consistent; it asserts no speed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from site_utils import throwaway_book

from bench.__main__ import main, toc_pages
from bench.attention_bench import PATHS, attention_flops
from bench.book_bench import executed_chapters
from bench.determinism import compare_executed
from bench.report import budgets, render, threads
from bench.stats import Budget, format_table
from bench.training_bench import speedup, time_to_target_at_least
from transformer_course.notebook import TIMED_SUFFIX, Timing

REPO = Path(__file__).resolve().parent.parent

CHAPTER = """# Tiny

```{{code-cell}} ipython3
import sys
sys.path.insert(0, {code!r})  # chapters run in a temporary folder
import tiny
print(tiny.VALUE)
```
"""


def test_thread_counts_read_as_words():
    assert (threads(1), threads(2)) == ("1 thread", "2 threads")


def test_summary_and_budget_verdicts():
    s = Timing.of([3.0, 1.0, 2.0])
    assert (s.median, s.min, s.max, s.repeats) == (2.0, 1.0, 3.0, 3)
    with pytest.raises(ValueError, match="samples"):
        Timing.of([])
    assert Budget("x", 1.0, 2.0, "s").met is True
    assert Budget("x", 3.0, 2.0, "s").as_row()[3] == "MISSED"
    assert Budget("x", None, 2.0, "s").as_row()[1] == "not measured"
    table = format_table(["a", "bb"], [["1", "2"], ["333", "4"]])
    assert table.splitlines()[1] == "---  --"


def _book_results(clean: float, re_executed: list[str]) -> dict:
    """A book section's results: two chapters of 100 s and 60 s, a 200 s serial build (so 40 s
    of Sphinx), 2 workers, an edit rebuild of 80 s whose slowest chapter took 30 s."""
    return {"jobs": 2, "clean": {"median": clean}, "clean_serial": {"median": 200.0},
            "chapters": {"a.md": {"median": 100.0}, "b.md": {"median": 60.0}},
            "edited_module": "code/m.py", "re_executed": re_executed,
            "after_module_edit": {"median": 80.0}, "slowest_affected_chapter_s": 30.0,
            "no_change": {"median": 0.3},
            "determinism": {"differences": [], "outputs": 3, "timed": 0}}


def test_book_budgets_follow_the_chapters_sphinx_and_the_edited_module():
    # clean: 1.1 x (160 s / 2 workers + 40 s) = 132 s; edit: 1.1 x (30 s + 40 s) = 77 s
    met = {b.figure: b for b in budgets({"book": _book_results(130.0, ["b.md"])})}
    assert met["clean make book, all chapters"].limit == pytest.approx(132.0)
    assert met["clean make book, all chapters"].met
    assert met["rebuild after editing m.py"].limit == pytest.approx(77.0)
    assert met["rebuild after editing m.py"].met is False
    assert met["chapters re-executed after editing m.py"].met
    missed = {b.figure: b for b in budgets({"book": _book_results(140.0, ["a.md", "b.md"])})}
    assert missed["clean make book, all chapters"].met is False
    assert missed["chapters re-executed after editing m.py"].met is False


def test_attention_flops_formula():
    assert attention_flops(2, 3, 5, 7) == 4 * 2 * 3 * 5 * 5 * 7


def test_executed_chapters_parses_build_log():
    log = ("/x/book/01_a.md: Executing notebook using local CWD [mystnb]\n"
           "/x/book/01_a.md: Executed notebook in 12.50 seconds [mystnb]\n"
           "/x/book/02_b.md: Executed notebook in 3.00 seconds [build_book]\n")
    assert executed_chapters(log) == {"01_a.md": 12.5, "02_b.md": 3.0}


def test_speedup_is_a_bound_when_the_seed_recipe_never_reaches_the_target():
    ours = {"time_to_target_s": 1.3, "accuracy": 1.0, "reached_by": "3/3 seeds"}
    seed_runs = [{"time_to_target_s": None, "seconds": s} for s in (8.1, 8.7, 9.2)]
    seed = {"time_to_target_s": None, "accuracy": 0.84,
            "training_seconds": Timing.of([8.1, 8.7, 9.2]).as_dict(),
            "time_to_target_at_least_s": time_to_target_at_least(seed_runs)}
    result = {"target": 1.0, "ours": ours, "seed": seed, "seed_over_ours": None,
              "seed_over_ours_at_least": seed["time_to_target_at_least_s"] / 1.3}
    assert speedup(result) == "≥ 6.7×: seed recipe at 84 % after 8.7 s; ours at 100 % in 1.3 s"
    assert speedup(result | {"seed_over_ours": 3.04}) == "3.0×"
    assert "did not reach" in speedup(result | {"ours": ours | {"time_to_target_s": None}})
    # a seed that reached the target counts with its time to target, the others with all theirs
    assert time_to_target_at_least([{"time_to_target_s": 2.0, "seconds": 5.0},
                                    {"time_to_target_s": None, "seconds": 4.0},
                                    {"time_to_target_s": None, "seconds": 6.0}]) == 4.0


def _executed(folder: Path, timed: float, value: int) -> Path:
    """A jupyter_execute folder with one notebook: a glued timing and a glued value."""
    def glued(name: str, data: object) -> dict:
        return {"output_type": "display_data", "data": {"text/plain": repr(data)},
                "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}}}

    cells = [{"cell_type": "markdown", "source": "# t", "metadata": {}},
             {"cell_type": "code", "source": "x", "execution_count": 1, "metadata": {},
              "id": f"random-{timed}",  # cell ids differ between any two reads: not compared
              "outputs": [glued("t" + TIMED_SUFFIX, timed), glued("value", value)]}]
    (folder / "book").mkdir(parents=True)
    (folder / "book" / "01.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}}))
    (folder / "book" / "01.glue.json").write_text(json.dumps(
        {"t" + TIMED_SUFFIX: {"data": timed}, "value": {"data": value}}))
    return folder


def test_determinism_check_ignores_timings_only(tmp_path):
    first = _executed(tmp_path / "a", timed=1.5, value=7)
    same = compare_executed(first, _executed(tmp_path / "b", timed=2.5, value=7))
    assert same == {"notebooks": 1, "outputs": 1, "timed": 1, "differences": []}
    other = compare_executed(first, _executed(tmp_path / "c", timed=1.5, value=8))
    assert other["differences"] == [
        "book/01.ipynb: code cell 1: output 2 (text/plain) differs at character 0: '7' against '8'",
        "book/01.glue.json: glued values differ: value"]


def test_determinism_check_reads_split_printed_text_as_one(tmp_path):
    def notebook(folder: Path, *texts: str) -> Path:
        outputs = [{"output_type": "stream", "name": "stdout", "text": t} for t in texts]
        cells = [{"cell_type": "code", "source": "print()", "execution_count": 1,
                  "metadata": {}, "outputs": outputs}]
        (folder / "book").mkdir(parents=True)
        (folder / "book" / "01.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}}))
        return folder

    whole = notebook(tmp_path / "a", "one\ntwo\n")
    assert compare_executed(whole, notebook(tmp_path / "b", "one\n", "two\n"))["differences"] == []
    assert compare_executed(whole, notebook(tmp_path / "c", "one\n", "tw0\n"))["differences"]


def _worker_in_this_process(*args: object) -> dict:
    """bench.attention_bench._run without its fresh process (about 1.8 s each, seven per quick
    run): the same worker code, called here. The process plumbing has a test of its own."""
    from bench import attention_worker

    return json.loads(json.dumps(attention_worker.main([str(a) for a in args])))


def test_attention_worker_answers_in_a_process_of_its_own():
    from bench.attention_bench import _run

    timing = _run("matmul", 16, 2, 1)
    assert timing["repeats"] == 2 and 0 < timing["min"] <= timing["median"] <= timing["max"]


@pytest.mark.pipeline
def test_quick_run_of_every_section(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("bench.attention_bench._run", _worker_in_this_process)
    book = throwaway_book(tmp_path / "book", CHAPTER.format(code=str(tmp_path / "book" / "code")),
                          name="tiny")
    (book / "code").mkdir()
    (book / "code" / "tiny.py").write_text("VALUE = 1\n")
    out = tmp_path / "results.json"
    sections = "book,attention,site" + (",training" if _has_training() else "")
    code = main(["--quick", "--repeats", "1", "--only", sections, "--book", str(book),
                 "--touch-module", str(book / "code" / "tiny.py"),
                 "--cache-inputs", str(book / "code"), "--out", str(out)])
    assert code == 0
    results = json.loads(out.read_text())
    assert (book / "code" / "tiny.py").read_text() == "VALUE = 1\n"  # edit restored
    for key in ("clean", "clean_serial", "no_change", "after_module_edit"):
        assert results["book"][key]["repeats"] == 1 and results["book"][key]["median"] > 0
    assert set(results["book"]["chapters"]) == {"tiny.md"}
    assert results["book"]["re_executed"] == ["tiny.md"]  # the edited module's one chapter
    assert results["book"]["determinism"]["differences"] == []
    assert results["book"]["determinism"]["notebooks"] == 1
    rows = results["attention"]["rows"]
    assert {(r["path"], r["T"]) for r in rows} == {(p, 16) for p in PATHS}
    assert all(r["median"] > 0 and r["gflops"] > 0 for r in rows)
    assert all(r["ratio_to_sdpa"] == 1.0 for r in rows if r["path"] == "sdpa")
    pages = {p["page"]: p for p in results["site"]["pages"]}
    assert set(pages) == set(toc_pages(book)) == {"book/index", "book/tiny"}
    assert all(p["own_bytes"] >= p["html_bytes"] > 0 for p in pages.values())
    printed = capsys.readouterr().out
    assert "Budgets" in printed and render(results) in printed
    assert [b.figure for b in budgets(results)][0] == "clean make book, all chapters"


def test_quick_translation_section(tmp_path, capsys):
    """Chapter 7's recipe on a tiny corpus: per-seed scores, and a budget row that misses when a
    seed falls short of 99 % (20 steps cannot reach it)."""
    out = tmp_path / "results.json"
    assert main(["--quick", "--repeats", "2", "--only", "translation", "--out", str(out)]) == 0
    results = json.loads(out.read_text())["translation"]
    assert [r["seed"] for r in results["runs"]] == [0, 1]
    for run in results["runs"]:
        assert run["wall_s"] > 0 and run["steps"] == 20
        assert run["losses_first_last"][1] < run["losses_first_last"][0]  # it learns
        assert 0 <= run["test"]["exact_match"] <= 100 and run["test"]["chrf"] > 0
    row = next(b for b in budgets({"translation": results}) if b.figure.startswith("translation"))
    assert not results["all_reached"] and row.met is False
    assert "Translation, chapter 7's recipe (20 steps" in capsys.readouterr().out


def test_quick_cpu_translation_section(tmp_path, capsys):
    """Chapter 8's CPU translator for 4 steps: a check before the first step and 2 after, each
    with minutes, tokens and both BLEUs, and a budget row that misses (4 steps reach no 15)."""
    out = tmp_path / "results.json"
    assert main(["--quick", "--only", "cpu-translation", "--out", str(out)]) == 0
    results = json.loads(out.read_text())["cpu_translation"]
    checks = results["checks"]
    assert [c["step"] for c in checks] == [0, 2, 4]
    assert checks[0]["tokens"] == 0 < checks[1]["tokens"] < checks[2]["tokens"]
    assert checks[0]["seconds"] <= checks[1]["seconds"] < checks[2]["seconds"]
    assert all(0 <= c["test_bleu"] < 15 and 0 <= c["validation_bleu"] < 15 for c in checks)
    row = next(b for b in budgets({"cpu_translation": results})
               if b.figure.startswith("CPU translator"))
    assert results["minutes_to_target"] == float("inf") and row.met is False
    assert results["minutes_to_aim"] == float("inf") and "inf" not in row.note  # "not reached"
    assert "CPU translator, chapter 8" in capsys.readouterr().out


def test_cli_rejects_unknown_section(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--only", "nope"])
    assert exit_.value.code == 2 and "nope" in capsys.readouterr().err


def _has_training() -> bool:
    return (REPO / "bench" / "training_bench.py").exists()


def test_quick_decoding_section(tmp_path, capsys):
    """KV-cache timings at two short lengths: a row per length with both timings, the same
    outputs with and without the cache, and the budget row at the longest length."""
    out = tmp_path / "results.json"
    assert main(["--quick", "--repeats", "1", "--only", "decoding", "--out", str(out)]) == 0
    results = json.loads(out.read_text())["decoding"]
    assert [r["positions"] for r in results["rows"]] == [4, 8]
    for r in results["rows"]:
        assert 0 < r["cached"]["min"] <= r["cached"]["median"] <= r["cached"]["max"]
        assert r["uncached_over_cached"] == pytest.approx(r["uncached"]["median"]
                                                          / r["cached"]["median"])
    assert results["identical_outputs"] is True
    row = next(b for b in budgets({"decoding": results}) if b.figure.startswith("cache faster"))
    assert row.figure == "cache faster at 8 positions"
    assert row.measured == pytest.approx(1 / results["rows"][-1]["uncached_over_cached"])
    assert "KV cache against re-running the prefix" in capsys.readouterr().out


def test_baseline_section_alternates_clean_builds_of_both_checkouts(tmp_path, capsys):
    """Two stand-in checkouts whose `make book` logs its run and one executed chapter: the rounds
    alternate which is built first, each build starts clean, and the ratio pairs the rounds."""
    log = tmp_path / "order.log"
    for name, chapter_s in (("before", 2.0), ("after", 1.0)):
        checkout = tmp_path / name
        (checkout / "_build" / "html").mkdir(parents=True)
        (checkout / "Makefile").write_text(
            "book:\n"
            f"\t@test ! -e _build/html || (echo stale build; exit 1)\n"
            f"\t@echo {name} >> {log}\n"
            f"\t@mkdir -p _build/html\n"
            f"\t@echo 'book/a.md: Executed notebook in {chapter_s} seconds [build_book]'\n")
    out = tmp_path / "results.json"
    assert main(["--only", "baseline", "--repeats", "2", "--book", str(tmp_path / "after"),
                 "--baseline", str(tmp_path / "before"), "--out", str(out)]) == 0
    result = json.loads(out.read_text())["baseline"]
    assert log.read_text().split() == ["before", "after", "after", "before"]
    assert result["clean_current"]["repeats"] == result["clean_baseline"]["repeats"] == 2
    assert result["chapters"] == {"a.md": {"current": 1.0, "baseline": 2.0}}
    assert result["current_over_baseline"] > 0
    assert render({"baseline": result}) in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--only", "baseline", "--out", str(out)])  # no --baseline given


def test_numeric_path_movements_measure_each_glued_number_against_the_native_run():
    from bench.numeric_paths import movements, render_numeric_paths

    def run(accuracy: float, seconds: float) -> dict:
        return {"ch": {"passed": True, "seconds": 1.0, "error": "",
                       "glued": {"acc": accuracy, "steps": 100, "t-timed": seconds,
                                 "word": "five"}}}

    runs = {"native": run(0.90, 1.0), "aten-default": run(0.85, 9.0),
            "mkl-compatible": run(0.93, 2.0)}
    rows = {r["key"]: r for r in movements(runs)}
    assert set(rows) == {"acc", "steps"}  # timings and words are not arithmetic
    assert rows["acc"]["moved"] == pytest.approx(0.05)
    assert rows["acc"]["relative"] == pytest.approx(0.05 / 0.90)
    assert rows["steps"]["moved"] == 0
    paths = {name: {c: {k: r[k] for k in ("passed", "seconds", "error")} for c, r in v.items()}
             for name, v in runs.items()}
    text = render_numeric_paths({"paths": paths, "movements": list(rows.values())})
    assert "acc" in text and "1 of 2 glued numbers did not move" in text
