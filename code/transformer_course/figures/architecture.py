"""The course's map: the encoder-decoder of the paper's Figure 1, drawn by the package.

Every chapter opens with it, the part the chapter builds highlighted ("you are here").
"""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

_COLORS = {"attn": "#f6d7a7", "ffn": "#bfe3f0", "norm": "#f3f0a6", "embed": "#f4c6c6",
           "io": "#ffffff", "out": "#d9c8ef"}
_BOX_W, _BOX_H = 2.6, 0.5
_HERE = "#c0392b"  # the highlight's edge and label colour

# The parts a chapter can highlight, by the kind of box that draws them.
PARTS = {"embedding": "embed", "attention": "attn", "feed_forward": "ffn", "add_norm": "norm",
         "output": "out"}


class _Drawing:
    """Boxes and arrows on one axes; boxes outside the highlighted kinds are drawn faded."""

    def __init__(self, ax: plt.Axes, highlight: frozenset[str] | None) -> None:
        self.ax, self.highlight = ax, highlight

    def box(self, x: float, y: float, text: str, kind: str, width: float = _BOX_W) -> None:
        here = self.highlight is not None and kind in self.highlight
        faded = self.highlight is not None and not here
        self.ax.add_patch(FancyBboxPatch(
            (x - width / 2, y - _BOX_H / 2), width, _BOX_H,
            boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=_COLORS[kind],
            edgecolor=_HERE if here else "0.25", linewidth=2.6 if here else 1,
            alpha=0.35 if faded else 1.0))
        self.ax.text(x, y, text, ha="center", va="center", fontsize=8,
                     color="0.55" if faded else "black")

    def arrow(self, start: tuple[float, float], end: tuple[float, float], style: str = "-|>",
              color: str = "0.2") -> None:
        self.ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=9,
                                          color=color, linewidth=1, shrinkA=0, shrinkB=0))

    def stack(self, x: float, y: float, sublayers: list[tuple[str, str]], norm_first: bool,
              final_norm: bool) -> tuple[float, float, dict[str, float]]:
        """Draw one residual sub-layer per entry upward from y.

        Returns the top of the repeated layer, the top of the stack and each sub-layer's height.
        """
        step = 0.75
        heights: dict[str, float] = {}
        for text, kind in sublayers:
            entry = y
            if norm_first:
                self.box(x, y + step, "LayerNorm", "norm")
                self.box(x, y + 2 * step, text, kind)
                self.box(x, y + 3 * step, "Dropout, then Add", "norm")
                heights[text] = y + 2 * step
                self.arrow((x, y + _BOX_H / 2 if y > 0 else y), (x, y + step - _BOX_H / 2))
                self.arrow((x, y + step + _BOX_H / 2), (x, y + 2 * step - _BOX_H / 2))
                self.arrow((x, y + 2 * step + _BOX_H / 2), (x, y + 3 * step - _BOX_H / 2))
                y += 3 * step
            else:
                self.box(x, y + step, text, kind)
                self.box(x, y + 2 * step, "Dropout, Add, LayerNorm", "norm")
                heights[text] = y + step
                self.arrow((x, y + _BOX_H / 2), (x, y + step - _BOX_H / 2))
                self.arrow((x, y + step + _BOX_H / 2), (x, y + 2 * step - _BOX_H / 2))
                y += 2 * step
            side = x - _BOX_W / 2 - 0.25  # the residual path, drawn to the left of the boxes
            tap = entry + 0.375  # between the box below and the first box of this sub-layer
            self.ax.plot([x, side, side], [tap, tap, y], color="0.45", lw=1)
            self.arrow((side, y), (x - _BOX_W / 2, y), color="0.45")
        layer_top = y
        if final_norm:
            self.box(x, y + step, "final LayerNorm (once)", "norm")
            self.arrow((x, y + _BOX_H / 2), (x, y + step - _BOX_H / 2))
            y += step
        return layer_top, y, heights

    def inputs(self, x: float, text: str, letter: str) -> None:
        """The token ids and the embedding under a stack at x."""
        self.box(x, 0.0, text, "io")
        self.box(x, 0.75, "Embedding ×√d_model + PE, Dropout", "embed", width=3.3)
        self.arrow((x, _BOX_H / 2), (x, 0.75 - _BOX_H / 2))
        self.ax.text(x + 1.72, 0.75, f"(B, {letter}, d_model)", fontsize=7, color="0.35",
                     va="center")

    def repeated(self, x: float, layer_top: float) -> None:
        """The dashed frame, marked × N, around the layer a stack repeats."""
        y0, y1 = 1.06, layer_top + 0.33
        self.ax.add_patch(FancyBboxPatch((x - 1.75, y0), 3.35, y1 - y0,
                                         boxstyle="round,pad=0.02,rounding_size=0.15",
                                         facecolor="none", edgecolor="0.55", linestyle="--"))
        self.ax.text(x + 1.7, (y0 + y1) / 2, "× N", fontsize=11, va="center")

    def output(self, x: float, top: float) -> float:
        """The tied output layer and the softmax over a stack's top; returns the highest y."""
        self.box(x, top + 0.75, "Linear: logits (B, T, V), weights tied to Embedding", "out",
                 width=3.6)
        self.box(x, top + 1.5, "softmax: next-token probabilities", "out", width=3.0)
        self.arrow((x, top + _BOX_H / 2 - 0.1), (x, top + 0.75 - _BOX_H / 2))
        self.arrow((x, top + 0.75 + _BOX_H / 2), (x, top + 1.5 - _BOX_H / 2))
        return top + 1.5


def plot_architecture(norm_first: bool = False, highlight: Iterable[str] | None = None,
                      here: str | None = None) -> Figure:
    """The encoder-decoder of Figure 1 of the paper, post-norm (default) or pre-norm, with shapes.

    Args:
        norm_first: draw the pre-norm variant (LayerNorm inside each residual branch and a final
            LayerNorm per stack) instead of the paper's post-norm.
        highlight: the parts to mark, named as in ``PARTS`` (the rest is faded); None marks none.
        here: a "you are here" line drawn under the title, in the highlight's colour.
    """
    kinds = None if highlight is None else frozenset(PARTS[part] for part in highlight)
    fig, ax = plt.subplots(figsize=(8.4, 9.6 if norm_first else 7.6))
    draw = _Drawing(ax, kinds)
    ex, dx = 2.0, 6.6  # column centres of encoder and decoder
    for x, side, shape, letter in ((ex, "source", "(B, S)", "S"), (dx, "target", "(B, T)", "T")):
        draw.inputs(x, f"{side} token ids {shape}", letter)
    encoder_parts = [("Multi-head self-attention", "attn"), ("Feed-forward (ReLU)", "ffn")]
    decoder_parts = [("Masked multi-head self-attention", "attn"),
                     ("Cross-attention: Q from decoder", "attn"), ("Feed-forward (ReLU)", "ffn")]
    enc_layer_top, enc_top, _ = draw.stack(ex, 0.75, encoder_parts, norm_first, norm_first)
    dec_layer_top, dec_top, heights = draw.stack(dx, 0.75, decoder_parts, norm_first, norm_first)
    top = max(enc_top, dec_top)
    draw.repeated(ex, enc_layer_top)
    draw.repeated(dx, dec_layer_top)
    cross_y = heights["Cross-attention: Q from decoder"]
    ax.text(ex, enc_top + 0.75, "memory (B, S, d_model)", ha="center", fontsize=8)
    draw.arrow((ex, enc_top + 0.6), (ex, enc_top + _BOX_H / 2 - 0.1), style="-")
    mid = (ex + dx) / 2
    ax.plot([ex, ex, mid], [enc_top + 0.9, enc_top + 1.05, enc_top + 1.05], color="C0", lw=1.2)
    ax.plot([mid, mid], [enc_top + 1.05, cross_y], color="C0", lw=1.2)
    draw.arrow((mid, cross_y), (dx - _BOX_W / 2, cross_y), color="C0")
    ax.text(mid - 0.1, cross_y + 0.15, "K, V", color="C0", fontsize=8, ha="right")
    highest = draw.output(dx, dec_top)
    ax.text(ex, -0.75, "Encoder", ha="center", fontsize=11, weight="bold")
    ax.text(dx, -0.75, "Decoder", ha="center", fontsize=11, weight="bold")
    ax.set_xlim(-0.3, 9.6)
    ax.set_ylim(-1.1, max(top, highest) + 0.6)
    ax.set_axis_off()
    ax.set_title("Pre-norm Transformer" if norm_first else "Post-norm Transformer (the paper)",
                 fontsize=11, pad=22 if here else 6)
    if here is not None:
        ax.text(0.5, 1.01, f"You are here: {here}", transform=ax.transAxes, ha="center",
                va="bottom", fontsize=10, color=_HERE, weight="bold")
    return fig


def plot_decoder_only() -> Figure:
    """The decoder alone, as chapter 8's writer builds it (GPT's shape): the paper's decoder
    without the encoder and the cross-attention, pre-norm, with a final LayerNorm; its
    self-attention masked so that each position sees only itself and the positions before."""
    fig, ax = plt.subplots(figsize=(5.6, 7.2))
    draw = _Drawing(ax, None)
    x = 2.0
    draw.inputs(x, "token ids (B, T): BOS, then the text", "T")
    parts = [("Masked multi-head self-attention", "attn"), ("Feed-forward (ReLU)", "ffn")]
    layer_top, top, heights = draw.stack(x, 0.75, parts, norm_first=True, final_norm=True)
    draw.repeated(x, layer_top)
    highest = draw.output(x, top)
    ax.text(x + 1.9, heights["Masked multi-head self-attention"],
            "no encoder: no memory,\nno cross-attention", fontsize=8, color="0.4", va="center")
    ax.set_xlim(-0.3, 5.6)
    ax.set_ylim(-0.35, highest + 0.35)
    ax.set_axis_off()
    ax.set_title("The decoder alone (pre-norm)", fontsize=11, pad=6)
    return fig
