"""The book's visual language, defined once for every figure module.

- Attention weights are drawn with one colormap, ``ATTENTION_CMAP`` (the in-page explorer's
  too): dark at 0, yellow at 1. Signed values (projections, encodings) use ``SIGNED_CMAP``, a
  diverging map white at 0; masks use ``MASK_CMAP``.
- A method or arm that several figures compare keeps one colour throughout the book:
  ``colour(name)``. The colours are Okabe and Ito's colour-blind-safe set (yellow left out: it
  is too pale on white). They are assigned by role, so a colour reads the same way in every
  chapter: blue is the paper's choice (attention, scaled dot-product, sinusoidal encodings,
  post-norm...), orange the main alternative it is measured against, the others the further
  alternatives. A colour is used for two names only where no figure shows both.
- Reference and theory lines stay grey, as the figure modules draw them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import matplotlib

ATTENTION_CMAP = "viridis"  # every attention-weight map, and the explorer's (explorer.js)
SIGNED_CMAP = "RdBu_r"  # signed values: blue below 0, white at 0, red above
MASK_CMAP = "Greys"  # masks: may attend or not

# Okabe, M. and Ito, K. (2008), "Color Universal Design": colour-blind-safe colours.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
BLACK = "#000000"

# The order in which names that are no method of METHOD_COLOURS (seeds, settings) get colours.
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, BLACK)

METHOD_COLOURS = {
    # Chapter 1, the layers compared (time, gradient, FLOPs, threads).
    "attention": BLUE,  # a self-attention layer (MultiHeadAttention, with its projections)
    "recurrent": ORANGE,  # nn.RNN, ElmanRNN
    "LSTM": VERMILLION,
    "attention only": SKY,  # the attention operation without its projections
    "convolutional": GREEN,
    # Chapter 2, the score functions (variance, saturation, score comparison, learning rates).
    "scaled": BLUE,  # q . k / sqrt(d_k), the paper's
    "unscaled": ORANGE,  # q . k
    "additive": GREEN,
    # Chapter 2, attention's implementations (time and memory).
    "torch explicit": VERMILLION,
    "torch fused": SKY,
    "numpy": PURPLE,
    "F.sdpa": BLACK,
    # Chapter 3: heads.
    "two heads": BLUE,
    "one head": ORANGE,
    # Chapter 4: position information.
    "sinusoidal": BLUE,
    "learned": ORANGE,
    "RoPE": GREEN,
    "none": PURPLE,
    # Chapter 5: where LayerNorm sits, and the residual path.
    "post-norm": BLUE,
    "pre-norm": ORANGE,
    "with residual": BLUE,
    "without residual": ORANGE,
    # Chapter 6: the peak learning rate.
    "paper's peak": BLUE,
    "recipe's peak": ORANGE,
    # Learning curves (chapters 6, 7, 8).
    "training": BLUE,
    "validation": ORANGE,
    "whole sequence": GREEN,  # sequence accuracy, exact match
    "token": SKY,  # token accuracy
    # Decoding (chapter 7's bar charts).
    "greedy": BLUE,
    "group by group": ORANGE,
}

# The labels the experiments give the methods, where they differ from the keys above.
ALIASES = {
    "self-attention (MultiHeadAttention)": "attention",
    "self-attention layer (with projections)": "attention",
    "self-attention (attention only)": "attention only",
    "recurrent (nn.RNN)": "recurrent",
    "recurrent (ElmanRNN)": "recurrent",
    "recurrent (nn.LSTM)": "LSTM",
    "scaled dot-product": "scaled",
    "dot-product": "unscaled",
    "exact match": "whole sequence",
    "validation exact match": "whole sequence",
    "sequence accuracy": "whole sequence",
    "token accuracy": "token",
    "training loss": "training",
    "validation loss": "validation",
}


def _method(name: str) -> str | None:
    """The key of METHOD_COLOURS that ``name`` names, or None: the key itself, an alias, or
    either followed by a detail in parentheses ("convolutional (k=3)")."""
    for candidate in (name, name.split(" (", 1)[0]):
        candidate = ALIASES.get(candidate, candidate)
        if candidate in METHOD_COLOURS:
            return candidate
    return None


def colour(method: str) -> str:
    """The colour of ``method`` in every figure of the book.

    Args:
        method: a key of ``METHOD_COLOURS``, a label of ``ALIASES``, or either with a detail in
            parentheses ("convolutional (k=3)").

    Raises:
        KeyError: for a name that is no method of the book.
    """
    key = _method(method)
    if key is None:
        raise KeyError(f"no colour for {method!r}; the methods are {sorted(METHOD_COLOURS)}")
    return METHOD_COLOURS[key]


def colours(names: Iterable[str]) -> dict[str, str]:
    """One colour per name, for the series of one figure.

    A method of ``METHOD_COLOURS`` gets its own colour; every other name (a seed, a setting)
    gets the first colour of ``PALETTE`` that no other name of the figure has, so that the
    series of one figure never share a colour unless there are more than the palette's seven.
    """
    names = list(dict.fromkeys(names))
    chosen = {name: colour(name) for name in names if _method(name) is not None}
    free = [c for c in PALETTE if c not in chosen.values()] or list(PALETTE)
    others = [name for name in names if name not in chosen]
    chosen.update({name: free[i % len(free)] for i, name in enumerate(others)})
    return {name: chosen[name] for name in names}


def text_colour(value: float, cmap: str = ATTENTION_CMAP, limits: Sequence[float] = (0.0, 1.0),
                ) -> str:
    """"white" or "black", whichever reads better on the cell that ``value`` gets on ``cmap``
    over ``limits`` (the larger WCAG contrast ratio): on viridis, white on low weights and
    black on high ones."""
    low, high = limits
    rgb = matplotlib.colormaps[cmap](min(max((value - low) / (high - low), 0.0), 1.0))[:3]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "black" if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else "white"
