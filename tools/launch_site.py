"""Sphinx extension for the book's launch and download plumbing (loaded from ``_config.yml``).

Its jobs, all generic over the chapters in ``_toc.yml``:

- Thebe stays off and leaves no trace. Jupyter Book 1.0.4 always loads ``sphinx_thebe`` (0.3.1),
  which puts its static folder, a stylesheet, a script, an inline configuration script and, at the
  end of every page, a configuration block even with ``launch_buttons.thebe: false``. Live code
  needs a remote kernel the offline site cannot reach, so this removes them through documented
  means, each after sphinx-thebe's own handler (priority 900): its folder from
  ``html_static_path`` (``builder-inited``), its two raw blocks from the doctree
  (``doctree-resolved``) and its files from the page's ``css_files`` and ``script_files``
  (``html-page-context``). The book uses no ``thebe-button``. When Jupyter Book loads sphinx-thebe
  only for ``thebe: true``, this goes (``notes/jupyter_book_thebe_always_loaded.md``).
- Every notebook page offers its executed ``.ipynb`` for download, readable anywhere. The theme
  copies the notebook MyST-NB executed (``_build/jupyter_execute/<page>.ipynb``) into
  ``_sources/<page>.ipynb`` whenever a launch button is configured. MyST-NB 1.4 writes that file
  without outputs when the page's outputs come from the jupyter-cache, so at the end of the build
  this merges the cached outputs back into both files (as MyST-NB does for the page itself),
  checks that the download is valid and was executed, and rewrites it as a readable notebook
  (``readable_notebook.py``: the execution's numbers, tables and captions in plain Markdown, and
  a first cell that installs the package where it is missing). A missing or unexecuted download,
  MyST left in it, or a glued figure its page would show twice is a warning, so ``-W`` fails the
  build.
- The Binder and Colab buttons open that readable notebook, not the chapter's MyST source, on
  the launch branch: ``launch_branch``, or for a release build (``COURSE_RELEASE=v<version>``)
  the release's own, frozen ``launch-v<version>`` (``release.py``). The footer gives the version.
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat
from chapter_facts import chapter_cost, chapter_summary, run_seconds
from citations import bibliography_files, read_bibliography
from docutils import nodes
from myst_nb.ext.glue import extract_glue_data_cell
from readable_notebook import SiteFacts, UnreadableMySTError, leftover_myst, readable_notebook
from release import launch_branch, release_tag, version
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralIncludeReader
from sphinx.util import logging
from student_edition import is_student_edition

LOGGER = logging.getLogger(__name__)
THEBE_PACKAGE = "sphinx_thebe"
THEBE_BLOCKS = ('type="text/x-thebe-config"', "<script>kernelName = ")  # sphinx-thebe 0.3.1's


def drop_thebe_static_path(app: Sphinx) -> None:
    """Take sphinx-thebe's folder out of ``html_static_path``: nothing of it is copied."""
    app.config.html_static_path = [path for path in app.config.html_static_path
                                   if THEBE_PACKAGE not in Path(path).parts]


def drop_thebe_config(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Remove the configuration blocks sphinx-thebe appends to a resolved doctree."""
    for node in list(doctree.findall(nodes.raw)):
        if any(block in node.astext() for block in THEBE_BLOCKS):
            node.parent.remove(node)


def is_thebe_asset(asset: Any) -> bool:
    """Whether a page's stylesheet or script (a file or an inline body) is sphinx-thebe's."""
    body = (getattr(asset, "attributes", None) or {}).get("body", "")
    return "thebe" in f"{getattr(asset, 'filename', asset)} {body}".lower()


def drop_thebe_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    """Remove sphinx-thebe's stylesheet and scripts from the page (edited in place, as the
    builder shares the lists with later handlers)."""
    for key in ("css_files", "script_files"):
        if isinstance(assets := context.get(key), list):
            assets[:] = [asset for asset in assets if not is_thebe_asset(asset)]


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


def _glued(notebook: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """Every glued value of an executed notebook: key -> mime bundle, as MyST-NB reads it (its
    extraction strips the glue outputs from the cells, so it reads a copy)."""
    cells = [copy.deepcopy(cell) for cell in notebook.cells if cell.cell_type == "code"]
    return {key: output["data"] for cell in cells for key, output in extract_glue_data_cell(cell)}


def site_facts(app: Sphinx, page: str, notebook: nbformat.NotebookNode) -> SiteFacts:
    """The numbers, titles and glued values the page's readable notebook needs."""
    env, numbers, titles = app.env, {}, {}
    for label, (docname, labelid, *title) in env.domaindata["std"]["labels"].items():
        for figtype, ids in env.toc_fignumbers.get(docname, {}).items():
            if labelid in ids:
                number = ".".join(map(str, ids[labelid]))
                numbers[label] = app.config.numfig_format.get(figtype, "%s") % number
        if title and title[0]:
            titles[label] = title[0]
    titles.update({docname: title.astext() for docname, title in env.titles.items()})

    def read_include(path: str, options: Mapping[str, str]) -> str:
        source = Path(app.srcdir) / Path(page).parent / path
        typed = {k: int(v) if k == "dedent" else v for k, v in options.items()
                 if k in ("pyobject", "start-at", "start-after", "end-before", "lines", "dedent")}
        return LiteralIncludeReader(str(source), typed, app.config).read()[0]

    markdown = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    summary, costs = "", {}
    if "{chapter-facts}" in markdown:  # counted once per build (chapter_main_path)
        summary = chapter_summary(app, page)
    if "{chapter-cost}" in markdown:
        costs = {docname: chapter_cost(app, docname) for docname in env.found_docs
                 if run_seconds(app, docname) is not None}
    works = read_bibliography(bibliography_files(app)) if "{cite:" in markdown else {}
    return SiteFacts(numbers, titles, _glued(notebook), page, read_include, summary, costs, works,
                     frozenset(notebook_pages(app)), frozenset(app.tags))


def built_commit(folder: Path) -> str | None:
    """The commit checked out in ``folder`` (the one the site is built from), or None outside a
    git checkout."""
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=folder, text=True,
                              capture_output=True, timeout=30)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def install_cell_source(repository: str, ref: str) -> str:
    """The first code cell of a download: where the course's package is missing (Colab, a bare
    environment), install it from ``repository`` at ``ref``. pip keeps what the environment
    already has when it satisfies the package's ranges, so Colab's own torch stays."""
    return ("# Installs the course's package where it is missing (Colab): the commit this\n"
            "# notebook was built from. What the environment has already (Colab's torch) stays.\n"
            "import importlib.util\n\n"
            'if importlib.util.find_spec("transformer_course") is None:\n'
            f'    %pip install --quiet "transformer-course @ git+{repository}@{ref}"')


def first_cells(app: Sphinx) -> list[nbformat.NotebookNode]:
    """What a downloaded chapter says first: where it comes from and how to run it, and a cell
    that installs the course's package, at the commit the site was built from, where it is
    missing."""
    repository = app.config.html_theme_options.get("repository_url", "").rstrip("/")
    ref = (built_commit(Path(app.srcdir))
           or app.config.html_theme_options.get("repository_branch", "main"))
    title = app.config.html_title or app.config.project
    site = f"[{title}]({repository})" if repository else title
    note = nbformat.v4.new_markdown_cell(
        f"*A chapter of {site}, executed when the site was built: the numbers in the text and "
        "the figures are that run's. To run it yourself, the next cell installs the course's "
        "package when it is missing (on Colab, for example); on your own machine, follow the "
        "README's student set-up (`requirements-student.txt`), or clone the repository and run "
        "`make lab`.*")
    return [note, nbformat.v4.new_code_cell(install_cell_source(repository, ref))]


def figures_shown_in_cells(notebook: nbformat.NotebookNode) -> list[str]:
    """Glued figures a cell displays on the page as well as at their ``{glue:figure}``: a cell
    that glues a figure (displayed, for notebook readers) must be ``remove-output`` or
    ``remove-cell`` on the site."""
    shown = []
    for cell in notebook.cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type != "code" or tags & {"remove-output", "remove-cell"}:
            continue
        shown += [output["metadata"]["scrapbook"]["name"] for output in cell.get("outputs", [])
                  if "scrapbook" in (output.get("metadata") or {})
                  and any(k.startswith("image/") for k in output.get("data", {}))]
    return shown


def write_readable_download(app: Sphinx, page: str) -> list[str]:
    """Rewrite ``page``'s download as a readable notebook; return what is wrong with it: MyST
    it keeps, figures its page would show twice."""
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{page}.ipynb"
    path = Path(app.outdir) / "_sources" / f"{page}.ipynb"
    notebook = nbformat.read(executed if executed.is_file() else path, as_version=4)
    readable = readable_notebook(notebook, site_facts(app, page, notebook), first_cells(app),
                                 solutions=not is_student_edition(app))
    nbformat.write(readable, path)  # from the executed notebook: rewriting twice is harmless
    return leftover_myst(readable) + [f"figure {key!r} shown in its cell too (tag the cell "
                                      f"remove-output)" for key in figures_shown_in_cells(notebook)]


def check_notebook_downloads(app: Sphinx, exception: Exception | None) -> None:
    """Warn for every notebook page whose executed ``.ipynb`` download is missing or empty.

    Args:
        app: the Sphinx application.
        exception: the build's exception, if it failed (then nothing is checked).
    """
    if exception is not None or app.builder.name != "html":  # singlehtml has no downloads
        return
    for page in notebook_pages(app):
        restore_cached_outputs(app, page)
        path = Path(app.outdir) / "_sources" / f"{page}.ipynb"
        problem = notebook_download_problem(path)
        if problem:
            hint = " (is launch_buttons.binderhub_url set?)" if "missing" in problem else ""
            LOGGER.warning("executed notebook download for %s: %s%s", page, problem, hint,
                           location=page)
            continue
        try:
            left = write_readable_download(app, page)
        except UnreadableMySTError as error:
            left = [str(error)]
        if left:
            LOGGER.warning("notebook download for %s: %s", page, "; ".join(map(str, left[:5])),
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


def notebook_launch_urls(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                         doctree: Any) -> None:
    """Point the page's Binder and Colab buttons at its readable notebook, not its MyST source.

    Both open the notebook from the branch the publishing workflow writes (``launch_branch``):
    the built site, whose ``_sources/`` hold the readable notebooks (the student edition's under
    ``student/``), and Binder's environment (``tools/launch_branch.py``), so Binder's image
    build installs the pins and the package and executes no chapter.
    """
    org_repo = app.config.html_theme_options.get("repository_url", "").removeprefix(
        "https://github.com/").strip("/")
    branch = app.config.launch_branch
    notebook = f"{'student/' if is_student_edition(app) else ''}_sources/{pagename}.ipynb"
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if group.get("label") == "launch-buttons" else []:
            if button.get("text") == "Binder":
                base, urlpath = button["url"].split("?urlpath=", 1)
                interface = urlpath.split("/")[0]
                interface = "lab/tree" if interface == "lab" else interface
                base = base.rsplit("/", 1)[0]  # .../v2/gh/<org>/<repo>, without the branch
                button["url"] = f"{base}/{branch}?urlpath={interface}/{notebook}"
            elif button.get("text") == "Colab":
                colab = button["url"].split("/github/", 1)[0]
                button["url"] = f"{colab}/github/{org_repo}/blob/{branch}/{notebook}"


def release_settings(app: Sphinx, config: Any) -> None:
    """The version (pyproject.toml) as Sphinx's release and in the footer; for a release build,
    the release's own launch branch."""
    number, tag = version(), release_tag()
    config.version = config.release = number
    if tag is not None:
        config.launch_branch = launch_branch(tag)
    options = dict(config.html_theme_options)
    options["extra_footer"] = (options.get("extra_footer", "")
                               + f'<p class="course-version">Version {number}</p>')
    config.html_theme_options = options


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension: leave no thebe; point the launch buttons at the readable
    notebooks; repair, rewrite and check the downloads after the build."""
    app.connect("builder-inited", drop_thebe_static_path, priority=900)  # after sphinx-thebe's
    app.connect("doctree-resolved", drop_thebe_config, priority=900)
    app.connect("html-page-context", drop_thebe_assets, priority=900)
    app.add_config_value("launch_branch", "gh-pages", "html")
    app.connect("config-inited", release_settings)
    app.connect("html-page-context", notebook_launch_urls, priority=502)  # after the theme's 501
    app.connect("build-finished", check_notebook_downloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
