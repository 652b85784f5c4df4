"""Chapter set-up and glue helpers: what reaches myst-nb, determinism, seeding, bad input."""

from __future__ import annotations

import base64
import json
import math
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch
from myst_nb.ext import glue as myst_glue

from transformer_course import notebook
from transformer_course.notebook import (
    figure_png,
    glue_figure,
    glue_number,
    glue_table,
    glue_text,
    plain_number,
    seed_everything,
    setup_notebook,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TOKENIZER_THREADS = ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")
GLUE_PREFIX = "application/papermill.record/"


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What myst_nb.glue hands to IPython's display (captured instead of displayed)."""
    calls: list[dict[str, Any]] = []

    def capture(data: dict[str, Any], raw: bool = False, metadata: Any = None) -> None:
        calls.append({"data": data, "raw": raw, "metadata": metadata})

    monkeypatch.setattr(myst_glue, "ipy_display", capture)
    return calls


@pytest.fixture
def restore_global_state(monkeypatch: pytest.MonkeyPatch):
    """Undo what setup_notebook changes process-wide (threads, determinism, styles)."""
    threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    printoptions = np.get_printoptions()
    monkeypatch.setenv("PYTHONHASHSEED", os.environ.get("PYTHONHASHSEED", "0"))
    for name in TOKENIZER_THREADS:  # set_threads sets them: restored (or removed) afterwards
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    with matplotlib.rc_context():
        yield
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)
    np.set_printoptions(**printoptions)


def _figure(seed: int = 0) -> matplotlib.figure.Figure:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(np.random.default_rng(seed).normal(size=20))
    ax.set_title("test")
    return fig


@pytest.mark.parametrize(("value", "expected"), [
    (np.float64(0.25), 0.25), (np.float32(0.5), 0.5), (np.int64(7), 7), (np.int8(-3), -3),
    (np.array(1.5), 1.5), (np.array([2]), 2), (torch.tensor(0.75), 0.75), (torch.tensor(4), 4),
    (torch.tensor([[3.0]]), 3.0), (5, 5), (2.5, 2.5),
])
def test_glue_number_glues_a_plain_python_number(value: Any, expected: float,
                                                 published: list[dict[str, Any]]) -> None:
    assert glue_number("ch0-number", value) is None  # it glues; it no longer returns the number
    plain = plain_number(value)  # what glue_number glues
    assert plain == expected and type(plain) is type(expected)
    (call,) = published
    assert call["metadata"]["scrapbook"] == {"name": "ch0-number", "mime_prefix": GLUE_PREFIX}
    assert call["data"] == {GLUE_PREFIX + "text/plain": repr(expected)}  # no "np.float64(...)"


@pytest.mark.parametrize("value", [
    float("nan"), float("inf"), -math.inf, np.float64("nan"), np.float32("inf"),
    torch.tensor(float("nan")), torch.tensor([-math.inf]),
])
def test_glue_number_refuses_nan_and_infinity(value: Any,
                                               published: list[dict[str, Any]]) -> None:
    # the message names the argument, the key and the value it got
    with pytest.raises(ValueError, match=r"(?s)\bvalue\b.*'ch0-number'.*\b(nan|inf)\b"):
        glue_number("ch0-number", value)
    assert not published  # a page must never quote NaN or inf as a result


@pytest.mark.parametrize(("value", "error"), [
    (np.zeros(2), ValueError), (torch.ones(2, 2), ValueError), (np.array([]), ValueError),
    ("0.5", TypeError), (None, TypeError), (True, TypeError), (np.bool_(True), TypeError),
    (1 + 2j, TypeError), ([1.0], TypeError),
])
def test_glue_number_rejects_non_numbers(value: Any, error: type[Exception],
                                         published: list[dict[str, Any]]) -> None:
    with pytest.raises(error, match="value"):
        glue_number("ch0-number", value)
    assert not published


@pytest.mark.parametrize("key", ["", "has space", "a:b", 3, None, "tab\there"])
def test_glue_helpers_reject_bad_keys(key: Any, published: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match="key"):
        glue_number(key, 1.0)
    with pytest.raises(ValueError, match="key"):
        glue_figure(key, _figure())
    with pytest.raises(ValueError, match="key"):
        glue_table(key, pd.DataFrame({"a": [1]}))
    assert not published
    plt.close("all")


def test_glue_figure_glues_and_displays_a_png(published: list[dict[str, Any]]) -> None:
    """Displayed (no glue prefix on the mime type), so a notebook shows it under the cell."""
    fig = _figure()
    glue_figure("ch0-fig", fig)
    (call,) = published
    assert call["metadata"]["scrapbook"]["name"] == "ch0-fig"
    assert "image/png" in call["data"] and not any(k.startswith(GLUE_PREFIX) for k in call["data"])
    assert not any("Figure size" in str(v) for v in call["data"].values())
    png = call["data"]["image/png"]
    png = png if isinstance(png, bytes) else base64.b64decode(png)
    assert png.startswith(PNG_SIGNATURE)
    assert not plt.fignum_exists(fig.number), "glue_figure must close the figure"


def test_glue_figure_rejects_non_figures(published: list[dict[str, Any]]) -> None:
    with pytest.raises(TypeError, match="fig"):
        glue_figure("ch0-fig", np.zeros((4, 4)))
    fig, ax = plt.subplots()
    with pytest.raises(TypeError, match="fig"):
        glue_figure("ch0-fig", ax)
    plt.close(fig)
    assert not published


def test_figure_png_is_deterministic() -> None:
    first, second = figure_png(_figure(1)), figure_png(_figure(1))
    assert first.startswith(PNG_SIGNATURE)
    assert first == second
    assert figure_png(_figure(2)) != first  # the bytes do depend on the content


def test_glue_table_glues_markdown_for_a_numbered_table(published: list[dict[str, Any]]) -> None:
    frame = pd.DataFrame({"h": [1, 8], "name": ["one", "eight"]})
    glue_table("ch0-table", frame)  # default index: dropped
    glue_table("ch0-indexed", frame.set_index("name"))  # a named index: its own column
    glue_table("ch0-labels", pd.DataFrame({"w": [0.5]}, index=["q1"]))  # unnamed labels: kept
    names = [c["metadata"]["scrapbook"]["name"] for c in published]
    assert names == ["ch0-table", "ch0-indexed", "ch0-labels"]
    tables = [c["data"][GLUE_PREFIX + "text/markdown"].splitlines() for c in published]
    assert [c.strip() for c in tables[0][0].split("|")[1:-1]] == ["h", "name"]
    rule = tables[0][1].split("|")[1:-1]
    assert rule[0].endswith(":") and not rule[1].endswith(":")  # numbers right, words left
    assert [c.strip() for c in tables[1][0].split("|")[1:-1]] == ["name", "h"]
    assert [c.strip() for c in tables[2][0].split("|")[1:-1]] == ["", "w"]
    assert [c.strip() for c in tables[2][2].split("|")[1:-1]] == ["q1", "0.5"]


def test_a_pipe_in_a_glued_table_stays_in_its_cell(published: list[dict[str, Any]]) -> None:
    from markdown_it import MarkdownIt

    glue_table("ch0-pipes", pd.DataFrame({"command": ["run a | b"], "cost": ["1 min"]}))
    tokens = MarkdownIt("commonmark").enable("table").parse(
        published[0]["data"][GLUE_PREFIX + "text/markdown"])
    cells = [t.children[0].content if t.children else "" for t in tokens if t.type == "inline"]
    assert cells == ["command", "cost", "run a | b", "1 min"]


def test_glue_text_glues_words_shown_without_quotes(published: list[dict[str, Any]]) -> None:
    glue_text("ch0-words", "faster than")
    assert published[0]["metadata"]["scrapbook"]["name"] == "ch0-words"
    assert published[0]["data"][GLUE_PREFIX + "text/plain"] == "faster than"
    with pytest.raises(TypeError, match="text"):
        glue_text("ch0-words", 3)


@pytest.mark.parametrize("table", [[1, 2], np.zeros((2, 2)), {"a": [1]}, "table",
                                   pd.DataFrame({"a": [1]}).style])
def test_glue_table_rejects_non_frames(table: Any, published: list[dict[str, Any]]) -> None:
    with pytest.raises(TypeError, match="table"):
        glue_table("ch0-table", table)
    assert not published


def test_glue_helpers_in_a_real_ipython_shell(tmp_path: Path) -> None:
    """End to end in a fresh interpreter with an IPython shell: what a kernel would publish."""
    script = textwrap.dedent("""
        import base64, json
        import matplotlib.pyplot as plt, pandas as pd
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        from transformer_course.notebook import glue_figure, glue_number, glue_table
        InteractiveShell.instance()
        with capture_output() as captured:
            glue_number("n", __import__("numpy").float64(0.5))
            fig, ax = plt.subplots(); ax.plot([0, 1])
            glue_figure("f", fig)
            glue_table("t", pd.DataFrame({"a": [1]}))
        print(json.dumps([{"name": o.metadata["scrapbook"]["name"], "mimes": sorted(o.data),
                           "text": o.data.get("application/papermill.record/text/plain")}
                          for o in captured.outputs]))
    """)
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"), MPLBACKEND="Agg")
    env.pop("PYTHONPATH", None)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    outputs = json.loads(result.stdout.strip().splitlines()[-1])
    assert [o["name"] for o in outputs] == ["n", "f", "t"]
    assert outputs[0]["text"] == "0.5"
    assert "image/png" in outputs[1]["mimes"]  # displayed: a notebook shows it
    assert GLUE_PREFIX + "text/markdown" in outputs[2]["mimes"]


def test_the_first_glue_leaves_the_iri_grammar_unloaded_and_importable(tmp_path: Path) -> None:
    """setup_notebook and the first glue, in a fresh interpreter: jsonschema's IRI grammar is
    not compiled (seconds of every chapter's start, for a format check nothing in a kernel
    makes), and rfc3987-syntax stays importable afterwards."""
    pytest.importorskip("rfc3987_syntax")  # brought by JupyterLab: the case that costs
    script = textwrap.dedent("""
        import json, sys
        import torch
        from transformer_course.notebook import glue_number, setup_notebook
        setup_notebook()
        glue_number("n", 1.0)
        state = {"deterministic": torch.are_deterministic_algorithms_enabled(),
                 "loaded": sorted(m for m in ("rfc3987_syntax", "lark") if m in sys.modules)}
        import rfc3987_syntax
        state["importable"] = rfc3987_syntax.is_valid_syntax("iri", "https://example.org/")
        print(json.dumps(state))
    """)
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"), MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout.strip().splitlines()[-1])
    assert state == {"deterministic": True, "loaded": [], "importable": True}


def test_plain_number_matches_glue_number() -> None:
    assert plain_number(np.float64(1.25)) == 1.25 and type(plain_number(np.int32(2))) is int


def _draw() -> tuple[float, float, list[float]]:
    return random.random(), float(np.random.rand()), torch.rand(3).tolist()


@pytest.mark.usefixtures("restore_global_state")
def test_setup_notebook_seeds_every_generator() -> None:
    setup_notebook(seed=3)
    first = _draw()
    setup_notebook(seed=3)
    assert _draw() == first
    setup_notebook(seed=4)
    different = _draw()
    assert all(a != b for a, b in zip(different[:2], first[:2], strict=True))
    assert different[2] != first[2]


@pytest.mark.usefixtures("restore_global_state")
def test_setup_notebook_fixes_threads_determinism_and_style() -> None:
    setup_notebook(threads=1)
    assert torch.get_num_threads() == 1
    assert torch.are_deterministic_algorithms_enabled()
    assert os.environ["PYTHONHASHSEED"] == str(notebook.DEFAULT_SEED)
    assert matplotlib.rcParams["figure.dpi"] == notebook.FIGURE_DPI
    setup_notebook()
    assert torch.get_num_threads() == notebook.DEFAULT_THREADS


@pytest.mark.usefixtures("restore_global_state")
def test_set_threads_limits_torch_and_numpy_blas() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=None):  # restores NumPy's pools afterwards
        notebook.set_threads(1)
        assert torch.get_num_threads() == 1
        pools = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert pools and all(p["num_threads"] == 1 for p in pools)
    with pytest.raises(ValueError, match="threads"):
        notebook.set_threads(0)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
@pytest.mark.parametrize("threads", [1, 2])
def test_set_threads_limits_the_tokenizers_pool(threads: int) -> None:
    # a fresh process, whose tokenizers pool has not started: a batch encoded after set_threads
    # starts no more threads than it allows (without it, one per core the machine shows)
    script = textwrap.dedent("""
        import os, sys
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformer_course.notebook import set_threads

        set_threads(int(sys.argv[1]))
        tokenizer = Tokenizer(models.WordLevel({"a": 0, "?": 1}, unk_token="?"))
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        before = len(os.listdir("/proc/self/task"))
        assert len(tokenizer.encode_batch(["a b a"] * 20000)) == 20000
        print(len(os.listdir("/proc/self/task")) - before)
    """)
    env = {name: value for name, value in os.environ.items() if name not in TOKENIZER_THREADS}
    started = subprocess.run([sys.executable, "-c", script, str(threads)], env=env, check=True,
                             capture_output=True, text=True).stdout
    assert int(started) <= (0 if threads == 1 else threads)


@pytest.mark.usefixtures("restore_global_state")
@pytest.mark.parametrize(("kwargs", "error", "name"), [
    ({"threads": 0}, ValueError, "threads"), ({"threads": -2}, ValueError, "threads"),
    ({"threads": 1.5}, TypeError, "threads"), ({"threads": "2"}, TypeError, "threads"),
    ({"threads": True}, TypeError, "threads"), ({"seed": -1}, ValueError, "seed"),
    ({"seed": 1.5}, ValueError, "seed"), ({"seed": "0"}, ValueError, "seed"),
    ({"seed": False}, ValueError, "seed"),
])
def test_setup_notebook_rejects_bad_arguments(kwargs: dict[str, Any], error: type[Exception],
                                              name: str) -> None:
    with pytest.raises(error, match=name):
        setup_notebook(**kwargs)


def test_seed_everything_rejects_bad_seeds() -> None:
    for seed in (-1, 0.0, None, True):
        with pytest.raises(ValueError, match="seed"):
            seed_everything(seed)


def test_without_myst_nb_a_figure_is_shown_and_nothing_else(monkeypatch: pytest.MonkeyPatch,
                                                           published) -> None:
    """A student's set-up has no MyST-NB: the glue helpers then just show what is displayed."""
    import IPython.display

    shown: list[Any] = []
    for module in ("myst_nb", "myst_nb.ext", "myst_nb.ext.glue"):  # as if not installed
        monkeypatch.setitem(sys.modules, module, None)  # importing it raises ImportError
    monkeypatch.setattr(IPython.display, "display", lambda value: shown.append(value))
    glue_number("n", 3)
    glue_text("t", "faster")
    glue_table("tb", pd.DataFrame({"a": [1]}))
    assert shown == []
    glue_figure("f", _figure())
    assert len(shown) == 1 and shown[0].data.startswith(PNG_SIGNATURE)
    assert published == []  # nothing reached MyST-NB's glue


def test_a_figure_pack_folder_receives_each_glued_figure_as_svg_and_png(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, published) -> None:
    from PIL import Image as PILImage

    monkeypatch.setenv(notebook.FIGURE_PACK_ENV, str(tmp_path / "pack"))
    glue_figure("ch9-demo", _figure())
    svg, png = tmp_path / "pack" / "ch9-demo.svg", tmp_path / "pack" / "ch9-demo.png"
    assert notebook.FIGURE_LICENCE in svg.read_text()
    with PILImage.open(png) as image:
        assert image.info["Copyright"] == notebook.FIGURE_LICENCE
        assert round(image.info["dpi"][0]) == notebook.PACK_DPI
        assert image.width == round(3 * notebook.PACK_DPI)  # the 3-inch-wide test figure
    monkeypatch.delenv(notebook.FIGURE_PACK_ENV)
    glue_figure("ch9-other", _figure())
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == ["ch9-demo.png", "ch9-demo.svg"]
