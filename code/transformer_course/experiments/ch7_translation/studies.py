"""The chapter's measurements: Table 3's variations, segmentations compared, greedy against beam,
and numbers beyond the training range. Each trains with ``recipe.train_translation`` and scores
on the validation sets (the test sets are for the chapter's one final report)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from transformer_course.core.model import Transformer, TransformerConfig, count_parameters
from transformer_course.core.training import TrainConfig, TrainResult
from transformer_course.paper import BEAM_SIZE, LENGTH_PENALTY_ALPHA, TABLE3, Table3Row

from .alignment import (
    AlignmentScores,
    alignment_scores,
    gold_alignment,
    piece_of_morpheme,
    project_links,
)
from .metrics import DecoderComparison, compare_decoders, scores
from .number_corpus import NumberSplit, make_corpus, number_words
from .prepared import TranslationData
from .recipe import RECIPE, model_config, train_translation
from .subwords import GermanMorphemes
from .translate import decode


@dataclass(frozen=True)
class Variant:
    """One change to the recipe: a name, what it changes, and the changed config fields."""

    name: str
    description: str
    model_changes: dict[str, Any] = field(default_factory=dict)  # TransformerConfig fields
    train_changes: dict[str, Any] = field(default_factory=dict)  # TrainConfig fields


TABLE3_VARIANTS = (
    Variant("baseline", "the chapter's recipe (h = 4, N = 2, P_drop = 0.1, eps_ls = 0.1)"),
    Variant("no label smoothing", "eps_ls = 0", train_changes={"label_smoothing": 0.0}),
    Variant("no dropout", "P_drop = 0", model_changes={"dropout": 0.0}),
    Variant("1 head", "h = 1, d_k = 64", model_changes={"num_heads": 1}),
    Variant("8 heads", "h = 8, d_k = 8", model_changes={"num_heads": 8}),
    Variant("N = 1", "one encoder and one decoder layer",
            model_changes={"num_encoder_layers": 1, "num_decoder_layers": 1}),
    Variant("learned positions", "a trained vector per position (Table 3, row E)",
            model_changes={"positional": "learned"}),
    Variant("no positional encoding", "nothing added to the embeddings",
            model_changes={"positional": "none"}),
)

# The paper's Table 3 row each variant stands beside (the paper never removed the positions).
PAPER_TABLE3: dict[str, Table3Row | None] = {
    "baseline": TABLE3["base"], "no label smoothing": TABLE3["eps_ls = 0"],
    "no dropout": TABLE3["P_drop = 0"], "1 head": TABLE3["h = 1"], "8 heads": TABLE3["h = 16"],
    "N = 1": TABLE3["N = 2"], "learned positions": TABLE3["learned positions"],
    "no positional encoding": None,
}


def run_row(name: str, model: Transformer, result: TrainResult) -> dict[str, Any]:
    """One table row for a finished run: its validation scores at the end and its timing."""
    last = result.evaluations[-1].metrics
    return {"variant": name, "params": count_parameters(model), "steps": result.steps,
            **{f"exact_{k}": 100 * v for k, v in last.by_set.items()},
            "perplexity": math.exp(last.cross_entropy),
            "reached_step": result.reached_step, "reached_cpu_s": result.reached_cpu_seconds,
            "cpu_s": result.cpu_seconds, "wall_s": result.seconds}


def run_variants(data: TranslationData, base_model: TransformerConfig,
                 base_training: TrainConfig, variants: Sequence[Variant] = TABLE3_VARIANTS,
                 seeds: Sequence[int] = (0, 1, 2)) -> list[dict[str, Any]]:
    """Train every variant with every seed on ``data``; one row per run (see :func:`run_row`).

    Validation exact match (uniform and shapes sets) and perplexity (exp of the unsmoothed
    cross-entropy per target token, as the paper's "PPL (dev)") at the end of the budget, the
    first check with both sets at the target, and the training time.
    """
    rows = []
    for variant in variants:
        for seed in seeds:
            training = replace(base_training, seed=seed, **variant.train_changes)
            model, result = train_translation(replace(base_model, **variant.model_changes),
                                              training, data.pairs["train"], data.validation())
            rows.append({**run_row(variant.name, model, result), "seed": seed})
    return rows


def links_for(data: TranslationData, set_name: str, *, per_morpheme: bool = False,
              ) -> tuple[list[list[tuple[int, ...]]], list[list[str]], list[list[int]] | None]:
    """Gold links, kinds and query positions of a set, for ``alignment.alignment_scores``.

    Morpheme targets: one item per morpheme. Other targets (BPE): one item per piece, linked to
    the words of every morpheme it covers (kind "piece"); or, with ``per_morpheme``, one item per
    morpheme, scored at the piece that holds it.
    """
    own = isinstance(data.pipeline.target, GermanMorphemes)
    links, kinds, positions = [], [], []
    for number, target in zip(data.texts[set_name].numbers, data.texts[set_name].target,
                              strict=True):
        gold = gold_alignment(number)
        pieces = data.pipeline.target.split(target)
        if own or per_morpheme:
            links.append(list(gold.links))
            kinds.append(list(gold.kinds))
            positions.append(list(range(len(gold.german))) if own
                             else piece_of_morpheme(gold.german, pieces))
        else:
            links.append(project_links(gold.german, gold.links, pieces))
            kinds.append(["piece"] * len(pieces))
            positions.append(list(range(len(pieces))))
    return links, kinds, positions


def alignment_on(model: Transformer, data: TranslationData, set_name: str = "validation", *,
                 per_morpheme: bool = False) -> AlignmentScores:
    """Cross-attention alignment scores of ``model`` on one set of ``data`` (see
    :func:`links_for`)."""
    links, kinds, positions = links_for(data, set_name, per_morpheme=per_morpheme)
    return alignment_scores(model, data.pairs[set_name], links, kinds, positions)


def beam_against_greedy(model: Transformer, data: TranslationData, set_name: str, *,
                        beam_size: int = BEAM_SIZE, alpha: float = LENGTH_PENALTY_ALPHA,
                        ) -> tuple[DecoderComparison, list[str], list[str]]:
    """Decode a set greedily and by beam search; how many outputs beam search changes, fixes
    and breaks, and both sets of outputs."""
    pairs = data.pairs[set_name]
    greedy = decode(model, data.pipeline, pairs)
    beam = decode(model, data.pipeline, pairs, method="beam", beam_size=beam_size, alpha=alpha)
    return (compare_decoders(greedy, beam, list(data.texts[set_name].target)), greedy, beam)


def add_training_numbers(split: NumberSplit, numbers: np.ndarray) -> NumberSplit:
    """``split`` with ``numbers`` added to its training set (and removed from its test sets)."""
    return replace(split, train=np.union1d(split.train, numbers),
                   test=np.setdiff1d(split.test, numbers),
                   test_shapes=np.setdiff1d(split.test_shapes, numbers))


def german_by_groups(model: Transformer, data: TranslationData, numbers: Sequence[int],
                     ) -> list[str]:
    """A change of representation: translate each three-digit group of a number on its own
    ("five hundred and twelve" | "three hundred and forty-five") and join the German with
    "tausend", as num2words does ("ein" for a thousands group of one).

    A model that never saw a leading digit in the thousands group has seen it in the units
    group, and here it only ever translates groups.
    """
    upper = [n // 1000 for n in numbers]
    lower = [n % 1000 for n in numbers]
    groups = sorted({g for g in upper + lower if g})
    texts = make_corpus(groups)
    outputs = dict(zip(groups, decode(model, data.pipeline, data.pipeline.encode(texts)),
                       strict=True))
    joined = []
    for u, lo in zip(upper, lower, strict=True):
        head = "" if not u else ("ein" if u == 1 else outputs[u]) + "tausend"
        joined.append(head + (outputs[lo] if lo else ""))
    return joined


def group_rule_holds(numbers: Sequence[int]) -> bool:
    """Whether num2words' German for each number is its groups' German joined by "tausend"
    (with "ein" for a thousands group of one): the rule :func:`german_by_groups` relies on."""
    def de(n: int) -> str:
        return number_words(n, "de") if n else ""

    return all(de(n) == (("" if n < 1000 else ("ein" if n // 1000 == 1 else de(n // 1000))
                          + "tausend") + de(n % 1000)) for n in numbers)


def tokens_per_target(data: TranslationData) -> float:
    """Mean number of target tokens per training pair (without EOS)."""
    return float((data.pairs["train"].tgt != 0).sum(dim=1).float().mean())


def main_run(data: TranslationData, seed: int = 0, training: TrainConfig = RECIPE,
             ) -> tuple[Transformer, TrainResult, dict[str, Any]]:
    """Train the chapter's recipe with ``seed`` and report what ``make bench`` prints.

    Returns:
        the model, its ``TrainResult``, and a row: seconds (CPU and wall) and step to the target
        on both validation sets, and on each test set exact match (%), subword BLEU, word BLEU
        and chrF of greedy decoding.
    """
    config = model_config(len(data.pipeline.source_vocab), len(data.pipeline.target_vocab))
    model, result = train_translation(config, replace(training, seed=seed), data.pairs["train"],
                                      data.validation())
    row: dict[str, Any] = {"seed": seed, "reached_step": result.reached_step,
                           "reached_cpu_s": result.reached_cpu_seconds,
                           "reached_wall_s": result.reached_seconds,
                           "cpu_s": result.cpu_seconds, "wall_s": result.seconds}
    for name in ("test", "test_shapes"):
        outputs = decode(model, data.pipeline, data.pairs[name])
        row[name] = scores(outputs, list(data.texts[name].target), data.pipeline.target_lang)
    return model, result, row
