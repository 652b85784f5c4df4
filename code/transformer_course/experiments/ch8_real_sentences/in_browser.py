"""Chapter 8's stored models in the reader's browser: the files the site serves, and the widgets.

The page itself stays light. The weights (``translator.bin``, ``writer.bin``, as stored) and the
tokenizer travel as three scripts in the built site's ``_static/ch8/`` (the Sphinx extension
``tools/live_models.py`` writes them with :func:`write_assets`), and a widget loads them when the
reader asks (``explorer/sentences.js``). Scripts, not ``fetch``, so the site works from
``file://`` too. Each widget carries Python's outputs for its examples, so that the site tests can
check that the page computes what Python does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Any

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, wrap_sources
from transformer_course.core.decoding import greedy_decode
from transformer_course.core.model import Transformer
from transformer_course.explorer.export import page_config
from transformer_course.explorer.html import ExplorerHTML, live_model

from . import data, models, stored_models

FOLDER = "ch8"  # under the built site's _static/
BASE = f"../_static/{FOLDER}/"  # the folder as a chapter page (book/<name>.html) reaches it
TEMPERATURES = (0.7, 1.0, 1.5)
TOP_KS = (40, 1, None)  # None: every piece
MAX_NEW = 60  # pieces the writer adds, as the stored samples


def seen_words(texts: Sequence[str]) -> list[str]:
    """The distinct words (runs of letters, as the page's ``\\p{L}+``) of ``texts``, sorted."""
    return sorted({"".join(run) for text in texts for letter, run in groupby(text, str.isalpha)
                   if letter})


def _script(name: str, value: Any) -> str:
    return (f'(window.CourseAssets = window.CourseAssets || {{}})["{name}"] = '
            f"{json.dumps(value, ensure_ascii=False, separators=(',', ':'))};\n")


@cache
def assets() -> dict[str, str]:
    """{file name: JavaScript}: the tokenizer with the training split's words in each language,
    and each stored model's file in base64."""
    spec = json.loads(data.BPE.read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    train = data.split_by_book(data.load_verses())["train"]
    bpe = {"tokens": sorted(vocab, key=vocab.__getitem__),
           "merges": spec["model"]["merges"], "special": list(data.SPECIAL_TOKENS),
           "seen": {side: "\n".join(seen_words([getattr(v, side) for v in train]))
                    for side in ("spanish", "english")}}
    out = {"bpe.js": _script("bpe", bpe)}
    for name in ("translator", "writer"):
        raw = (stored_models.HERE / f"{name}.bin").read_bytes()
        out[f"{name}.js"] = _script(name, base64.b64encode(raw).decode("ascii"))
    return out


def write_assets(folder: Path) -> None:
    """Write :func:`assets` into ``folder``, leaving a file alone where it is already right."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in assets().items():
        path, content = folder / name, text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)


def bytes_loaded(model: str) -> int:
    """What the page loads for ``model`` ("translator" or "writer"): its file and the
    tokenizer's, in bytes."""
    return sum(len(assets()[f"{n}.js"].encode("utf-8")) for n in ("bpe", model))


def examples(verses: Sequence[data.Verse], words: tuple[int, int] = (8, 14),
             ) -> list[data.Verse]:
    """The page's example verses: in each test book, the first whose English has between
    ``words[0]`` and ``words[1]`` words."""
    picked = []
    for book in data.TEST_BOOKS:
        picked.append(next(v for v in verses if v.book == book
                           and words[0] <= len(v.english.split()) <= words[1]))
    return picked


def python_translation(model: Transformer, tokenizer: Any, spanish: str) -> list[int]:
    """Greedy decoding of one verse as the page runs it: BOS ... EOS."""
    src = wrap_sources(torch.tensor([tokenizer.encode(spanish, add_special_tokens=False).ids]))
    limit = stored_models.output_limit(src.shape[1], model.config.max_len)
    return greedy_decode(model, src, limit, BOS_ID, EOS_ID)[0].tolist()


def translator_widget(model: Transformer, tokenizer: Any, verses: Sequence[data.Verse],
                      ) -> ExplorerHTML:
    """The live translator, offering ``verses`` (Spanish, with their English references) and
    carrying Python's greedy output for each."""
    label = {"Ruth": "Ruth", "Eccl": "Ecclesiastes", "Dan": "Daniel", "1Cor": "1 Corinthians"}
    spec = {"base": BASE, "bytes": bytes_loaded("translator"),
            "config": page_config(model.config), "maxExtra": stored_models.OUTPUT_EXTRA,
            "examples": [{"label": f"{label.get(v.book, v.book)} {v.chapter}:{v.verse}",
                          "spanish": v.spanish, "english": v.english} for v in verses],
            "checks": [{"spanish": v.spanish,
                        "tokens": python_translation(model, tokenizer, v.spanish)}
                       for v in verses]}
    return live_model("translator", spec, fallback="<p>The live translator needs JavaScript; "
                      "the tables above show the same model's translations.</p>")


@torch.no_grad()
def python_writing(model: models.DecoderOnly, tokenizer: Any, prompt: str, steps: int,
                   ) -> dict[str, Any]:
    """What the page's checks compare: the prompt's ids, the ten likeliest next pieces at
    temperature 1 with their probabilities, and ``steps`` greedy pieces after the prompt."""
    ids = [BOS_ID, *tokenizer.encode(prompt, add_special_tokens=False).ids]
    probs = models.next_token_probabilities(model(torch.tensor([ids]))[0, -1])
    top = torch.topk(probs, 10)
    tokens = list(ids)
    for _ in range(steps):
        token = int(model(torch.tensor([tokens]))[0, -1].argmax())
        tokens.append(token)
        if token == EOS_ID:
            break
    return {"prompt": prompt, "ids": ids[1:],
            "top": [[int(i), float(p)] for i, p in zip(top.indices, top.values, strict=True)],
            "greedy": tokens[len(ids):]}


def writer_widget(model: models.DecoderOnly, tokenizer: Any, prompts: Sequence[str],
                  ) -> ExplorerHTML:
    """The live writer, opening with ``prompts[0]``, carrying Python's numbers for each prompt
    (:func:`python_writing`)."""
    spec = {"base": BASE, "bytes": bytes_loaded("writer"),
            "config": page_config(model.config), "maxNew": MAX_NEW, "prompt": prompts[0],
            "temperatures": list(TEMPERATURES), "topKs": list(TOP_KS),
            "checks": [python_writing(model, tokenizer, p, 20) for p in prompts]}
    return live_model("writer", spec, fallback="<p>The live writer needs JavaScript; the "
                      "table above shows the same model's samples.</p>")
