"""A Sphinx extension that works around a bug of the pinned documentation stack (Sphinx 7.4).

An inline script registered after the HTML builder starts reaches the builder twice, once with
filename ``None`` and once with ``''``, so every page would carry it twice. Since
``launch_site.py`` unhooks sphinx-thebe (whose repeated ``const THEBE_JS_URL`` made the browser
report "Identifier 'THEBE_JS_URL' has already been declared"), the script this still concerns is
sphinx-togglebutton's (``let toggleHintShow``, ``var togglebuttonSelector``): a repeated ``let``
is the same error. This drops the repeats from each page.

Enabled in ``_config.yml`` under ``sphinx.extra_extensions``.
"""

from __future__ import annotations

from typing import Any


def script_key(script: Any) -> tuple[str, int, tuple[tuple[str, str], ...]]:
    """What makes two page scripts the same: file (None and '' alike), priority, attributes."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), int(getattr(script, "priority", 500)),
            tuple(sorted((str(k), str(v)) for k, v in attributes.items())))


def drop_repeated_scripts(scripts: list[Any]) -> list[Any]:
    """``scripts`` without later repeats of an earlier script, order kept."""
    if not isinstance(scripts, list):
        raise TypeError(f"scripts must be a list; got {type(scripts).__name__}")
    seen: set[tuple[str, int, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        key = script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _dedupe_page_scripts(app: Any, pagename: str, templatename: str,
                         context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = drop_repeated_scripts(scripts)


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: run after the themes' own page hooks (default priority 500)."""
    app.connect("html-page-context", _dedupe_page_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
