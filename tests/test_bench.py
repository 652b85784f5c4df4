"""Smoke test of the benchmark code at tiny sizes, so `make bench` cannot rot.

It checks that every section runs and that what it reports is consistent; it asserts no speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from site_utils import throwaway_book

from bench.__main__ import main, toc_pages
from bench.attention_bench import PATHS, attention_flops
from bench.book_bench import executed_chapters
from bench.report import budgets, render
from bench.stats import Budget, format_table
from transformer_course.notebook import Timing

REPO = Path(__file__).resolve().parent.parent

CHAPTER = """# Tiny

```{code-cell} ipython3
import sys
sys.path.insert(0, "../code")
import tiny
print(tiny.VALUE)
```
"""


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


def test_attention_flops_formula():
    assert attention_flops(2, 3, 5, 7) == 4 * 2 * 3 * 5 * 5 * 7


def test_executed_chapters_parses_build_log():
    log = ("/x/book/01_a.md: Executing notebook using local CWD [mystnb]\n"
           "/x/book/01_a.md: Executed notebook in 12.50 seconds [mystnb]\n"
           "/x/book/02_b.md: Executed notebook in 3.00 seconds [mystnb]\n")
    assert executed_chapters(log) == {"01_a.md": 12.5, "02_b.md": 3.0}


@pytest.mark.build
def test_quick_run_of_every_section(tmp_path, capsys):
    book = throwaway_book(tmp_path / "book", CHAPTER, name="tiny")
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
    for key in ("clean", "no_change", "after_module_edit"):
        assert results["book"][key]["repeats"] == 1 and results["book"][key]["median"] > 0
    assert set(results["book"]["chapters"]) == {"tiny.md"}
    rows = results["attention"]["rows"]
    assert {(r["path"], r["T"]) for r in rows} == {(p, T) for p in PATHS for T in (16, 32)}
    assert all(r["median"] > 0 and r["gflops"] > 0 for r in rows)
    assert all(r["ratio_to_sdpa"] == 1.0 for r in rows if r["path"] == "sdpa")
    pages = {p["page"]: p for p in results["site"]["pages"]}
    assert set(pages) == set(toc_pages(book)) == {"book/index", "book/tiny"}
    assert all(p["own_bytes"] >= p["html_bytes"] > 0 for p in pages.values())
    printed = capsys.readouterr().out
    assert "Budgets" in printed and render(results) in printed
    assert [b.figure for b in budgets(results)][0] == "clean make book, all chapters"


def test_cli_rejects_unknown_section():
    proc = subprocess.run([sys.executable, "-m", "bench", "--only", "nope"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown sections" in proc.stderr


def _has_training() -> bool:
    return (REPO / "bench" / "training_bench.py").exists()
