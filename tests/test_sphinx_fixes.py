"""tools/sphinx_fixes.py: repeated page scripts are dropped, distinct ones kept."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from sphinx.builders.html._assets import _JavaScript

from tools import sphinx_fixes
from tools.sphinx_fixes import drop_repeated_scripts, script_key

THEBE = 'const THEBE_JS_URL = "x"'


def test_inline_script_registered_twice_is_kept_once() -> None:
    """The Sphinx 7.4 case: the same body once with filename None and once with ''."""
    scripts = [_JavaScript("_static/doctools.js", priority=200),
               _JavaScript(None, priority=500, body=THEBE),
               _JavaScript("_static/sphinx-thebe.js", priority=500, **{"async": "async"}),
               _JavaScript("", priority=500, body=THEBE)]
    kept = drop_repeated_scripts(scripts)
    assert kept == scripts[:3]
    assert [s.attributes.get("body") for s in kept].count(THEBE) == 1


def test_distinct_scripts_are_all_kept() -> None:
    scripts = [_JavaScript("", priority=500, body="var a = 1;"),
               _JavaScript("", priority=500, body="var b = 2;"),
               _JavaScript("", priority=800, body="var a = 1;"),  # another priority
               _JavaScript("_static/a.js", priority=500),
               _JavaScript("_static/a.js", priority=500, defer="defer")]
    assert drop_repeated_scripts(scripts) == scripts


def test_plain_string_entries_are_handled() -> None:
    assert drop_repeated_scripts(["_static/a.js", "_static/a.js", "_static/b.js"]) == \
        ["_static/a.js", "_static/b.js"]
    assert script_key(None) == script_key("")


@pytest.mark.parametrize("scripts", [None, ("a.js",), "a.js"])
def test_rejects_non_lists(scripts: Any) -> None:
    with pytest.raises(TypeError, match="scripts"):
        drop_repeated_scripts(scripts)


def test_setup_hooks_page_context_after_the_themes() -> None:
    calls = []
    app = SimpleNamespace(connect=lambda *args, **kwargs: calls.append((args, kwargs)))
    metadata = sphinx_fixes.setup(app)
    assert metadata["parallel_read_safe"] and metadata["parallel_write_safe"]
    ((event, handler), options), = calls
    assert event == "html-page-context" and options["priority"] > 500
    context = {"script_files": [_JavaScript(None, body=THEBE), _JavaScript("", body=THEBE)]}
    scripts = context["script_files"]
    handler(app, "page", "page.html", context, None)
    assert context["script_files"] is scripts and len(scripts) == 1  # edited in place
