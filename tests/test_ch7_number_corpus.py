"""Chapter 7's corpus: number words from num2words, split by number with no leakage, seeded."""

from __future__ import annotations

import numpy as np
import pytest
from num2words import num2words

from transformer_course.experiments.ch7_translation import number_corpus

SETS = ("train", "validation", "test", "validation_shapes", "test_shapes")


@pytest.fixture(scope="module")
def split() -> number_corpus.NumberSplit:
    return number_corpus.split_numbers(train=5000, validation=500, test=500, seed=3)


def test_number_words_are_num2words():
    assert number_corpus.number_words(45) == "forty-five"
    assert number_corpus.number_words(45, "de") == "fünfundvierzig"
    assert number_corpus.number_words(97, "fr") == "quatre-vingt-dix-sept"
    assert number_corpus.number_words(1234, "de") == "eintausendzweihundertvierunddreißig"


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_faster_writer_writes_what_num2words_writes(lang):
    # every shape of the range: small numbers, round ones, each group's edges, a random sample,
    # and numbers past the corpus (written by num2words itself)
    rng = np.random.default_rng(0)
    numbers = {*range(0, 1200), *(10 ** k for k in range(7)), *(10 ** k - 1 for k in range(1, 7)),
               *(int(n) for n in rng.integers(1, number_corpus.MAX_NUMBER + 1, 3000)),
               100_001, 999_000, 1_000_001, 12_345_678}
    for n in sorted(numbers):
        assert number_corpus.number_words(n, lang) == num2words(n, lang=lang), n


def test_pools_partition_the_range():
    train, validation, test = number_corpus.pools(1, 10_000, held_out=0.1, seed=1)
    together = np.concatenate([train, validation, test])
    assert len(together) == 10_000 and len(np.unique(together)) == 10_000
    assert together.min() == 1 and together.max() == 10_000
    assert len(validation) == len(test) == 1000


def test_split_has_no_number_in_two_sets(split):
    assert split.sizes() == {"train": 5000, "validation": 500, "test": 500,
                             "validation_shapes": 500, "test_shapes": 500}
    for i, a in enumerate(SETS):
        values = getattr(split, a)
        assert len(np.unique(values)) == len(values), a
        for b in SETS[i + 1:]:
            assert not np.intersect1d(values, getattr(split, b)).size, (a, b)
    train_pool, validation_pool, test_pool = number_corpus.pools(seed=3)
    assert np.isin(split.train, train_pool).all()
    assert np.isin(split.validation_shapes, validation_pool).all()
    assert np.isin(split.test, test_pool).all() and np.isin(split.test_shapes, test_pool).all()
    assert split.which(int(split.test[0])) == ["test"]


def test_split_is_seeded(split):
    again = number_corpus.split_numbers(train=5000, validation=500, test=500, seed=3)
    other = number_corpus.split_numbers(train=5000, validation=500, test=500, seed=4)
    for name in SETS:
        assert np.array_equal(getattr(split, name), getattr(again, name))
        assert not np.array_equal(getattr(split, name), getattr(other, name))


def test_zero_rate_controls_the_shapes_drawn():
    pool = np.arange(1, number_corpus.MAX_NUMBER + 1)
    uniform = number_corpus.draw_numbers(pool, 4000, np.random.default_rng(0), zero_rate=0.1)
    zeros = number_corpus.draw_numbers(pool, 4000, np.random.default_rng(0), zero_rate=0.5)
    assert abs(np.median(uniform) - 500_000) < 30_000  # 0.1 is the uniform draw
    assert (uniform < 1000).sum() < 20 and (zeros < 1000).sum() > 200
    assert len(np.unique(zeros)) == 4000


def test_extrapolation_split_tests_above_the_bound():
    split = number_corpus.extrapolation_split(500_000, train=2000, validation=200, test=200)
    for name in ("train", "validation", "validation_shapes"):
        assert getattr(split, name).max() < 500_000
    assert split.test.min() >= 500_000 and split.test_shapes.min() >= 500_000
    assert not np.intersect1d(split.test, split.test_shapes).size


def test_corpus_pairs_numbers_with_their_words():
    corpus = number_corpus.make_corpus([45, 1234], "en", "de")
    assert corpus.head() == [(45, "forty-five", "fünfundvierzig"),
                             (1234, "one thousand, two hundred and thirty-four",
                              "eintausendzweihundertvierunddreißig")]
    assert len(number_corpus.make_corpus(np.array([7]), "en", "fr")) == 1
