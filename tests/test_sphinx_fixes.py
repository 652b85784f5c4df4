"""tools/sphinx_fixes.py: repeated page scripts are dropped, distinct ones kept; exercise content
ids made unique; singlehtml keeps the html node handlers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from docutils import nodes
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
    calls, transforms = [], []
    app = SimpleNamespace(connect=lambda *args, **kwargs: calls.append((args, kwargs)),
                          add_transform=transforms.append)
    metadata = sphinx_fixes.setup(app)
    assert metadata["parallel_read_safe"] and metadata["parallel_write_safe"]
    assert transforms == [sphinx_fixes.UniqueExerciseIds]
    hooks: dict[str, list] = {}
    for args, options in calls:
        hooks.setdefault(args[0], []).append((args[1], options))
    page_hooks = dict(hooks["html-page-context"])
    assert set(page_hooks) == {sphinx_fixes._dedupe_page_scripts,
                               sphinx_fixes.name_summaries_by_their_text}
    handler, options = sphinx_fixes._dedupe_page_scripts, page_hooks[
        sphinx_fixes._dedupe_page_scripts]
    assert options["priority"] > 500
    assert hooks["builder-inited"][0][0] is sphinx_fixes.inherit_html_handlers
    context = {"script_files": [_JavaScript(None, body=THEBE), _JavaScript("", body=THEBE)]}
    scripts = context["script_files"]
    handler(app, "page", "page.html", context, None)
    assert context["script_files"] is scripts and len(scripts) == 1  # edited in place


def test_exercise_content_ids_become_unique() -> None:
    document = nodes.section(ids=["page"])
    for label in ("ex-a", "ex-b"):
        block = nodes.container(label=label, ids=[label])
        block += nodes.section(ids=["exercise-content"])
        document += block
    unlabelled = nodes.container()
    unlabelled += nodes.section(ids=["solution-content"])
    document += unlabelled
    assert sphinx_fixes.unique_content_ids(document) == 3
    sections = list(document.findall(nodes.section))[1:]
    assert [s["ids"] for s in sections] == [["ex-a-content"], ["ex-b-content"], []]
    assert [s["classes"] for s in sections] == [["exercise-content"], ["exercise-content"],
                                                ["solution-content"]]
    assert sphinx_fixes.unique_content_ids(document) == 0  # nothing shared is left


def test_a_builder_with_handlers_of_its_own_gets_the_html_ones_it_lacks() -> None:
    html = {"exercise": ("visit-e", None), "hidden_cell": ("visit-h", "depart-h")}
    handlers = {"html": dict(html), "singlehtml": {"exercise": ("own", None)}}
    registry = SimpleNamespace(translation_handlers=handlers)
    single = SimpleNamespace(builder=SimpleNamespace(name="singlehtml", format="html"),
                             registry=registry)
    assert sphinx_fixes.inherit_html_handlers(single) == ["hidden_cell"]
    assert handlers["singlehtml"] == {"exercise": ("own", None),
                                      "hidden_cell": ("visit-h", "depart-h")}
    assert handlers["html"] == html
    for name, fmt in (("html", "html"), ("latex", "latex"), ("dirhtml", "html")):
        other = SimpleNamespace(builder=SimpleNamespace(name=name, format=fmt),
                                registry=registry)
        assert sphinx_fixes.inherit_html_handlers(other) == []  # html itself, or none of its own


FOLDED_PAGE = """\
---
jupytext: {text_representation: {extension: .md, format_name: myst}}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# A page with a folded cell

```{code-cell} ipython3
:tags: [hide-input]
1 + 1
```
"""


@pytest.mark.parametrize("with_fix", [False, True], ids=["myst-nb alone", "with sphinx_fixes"])
def test_a_folded_cell_is_named_by_what_it_shows(tmp_path, with_fix: bool) -> None:
    """MyST-NB names every folded cell "Toggle hidden content" (WCAG 2.5.3: the name must hold
    the visible "Show code cell source"); sphinx_fixes drops that name. The control fails, and
    this workaround can go, once MyST-NB no longer writes it (notes/myst_nb_summary_label.md)."""
    import io
    import sys
    from pathlib import Path

    from sphinx.application import Sphinx

    tools = Path(sphinx_fixes.__file__).parent
    sys.path.insert(0, str(tools))
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    extensions = ["myst_nb"] + (["sphinx_fixes"] if with_fix else [])
    (src / "conf.py").write_text(f"extensions = {extensions!r}\nnb_execution_mode = 'off'\n"
                                 "html_theme = 'alabaster'\n")
    (src / "index.md").write_text(FOLDED_PAGE)
    Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None,
           warning=io.StringIO(), freshenv=True).build()
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<summary" in page and "Show code cell source" in page
    assert (sphinx_fixes.FOLDED_CELL_SUMMARY in page) is not with_fix
