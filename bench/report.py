"""Render benchmark results as plain-text tables, with the budget table last."""

from __future__ import annotations

import math
from pathlib import Path

from .stats import Budget, format_table

MB = 1e6


def _s(d: dict) -> str:
    return f"{d['median']:.2f} s [{d['min']:.2f}, {d['max']:.2f}] (n={d['repeats']})"


def threads(count: int) -> str:
    """'1 thread', '2 threads'."""
    return f"{count} thread" + ("" if count == 1 else "s")


def _workers(book: dict) -> str:
    return f"{book['jobs']} chapters at a time, 1 thread each"


def _executed_seconds(book: dict) -> float:
    """The chapters' summed execution: each one's median in the serial builds."""
    return sum(c["median"] for c in book["chapters"].values())


def sphinx_seconds(book: dict) -> float:
    """What a clean serial build spends besides executing chapters (Sphinx, mostly): its median
    time less the chapters' summed execution."""
    return book["clean_serial"]["median"] - _executed_seconds(book)


def budgets(results: dict) -> list[Budget]:
    """The budget rows the results allow (figures not measured in this run show as such)."""
    rows = []
    book = results.get("book")
    sphinx = book and sphinx_seconds(book)
    per_worker = book and _executed_seconds(book) / max(book["jobs"], 1)
    rows.append(Budget("clean make book, all chapters", book and book["clean"]["median"],
                       book and round(1.1 * (per_worker + sphinx), 1), "s",
                       f"median; 1.1 x (chapters' execution / {book['jobs']} + Sphinx "
                       f"{sphinx:.1f} s); {_workers(book)}" if book else
                       "1.1 x (chapters' execution / workers + Sphinx)"))
    if book:
        name, executed = Path(book["edited_module"]).name, book["re_executed"]
        rows.append(Budget(f"chapters re-executed after editing {name}", len(executed), 1, "",
                           ", ".join(executed) or "none"))
        rows.append(Budget(f"rebuild after editing {name}", book["after_module_edit"]["median"],
                           round(1.1 * (book["slowest_affected_chapter_s"] + sphinx), 1), "s",
                           f"median; 1.1 x (slowest affected chapter "
                           f"{book['slowest_affected_chapter_s']:.1f} s + Sphinx); "
                           f"{_workers(book)}"))
    else:
        rows.append(Budget("chapters re-executed after editing a chapter-specific module", None,
                           1, ""))
        rows.append(Budget("rebuild after editing a chapter-specific module", None, None, "s",
                           "1.1 x (slowest affected chapter + Sphinx)"))
    rows.append(Budget("no-change rebuild", book and book["no_change"]["median"], 3, "s",
                       "median; executes nothing"))
    determinism = book and book["determinism"]
    rows.append(Budget("outputs differing, serial vs parallel build",
                       determinism and len(determinism["differences"]), 0, "",
                       f"of {determinism['outputs']} outputs; {determinism['timed']} -timed "
                       "glue values not compared" if determinism else ""))
    test = results.get("test")
    rows.append(Budget("make test after the book is built", test and test["seconds"], 150, "s",
                       f"pytest -n {test['jobs']}: {test['summary']}" if test else ""))
    training = results.get("training")
    if training:
        from .training_bench import speedup

        copy = training["copy"]
        rows.append(Budget("copy task to 100 % held-out", copy["ours"]["time_to_target_s"], 3, "s",
                           f"1 thread; seed / ours: {speedup(copy)}"))
        rev = training["reverse"]
        rows.append(Budget("reverse task to >= 99 %", rev["ours"]["time_to_target_s"], 30, "s",
                           f"held-out accuracy {rev['ours']['accuracy']:.3f}"))
    else:
        rows.append(Budget("copy task to 100 % held-out", None, 3, "s"))
        rows.append(Budget("reverse task to >= 99 %", None, 30, "s"))
    translation = results.get("translation")
    rows.append(Budget(
        "translation: every seed >= 99 % test exact, training time", translation
        and (translation["slowest_training_s"] if translation["all_reached"] else float("inf")),
        60, "s", (f"slowest of {len(translation['runs'])} seeds, 1 thread, "
                  f"{translation['steps']} steps; worst test exact match "
                  f"{translation['worst_test_exact']:.2f} %") if translation else ""))
    cpu = results.get("cpu_translation")
    if cpu:
        rows.append(Budget(f"CPU translator: minutes to {cpu['target_bleu']:g} test BLEU",
                           cpu["minutes_to_target"], cpu["budget_minutes"], "min",
                           f"{threads(cpu['threads'])}; {cpu['aim_bleu']:g} (the aim) "
                           + (f"after {cpu['minutes_to_aim']:.1f} min"
                              if math.isfinite(cpu["minutes_to_aim"]) else "not reached")
                           + f"; last check {cpu['checks'][-1]['test_bleu']:.1f}"))
    decoding = results.get("decoding")
    if decoding:
        from .decoding_bench import cached_over_uncached

        positions, ratio = cached_over_uncached(decoding)
        rows.append(Budget(f"cache faster at {positions} positions", ratio, 1, "x",
                           f"cached / uncached greedy time per position, medians; outputs "
                           f"{'identical' if decoding['identical_outputs'] else 'DIFFERENT'}"))
    else:
        rows.append(Budget("cache faster at 128 positions", None, 1, "x",
                           "cached / uncached greedy time per position"))
    attention = results.get("attention")
    fast = [r for r in attention["rows"] if r["path"] == "fast"] if attention else []
    worst = max(fast, key=lambda r: r["ratio_to_sdpa"]) if fast else None
    rows.append(Budget("package fast path / SDPA time", worst and worst["ratio_to_sdpa"], 1.1,
                       "x", f"median of paired per-round ratios, worst over T (at T={worst['T']});"
                       f" {threads(attention['settings']['threads'])}" if worst else ""))
    explorer = results.get("explorer")
    rows.append(Budget("first translation in the page", explorer and explorer["median_ms"], 200,
                       "ms", f"median of {explorer['repeats']} page loads, headless Chromium; "
                       f"{explorer['page']}" if explorer else ""))
    site = results.get("site")
    chapters = [p for p in site["pages"] if p["page"] != "book/index"] if site else []
    heaviest = max(chapters, key=lambda p: p["own_bytes"]) if chapters else None
    rows.append(Budget("heaviest chapter page", heaviest and heaviest["own_bytes"] / MB, 1.5, "MB",
                       f"{heaviest['page']}: HTML + images" if heaviest else ""))
    return rows


def render(results: dict) -> str:
    parts = []
    book = results.get("book")
    if book:
        rows = [["clean make book, serial (MyST-NB, one chapter at a time, 1 thread)",
                 _s(book["clean_serial"])],
                [f"clean make book, parallel ({_workers(book)})", _s(book["clean"])],
                ["  serial / parallel (median of paired rounds)",
                 f"{book['serial_over_parallel']:.2f}x"],
                [f"rebuild after editing {book['edited_module']} "
                 f"(re-executed: {', '.join(book['re_executed']) or 'none'})",
                 _s(book["after_module_edit"])],
                ["no-change rebuild", _s(book["no_change"])]]
        serial, parallel = book["chapters"], book.get("chapters_parallel", {})
        rows += [[f"  execute {name}: alone | beside another",
                  f"{_s(t)} | {_s(parallel[name]) if name in parallel else '-'}"]
                 for name, t in serial.items()]
        d = book["determinism"]
        verdict = "identical" if not d["differences"] else \
            f"{len(d['differences'])} differ:\n    " + "\n    ".join(d["differences"])
        parts.append("Book\n" + format_table(["figure", "median [min, max]"], rows)
                     + f"\nSerial against parallel build, {d['notebooks']} executed notebooks, "
                       f"{d['outputs']} outputs ({d['timed']} -timed glue values not compared): "
                       + verdict)
    if results.get("baseline"):
        from .baseline_bench import render_baseline

        parts.append(render_baseline(results["baseline"]))
    test = results.get("test")
    if test:
        parts.append(f"make test (pytest -n {test['jobs']}): {test['seconds']:.1f} s, exit "
                     f"{test['returncode']}: {test['summary']}")
    training = results.get("training")
    if training:
        from .training_bench import render_training

        parts.append(render_training(training))
    translation = results.get("translation")
    if translation:
        from .translation_bench import render_translation

        parts.append(render_translation(translation))
    if results.get("cpu_translation"):
        from .cpu_translation_bench import render_cpu_translation

        parts.append(render_cpu_translation(results["cpu_translation"]))
    decoding = results.get("decoding")
    if decoding:
        from .decoding_bench import render_decoding

        parts.append(render_decoding(decoding))
    attention = results.get("attention")
    if attention:
        s, mm = attention["settings"], attention["matmul"]
        rows = [[r["T"], r["path"], f"{r['median'] * 1e3:.2f}", f"{r['min'] * 1e3:.2f}",
                 f"{r['max'] * 1e3:.2f}", f"{r['peak_mib']:.0f}", f"{r['gflops']:.1f}",
                 f"{r['fraction_of_matmul']:.2f}", f"{r['ratio_to_sdpa']:.2f}"]
                for r in attention["rows"]]
        parts.append(
            f"Attention (B={s['batch']}, h={s['heads']}, d_k={s['d_k']}, float32, "
            f"{threads(s['threads'])}; matmul {mm['n']}x{mm['n']}: {mm['gflops']:.1f} GFLOP/s)\n"
            + format_table(["T", "path", "median ms", "min ms", "max ms", "peak MiB", "GFLOP/s",
                            "of matmul", "/ sdpa"], rows))
    if results.get("numeric_paths"):
        from .numeric_paths import render_numeric_paths

        parts.append(render_numeric_paths(results["numeric_paths"]))
    site = results.get("site")
    if site:
        rows = [[p["page"], f"{p['html_bytes'] / 1e3:.0f}", p["images"],
                 f"{p['image_bytes'] / 1e3:.0f}", f"{p['own_bytes'] / 1e3:.0f}"]
                for p in site["pages"]]
        rows.append([f"shared CSS/JS ({site['shared_assets']} files, counted once)", "", "",
                     "", f"{site['shared_assets_bytes'] / 1e3:.0f}"])
        parts.append("Site\n" + format_table(["page", "HTML kB", "images", "images kB",
                                               "page kB"], rows))
    parts.append("Budgets\n" + format_table(["figure", "measured", "budget", "verdict", "note"],
                                             [b.as_row() for b in budgets(results)]))
    return "\n\n".join(parts)
