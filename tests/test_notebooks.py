"""A chapter runs again in a fresh kernel outside the repository and glues what the build glued.

The book build executed each chapter once, in a temporary folder (``run_in_temp`` in _config.yml;
``_build/jupyter_execute/<doc>.glue.json`` holds its glued outputs); here each chapter with code
cells runs again, in a new kernel whose working directory is another temporary folder, so it can
rely only on the installed package. Every glued value must then be identical to the build's --
numbers' text and figures' PNG bytes alike -- except wall-clock measurements, whose keys end in
``TIMED_SUFFIX``. Two executions, same page.

Except the chapters of ``RERUN_BY_BENCH``: the two that train models for a minute or more each.
Re-running them here would cost more than half of ``make test``'s time budget (issue 15: 150 s
on two cores). Their second execution is ``make bench``'s: it builds the book twice (serially and
in parallel) and compares every output of every chapter, not only the glued ones
(bench/determinism.py). What of that fits here is elsewhere: chapter 6's runs repeat exactly
(tests/test_ablations.py), a stored chapter 7 cell is remeasured (tests/test_ch7_measured.py),
and both chapters' pipelines run in two processes with different string hashing, as two kernels
are (tests/test_fresh_process_runs.py).
"""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient
from site_utils import (
    CHAPTER_HEADER,
    EXECUTED,
    book_config,
    glue_json_path,
    glue_outputs,
    has_code_cells,
    source_path,
    toc_docnames,
)

from transformer_course.notebook import TIMED_SUFFIX

CODE_CHAPTERS = [docname for docname in toc_docnames() if has_code_cells(docname)]
RERUN_BY_BENCH = {"book/06_training": "trains its tables of ablations and departures",
                  "book/07_translation": "trains the translation model and the French exercise's"}
CHAPTERS = [docname for docname in CODE_CHAPTERS if docname not in RERUN_BY_BENCH]
CELL_TIMEOUT = int(book_config().get("execute", {}).get("timeout", 300))  # as the build


def execute_fresh(source: Path, workdir: Path) -> nbformat.NotebookNode:
    """Run the chapter at ``source`` in a new kernel started in ``workdir``; raise on any error."""
    notebook = jupytext.read(source)
    kernel = notebook.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name=kernel,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()  # CellExecutionError unless the cell is tagged raises-exception
    return notebook


def glued_values(notebook: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """Every glued value in an executed notebook: key -> mime bundle."""
    glued: dict[str, dict[str, Any]] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for key, bundle in glue_outputs(cell.get("outputs", [])).items():
            assert key not in glued, f"glue key {key!r} is glued twice"
            glued[key] = bundle
    return glued


def _as_bytes(value: Any) -> bytes:
    return base64.b64decode(value) if isinstance(value, str) else bytes(value)


def glue_differences(first: dict[str, dict[str, Any]],
                     second: dict[str, dict[str, Any]]) -> list[str]:
    """How two executions' glued values differ (keys ending in TIMED_SUFFIX are not compared)."""
    problems = [f"{key}: glued by only one execution" for key in sorted(set(first) ^ set(second))]
    for key in sorted(set(first) & set(second)):
        if key.endswith(TIMED_SUFFIX):
            continue
        a, b = first[key], second[key]
        if set(a) != set(b):
            problems.append(f"{key}: mime types {sorted(a)} vs {sorted(b)}")
            continue
        for mime in sorted(a):
            if mime.startswith("image/") and mime != "image/svg+xml":
                same = _as_bytes(a[mime]) == _as_bytes(b[mime])
            else:
                same = a[mime] == b[mime]
            if not same:
                shown = "image bytes differ" if mime.startswith("image/") else \
                    f"{str(a[mime])[:80]!r} vs {str(b[mime])[:80]!r}"
                problems.append(f"{key} ({mime}): {shown}")
    return problems


def _code_sources(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source.strip() for cell in notebook.cells if cell.cell_type == "code"]


@pytest.mark.usefixtures("built_site")
@pytest.mark.parametrize("docname", CHAPTERS or [pytest.param(None, id="no-chapters-yet")])
def test_chapter_runs_fresh_and_glues_what_the_build_glued(docname: str | None,
                                                          tmp_path: Path) -> None:
    if docname is None:  # said out loud rather than an empty parameter set
        pytest.skip("no chapter in _toc.yml has code cells yet: nothing to re-execute")
    built_notebook = EXECUTED / (docname + ".ipynb")
    assert built_notebook.is_file(), f"{docname} was not executed by the build: run make book"
    fresh = execute_fresh(source_path(docname), tmp_path)
    built = nbformat.read(built_notebook, as_version=4)
    assert _code_sources(fresh) == _code_sources(built), \
        f"{docname} changed since the last build: run make book"
    ours = glued_values(fresh)
    theirs = json.loads(glue_json_path(docname).read_text()) \
        if glue_json_path(docname).is_file() else {}
    theirs = {key: output["data"] for key, output in theirs.items()}
    differences = glue_differences(ours, theirs)
    assert not differences, f"{docname}: the fresh run glued differently from the build:\n" \
        + "\n".join(differences)


@pytest.mark.usefixtures("built_site")
def test_chapters_with_code_are_the_chapters_the_build_executed() -> None:
    """The chapters checked above are exactly those the build executed (none is missed)."""
    executed = set()
    for docname in toc_docnames():
        path = EXECUTED / (docname + ".ipynb")
        if path.is_file() and _code_sources(nbformat.read(path, as_version=4)):
            executed.add(docname)
    assert executed == set(CODE_CHAPTERS)


def test_chapters_left_to_make_bench_are_real_chapters_with_code() -> None:
    """RERUN_BY_BENCH names chapters that exist and run code (a rename cannot hide a chapter
    from both checks), and leaves most chapters to this module."""
    assert set(RERUN_BY_BENCH) <= set(CODE_CHAPTERS), set(RERUN_BY_BENCH) - set(CODE_CHAPTERS)
    assert len(CHAPTERS) > len(RERUN_BY_BENCH)


SELF_TEST = CHAPTER_HEADER + textwrap.dedent("""\
    # Self-test

    ```{code-cell} ipython3
    import os
    import matplotlib.pyplot as plt
    from transformer_course.notebook import glue_figure, glue_number, setup_notebook
    from transformer_course.notebook import time_call
    setup_notebook()
    print("cwd=" + os.getcwd())
    ```

    ```{code-cell} ipython3
    import torch
    x = torch.randn(50)
    fig, ax = plt.subplots()
    ax.plot(x.numpy())
    glue_figure("self-fig", fig)
    glue_number("self-mean", x.mean())
    glue_number("self-sum-timed", time_call(lambda: sum(range(100))).median)
    ```
    """)

