"""`python -m bench`: run the benchmarks, print one table, write JSON under _build/bench/.

    python -m bench                  # everything, full sizes (many minutes: it rebuilds the
                                     # book serially and in parallel, and runs make test)
    python -m bench --only attention,site
    python -m bench --quick          # tiny sizes; what the smoke test runs
    python -m bench --only cpu-translation   # chapter 8's CPU translator (about 40 minutes)
    python -m bench --only baseline --baseline ../before   # clean builds against an old commit
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .attention_bench import AttentionSettings, run_attention_bench
from .book_bench import CORES, BookSettings, run_book_bench, run_test_bench
from .report import render
from .site_bench import page_weights

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("book", "training", "translation", "decoding", "attention", "site", "explorer",
            "numeric-paths", "test")
OPTIONAL_SECTIONS = ("baseline", "cpu-translation")  # run only when named in --only
# a module only chapter 6 imports, through all its imports: the "edit one chapter-specific
# module" rebuild (ablations.py is not one: chapter 5's norm_warmup imports ch6's recipes)
TOUCH_MODULE = (REPO / "code" / "transformer_course" / "experiments" / "ch6_training"
                / "generalisation.py")


def toc_pages(book: Path) -> list[str]:
    """Every page listed in the book's _toc.yml, root first (tools/toc_chapters.py reads it)."""
    sys.path.insert(0, str(REPO / "tools"))
    from toc_chapters import toc_files

    return toc_files(book)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections out of {', '.join(SECTIONS)}")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    parser.add_argument("--book", type=Path, default=REPO, help="folder with _config.yml")
    parser.add_argument("--touch-module", type=Path, default=TOUCH_MODULE,
                        help="a chapter-specific module to edit (harmlessly) and rebuild")
    parser.add_argument("--jobs", type=int, default=CORES,
                        help="workers of the parallel builds and of make test (default: cores)")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of an older commit, for the baseline section")
    parser.add_argument("--cache-inputs", default="", help="CACHE_INPUTS for make book")
    parser.add_argument("--repeats", type=int, default=3,
                        help="repeats of the book builds, training seeds and decoding "
                             "timings (attention timings take 7 rounds; make test runs once)")
    parser.add_argument("--out", type=Path, default=REPO / "_build" / "bench" / "results.json")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    known = SECTIONS + OPTIONAL_SECTIONS
    unknown = sorted(set(sections) - set(known))
    if unknown:
        parser.error(f"--only: unknown sections {unknown}; choose from {list(known)}")
    if "baseline" in sections and not (args.baseline and (args.baseline / "Makefile").is_file()):
        parser.error("the baseline section needs --baseline, a checkout with a Makefile")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1; got {args.repeats}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1; got {args.jobs}")

    results: dict = {"quick": args.quick, "repeats": args.repeats}
    if "book" in sections:
        results["book"] = run_book_bench(BookSettings(
            repo=REPO, book=args.book.resolve(), touch_module=args.touch_module.resolve(),
            cache_inputs=tuple(args.cache_inputs.split()), repeats=args.repeats,
            jobs=args.jobs))
    if "training" in sections:
        from .training_bench import run_training_bench

        results["training"] = run_training_bench(quick=args.quick, repeats=args.repeats)
    if "translation" in sections:
        from .translation_bench import run_translation_bench

        results["translation"] = run_translation_bench(quick=args.quick, repeats=args.repeats)
    if "cpu-translation" in sections:
        from .cpu_translation_bench import run_cpu_translation_bench

        results["cpu_translation"] = run_cpu_translation_bench(quick=args.quick)
    if "decoding" in sections:
        from .decoding_bench import run_decoding_bench

        results["decoding"] = run_decoding_bench(quick=args.quick, repeats=args.repeats)
    if "attention" in sections:
        settings = (AttentionSettings(batch=1, heads=2, d_k=8, lengths=(16,), repeats=2,
                                      matmul_n=128) if args.quick
                    else AttentionSettings())
        results["attention"] = run_attention_bench(settings)
    if "site" in sections:
        book = args.book.resolve()
        results["site"] = page_weights(book / "_build" / "html", toc_pages(book))
    if "explorer" in sections:
        from .explorer_bench import run_explorer_bench

        results["explorer"] = run_explorer_bench(args.book.resolve() / "_build" / "html",
                                                 quick=args.quick,
                                                 repeats=2 if args.quick else 5)
    if "baseline" in sections:
        from .baseline_bench import run_baseline_bench

        results["baseline"] = run_baseline_bench(
            args.book.resolve(), args.baseline.resolve(), Path(sys.prefix), args.jobs,
            args.repeats)
    if "numeric-paths" in sections and not args.quick:
        import toc_chapters  # tools/, on the path through toc_pages

        from .numeric_paths import run_numeric_paths_bench

        book = args.book.resolve()
        toc_pages(book)
        chapters = toc_chapters.chapters(book, notebooks_only=True)
        results["numeric_paths"] = run_numeric_paths_bench(book, chapters, args.jobs)
    if "test" in sections:  # last: after the book is built, as `make test` finds it in CI
        results["test"] = run_test_bench(REPO, jobs=args.jobs)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(render(results))
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
