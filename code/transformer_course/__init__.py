"""Shared code for "Attention, executed", an executable course on the Transformer.

The package has two halves and two helpers:

- ``core``: the Transformer of the paper (attention, masks, multi-head attention, positions, the
  model, batching, schedule, loss, training, decoding). It imports nothing from the rest, and its
  public API is re-exported here: ``from transformer_course import Transformer``.
- ``experiments``: what the chapters measure, one subpackage per chapter (``ch1_why_attention`` ..
  ``ch7_translation``), each using the core and never the other way round.
- ``figures``: the chapters' plots, one module per chapter, every function ``plot_*`` returning a
  matplotlib Figure.
- ``exercises``: the checks behind every chapter's coding exercises.
- ``notebook``: chapter set-up (seeds, threads, plot style), glue helpers and timing.
- ``pytorch_parity``: weight copying to and from PyTorch's own modules, for the reference tests.
- ``claims``, ``draws`` and ``stored``: the checks behind the prose, simulated other CPUs, and
  the registry of stored studies.
"""

from . import draws as _draws
from .core import *  # noqa: F403 -- the core's public API, listed in core.__all__
from .core import __all__ as __all__

# TRANSFORMER_COURSE_DRAW=k: every initial weight moves by one ulp, as on another CPU (draws.py)
_draws.install(_draws.current_draw())

__version__ = "0.2.0"
