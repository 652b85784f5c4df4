"""tools/launch_site.py: thebe leaves no trace, and a missing notebook download is a warning.

Each test builds a one-page Sphinx project in a temporary folder (about a second each).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import launch_site  # noqa: E402

NOTEBOOK_PAGE = """\
---
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# A notebook page

```{code-cell} ipython3
1 + 1
```
"""


def build(tmp_path: Path, extensions: list[str], pages: dict[str, str]) -> tuple[Path, str]:
    """Build ``pages`` (file name -> text) with ``extensions``; return (outdir, warnings)."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text(
        f"extensions = {extensions!r}\nnb_execution_mode = 'off'\nhtml_theme = 'alabaster'\n")
    for name, text in pages.items():
        (src / name).write_text(text)
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    return out, warnings.getvalue()


def thebe_traces(out: Path) -> list[str]:
    """Files in the built site whose name or (HTML) text mentions thebe or its kernel name."""
    found = [str(p) for p in out.rglob("*thebe*")]
    found += [str(p) for p in out.rglob("*.html")
              if "thebe" in (text := p.read_text().lower()) or "kernelname" in text]
    return found


def test_thebe_leaves_no_trace_in_the_site(tmp_path: Path) -> None:
    """sphinx-thebe 0.3.1 puts its files, scripts and configuration block on every page, also on
    one that uses no thebe; with launch_site none of it is left."""
    out, _ = build(tmp_path, ["sphinx_thebe", "launch_site"],
                   {"index.rst": "Title\n=====\n\nText.\n"})
    assert thebe_traces(out) == []


def test_jupyter_book_loads_sphinx_thebe_with_thebe_off() -> None:
    """Jupyter Book 1.0.4 loads sphinx-thebe although ``launch_buttons.thebe`` is false, which is
    why launch_site removes what it adds. Fails once Jupyter Book leaves it out: then delete
    launch_site's thebe handlers (notes/jupyter_book_thebe_always_loaded.md)."""
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(user_yaml={"launch_buttons": {"thebe": False}},
                                 cli_config={"latex_individualpages": False})
    assert "sphinx_thebe" in config["extensions"]


def test_missing_notebook_download_is_a_warning(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n\n```{toctree}\nnb\n```\n", "nb.md": NOTEBOOK_PAGE}
    out, warnings = build(tmp_path, ["myst_nb", "launch_site"], pages)
    assert (out / "nb.html").is_file()
    assert "executed notebook download for nb" in warnings, warnings
    assert "download for index" not in warnings, "a plain page needs no notebook"


def test_notebook_pages_lists_only_pages_with_a_kernelspec(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n\n```{toctree}\nnb\n```\n", "nb.md": NOTEBOOK_PAGE}
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['myst_nb']\nnb_execution_mode = 'off'\n")
    for name, text in pages.items():
        (src / name).write_text(text)
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html",
                 status=None, warning=io.StringIO(), freshenv=True)
    app.build()
    assert launch_site.notebook_pages(app) == ["nb"]


def executed(cells: list[nbformat.NotebookNode]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    return notebook


def test_notebook_download_problem(tmp_path: Path) -> None:
    good = tmp_path / "good.ipynb"
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=1, outputs=[
        nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)])
    nbformat.write(executed([cell]), good)
    assert launch_site.notebook_download_problem(good) == ""

    prose = tmp_path / "prose.ipynb"
    nbformat.write(executed([nbformat.v4.new_markdown_cell("text")]), prose)
    assert launch_site.notebook_download_problem(prose) == ""

    fresh = tmp_path / "fresh.ipynb"
    nbformat.write(executed([nbformat.v4.new_code_cell("1 + 1")]), fresh)
    assert "no executed code cells" in launch_site.notebook_download_problem(fresh)

    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    assert "not a valid notebook" in launch_site.notebook_download_problem(broken)

    assert "missing" in launch_site.notebook_download_problem(tmp_path / "absent.ipynb")


def test_notebook_download_problem_rejects_a_non_path() -> None:
    with pytest.raises(TypeError, match="path"):
        launch_site.notebook_download_problem(42)  # type: ignore[arg-type]


def fake_app(build: Path, cache_path: str, mode: str = "cache") -> SimpleNamespace:
    """The parts of a Sphinx app that ``restore_cached_outputs`` reads."""
    config = SimpleNamespace(execution_mode=mode, execution_cache_path=cache_path)
    return SimpleNamespace(outdir=str(build / "html"), env=SimpleNamespace(mystnb_config=config))


def test_restore_cached_outputs_merges_the_cache_into_both_files(tmp_path: Path) -> None:
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    build = tmp_path / "_build"
    fresh = executed([nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("1 + 1")])
    ran = nbformat.from_dict(nbformat.reads(nbformat.writes(fresh), as_version=4))
    ran.cells[1].execution_count = 1
    ran.cells[1].outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    get_cache(build / ".jupyter_cache").cache_notebook_bundle(
        CacheBundleIn(ran, "book/nb.md"), check_validity=False)
    paths = [build / "jupyter_execute" / "book" / "nb.ipynb",
             build / "html" / "_sources" / "book" / "nb.ipynb"]
    for path in paths:
        path.parent.mkdir(parents=True)
        nbformat.write(fresh, path)

    assert launch_site.restore_cached_outputs(fake_app(build, ""), "book/nb") is True
    for path in paths:
        assert launch_site.notebook_download_problem(path) == ""
        cell = nbformat.read(path, as_version=4).cells[1]
        assert cell.outputs[0]["data"]["text/plain"] == "2"
    # Merging again changes nothing. Another mode, or no cache record: left as it is.
    assert launch_site.restore_cached_outputs(fake_app(build, ""), "book/nb") is True
    assert nbformat.read(paths[1], as_version=4).cells[1].outputs[0]["data"]["text/plain"] == "2"
    for path in paths:
        nbformat.write(fresh, path)
    assert launch_site.restore_cached_outputs(fake_app(build, "", "force"), "book/nb") is False
    other = executed([nbformat.v4.new_code_cell("2 + 2")])
    nbformat.write(other, paths[1])
    assert launch_site.restore_cached_outputs(fake_app(build, ""), "book/nb") is False
    assert "no executed code cells" in launch_site.notebook_download_problem(paths[1])


@pytest.mark.parametrize("present", [True, False], ids=["package-present", "package-missing"])
def test_the_install_cell_installs_only_where_the_package_is_missing(
        monkeypatch: pytest.MonkeyPatch, present: bool) -> None:
    """Run as a reader's kernel runs it (IPython's transform of `%pip`): pip is called, for the
    package at the built commit, exactly when the environment lacks the package."""
    import importlib.util

    from IPython.core.inputtransformer2 import TransformerManager

    if not present:
        find_spec = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                            if name == "transformer_course" else find_spec(name, *a))
    source = launch_site.install_cell_source("https://github.com/o/r", "0" * 40)
    calls: list[tuple] = []

    class Shell:
        def run_line_magic(self, *args: object) -> None:
            calls.append(args)

    code = TransformerManager().transform_cell(source)
    exec(code, {"get_ipython": Shell})  # noqa: S102 - the cell as a kernel would run it
    if present:
        assert calls == []
    else:
        assert len(calls) == 1 and calls[0][0] == "pip"
        assert "git+https://github.com/o/r@" + "0" * 40 in calls[0][1]
