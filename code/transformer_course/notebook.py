"""Set-up for a chapter, glue helpers that cannot fail silently, and timing.

Every chapter's first cell calls :func:`setup_notebook`. Figures are glued as PNG images rendered
here (never as bare ``Figure`` objects, whose glued form is only the text "<Figure size ...>"), and
numbers are glued as plain Python numbers (NumPy and torch scalars' repr breaks ``{glue:text}``).

Glue keys of wall-clock measurements end in :data:`TIMED_SUFFIX`: they differ from run to run, so
the determinism test compares every other glued output between two executions and skips these.
"""

from __future__ import annotations

import io
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from numbers import Real
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import torch

from .core.checks import check_int

DEFAULT_SEED = 0
DEFAULT_THREADS = 1  # fixed, so results and timings do not depend on the host's core count;
# one thread also keeps small models fast on shared machines, where waiting threads spin
FIGURE_DPI = 110
TIMED_SUFFIX = "-timed"
# The instructor pack's figures (tools/instructor_pack.py): a folder to export every glued figure
# into, as SVG and as PNG at PACK_DPI, each carrying the licence of the course's figures.
FIGURE_PACK_ENV = "TRANSFORMER_COURSE_FIGURE_PACK"
PACK_DPI = 200
FIGURE_LICENCE = "CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)"


def seed_everything(seed: int = DEFAULT_SEED) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def set_threads(threads: int = DEFAULT_THREADS) -> None:
    """Use ``threads`` threads in torch, in the BLAS/OpenMP pools NumPy uses (threadpoolctl) and
    in the tokenizers library, whose Rust pool otherwise takes every core the machine shows."""
    from threadpoolctl import threadpool_limits

    check_int("threads", threads)
    torch.set_num_threads(threads)
    threadpool_limits(limits=threads)
    # tokenizers reads the first at every call; the second sizes its pool when it first starts
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    os.environ["RAYON_NUM_THREADS"] = str(threads)


def setup_notebook(seed: int = DEFAULT_SEED, threads: int = DEFAULT_THREADS) -> None:
    """Seed everything, fix the thread count, make torch deterministic and set plot defaults."""
    check_int("threads", threads)
    seed_everything(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    set_threads(threads)
    torch.use_deterministic_algorithms(True)
    np.set_printoptions(precision=4, suppress=True)
    _set_plot_style()


def _set_plot_style() -> None:
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update({
        "figure.dpi": FIGURE_DPI,
        "savefig.dpi": FIGURE_DPI,
        "figure.figsize": (6.4, 3.6),
        "figure.autolayout": True,
        "svg.hashsalt": "transformer-course",
    })


def figure_png(fig: matplotlib.figure.Figure) -> bytes:
    """Render ``fig`` to PNG bytes (no timestamp in the metadata) and close it."""
    if not isinstance(fig, matplotlib.figure.Figure):
        raise TypeError(f"fig must be a matplotlib.figure.Figure; got {type(fig).__name__}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def _glue(key: str, value: Any, display: bool) -> None:
    """Glue ``value`` under ``key`` for the book (MyST-NB's ``glue``). Where MyST-NB is not
    installed (a student's set-up, Colab) nothing is glued and a displayed value is just shown:
    a reader's run looks the same either way."""
    try:
        glue = _myst_nb_glue()
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    glue(key, value, display=display)


def _myst_nb_glue() -> Callable[..., None]:
    """MyST-NB's ``glue``, imported without compiling an unused grammar.

    Its module imports nbformat, which imports jsonschema; where rfc3987-syntax is installed
    (JupyterLab brings it), jsonschema compiles that package's Earley grammar for IRIs at import:
    about 2.5 s of every chapter's start, for a format check nothing in a kernel makes. The
    package is hidden while jsonschema loads, so jsonschema leaves the IRI check out, and is
    importable again afterwards. Raises ImportError where MyST-NB is not installed."""
    hidden = "rfc3987_syntax" not in sys.modules and "jsonschema" not in sys.modules
    if hidden:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        from myst_nb.ext.glue import glue
    finally:
        if hidden:
            del sys.modules["rfc3987_syntax"]
    return glue


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key or any(c.isspace() or c == ":" for c in key):
        raise ValueError(f"key must be a non-empty string without spaces or ':'; got {key!r}")


def export_figure(key: str, fig: matplotlib.figure.Figure, folder: Path) -> tuple[Path, Path]:
    """Write ``fig`` as ``folder/<key>.svg`` and ``folder/<key>.png`` (:data:`PACK_DPI`), each
    carrying the figures' licence (:data:`FIGURE_LICENCE`) in its metadata; no timestamps."""
    folder.mkdir(parents=True, exist_ok=True)
    svg, png = folder / f"{key}.svg", folder / f"{key}.png"
    fig.savefig(svg, format="svg", metadata={"Title": key, "Rights": FIGURE_LICENCE, "Date": None})
    fig.savefig(png, format="png", dpi=PACK_DPI,
                metadata={"Title": key, "Copyright": FIGURE_LICENCE, "Software": None})
    return svg, png


def glue_figure(key: str, fig: matplotlib.figure.Figure) -> None:
    """Glue ``fig`` under ``key`` as a PNG image and display it under the cell, so that a reader
    running the chapter as a notebook sees it there; the site shows it once, where its
    ``{glue:figure}`` stands, because the cell's output is removed there (``remove-output``).
    Where :data:`FIGURE_PACK_ENV` names a folder (``make pack``), the figure is also exported
    there (:func:`export_figure`)."""
    from IPython.display import Image

    _check_key(key)
    if os.environ.get(FIGURE_PACK_ENV):
        export_figure(key, fig, Path(os.environ[FIGURE_PACK_ENV]))
    _glue(key, Image(data=figure_png(fig), format="png"), display=True)


def plain_number(value: Any) -> int | float:
    """``value`` as a plain Python int or float (from NumPy or torch scalars too)."""
    if isinstance(value, torch.Tensor | np.ndarray):
        if value.size == 1 if isinstance(value, np.ndarray) else value.numel() == 1:
            value = value.item()
        else:
            raise ValueError(f"value must be a single number; got shape {tuple(value.shape)}")
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"value must be a real number; got {type(value).__name__} {value!r}")
    return int(value) if isinstance(value, int | np.integer) else float(value)


def glue_number(key: str, value: Any) -> None:
    """Glue ``value`` under ``key`` as a plain, finite Python number (NaN and inf are refused:
    a page must never quote one as a result)."""
    _check_key(key)
    number = plain_number(value)
    if not math.isfinite(number):
        raise ValueError(f"value must be a finite number to be glued under {key!r}; got {number}")
    _glue(key, number, display=False)


class _Words:
    """Text glued to be shown as it is (a glued ``str`` shows its quotes)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def glue_text(key: str, text: str) -> None:
    """Glue words, e.g. chosen from this run's data ("faster than"), for an inline
    ``{glue:text}`` role; the page shows them without quotes."""
    _check_key(key)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    _glue(key, _Words(text), display=False)


def glue_table(key: str, table: Any) -> None:
    """Glue a pandas ``DataFrame`` as a Markdown table, for a numbered ``{table}`` directive
    whose body is ``{glue:md}`` with ``:format: myst``.

    A default 0..n-1 index is dropped; any other index becomes the first column(s). Cells are
    written as they are formatted in the frame; columns of numbers are right-aligned.
    """
    import pandas as pd
    from IPython.display import Markdown

    _check_key(key)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame; got {type(table).__name__}")
    if not isinstance(table.index, pd.RangeIndex) or table.index.name is not None:
        table = table.reset_index(names=[name or "" for name in table.index.names])
    # a "|" would end its cell; Markdown reads the escaped "\|" as the character itself
    cells = table.astype(str).apply(lambda column: column.str.replace("|", r"\|", regex=False))
    number = r"^[-+\u2212]?[\d,.]+(e[-+]?\d+)?%?M?( \(.*\))?$"
    align = ["right" if cells[c].str.match(number).all() else "left" for c in cells]
    markdown = cells.to_markdown(index=False, disable_numparse=True, colalign=align)
    _glue(key, Markdown(markdown), display=False)


# --- Timing: the machines are shared and noisy, so every measured figure is a median of
# repeated runs, and comparisons are made between figures measured in the same run.


@dataclass(frozen=True)
class Timing:
    """Median, min and max of repeated measurements (seconds, unless said otherwise)."""

    median: float
    min: float
    max: float
    repeats: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Timing:
        """The summary of ``samples`` (at least one)."""
        if not samples:
            raise ValueError("samples must hold at least one measurement; got none")
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def as_dict(self) -> dict[str, float]:
        """The four fields as a plain dict (for JSON)."""
        return asdict(self)


def _check_timing_args(repeats: int, warmup: int) -> None:
    check_int("repeats", repeats)
    check_int("warmup", warmup, low=0)


def time_call(fn: Callable[[], object], *, repeats: int = 5, warmup: int = 1,
              clock: Callable[[], float] | None = None) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    ``clock`` defaults to wall-clock time (``time.perf_counter``); ``time.process_time`` measures
    the CPU time of the process instead, which excludes time spent waiting for other programs on
    a busy machine.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    clock = time.perf_counter if clock is None else clock
    if not callable(clock):
        raise TypeError(f"clock must be callable; got {type(clock).__name__}")
    _check_timing_args(repeats, warmup)
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = clock()
        fn()
        samples.append(clock() - start)
    return Timing.of(samples)


def time_interleaved(calls: Mapping[str, Callable[[], object]], *, repeats: int = 5,
                     warmup: int = 1) -> dict[str, list[float]]:
    """Time several calls round by round, the order rotating each round, so that a change in the
    machine's load falls on all of them alike; returns each call's per-round seconds.

    Paired rounds make ratios robust: compare two calls by the median of their per-round ratios
    (:func:`median_ratio`), not by the ratio of two medians.
    """
    if not isinstance(calls, Mapping) or not calls or not all(map(callable, calls.values())):
        raise TypeError(f"calls must be a non-empty mapping of names to callables; "
                        f"got {type(calls).__name__}")
    _check_timing_args(repeats, warmup)
    names = list(calls)
    for name in names:
        for _ in range(warmup):
            calls[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            start = time.perf_counter()
            calls[name]()
            samples[name].append(time.perf_counter() - start)
    return samples


def median_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The median over rounds of numerator[i] / denominator[i] (paired samples, same length)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError(f"numerator and denominator must be paired samples of one positive "
                         f"length; got {len(numerator)} and {len(denominator)}")
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))


def peak_memory_growth_mib(fn: Callable[[], object]) -> float:
    """How far one call of ``fn`` raises the process's peak resident memory above its resident
    memory just before the call, in MiB (Linux: resets the kernel's peak mark, VmHWM, first).

    Run it in a fresh process for a clean figure: memory freed earlier stays resident.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")

    def status_kib(field: str) -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak to the current resident size
    before = status_kib("VmRSS")
    fn()
    return (status_kib("VmHWM") - before) / 1024
