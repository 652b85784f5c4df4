"""Chapter 7's trained model looking at "five" while it writes "fünf": the map chapter 1 opens with.

Chapter 1 shows what attention does before it explains anything, on chapter 7's translation
model. Training that model costs about a minute, so chapter 1 reads the map from
``opening_map.json`` instead (the stored study ``ch7-opening-map``; its environment record,
``opening_map.environment.json``, says where it was made); :func:`data_claims` checks what the
pages say about it. Chapter 7 trains the model anyway and shows its own map's reading beside the
stored one's (:func:`reading`) without claiming they agree: another CPU picks other kernels and
trains a new draw, whose weights may differ by a tenth or more. What it claims about its own map
is what every calibrated draw bears out (:func:`lead_as_read`): the German tokens chapter 1 names
attend most to the English words chapter 1 names. Regenerate the file after any change to
chapter 7's data, model or recipe (about a minute on one thread):

    python -m transformer_course.experiments.ch7_translation.opening_map

The map is the last decoder layer's cross-attention, heads averaged, for the best beam hypothesis,
exactly as chapter 7's Figure 7 draws it. The file also holds one intervention: the greedy
translation when the word the first German token attends to most is masked out, so that no
attention in the model can read it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID, wrap_sources
from transformer_course.core.decoding import greedy_decode
from transformer_course.core.masks import padding_mask_from_tokens
from transformer_course.core.model import Transformer
from transformer_course.notebook import seed_everything, set_threads
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    load,
    record_environment,
)

from . import number_corpus, prepared, recipe, translate
from .pipeline import Pipeline

NUMBER = 45  # "forty-five" -> "fünfundvierzig": the first German token translates the last word
# The German tokens whose strongest English word chapter 1 names (rows of the map), and those
# words: fünf -> five, und -> "-", vier -> forty. The others ("zig", "</s>") spread their weight,
# so which column wins them may change from one draw to the next.
READ_ROWS = (0, 1, 2)
READ_AS = ("five", "-", "forty")
# "Each clearly ahead of the rest of its row": the lead chapter 7's claim on its own map states
# (claim_trained "ch7-map-lead", whose calibrated draws must lie above it with room).
LEAD = 0.2
DIGITS = 4  # decimals stored per weight
STUDY = declare(__file__, "ch7-opening-map", (1, 7), "opening_map.json", "about 1 CPU-minute")


@torch.no_grad()
def opening_map(model: Transformer, pipeline: Pipeline, number: int = NUMBER) -> dict[str, Any]:
    """The map and the masked-word intervention for ``number``, as the JSON file stores them.

    Returns:
        number; source (English tokens, ``<s>``/``</s>`` included) and target (German tokens,
        ``</s>`` included): the map's columns and rows; weights: rows x columns, last decoder
        layer, heads averaged, rounded to :data:`DIGITS`; translation: the greedy output;
        masked_word: the source token the first target token attends to most; masked_translation:
        the greedy output with that position masked out of every attention.
    """
    shown = translate.translate(model, pipeline, number)
    weights = shown.cross[-1].mean(dim=0)  # (T, S): heads averaged
    source = ["<s>", *shown.source_tokens, "</s>"]
    strongest = int(weights[0].argmax())  # the column the first German token reads most
    src = wrap_sources(pipeline.source_vocab.encode(list(shown.source_tokens))[None])  # (1, S)
    keep = padding_mask_from_tokens(src, PAD_ID).clone()  # (1, 1, S)
    keep[..., strongest] = False
    model.eval()
    masked = greedy_decode(model, src, 40, BOS_ID, EOS_ID, src_mask=keep)[0]
    return {"number": number, "source": source, "target": [*shown.target_tokens, "</s>"],
            "weights": [[round(float(w), DIGITS) for w in row] for row in weights],
            "translation": shown.greedy, "masked_word": source[strongest],
            "masked_translation": pipeline.decode_target(masked)}


def stored(path: Path = STUDY.path) -> dict[str, Any]:
    """The stored map (what :func:`opening_map` returned for chapter 7's model)."""
    return load(path)


def data_claims(path: Path = STUDY.path) -> list[DataClaim]:
    """What chapters 1 and 7 say about the stored map (study ``ch7-opening-map``), checked on
    it."""
    shown = stored(path)
    first = shown["weights"][0]  # the row of the first German token
    five = shown["source"].index("five")
    strongest = [shown["source"][row.index(max(row))] for row in shown["weights"]]
    masked_out = shown["masked_translation"]
    return [
        data_claim('the first German token is "fünf", its strongest weight (above one half) on '
                   '"five", the word the intervention masks',
                   shown["target"][0] == "fünf" and shown["masked_word"] == "five"
                   and first[five] > 0.5 and max(first) == first[five], first_row=first),
        data_claim('"fünf" puts almost none (below 0.1) on the words before "five"',
                   sum(first[1:five]) < 0.1, before_five=sum(first[1:five])),
        data_claim('"und" looks at the hyphen most, "vier" at "forty"',
                   strongest[1:3] == ["-", "forty"], strongest=strongest),
        data_claim('the model writes "fünfundvierzig"; without "five" only the units change',
                   shown["translation"] == "fünfundvierzig" and masked_out != "fünfundvierzig"
                   and masked_out.endswith("undvierzig"), translation=shown["translation"],
                   masked_translation=masked_out),
        # chapter 7, beside its own map: "fünf", "und" and "vier" read as chapter 1 says, each
        # clearly ahead of the rest of its row
        data_claim(f"each of fünf, und and vier attends most to {READ_AS}, by {LEAD} or more",
                   lead_as_read(shown) >= LEAD, lead=lead_as_read(shown)),
    ]


def reading(shown: dict[str, Any]) -> dict[str, Any]:
    """What a map says in words, for each German token of :data:`READ_ROWS`: the token
    (``target``), the English token it attends to most (``strongest``) and by how much that
    weight leads the row's next one (``lead``)."""
    rows = [sorted(((w, col) for col, w in enumerate(shown["weights"][r])), reverse=True)
            for r in READ_ROWS]
    return {"target": [shown["target"][r] for r in READ_ROWS],
            "strongest": [shown["source"][row[0][1]] for row in rows],
            "lead": [round(row[0][0] - row[1][0], 4) for row in rows]}


def lead_as_read(shown: dict[str, Any]) -> float:
    """How clearly a map reads as chapter 1 says: over the German tokens of :data:`READ_ROWS`,
    the smallest lead of the weight on the English word :data:`READ_AS` names for it over the
    largest other weight of its row (negative where another word wins)."""
    leads = []
    for r, word in zip(READ_ROWS, READ_AS, strict=True):
        row = shown["weights"][r]
        col = shown["source"].index(word)
        leads.append(row[col] - max(w for c, w in enumerate(row) if c != col))
    return float(min(leads))


def train_chapter_model() -> tuple[Transformer, Pipeline]:
    """Chapter 7's model, trained as chapter 7 trains it (seed, split, recipe, one thread)."""
    seed_everything()
    set_threads(1)
    torch.use_deterministic_algorithms(True)
    chapter = prepared.prepare(number_corpus.split_numbers())
    config = recipe.model_config(len(chapter.pipeline.source_vocab),
                                 len(chapter.pipeline.target_vocab))
    model, _ = recipe.train_translation(config, replace(recipe.RECIPE, eval_every=50),
                                        chapter.pairs["train"], chapter.validation())
    return model, chapter.pipeline


def main(path: Path = STUDY.path) -> None:
    """Train chapter 7's model, write its map to ``path`` and the environment record beside it."""
    model, pipeline = train_chapter_model()
    path.write_text(json.dumps(opening_map(model, pipeline), ensure_ascii=False, indent=1) + "\n",
                    encoding="utf-8")
    record = record_environment(path)
    print(f"wrote {path} and {record.name}", file=sys.stderr)
    check_data_claims("ch7-opening-map")  # what the pages say about it still holds


if __name__ == "__main__":
    main()
