"""Chapter 7's metrics against hand-computed cases, and the error classes."""

from __future__ import annotations

import math

import pytest

from transformer_course.experiments.ch7_translation import errors, metrics, number_corpus

RIGHT = ["fünfundvierzig", "siebenundneunzig", "eintausendzweihundertvierunddreißig"]


def test_exact_match_counts_identical_outputs():
    assert metrics.exact_match(RIGHT, RIGHT) == 1.0
    assert metrics.exact_match(["fünfundvierzig", "x", ""], RIGHT) == pytest.approx(1 / 3)


def test_word_bleu_is_zero_even_when_every_output_is_right():
    # one word per sentence: no 2- to 4-grams, so BLEU's geometric mean is 0
    assert metrics.word_bleu(RIGHT, RIGHT) == 0.0
    assert metrics.subword_bleu(RIGHT, RIGHT) == pytest.approx(100.0)
    assert metrics.chrf(RIGHT, RIGHT) == pytest.approx(100.0)


def test_subword_bleu_by_hand():
    # 234,234 against 235,234: 13 morphemes, one wrong (vier for fünf), same length (BP = 1);
    # the wrong one spoils 1 of 13 unigrams, 2 of 12 bigrams, 3 of 11 trigrams, 3 of 10 4-grams
    hyp = "zweihundertvierunddreißigtausendzweihundertvierunddreißig"
    ref = "zweihundertfünfunddreißigtausendzweihundertvierunddreißig"
    assert metrics.split_for_bleu(ref).split()[:3] == ["zwei", "hundert", "fünf"]
    expected = 100 * math.exp(sum(map(math.log, [12 / 13, 10 / 12, 8 / 11, 7 / 10])) / 4)
    assert metrics.subword_bleu([hyp], [ref]) == pytest.approx(expected)


def test_chrf_extremes():
    assert metrics.chrf(["abc"], ["xyz"]) == 0.0
    assert 0 < metrics.chrf(["vierundvierzig"], ["fünfundvierzig"]) < 100


def test_compare_decoders_counts_changes_fixes_and_breaks():
    greedy = ["a", "b", "c", "d"]
    beam = ["a", "B", "C", "e"]
    refs = ["a", "B", "c", "x"]
    assert metrics.compare_decoders(greedy, beam, refs) == metrics.DecoderComparison(
        changed=3, fixed=1, broken=1, total=4)


def test_scores_report_every_metric():
    row = metrics.scores(RIGHT, RIGHT)
    assert row == pytest.approx({"exact_match": 100.0, "bleu_subword": 100.0,
                                 "bleu_word": 0.0, "chrf": 100.0})


@pytest.mark.parametrize("number", [1, 7, 11, 17, 21, 45, 97, 100, 101, 1000, 1001, 1234,
                                    16017, 100000, 101000, 200082, 999999])
def test_german_reads_back_into_its_number(number):
    assert errors.german_to_number(number_corpus.number_words(number, "de")) == number


def test_error_classes():
    assert errors.classify_error(6000, "sechstausend") == "correct"
    assert errors.classify_error(6000, "sechs") == "wrong magnitude"
    assert errors.classify_error(6004, "viertausendsechs") == "digits swapped"
    assert errors.classify_error(45, "fünfundvierzg") == "not a number word"
    assert errors.classify_error(45, "") == "not a number word"
    assert errors.classify_error(45, "einsundvierzig") == "not a number word"  # not canonical
    assert errors.classify_error(512_345, "fünfhundertzwölftausenddreihundertsechsundvierzig") \
        == "wrong units digit"
    assert errors.classify_error(512_345, "sechshundertzwölftausenddreihundertsechsundvierzig") \
        == "several digits wrong"
    counts = errors.error_classes([6000, 45], ["sechs", "fünfundvierzig"])
    assert counts == {"wrong magnitude": 1, "correct": 1}


def test_the_sign_test():
    assert metrics.sign_test(5, 5) == 1.0
    assert metrics.sign_test(10, 0) == pytest.approx(2 / 2 ** 10)
    assert metrics.sign_test(3, 1) == metrics.sign_test(1, 3) == pytest.approx(2 * 5 / 16)
