"""Chapter 7's tokenizers: words, German morphemes and BPE cut losslessly; the vocabulary."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer_course.core.batching import PAD_ID
from transformer_course.experiments.ch7_translation import number_corpus, pipeline, subwords
from transformer_course.experiments.ch7_translation.subwords import (
    GermanMorphemes,
    Vocabulary,
    WordSegmenter,
)

EDGE_CASES = (1, 7, 10, 11, 17, 21, 100, 101, 1000, 1001, 100000, 999999, 101000, 16017, 70,
              66, 30)


def _sample(n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    return [*EDGE_CASES, *rng.integers(1, number_corpus.MAX_NUMBER + 1, n).tolist()]


@pytest.mark.parametrize("number", _sample(200, 0))
def test_words_and_morphemes_round_trip(number):
    english = number_corpus.number_words(number, "en")
    german = number_corpus.number_words(number, "de")
    words, morphemes = WordSegmenter(), GermanMorphemes()
    assert words.join(words.split(english)) == english
    assert morphemes.join(morphemes.split(german)) == german
    assert set(morphemes.split(german)) <= set(subwords.GERMAN_MORPHEMES)


def test_morphemes_cut_compounds_where_the_meaning_changes():
    cut = GermanMorphemes().split
    assert cut("einundzwanzig") == ["ein", "und", "zwanzig"]
    assert cut("fünfundvierzig") == ["fünf", "und", "vier", "zig"]
    assert cut("siebzehn") == ["sieb", "zehn"] and cut("sechzig") == ["sech", "zig"]
    assert cut("dreißig") == ["drei", "ßig"]
    assert cut("einhunderteinstausendeins") == ["ein", "hundert", "eins", "tausend", "eins"]
    assert GermanMorphemes().split_lenient("fünfxzig") == ["fünf", "x", "zig"]


def test_words_keep_hyphens_and_commas_as_tokens():
    text = "one thousand, two hundred and thirty-four"
    tokens = WordSegmenter().split(text)
    assert tokens == ["one", "thousand", ",", "two", "hundred", "and", "thirty", "-", "four"]
    assert WordSegmenter().join(tokens) == text
    french = "quatre-vingt-dix-sept mille"
    assert WordSegmenter().join(WordSegmenter().split(french)) == french


@pytest.fixture(scope="module")
def bpe() -> subwords.BPESegmenter:
    split = number_corpus.split_numbers(train=2000, validation=10, test=10)
    corpus = number_corpus.make_corpus(split.train)
    return subwords.learn_bpe(corpus.target, 80)


def test_bpe_is_learned_and_round_trips(bpe):
    assert bpe.vocab_size == 80 and len(bpe.merges()) > 30
    for number in _sample(50, 1):
        german = number_corpus.number_words(number, "de")
        assert bpe.join(bpe.split(german)) == german
    english = subwords.learn_bpe(["forty-five", "one hundred and one", "forty-one"], 30)
    text = "one hundred and forty-five"
    pieces = english.split(text)
    assert english.join(pieces) == text and pieces[1].startswith(subwords.WORD_START)
    with pytest.raises(ValueError):  # an unseen character would be dropped without a word
        english.split("forty-fivé")


def test_german_morphemes_refuse_what_is_not_a_number_word():
    with pytest.raises(ValueError):  # errors.german_to_number relies on it
        GermanMorphemes().split("vierx")


def test_bpe_is_deterministic(bpe):
    split = number_corpus.split_numbers(train=2000, validation=10, test=10)
    corpus = number_corpus.make_corpus(split.train)
    assert subwords.learn_bpe(corpus.target, 80).merges() == bpe.merges()


def test_vocabulary_puts_specials_first_and_round_trips():
    vocab = Vocabulary.build([["vier", "und"], ["zig"]])
    assert vocab.tokens[:3] == ("<pad>", "<s>", "</s>") and len(vocab) == 6
    ids = vocab.encode(["vier", "zig"])
    assert ids.dtype == torch.long and vocab.decode(ids) == ["vier", "zig"]
    assert vocab.decode([1, *ids.tolist(), 2, 5, 0]) == ["vier", "zig"]  # stops at EOS


def test_the_german_morphemes_are_a_uniquely_decodable_code():
    assert subwords.uniquely_decodable(subwords.GERMAN_MORPHEMES)
    assert not subwords.uniquely_decodable([*subwords.GERMAN_MORPHEMES, "s"])  # ein·s = eins
    assert not subwords.uniquely_decodable(["a", "ab", "bc", "c"])  # a·bc = ab·c
    assert subwords.uniquely_decodable(["0", "01", "11"])  # a suffix code


def test_a_corpus_is_encoded_row_by_row_and_padded_right():
    corpus = number_corpus.make_corpus([7, 45, 123_456, 1000])
    pipe = pipeline.build_pipeline(corpus)
    encoded = pipe.encode(corpus)
    for i, (source, target) in enumerate(zip(corpus.source, corpus.target, strict=True)):
        for ids, row in ((pipe.encode_source(source), encoded.src[i]),
                         (pipe.encode_target(target), encoded.tgt[i])):
            assert torch.equal(row[:len(ids)], ids)
            assert bool((row[len(ids):] == PAD_ID).all())
    longest = max(len(pipe.encode_target(t)) for t in corpus.target)
    assert encoded.tgt.shape == (4, longest) and encoded.tgt.dtype == torch.long
