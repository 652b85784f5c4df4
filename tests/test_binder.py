"""Binder, checked with the real components: repo2docker's Dockerfile, and a real JupyterLab.

- repo2docker (no Docker daemon needed with ``--no-build --debug``) reads ``binder/`` and prints
  the Dockerfile it would build, for main and for the launch branch (tools/launch_branch.py).
- A JupyterLab server started from a fresh copy of the repository, laid out as Binder lays it
  out (the repository is the home folder, so ``.jupyter/`` is the Jupyter config folder, and
  ``_sources/`` holds the readable notebooks, as on the launch branch), opens chapter 4 at the
  path the launch button uses, in headless Chromium, and runs it from scratch: every figure of
  the page appears under its cell, every glued value equals the build's, and a number the prose
  quotes is rendered in the text. This is the course's one fresh execution of a chapter outside
  the build (``make bench`` executes all seven twice and compares them).
- The site's launch buttons and the README badge are the links ``_config.yml`` gives, and no
  page loads thebe.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jupytext
import nbformat
import pytest
from bs4 import BeautifulSoup
from packaging.specifiers import SpecifierSet
from site_utils import glue_differences, glue_json_path, glued_values

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import binder_links  # noqa: E402
import launch_branch  # noqa: E402
import readable_notebook  # noqa: E402
import toc_chapters  # noqa: E402

SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
BIN = Path(sys.executable).parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
OVERRIDES = Path(".jupyter") / "labconfig" / "default_setting_overrides.json"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def fresh_copy(dest: Path) -> Path:
    """Copy the repository's tracked and untracked-but-not-ignored files into ``dest``."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listing):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def requirement_lines(path: Path) -> list[str]:
    """Non-comment, non-blank lines of a requirements file."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def built_site() -> Path:
    """The built HTML site; fails (not skips) when it has not been built."""
    assert (SITE / "index.html").is_file(), f"no built site in {SITE}: run `make book` first"
    return SITE


# --- the Binder configuration, as repo2docker reads it ---------------------------------------


def test_binder_requirements_take_root_pins_and_cpu_torch() -> None:
    """Binder installs the reader's pins (whose torch is, on Linux, the CPU build from the PyTorch
    CPU index, whatever pip's own configuration says) and JupyterLab."""
    from packaging.markers import Marker

    binder = requirement_lines(ROOT / "binder" / "requirements.txt")
    root = requirement_lines(ROOT / "requirements.txt")
    assert "-r ../requirements.txt" in binder, "binder/ must install the root pins"
    assert f"--extra-index-url {CPU_INDEX}" in root
    torch = {}
    for line in root:
        if line.lower().startswith("torch=="):
            pin, _, marker = (part.strip() for part in line.partition(";"))
            for platform in ("linux", "darwin"):
                if Marker(marker).evaluate({"sys_platform": platform}):
                    torch.setdefault(platform, []).append(pin.removeprefix("torch=="))
    assert len(torch["linux"]) == len(torch["darwin"]) == 1, torch
    assert torch["linux"][0] == f"{torch['darwin'][0]}+cpu", "Linux: the CPU build, same version"
    names = {re.split(r"[=<>!~ ;]", line)[0].lower() for line in root + binder}
    assert {"jupyterlab", "jupytext", "myst-nb"} <= names


def test_binder_postbuild_and_runtime() -> None:
    mode = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout.split()
    assert mode and mode[0] == "100755", f"binder/postBuild must be committed executable: {mode}"
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install" in post_build and "-e ." in post_build
    # the image build executes no chapter: the notebooks the buttons open come executed
    assert not re.search(r"\bmake\b|jupyter-book|nbconvert|run_chapters", post_build)
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", runtime)
    assert match, f"runtime.txt must read python-X.Y, got {runtime!r}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    requires = re.search(r'requires-python\s*=\s*"([^"]+)"', pyproject).group(1)
    assert match.group(1) in SpecifierSet(requires), (match.group(1), requires)


@pytest.mark.parametrize("ref", ["main", "launch-branch"])
def test_repo2docker_prints_the_dockerfile_it_would_build(ref: str, tmp_path: Path) -> None:
    """Binder builds both: main (the README's badge) and the launch branch (the buttons)."""
    if ref == "main":
        copy = fresh_copy(tmp_path / "repo")
    else:
        copy = launch_branch.write_launch_branch(ROOT, tmp_path / "repo", with_student=False)
    result = subprocess.run(
        [str(BIN / "jupyter-repo2docker"), "--no-build", "--debug", "--user-id", "1000",
         "--user-name", "jovyan", str(copy)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    assert f"Building conda environment for python={runtime}" in output, output[:500]
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in output
    assert "RUN ./binder/postBuild" in output
    # binder/ wins: repo2docker must not also install the root as a package or read root pins.
    assert "pip install --no-cache-dir ." not in output
    assert 'pip install --no-cache-dir -r "requirements.txt"' not in output
    (SCREENSHOTS.parent / "repo2docker").mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS.parent / "repo2docker" / f"Dockerfile-{ref}.debug.txt").write_text(output)


def test_lab_settings_override_names_exist_in_installed_jupyterlab() -> None:
    from jupyterlab.commands import get_app_dir

    overrides = json.loads((ROOT / OVERRIDES).read_text())
    schemas = Path(get_app_dir()) / "schemas"
    for plugin_id, settings in overrides.items():
        package, plugin = plugin_id.split(":")
        schema = json.loads((schemas / package / f"{plugin}.json").read_text())
        for key in settings:
            assert key in schema["properties"], f"{plugin_id} has no setting {key!r}"
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook"
    bundle = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    scripts = "".join(path.read_text(errors="replace") for path in bundle.rglob("*.js"))
    assert '"Jupytext Notebook"' in scripts, "jupytext's lab extension names another factory"


# --- the built site: launch buttons, README badge, no thebe ----------------------------------


def test_launch_buttons_and_readme_badge_come_from_config() -> None:
    site = built_site()
    config = binder_links.load_config(ROOT)
    notebooks = toc_chapters.chapters(ROOT, notebooks_only=True)
    for source in notebooks:
        page = BeautifulSoup((site / source.with_suffix(".html")).read_text(), "html.parser")
        hrefs = [a["href"] for a in page.select("a[href]") if "/v2/gh/" in a["href"]]
        branch = config["sphinx"]["config"]["launch_branch"]
        readable = f"_sources/{source.with_suffix('.ipynb').as_posix()}"  # on the launch branch
        expected = binder_links.branch_launch_url(config, branch, readable)
        assert hrefs == [expected], (source, hrefs)
        assert expected.endswith(f"/{branch}?urlpath=lab/tree/{readable}")
        org, repo, _ = binder_links.repository(config)
        colab = [a["href"] for a in page.select("a[href]") if "colab" in a["href"]]
        assert colab == [f"{config['launch_buttons']['colab_url']}/github/{org}/{repo}/blob/"
                         f"{branch}/_sources/{source.with_suffix('.ipynb').as_posix()}"], colab
        assert (site / "_sources" / source.with_suffix(".ipynb")).is_file()  # what Colab opens
    readme = (ROOT / "README.md").read_text()
    assert binder_links.badge_block(config) in readme, (
        "README badge is stale: run python tools/binder_links.py")


def test_no_page_loads_thebe() -> None:
    site = built_site()
    pages = sorted(site.rglob("*.html"))
    assert pages
    for path in pages:
        soup = BeautifulSoup(path.read_text(), "html.parser")
        for tag in soup.select("script, link"):
            text = " ".join([tag.get("src", ""), tag.get("href", ""), tag.get_text()])
            assert "thebe" not in text.lower(), (path, str(tag)[:200])
        assert not soup.select('[type="text/x-thebe-config"], .thebe-launch-button'), path
        assert not soup.select('[onclick*="Thebe"], [data-bs-title*="Thebe"]'), path
    assert not [p for p in (site / "_static").rglob("*thebe*")], "thebe assets were copied"


# --- a real JupyterLab, as Binder starts it --------------------------------------------------


def chromium_path() -> str:
    """The Chromium to drive: $CHROMIUM, else what tools/find_browser.sh finds or installs."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    found = subprocess.run([str(ROOT / "tools" / "find_browser.sh"), sys.executable],
                           capture_output=True, text=True)
    assert found.returncode == 0, f"no Chromium for the browser test: {found.stderr}"
    return found.stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def jupyterlab(home: Path, log: Path) -> Iterator[str]:
    """Run JupyterLab on 127.0.0.1 with ``home`` as home folder and root; yield its base URL.

    The server sees the repository the way Binder shows it: the home folder is the repository,
    so ``~/.jupyter`` is the repository's ``.jupyter``. The copy's ``code/`` comes first on the
    kernel's path. The whole process group is stopped on exit, whatever happened.
    """
    port, token = free_port(), os.urandom(12).hex()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JUPYTER") and k not in ("IPYTHONDIR", "MPLCONFIGDIR")}
    env.update(HOME=str(home), PYTHONPATH=str(home / "code"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={home}", "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with open(log, "w") as sink:
        server = subprocess.Popen(command, cwd=home, env=env, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, f"JupyterLab exited: {log.read_text()[-3000:]}"
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"no JupyterLab: {log.read_text()[-3000:]}"
                time.sleep(0.5)
        yield f"{base}/{{path}}?token={token}"
    finally:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            try:
                os.killpg(server.pid, sig)
                server.wait(wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue


WIDGET_JS = """path => {
  const app = window.jupyterapp;
  if (!app) return null;
  const widget = Array.from(app.shell.widgets('main')).find(
      w => w.context && w.context.path === path);
  if (!widget) return null;
  const content = widget.content;
  const model = content && content.model;
  const cells = model && model.cells ? Array.from(
      {length: model.cells.length}, (_, i) => model.cells.get(i).toJSON()) : null;
  const kernel = widget.sessionContext && widget.sessionContext.session
      && widget.sessionContext.session.kernel;
  return {notebook: !!cells, cells: cells, active: content.activeCellIndex,
          kernel: kernel ? kernel.status : null};
}"""


EXPLORER_PROBE = "explorer_probe.ipynb"
EXPLORER_CELL = """\
import numpy as np
from transformer_course.explorer.html import attention_viewer
weights = np.array([[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]])  # (h, T_q, T_k)
attention_viewer([("layer 1", weights)], ["a", "b"], ["x", "y", "z"])"""


def write_explorer_probe(home: Path) -> None:
    """A notebook whose one cell displays the attention explorer (an output with scripts)."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(EXPLORER_CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    nbformat.write(notebook, home / EXPLORER_PROBE)


def run_first_cell(page, path: str) -> None:
    """Run the first code cell of the open notebook at ``path`` and wait until it has run."""
    page.locator(".jp-NotebookPanel:visible .jp-CodeCell").first.locator(
        ".jp-InputArea-prompt").click()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        f"() => {{ const s = ({WIDGET_JS})({json.dumps(path)});"
        " const c = s && s.cells.find(c => c.cell_type === 'code');"
        " return c && c.execution_count && s.kernel === 'idle' ? s : null; }",
        timeout=180_000)


def rendered(cell) -> bool:
    """Whether a Markdown cell shows its rendered text (its editor hidden), not its source."""
    return cell.locator(".jp-InputArea-editor.lm-mod-hidden").count() == 1


RUN_HERE = Path("book/04_positional_encoding.md")  # the chapter run in JupyterLab, as on Binder


def quoted_number(chapter: Path, glued: dict) -> str:
    """A number the chapter's prose quotes (a glue:text role with a decimal point), as the
    readable notebook writes it."""
    for role in readable_notebook.ROLE.finditer((ROOT / chapter).read_text()):
        if role["name"] == "glue:text" and not role["text"].split(":")[0].endswith("-timed"):
            facts = readable_notebook.SiteFacts({}, {}, glued, chapter.with_suffix("").as_posix())
            text = readable_notebook.readable_inline(role[0], facts)
            if "." in text and len(text) >= 4:
                return text
    raise AssertionError(f"{chapter} quotes no number with a decimal point")


@pytest.mark.browser
@pytest.mark.pipeline
def test_jupyterlab_runs_a_chapter_as_binder_opens_it(tmp_path: Path) -> None:
    """The chapter's readable notebook, where the launch branch has it and at the path the
    launch button opens, run from scratch in JupyterLab in a copy of the repository outside it:
    every cell runs, every figure of the page appears under its cell, every glued value equals
    the build's (timings aside), and a number the prose quotes is rendered in the text."""
    from playwright.sync_api import sync_playwright

    docname = RUN_HERE.with_suffix("").as_posix()
    copy = fresh_copy(tmp_path / "home")
    write_explorer_probe(copy)
    readable = Path("_sources") / RUN_HERE.with_suffix(".ipynb")  # where the launch branch has it
    (copy / readable).parent.mkdir(parents=True)
    shutil.copy(built_site() / readable, copy / readable)
    built_glue = {key: output["data"]
                  for key, output in json.loads(glue_json_path(docname).read_text()).items()}
    number = quoted_number(RUN_HERE, built_glue)
    figures = (ROOT / RUN_HERE).read_text().count("```{glue:figure}")
    shot = SCREENSHOTS / f"jupyterlab-{RUN_HERE.stem}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    config = binder_links.load_config(copy)
    lab_path = binder_links.branch_launch_url(config, config["sphinx"]["config"]["launch_branch"],
                                              readable.as_posix()).split("?urlpath=", 1)[1]
    state_js = f"({WIDGET_JS})({json.dumps(readable.as_posix())})"

    with jupyterlab(copy, tmp_path / "jupyterlab.log") as url, sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        try:
            page.goto(url.format(path=lab_path))
            page.wait_for_function(f"() => {{ const s = {state_js};"
                                   " return s && s.notebook && s.kernel === 'idle' ? s : null; }",
                                   timeout=120_000)
            page.evaluate("async () => { const c = window.jupyterapp.commands;"
                          " await c.execute('notebook:clear-all-cell-outputs');"
                          " await c.execute('notebook:run-all-cells'); }")
            state = page.wait_for_function(
                f"() => {{ const s = {state_js}; const code = s && s.cells.filter("
                "c => c.cell_type === 'code'); return code && code.every(c => c.execution_count)"
                " && s.kernel === 'idle' ? s : null; }", timeout=300_000).json_value()
            outputs = [out for cell in state["cells"] if cell["cell_type"] == "code"
                       for out in cell["outputs"]]
            assert not [out for out in outputs if out["output_type"] == "error"]
            images = [out for out in outputs if "image/png" in out.get("data", {})]
            assert len(images) >= figures > 0, (len(images), figures)
            glued = glued_values(nbformat.from_dict({"cells": state["cells"]}))
            differences = glue_differences(glued, built_glue)
            assert not differences, "\n".join(differences)

            quoted = page.locator(".jp-MarkdownCell", has_text=number).first
            quoted.scroll_into_view_if_needed()
            assert quoted.is_visible() and rendered(quoted), number
            page.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
            assert page.locator(".jp-OutputArea-output img").first.is_visible()
            page.screenshot(path=str(shot))

            # make lab's path: the chapter's MyST source opens as a notebook (jupytext's viewer,
            # set in .jupyter/), not as text, holding the chapter's cells
            page.goto(url.format(path=f"lab/tree/{RUN_HERE.as_posix()}"))
            source = page.wait_for_function(
                f"() => {{ const s = ({WIDGET_JS})({json.dumps(RUN_HERE.as_posix())});"
                " return s && s.notebook && s.cells.length > 1 ? s : null; }",
                timeout=120_000).json_value()
            cells = jupytext.read(copy / RUN_HERE).cells
            assert [c["source"] for c in source["cells"]] == [c.source for c in cells]
            # ... and its Markdown is rendered as MyST (jupyterlab-myst): a role is no raw text
            with_role = next(i for i, c in enumerate(cells)
                             if c.cell_type == "markdown" and "{doc}`" in c.source)
            page.evaluate("async (i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
                          " nb.activeCellIndex = i; await nb.scrollToItem(i); }", with_role)
            page.wait_for_function(  # innerText leaves out the hidden source editor
                "() => { const c = document.querySelector('.jp-Notebook .jp-Cell.jp-mod-active');"
                " return c && c.innerText.trim().length > 20 && !c.innerText.includes('{doc}`'); }",
                timeout=30_000)

            # the attention explorer's scripts run in a JupyterLab output (a trusted one: made in
            # this session), and the viewer answers the mouse there
            page.goto(url.format(path=f"lab/tree/{EXPLORER_PROBE}"))
            page.wait_for_function(
                f"() => {{ const s = ({WIDGET_JS})({json.dumps(EXPLORER_PROBE)});"
                " return s && s.notebook && s.kernel === 'idle' ? s : null; }",
                timeout=120_000)
            run_first_cell(page, EXPLORER_PROBE)
            viewer = page.locator(".jp-OutputArea .ae-mount[data-mounted]")
            viewer.locator(".ae-map tbody th").last.wait_for(timeout=30_000)
            viewer.locator(".ae-map tbody th").last.hover()
            assert viewer.locator("tr.ae-active").get_attribute("data-row") == "1"
        finally:
            if not shot.exists():
                page.screenshot(path=str(shot))
            browser.close()
    print(f"JupyterLab ran {lab_path}; screenshot {shot}")
