"""A chapter runs again in a fresh kernel outside the repository and glues what the build glued.

The book build executed each chapter once, in a temporary folder (``run_in_temp`` in _config.yml;
``_build/jupyter_execute/<doc>.glue.json`` holds its glued outputs); here the notebook the site
offers for download for chapter ``RERUN_HERE`` runs again, its outputs cleared, in a new kernel
whose working directory is another temporary folder, so it can rely only on the installed package,
and must show every figure of the page. Every glued value must then be identical to the build's --
numbers' text and figures' PNG bytes alike -- except wall-clock measurements, whose keys end in
``TIMED_SUFFIX``. Two executions, same page.

One chapter, not seven: re-running every chapter costs minutes, over ``make test``'s budget of
150 s on two cores. The second execution of every chapter is ``make bench``'s: it builds the book
twice (serially and in parallel) and compares every output of every chapter, not only the glued
ones (bench/determinism.py). Chapter 4 is the one run here: it trains small models (float
summation order, seeded sampling) and draws figures, the outputs most likely to drift. The
training chapters' pipelines also run in two processes with different string hashing, as two
kernels are (tests/test_fresh_process_runs.py).
"""

from __future__ import annotations

import base64
import json
import shutil
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
    HTML,
    book_config,
    glue_figures,
    glue_json_path,
    glue_outputs,
    has_code_cells,
    source_path,
    toc_docnames,
)

from transformer_course.notebook import TIMED_SUFFIX

CODE_CHAPTERS = [docname for docname in toc_docnames() if has_code_cells(docname)]
RERUN_HERE = "book/04_positional_encoding"
CELL_TIMEOUT = int(book_config().get("execute", {}).get("timeout", 300))  # as the build


def execute_fresh(source: Path, workdir: Path) -> nbformat.NotebookNode:
    """Run the notebook at ``source`` (a chapter's .md or .ipynb) in a new kernel started in
    ``workdir``; raise on any error."""
    notebook = jupytext.read(source)
    for cell in notebook.cells:  # run it as a reader would: outputs come from this run only
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
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
def test_downloaded_chapter_runs_fresh_shows_its_figures_and_glues_what_the_build_glued(
        tmp_path: Path) -> None:
    """The notebook the site offers for download, run in a fresh kernel in a folder outside
    the repository, as a reader who downloaded it would."""
    docname = RERUN_HERE
    assert docname in CODE_CHAPTERS, f"{docname} is not a chapter with code in _toc.yml"
    built_notebook = EXECUTED / (docname + ".ipynb")
    assert built_notebook.is_file(), f"{docname} was not executed by the build: run make book"
    downloaded = tmp_path / Path(docname).with_suffix(".ipynb").name
    shutil.copy(HTML / "_sources" / f"{docname}.ipynb", downloaded)
    fresh = execute_fresh(downloaded, tmp_path)
    built = nbformat.read(built_notebook, as_version=4)
    assert _code_sources(fresh)[1:] == _code_sources(built), \
        f"{docname} changed since the last build: run make book"  # [0]: the install cell
    images = [output for cell in fresh.cells if cell.cell_type == "code"
              for output in cell.outputs if "image/png" in output.get("data", {})]
    assert len(images) >= len(glue_figures(source_path(docname).read_text())) > 0
    ours = glued_values(fresh)
    theirs = json.loads(glue_json_path(docname).read_text()) \
        if glue_json_path(docname).is_file() else {}
    theirs = {key: output["data"] for key, output in theirs.items()}
    differences = glue_differences(ours, theirs)
    assert not differences, f"{docname}: the fresh run glued differently from the build:\n" \
        + "\n".join(differences)


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

