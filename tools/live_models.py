"""Sphinx extension: the built site serves chapter 8's stored models to its in-page widgets.

After an HTML build in which a page loads them (its widgets name their folder,
``_static/ch8/``), the tokenizer and the two stored models are written as scripts into that
folder (``experiments/ch8_real_sentences/in_browser.py`` says why scripts, and why not in the
page); a file already right is left alone. A build without such a page (a test's throwaway book)
writes nothing and never imports the package: torch and the corpus cost seconds per build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

FOLDER = "ch8"  # in_browser.FOLDER, named here so that a build without chapter 8 imports nothing


def pages_load_models(site: Path) -> bool:
    """Whether a page of the built ``site`` names the models' folder (``_static/ch8/``)."""
    mark = f"_static/{FOLDER}/".encode()
    return any(mark in page.read_bytes() for page in site.rglob("*.html"))


def write_models(app: Any, exception: Exception | None) -> None:
    site = Path(app.outdir)
    if exception is None and app.builder.format == "html" and pages_load_models(site):
        from transformer_course.experiments.ch8_real_sentences import in_browser

        in_browser.write_assets(site / "_static" / in_browser.FOLDER)


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", write_models)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
