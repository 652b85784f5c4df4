"""Sphinx extension for the book's launch and download plumbing (loaded from ``_config.yml``).

Two jobs, both generic over the chapters in ``_toc.yml``:

- Thebe stays off and leaves no trace. Jupyter Book always loads ``sphinx_thebe``, which adds a
  stylesheet, a script and a per-page config block even with ``launch_buttons.thebe: false``.
  Live code needs a remote kernel the offline site cannot reach, so this unhooks the extension's
  event handlers and assets; its directive stays registered and renders nothing.
- Every notebook page offers its executed ``.ipynb`` for download. sphinx-book-theme copies the
  notebook that MyST-NB executed (``_build/jupyter_execute/<page>.ipynb``) into
  ``_sources/<page>.ipynb`` and adds it to the page's download menu whenever a launch button is
  configured. MyST-NB 1.4 writes that file without outputs when the page's outputs come from the
  jupyter-cache rather than a fresh execution, and without the glued outputs (``display=False``)
  even after a fresh one, so a reader's download would lack the chapter's numbers and figures. At
  the end of the build this merges the cached outputs, glued ones included, back into both files
  (as MyST-NB does for the page itself), then checks, page by page,
  that the download exists, is valid nbformat and was executed; a missing or unexecuted one is a
  warning, so ``-W`` fails the build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
THEBE_MODULE = "sphinx_thebe"


def unhook_thebe(app: Sphinx) -> list[str]:
    """Remove sphinx_thebe's event handlers and stylesheet; return the handlers removed.

    Args:
        app: the Sphinx application, after ``sphinx_thebe``'s own ``setup`` ran.
    """
    removed = []
    for event, listeners in app.events.listeners.items():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "").startswith(THEBE_MODULE):
                app.disconnect(listener.id)
                removed.append(f"{event}:{listener.handler.__name__}")
    app.registry.css_files = [
        (name, attrs) for name, attrs in app.registry.css_files if "thebe" not in str(name)
    ]
    return removed


def notebook_pages(app: Sphinx) -> list[str]:
    """Docnames of the pages that are notebooks (a kernelspec in their metadata).

    Args:
        app: the Sphinx application after the environment was read.
    """
    return sorted(name for name, meta in app.env.metadata.items() if "kernelspec" in meta)


def restore_cached_outputs(app: Sphinx, page: str) -> bool:
    """Merge the jupyter-cache's outputs into ``page``'s executed notebook and its download.

    Returns True when the notebooks were rewritten (the build ran in cache mode and the cache
    holds the page's outputs).

    Args:
        app: the Sphinx application, after the build.
        page: a notebook page's docname (``book/01_x``).
    """
    download = Path(app.outdir) / "_sources" / f"{page}.ipynb"
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{page}.ipynb"
    source = download if download.is_file() else executed
    if not source.is_file():
        return False
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return False
    cache_path = Path(config.execution_cache_path or Path(app.outdir).parent / ".jupyter_cache")
    if not cache_path.is_dir():
        return False
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(cache_path).merge_match_into_notebook(
            nbformat.read(source, as_version=4))
    except KeyError:  # not in the cache: the check reports the notebook as unexecuted
        return False
    for path in (download, executed):
        if path.is_file():
            nbformat.write(merged, path)
    return True


def check_notebook_downloads(app: Sphinx, exception: Exception | None) -> None:
    """Warn for every notebook page whose executed ``.ipynb`` download is missing or empty.

    Args:
        app: the Sphinx application.
        exception: the build's exception, if it failed (then nothing is checked).
    """
    if exception is not None or app.builder.format != "html":
        return
    for page in notebook_pages(app):
        restore_cached_outputs(app, page)
        path = Path(app.outdir) / "_sources" / f"{page}.ipynb"
        problem = notebook_download_problem(path)
        if problem:
            hint = " (is launch_buttons.binderhub_url set?)" if "missing" in problem else ""
            LOGGER.warning("executed notebook download for %s: %s%s", page, problem, hint,
                           location=page)


def notebook_download_problem(path: Path) -> str:
    """Why ``path`` is not a valid, executed notebook; '' when it is.

    Args:
        path: the ``.ipynb`` a page offers for download.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path; got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        return f"{path} is missing"
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - any read or schema error is the finding
        return f"{path} is not a valid notebook ({error})"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if code and not any(cell.get("execution_count") for cell in code):
        return f"{path} has no executed code cells"
    return ""


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension: unhook thebe now; repair and check downloads after the build."""
    unhook_thebe(app)
    app.connect("build-finished", check_notebook_downloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
