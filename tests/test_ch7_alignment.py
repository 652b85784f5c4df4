"""Chapter 7's gold alignments, hand-checked, and the cross-attention score that uses them."""

from __future__ import annotations

import pytest
import torch

from transformer_course.core.model import Transformer
from transformer_course.experiments.ch7_translation import (
    alignment,
    number_corpus,
    pipeline,
    recipe,
)


def test_gold_alignment_of_45_crosses():
    gold = alignment.gold_alignment(45)
    assert gold.english == ("forty", "-", "five")
    assert gold.german == ("fünf", "und", "vier", "zig")
    assert gold.links == ((2,), (1,), (0,), (0,))  # fünf -> five comes first, vier zig -> forty
    assert gold.kinds == ("units digit", "und", "tens stem", "zig/ßig")


def test_gold_alignment_of_97_and_1234():
    assert alignment.gold_alignment(97).pairs() == [
        ("sieben", "seven"), ("und", "-"), ("neun", "ninety"), ("zig", "ninety")]
    assert alignment.gold_alignment(1234).pairs() == [
        ("ein", "one"), ("tausend", "thousand"), ("zwei", "two"), ("hundert", "hundred"),
        ("vier", "four"), ("und", "-"), ("drei", "thirty"), ("ßig", "thirty")]


def test_gold_alignment_of_teens_and_groups():
    assert alignment.gold_alignment(16017).pairs() == [
        ("sech", "sixteen"), ("zehn", "sixteen"), ("tausend", "thousand"),
        ("sieb", "seventeen"), ("zehn", "seventeen")]
    gold = alignment.gold_alignment(777_777)  # the same word in four places, each its own
    assert gold.links[:6] == ((0,), (1,), (5,), (4,), (3,), (3,))  # sieben hundert sieben und..
    assert gold.links[7] == (8,) and gold.links[9] == (13,)


@pytest.mark.parametrize("number", [1, 11, 20, 100, 101, 1000, 21000, 101001, 999999, 200082])
def test_every_morpheme_has_a_gold_link(number):
    gold = alignment.gold_alignment(number)
    assert len(gold.links) == len(gold.german) and all(gold.links)


def test_links_carry_over_to_bpe_pieces():
    gold = alignment.gold_alignment(45)
    assert alignment.project_links(gold.german, gold.links, ["fünfund", "vierzig"]) == [
        (1, 2), (0,)]
    assert alignment.piece_of_morpheme(gold.german, ["fünfund", "vierzig"]) == [0, 0, 1, 1]


@pytest.fixture(scope="module")
def tiny():
    corpus = number_corpus.make_corpus([45, 97, 1234, 777_777])
    pipe = pipeline.build_pipeline(corpus)
    torch.manual_seed(0)
    model = Transformer(recipe.model_config(len(pipe.source_vocab), len(pipe.target_vocab),
                                            d_model=16, num_heads=2, d_ff=16))
    golds = [alignment.gold_alignment(n) for n in corpus.numbers]
    return model.eval(), pipe.encode(corpus), golds


def test_alignment_score_is_one_when_attention_is_the_gold(tiny, monkeypatch):
    model, pairs, golds = tiny
    batch = recipe.pair_batch(pairs)
    B, T, S = len(pairs), batch.tgt_in.shape[1], batch.src.shape[1]
    perfect = torch.zeros(B, 2, T, S)
    for b, gold in enumerate(golds):
        for t, link in enumerate(gold.links):
            perfect[b, :, t, link[0] + 1] = 1.0  # position 0 is BOS
    monkeypatch.setattr(model, "attention_maps",
                        lambda *args: {"cross": [perfect, perfect.roll(1, dims=-1)]})
    scores = alignment.alignment_scores(model, pairs, [g.links for g in golds],
                                        [g.kinds for g in golds])
    assert scores.tokens == sum(len(g.german) for g in golds)
    assert torch.equal(scores.per_head[0], torch.ones(2)) and scores.per_layer[0] == 1.0
    assert scores.per_head[1].max() < 1.0
    assert scores.best_head()[:2] == (0, 0)
    assert torch.equal(scores.kinds["zig/ßig"][0], torch.ones(2))


def test_items_sharing_a_query_cannot_all_hit(tiny, monkeypatch):
    # 45 cut as fünfund | vierzig: the first piece's query points at "five", so fünf hits and
    # und (gold "-") misses; vier and zig share the second piece's query, pointing at "forty"
    model, pairs, golds = tiny
    one = pairs.subset(torch.tensor([0]))
    batch = recipe.pair_batch(one)
    weights = torch.zeros(1, 2, batch.tgt_in.shape[1], batch.src.shape[1])
    weights[0, :, 0, 3] = 1.0  # query 0 -> "five" (position 3 after BOS)
    weights[0, :, 1, 1] = 1.0  # query 1 -> "forty"
    monkeypatch.setattr(model, "attention_maps", lambda *args: {"cross": [weights]})
    gold = golds[0]
    scores = alignment.alignment_scores(model, one, [gold.links], [gold.kinds],
                                        positions=[[0, 0, 1, 1]])
    assert scores.tokens == 4 and scores.per_head[0].tolist() == [0.75, 0.75]


def test_alignment_score_of_a_real_model_is_a_fraction(tiny):
    model, pairs, golds = tiny
    scores = alignment.alignment_scores(model, pairs, [g.links for g in golds])
    assert scores.per_head.shape == (2, 2) and scores.per_layer.shape == (2,)
    assert ((scores.per_head >= 0) & (scores.per_head <= 1)).all()
