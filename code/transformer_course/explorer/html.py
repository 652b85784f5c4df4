"""Self-contained HTML for the attention viewer, the live translator and chapter 8's live models.

Each piece of HTML carries everything it needs inline: the stylesheet, the JavaScript model and
viewer (``explorer.js``, defined once per page however often it is included), the data as JSON,
and a ``<noscript>`` fallback. So it works from the built site, from ``file://``, and as a cell
output in JupyterLab, with no server and no network. Chapter 8's models are the exception: their
weights (megabytes) are files the built site serves, loaded when the reader asks
(``experiments/ch8_real_sentences/in_browser.py``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np
import torch

ASSETS = resources.files("transformer_course.explorer")


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


class ExplorerHTML:
    """HTML that Jupyter and myst-nb display as is (``_repr_html_``)."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup

    def __str__(self) -> str:
        return self.markup

    def __repr__(self) -> str:  # the notebook's text/plain form: the same in every run
        return "<attention explorer: needs a browser with JavaScript>"


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element (no "</" that could close it)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")


def _mount(kind: str, data: dict[str, Any], fallback: str, *, live: bool = False,
           ) -> ExplorerHTML:
    """A container for ``explorer.js`` (class ae-mount), or with ``live`` for ``sentences.js``
    (class ls-mount), with its data and its fallback."""
    scripts = ["explorer.js", "sentences.js"] if live else ["explorer.js"]
    prefix, library = ("ls", "LiveSentences") if live else ("ae", "AttentionExplorer")
    return ExplorerHTML(
        f"<style>{_asset('explorer.css')}</style>\n"
        + "".join(f"<script data-repeat-safe>{_asset(s)}</script>\n" for s in scripts)
        + f'<div class="{prefix}-mount" data-kind="{kind}">'
        f'<script type="application/json">{_script_json(data)}</script>'
        f"<noscript>{fallback}</noscript></div>\n"
        f"<script data-repeat-safe>window.{library}.mountAll();</script>")


def _rounded(weights: np.ndarray) -> list:
    return np.round(weights.astype(np.float64), 4).tolist()


def fallback_table(weights: np.ndarray, queries: Sequence[str], keys: Sequence[str],
                   caption: str) -> str:
    """A plain HTML table of one (T_q, T_k) weight matrix: what a reader without JavaScript sees.
    """
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    rows = "".join(
        f"<tr><th>{html.escape(q)}</th>" + "".join(f"<td>{w:.2f}</td>" for w in row) + "</tr>"
        for q, row in zip(queries, weights, strict=True))
    return (f"<table><caption>{html.escape(caption)}</caption><tr><th></th>{head}</tr>"
            f"{rows}</table>")


def attention_viewer(maps: Sequence[tuple[str, torch.Tensor | np.ndarray]],
                     queries: Sequence[str], keys: Sequence[str], *, query_name: str = "query",
                     key_name: str = "key") -> ExplorerHTML:
    """An interactive viewer of precomputed attention maps, with layer and head selection.

    Args:
        maps: (label, weights) pairs, weights (h, T_q, T_k) for one sequence, e.g.
            ("decoder layer 1, cross-attention", maps["cross"][0][b]).
        queries: T_q labels of the rows. keys: T_k labels of the columns.
        query_name, key_name: what the rows and the columns are, in words.
    """
    entries = []
    for label, weights in maps:
        w = weights.detach().cpu().numpy() if isinstance(weights, torch.Tensor) else weights
        entries.append({"label": label, "heads": _rounded(w)})
    first = np.asarray(entries[0]["heads"][0])
    data = {"maps": entries, "queries": list(queries), "keys": list(keys),
            "queryName": query_name, "keyName": key_name}
    caption = f"{maps[0][0]}, head 1 (the interactive viewer needs JavaScript)"
    return _mount("viewer", data, fallback_table(first, queries, keys, caption))


def translator(payload: dict[str, Any], source_vocab: dict[str, int], target_tokens: Sequence[str],
               *, pattern: str, examples: Sequence[int | str], max_len: int,
               wrap_source: bool = True, join: str = "", fallback: str = "",
               checks: Sequence[tuple[int, Sequence[int]]] = (),
               numbers: tuple[int, int] | None = None) -> ExplorerHTML:
    """The live translator: an input box, the model's greedy translation computed in the page,
    and its cross-attention in the viewer.

    Args:
        payload: from :func:`~transformer_course.explorer.export.export_model`.
        source_vocab: English piece -> id. target_tokens: id -> German piece ("</s>" for EOS).
        pattern: a JavaScript regular expression; its matches in the lower-cased English text,
            in order, are the pieces of ``source_vocab``.
        examples: inputs offered as buttons (numbers, or text such as a form the model refuses);
            the first is translated when the page loads.
        max_len: longest output, BOS included. wrap_source: put the source between BOS and EOS.
        join: how the output pieces are joined ("" for German compounds).
        fallback: HTML shown where JavaScript is off.
        checks: (number, token ids) pairs that Python's greedy decoding gave for the exported
            model; stored in the page, so that the site tests can type each number and compare.
        numbers: (low, high), the integers the model was trained on, written in English words as
            ``num2words`` writes them. With it the page translates only those: digits in the
            range (written out first) and their exact English words; for anything else (a word
            the training sentences never use, a number out of range, "forty five" for
            "forty-five") it shows a message saying what the model was trained on instead of a
            translation. None: every input whose pieces are in ``source_vocab`` is translated.
    """
    if numbers is not None:
        if (len(numbers) != 2 or not all(isinstance(n, int) for n in numbers)
                or not 0 <= numbers[0] <= numbers[1] <= 999_999):
            raise ValueError(f"numbers must be (low, high) with 0 <= low <= high <= 999999; "
                             f"got {numbers!r}")
    config = payload["config"]
    data = {"payload": payload, "maxLen": max_len,
            "examples": [n if isinstance(n, str) else int(n) for n in examples],
            "source": {"vocab": dict(source_vocab), "pattern": pattern, "wrap": wrap_source,
                       "bos": config["bos_id"], "eos": config["eos_id"],
                       "numbers": None if numbers is None else [int(n) for n in numbers]},
            "target": {"tokens": list(target_tokens), "join": join},
            "checks": [{"number": int(n), "tokens": [int(t) for t in tokens]}
                       for n, tokens in checks]}
    return _mount("translator", data, fallback or "<p>The live translator needs JavaScript.</p>")


def live_model(kind: str, data: dict[str, Any], *, fallback: str) -> ExplorerHTML:
    """A widget of ``sentences.js`` (kind "translator" or "writer") that loads a stored model
    when the reader asks and runs it in the page; ``data`` as its mount function documents."""
    if kind not in ("translator", "writer"):
        raise ValueError(f'kind must be "translator" or "writer"; got {kind!r}')
    return _mount(kind, data, fallback, live=True)
