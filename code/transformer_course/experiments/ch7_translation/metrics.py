"""Scoring translations the paper's way, with ``sacrebleu``: exact match, BLEU and chrF.

A German number is one word, so BLEU on words (sacrebleu's default tokenisation) gives a
hypothesis credit only when the whole number is right: its n-grams of 2 to 4 words do not exist,
so the corpus score is 0 even when every output is right (BLEU's geometric mean over n = 1..4
includes zero counts). BLEU is therefore computed on the morpheme-split text
(``tokenize='none'``: the tokens are given, separated by spaces), the same split for every
model, whatever its own vocabulary; chrF works on characters and needs no split.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import sacrebleu

from .subwords import GermanMorphemes, Segmenter, WordSegmenter


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction of hypotheses identical to their reference, in [0, 1]."""
    return sum(h == r for h, r in zip(hypotheses, references, strict=True)) / len(references)


def split_for_bleu(text: str, lang: str = "de") -> str:
    """``text`` as space-separated tokens: German cut into morphemes (leniently: a character
    that starts no morpheme stands alone), other languages into words."""
    if not text:
        return ""
    tokens = (GermanMorphemes().split_lenient(text) if lang == "de"
              else WordSegmenter().split(" ".join(text.split())))
    return " ".join(tokens)


def subword_bleu(hypotheses: Sequence[str], references: Sequence[str], lang: str = "de",
                 ) -> float:
    """Corpus BLEU (0 to 100) on morpheme-split text, ``sacrebleu`` with ``tokenize='none'``."""
    hyps = [split_for_bleu(h, lang) for h in hypotheses]
    refs = [split_for_bleu(r, lang) for r in references]
    return float(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score)


def word_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (0 to 100) with sacrebleu's default word tokenisation ('13a')."""
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


def chrf(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF (0 to 100): F-score of character n-grams (n <= 6), ``sacrebleu``'s default."""
    return float(sacrebleu.corpus_chrf(list(hypotheses), [list(references)]).score)


def scores(hypotheses: Sequence[str], references: Sequence[str], lang: str = "de",
           ) -> dict[str, float]:
    """Exact match (%), subword BLEU, word BLEU and chrF of one set of outputs."""
    return {"exact_match": 100 * exact_match(hypotheses, references),
            "bleu_subword": subword_bleu(hypotheses, references, lang),
            "bleu_word": word_bleu(hypotheses, references),
            "chrf": chrf(hypotheses, references)}


@dataclass(frozen=True)
class DecoderComparison:
    """How a second decoder (beam search) changes the outputs of a first (greedy)."""

    changed: int  # outputs that differ
    fixed: int  # wrong under the first, right under the second
    broken: int  # right under the first, wrong under the second
    total: int  # outputs compared


def compare_decoders(first: Sequence[str], second: Sequence[str], references: Sequence[str],
                     ) -> DecoderComparison:
    """Count the outputs ``second`` changes, fixes and breaks relative to ``first``."""
    triples = list(zip(first, second, references, strict=True))
    return DecoderComparison(changed=sum(a != b for a, b, _ in triples),
                             fixed=sum(a != r and b == r for a, b, r in triples),
                             broken=sum(a == r and b != r for a, b, r in triples),
                             total=len(triples))


def sign_test(a: int, b: int) -> float:
    """Two-sided sign test: how often a fair coin splits ``a + b`` changes at least as unevenly
    as ``a`` against ``b`` (1 when they split evenly)."""
    n, low = a + b, min(a, b)
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(low + 1)) / 2 ** n)


def segmented(segmenter: Segmenter, texts: Sequence[str]) -> list[list[str]]:
    """Each text cut by ``segmenter`` (for showing what a vocabulary does)."""
    return [segmenter.split(t) for t in texts]
