"""Tests for the chapter 7 check in transformer_course.exercises: a right corpus BLEU passes, and
each of the usual mistakes in writing one fails with the case that shows it."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from transformer_course.exercises import GERMAN_MORPHEMES, Passed, check_bleu
from transformer_course.experiments.ch7_translation.number_corpus import number_words
from transformer_course.experiments.ch7_translation.subwords import GermanMorphemes


def ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def bleu(hypotheses, references, *, clip=True, brevity=True, always_penalise=False,
         geometric=True):
    """Corpus BLEU written from the definition; the keywords switch in the usual mistakes."""
    matches, totals = [0] * 4, [0] * 4
    c = r = 0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        c, r = c + len(hypothesis), r + len(reference)
        for n in range(1, 5):
            have, allowed = ngrams(hypothesis, n), ngrams(reference, n)
            matches[n - 1] += sum(min(k, allowed[g]) if clip else k * (g in allowed)
                                  for g, k in have.items())
            totals[n - 1] += max(len(hypothesis) - n + 1, 0)
    precisions = [m / t if t else 0.0 for m, t in zip(matches, totals, strict=True)]
    if geometric:
        if min(precisions) == 0:
            return 0.0
        mean = math.exp(sum(math.log(p) for p in precisions) / 4)
    else:
        mean = sum(precisions) / 4
    penalty = math.exp(1 - r / c) if brevity and (c < r or always_penalise) else 1.0
    return 100 * penalty * mean


def sentence_average(hypotheses, references):
    return sum(bleu([h], [r]) for h, r in zip(hypotheses, references, strict=True)) \
        / len(hypotheses)


def test_a_right_bleu_passes():
    result = check_bleu(bleu)
    assert isinstance(result, Passed) and result.cases == 8
    assert 0.0 <= result.largest_difference <= 1e-6


@pytest.mark.parametrize(("wrong", "case"), [
    (lambda h, r: bleu(h, r, clip=False), "counts only as often as the reference"),
    (lambda h, r: bleu(h, r, brevity=False), "outputs too short"),
    (lambda h, r: bleu(h, r, always_penalise=True), "outputs too long"),
    (lambda h, r: bleu(h, r, geometric=False), "one wrong morpheme"),
    (sentence_average, "not the mean of sentence BLEUs"),
    (lambda h, r: bleu(h, r) / 100, "one wrong morpheme"),
])
def test_usual_mistakes_fail_naming_the_case(wrong, case):
    with pytest.raises(AssertionError, match=case):
        check_bleu(wrong)


def test_a_result_that_is_not_a_number_fails():
    with pytest.raises(AssertionError, match="expected a number"):
        check_bleu(lambda h, r: "66.9")


def test_bad_arguments():
    with pytest.raises(TypeError, match="fn must be callable"):
        check_bleu("bleu")


def test_the_cases_are_cut_as_the_chapter_cuts_them():
    split = GermanMorphemes().split
    assert {n: split(number_words(n, "de")) for n in GERMAN_MORPHEMES} == \
        {n: words.split() for n, words in GERMAN_MORPHEMES.items()}
