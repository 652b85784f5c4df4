"""Sphinx extension: the built site serves chapter 8's stored models to its in-page widgets.

After an HTML build, the tokenizer and the two stored models are written as scripts into the
site's ``_static/ch8/`` (``experiments/ch8_real_sentences/in_browser.py`` says why scripts, and
why not in the page); a file already right is left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_models(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        from transformer_course.experiments.ch8_real_sentences import in_browser

        in_browser.write_assets(Path(app.outdir) / "_static" / in_browser.FOLDER)


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", write_models)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
