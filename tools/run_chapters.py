"""Run chapters top to bottom in fresh kernels, each in a temporary folder, on a numeric path.

A chapter is a MyST source (``book/*.md``, read with jupytext) or a notebook (a download,
``_build/html/_sources/*.ipynb``). Each runs as a reader would run it: a fresh kernel whose working
folder is an empty temporary folder outside the repository, so it leans only on the installed
package. ``--strict`` makes every claim check raise (as in the build); ``--set NAME=VALUE`` picks
another numeric path (``ATEN_CPU_CAPABILITY=default``, ``MKL_CBWR=COMPATIBLE``) for the kernels,
and ``--draw K`` a simulated other CPU (``TRANSFORMER_COURSE_DRAW=K``, transformer_course.draws).

Prints one line per chapter (passed or the failing cell's error, seconds) and, with ``--glued``,
writes every chapter's glued numbers as JSON, so the numbers of two paths can be compared
(``bench/numeric_paths.py``). Exits 1 when a chapter fails.

    python tools/run_chapters.py --strict --set ATEN_CPU_CAPABILITY=default book/02_*.md
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lean_jsonschema  # noqa: E402
from kernels import unix_socket_kernel  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
STRICT_ENV = "TRANSFORMER_COURSE_STRICT"  # transformer_course.claims.STRICT_ENV
DRAW_ENV = "TRANSFORMER_COURSE_DRAW"  # transformer_course.draws.DRAW_ENV
GLUE_MIME = "text/plain"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Outcome:
    """How one chapter's run went."""

    chapter: str
    passed: bool
    seconds: float
    error: str = ""
    glued: dict[str, Any] = field(default_factory=dict)  # glue key -> plain number or text


def read(path: Path) -> Any:
    """The chapter as an nbformat notebook, from MyST Markdown or ``.ipynb``."""
    lean_jsonschema.load()  # before jupytext, which imports nbformat and so jsonschema
    import jupytext
    import nbformat

    if path.suffix == ".ipynb":
        return nbformat.read(path, as_version=4)
    return jupytext.read(path)


def glued_values(notebook: Any) -> dict[str, Any]:
    """Every number or text a notebook glued, by key (myst-nb keeps the key in the output's
    ``scrapbook`` metadata and prefixes the MIME types); figures and tables are left out."""
    import ast

    values: dict[str, Any] = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            info = output.get("metadata", {}).get("scrapbook") or {}
            prefix = info.get("mime_prefix", "")
            data = {mime[len(prefix):]: v for mime, v in output.get("data", {}).items()}
            if not info.get("name") or set(data) != {GLUE_MIME}:
                continue
            text = data[GLUE_MIME]
            try:
                values[info["name"]] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                values[info["name"]] = text
    return values


def run_one(path: str, timeout: int, settings: dict[str, str] | None = None) -> Outcome:
    """Run one chapter in a fresh kernel in an empty temporary folder, with ``settings`` added
    to the kernel's environment (a numeric path, a draw, strictness)."""
    lean_jsonschema.load()  # before nbclient, which imports jsonschema
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = read(Path(path))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chapter-run-") as folder, \
            unix_socket_kernel() as kernel:
        client = NotebookClient(notebook, km=kernel, timeout=timeout,
                                resources={"metadata": {"path": folder}})
        try:
            client.execute(cwd=folder, env={**os.environ, **(settings or {})})
        except CellExecutionError as error:
            lines = ANSI.sub("", str(error)).strip().splitlines()
            return Outcome(path, False, time.perf_counter() - start, "\n".join(lines[-12:]))
    return Outcome(path, True, time.perf_counter() - start, glued=glued_values(notebook))


def expected_seconds(path: str) -> float:
    """How long the chapter ``path`` (a source or its download) took, by the book's record
    (``_execution_seconds.yml``); 0 where it has none."""
    import yaml

    record = REPO / "_execution_seconds.yml"
    seconds = yaml.safe_load(record.read_text()) if record.is_file() else {}
    name = Path(path).with_suffix(".md").name
    return next((s for chapter, s in (seconds or {}).items() if Path(chapter).name == name), 0.0)


def run_many(runs: list[tuple[str, dict[str, str]]], jobs: int, timeout: int,
             ) -> Iterator[tuple[int, Outcome]]:
    """Run each (chapter, settings) of ``runs``, ``jobs`` at once, the longest chapters first;
    yields (index into ``runs``, outcome) as each finishes."""
    order = sorted(range(len(runs)), key=lambda i: expected_seconds(runs[i][0]), reverse=True)
    # Spawned, not forked: a caller that has run kernels itself (a pytest worker) holds threads,
    # and a forked child can inherit one of their locks held and wait on it forever.
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=spawn) as pool:
        futures = {pool.submit(run_one, runs[i][0], timeout, runs[i][1]): i for i in order}
        for future in as_completed(futures):
            yield futures[future], future.result()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="+", type=Path)
    parser.add_argument("--strict", action="store_true", help="claims raise, as in the build")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the kernels (a numeric path)")
    parser.add_argument("--draw", type=int, help="a simulated other CPU: TRANSFORMER_COURSE_DRAW")
    parser.add_argument("--jobs", type=int, default=1, help="chapters run at once")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a cell may take")
    parser.add_argument("--glued", type=Path, help="write the glued numbers here as JSON")
    args = parser.parse_args(argv)
    for assignment in args.set:
        name, _, value = assignment.partition("=")
        os.environ[name] = value
    if args.draw is not None:
        os.environ[DRAW_ENV] = str(args.draw)
        args.set.append(f"{DRAW_ENV}={args.draw}")
    if args.strict:
        os.environ[STRICT_ENV] = "1"
    else:
        os.environ.pop(STRICT_ENV, None)
    runs = [(str(path), {}) for path in args.chapters]
    outcomes = [outcome for _, outcome in sorted(run_many(runs, args.jobs, args.timeout),
                                                 key=lambda done: done[0])]
    path_name = " ".join(args.set) or "default numeric path"
    for outcome in outcomes:
        status = "passed" if outcome.passed else "FAILED"
        print(f"{outcome.chapter}: {status} in {outcome.seconds:.1f} s ({path_name})")
        if outcome.error:
            print("  " + outcome.error.replace("\n", "\n  "))
    if args.glued:
        args.glued.parent.mkdir(parents=True, exist_ok=True)
        args.glued.write_text(json.dumps({"settings": args.set,
                                          "outcomes": [asdict(o) for o in outcomes]}, indent=1))
    return 0 if all(outcome.passed for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
