"""Chapter 8's small writer: its loss per character, its checks and what it writes."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from transformer_course.experiments.ch8_real_sentences import data, small_writer
from transformer_course.experiments.ch8_real_sentences.models import DecoderOnly

TINY = replace(small_writer.PAGE, vocab_size=120, d_model=32, steps=24, checks=2, warmup=4,
               batch_tokens=512)


@pytest.fixture(scope="module")
def sets():
    every = data.split_by_book(data.load_verses())
    return {"train": every["train"][:1500], "validation": every["validation"][:100]}


def test_a_uniform_guess_costs_log2_v_bits_a_piece_spread_over_the_characters(sets):
    texts = [v.english for v in sets["validation"]]
    tokenizer = data.train_bpe(texts, 100)
    ids = data.encode(tokenizer, texts)
    model = DecoderOnly(small_writer.model_config(tokenizer.get_vocab_size(), TINY))
    with torch.no_grad():  # tied output layer at zero: every piece gets the same logit
        model.embed.token.weight.zero_()
    pieces = sum(len(i) + 1 for i in ids)  # each verse's pieces and its EOS
    chars = sum(len(t) + 1 for t in texts)
    assert small_writer.characters(texts) == chars
    expected = math.log2(tokenizer.get_vocab_size()) * pieces / chars
    assert small_writer.bits_per_character(model, ids, chars) == pytest.approx(expected, rel=1e-5)


def test_training_checks_at_the_start_and_each_check_and_lowers_the_loss(sets):
    lines: list[str] = []
    run = small_writer.train_writer(sets, TINY, report=lines.append)
    assert [c.step for c in run.checks] == [0, 12, 24]
    assert len(lines) == 3 and all(c.sample.startswith(small_writer.PROMPT) for c in run.checks)
    read = [c.characters for c in run.checks]
    assert read[0] == 0 and read[0] < read[1] < read[2]
    assert run.checks[-1].bits_per_character < run.checks[0].bits_per_character - 0.3
    assert len(run.losses) == TINY.steps and not run.model.training
    assert all(0 <= share <= 1 for share in run.word_share)


def test_the_same_seed_gives_the_same_run_and_samples(sets):
    first, second = (small_writer.train_writer(sets, replace(TINY, steps=6, checks=1),
                                               report=None) for _ in range(2))
    assert first.checks == second.checks and first.losses == second.losses


def test_the_word_share_counts_written_words_found_in_the_vocabulary(monkeypatch):
    vocabulary = {"and", "the", "lord", "said"}
    texts = iter(["In the beginning and the LORD said", "In the beginning the, the"] * 5
                 + ["In the beginning zzq the"] * 10)
    # word_share samples through write(): a stand-in returns fixed texts, the prompt first
    monkeypatch.setattr(small_writer, "write", lambda *args, **kwargs: next(texts))
    assert small_writer.word_share(None, None, vocabulary) == 1.0
    assert small_writer.word_share(None, None, vocabulary) == 0.5


def test_the_reader_s_call_names_a_wrong_argument(sets):
    with pytest.raises(ValueError, match="sets"):
        small_writer.train_writer({"train": sets["train"]})
    with pytest.raises(TypeError, match="recipe"):
        small_writer.train_writer(sets, {"steps": 10})
    with pytest.raises(ValueError, match="seed"):
        small_writer.train_writer(sets, TINY, seed=-1)
