"""Set-up for a chapter and glue helpers that cannot fail silently.

Every chapter's first cell calls :func:`setup_notebook`. Figures are glued as PNG images rendered
here (never as bare ``Figure`` objects, whose glued form is only the text "<Figure size ...>"), and
numbers are glued as plain Python numbers (NumPy and torch scalars' repr breaks ``{glue:text}``).

Glue keys of wall-clock measurements end in :data:`TIMED_SUFFIX`: they differ from run to run, so
the determinism test compares every other glued output between two executions and skips these.
"""

from __future__ import annotations

import io
import os
import random
from numbers import Real
from typing import Any

import matplotlib
import numpy as np
import torch

from .checks import check_positive_int

DEFAULT_SEED = 0
DEFAULT_THREADS = 1  # fixed, so results and timings do not depend on the host's core count;
# one thread also keeps small models fast on shared machines, where waiting threads spin
FIGURE_DPI = 110
TIMED_SUFFIX = "-timed"


def seed_everything(seed: int = DEFAULT_SEED) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def set_threads(threads: int = DEFAULT_THREADS) -> None:
    """Use ``threads`` threads in torch and in the BLAS/OpenMP pools NumPy uses (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    check_positive_int("threads", threads)
    torch.set_num_threads(threads)
    threadpool_limits(limits=threads)


def setup_notebook(seed: int = DEFAULT_SEED, threads: int = DEFAULT_THREADS) -> None:
    """Seed everything, fix the thread count, make torch deterministic and set plot defaults."""
    check_positive_int("threads", threads)
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


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key or any(c.isspace() or c == ":" for c in key):
        raise ValueError(f"key must be a non-empty string without spaces or ':'; got {key!r}")


def glue_figure(key: str, fig: matplotlib.figure.Figure) -> None:
    """Glue ``fig`` under ``key`` as a PNG image, without displaying it."""
    from IPython.display import Image
    from myst_nb import glue

    _check_key(key)
    glue(key, Image(data=figure_png(fig), format="png"), display=False)


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


def glue_number(key: str, value: Any) -> int | float:
    """Glue ``value`` under ``key`` as a plain Python number and return that number."""
    from myst_nb import glue

    _check_key(key)
    number = plain_number(value)
    glue(key, number, display=False)
    return number


def glue_table(key: str, table: Any) -> None:
    """Glue a pandas ``DataFrame`` (or ``Styler``) under ``key`` without displaying it."""
    import pandas as pd
    from myst_nb import glue
    from pandas.io.formats.style import Styler  # not loaded by ``import pandas`` alone

    _check_key(key)
    if not isinstance(table, pd.DataFrame | Styler):
        raise TypeError(f"table must be a pandas DataFrame or Styler; got {type(table).__name__}")
    glue(key, table, display=False)
