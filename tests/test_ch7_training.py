"""Chapter 7's recipe: the schedule, a short training run that learns, and translating."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, wrap_sources
from transformer_course.core.decoding import beam_search
from transformer_course.experiments.ch7_translation import (
    number_corpus,
    pipeline,
    recipe,
    translate,
)


def test_the_recipe_warms_up_then_decays_to_zero_at_the_last_step():
    r = recipe.RECIPE
    assert r.learning_rate(r.warmup // 2) == pytest.approx(r.peak_lr / 2)
    assert r.learning_rate(r.warmup) == r.peak_lr and r.learning_rate(r.steps) == 0.0
    middle = (r.warmup + r.steps) // 2
    assert r.learning_rate(middle) == pytest.approx(r.peak_lr / 2)


@pytest.fixture(scope="module")
def trained():
    """A 4,000-pair corpus and a small model trained for 250 steps (about 5 s)."""
    split = number_corpus.split_numbers(train=4000, validation=300, test=300, seed=1)
    train = number_corpus.make_corpus(split.train)
    pipe = pipeline.build_pipeline(train)
    encoded = pipe.encode(train)
    validation = pipe.encode(number_corpus.make_corpus(split.validation_shapes))
    config = recipe.model_config(len(pipe.source_vocab), len(pipe.target_vocab), d_model=32,
                                 d_ff=64)
    training = replace(recipe.RECIPE, steps=250, warmup=20, peak_lr=5e-3, eval_every=50)
    kept = {100: None}
    model, result = recipe.train_translation(config, training, encoded, validation,
                                             snapshots=kept)
    return model, result, pipe, validation, kept, training


def test_a_short_run_learns_something_measurable(trained):
    model, result, *_ = trained
    chance = 1 / 24  # the German morpheme vocabulary: about 24 tokens
    first, last = result.evaluations[0].metrics, result.evaluations[-1].metrics
    assert result.steps == 250 and result.learning_rates[-1] == 0.0
    assert [e.step for e in result.evaluations] == [50, 100, 150, 200, 250]
    assert last.token_accuracy > 0.8 > 10 * chance
    assert last.exact_match > 0.1 > first.exact_match
    assert last.sequence_accuracy == last.by_set["validation"] == last.exact_match
    assert last.cross_entropy < first.cross_entropy / 2
    assert result.losses[-1] < result.losses[0] / 2
    assert not model.training and result.seconds > 0 and result.cpu_seconds > 0


def test_a_snapshot_is_the_model_at_its_step(trained):
    model, result, _, validation, kept, training = trained
    copy = kept[100]
    assert copy is not model and not copy.training
    at_100 = next(e.metrics for e in result.evaluations if e.step == 100)
    again = recipe.validate(copy, {"validation": recipe.pair_batch(validation)},
                            training.label_smoothing)
    assert again == at_100
    assert again.loss != result.evaluations[-1].metrics.loss  # not the final model


def test_a_snapshot_between_checks_is_refused(trained):
    *_, validation, _, training = trained
    with pytest.raises(ValueError, match="snapshots"):
        recipe.train_translation(recipe.model_config(5, 5), training, validation, validation,
                                 snapshots={75: None})


def test_decoding_and_translating(trained):
    model, _, pipe, validation, *_ = trained
    subset = validation.subset(torch.arange(20))
    greedy = translate.decode(model, pipe, subset)
    beam = translate.decode(model, pipe, subset, method="beam", chunk=7)
    assert len(greedy) == len(beam) == 20 and all(isinstance(t, str) for t in greedy)
    with pytest.raises(ValueError, match="method"):  # not silently a beam search
        translate.decode(model, pipe, subset, method="sampling")
    result = translate.translate(model, pipe, 45)
    assert result.source == "forty-five" and result.reference == "fünfundvierzig"
    assert result.source_tokens == ("forty", "-", "five")
    with pytest.raises(ValueError, match="target"):  # not silently a word segmentation
        pipeline.build_pipeline(number_corpus.make_corpus([1, 2]), "letters")
    scores = [h.score for h in result.hypotheses]
    assert scores == sorted(scores, reverse=True) and len(result.hypotheses) >= 4
    src = wrap_sources(pipe.encode_source("forty-five")[None])
    best = beam_search(model, src, 40, BOS_ID, EOS_ID, beam_size=4, alpha=0.6)[0]
    assert result.hypotheses[0].text == pipe.decode_target(best)  # the core's beam agrees
    T, S = len(result.target_tokens) + 1, len(result.source_tokens) + 2
    assert [tuple(m.shape) for m in result.cross] == [(4, T, S)] * 2
    assert torch.allclose(result.cross[0].sum(dim=-1), torch.ones(4, T))
    tokens = [h.tokens for h in result.hypotheses]
    assert len(set(tokens)) == len(tokens)  # never the same token sequence twice
    assert all(h.text == pipe.target.join([t for t in h.tokens if t != "<s>"])
               for h in result.hypotheses)


def test_a_start_symbol_inside_a_hypothesis_shows_in_its_tokens_not_its_text(trained):
    """Two hypotheses can write the same text: the text drops a <s> the model wrote inside one
    (as the model of chapter 7 does for 512,345 on some CPUs); their tokens differ."""
    _, _, pipe, *_ = trained
    ids = [pipe.target_vocab.ids[t] for t in ("fünf", "und", "vier", "zig")]
    plain = translate.hypothesis(pipe, torch.tensor([BOS_ID, *ids, EOS_ID]), -1.0, -0.5)
    inside = translate.hypothesis(pipe, torch.tensor([BOS_ID, *ids[:3], BOS_ID, ids[3], EOS_ID]),
                                  -6.0, -3.0)
    assert plain.text == inside.text == "fünfundvierzig"
    assert plain.pieces() == "fünf · und · vier · zig"
    assert inside.pieces() == "fünf · und · vier · <s> · zig"


def test_the_reference_leads_at_every_step_exactly_when_greedy_writes_it(trained):
    model, _, pipe, *_ = trained
    numbers = number_corpus.split_numbers(train=4000, validation=300, test=300, seed=1).test
    corpus = number_corpus.make_corpus(numbers)
    greedy = translate.decode(model, pipe, pipe.encode(corpus))
    right = [out == reference for out, reference in zip(greedy, corpus.target, strict=True)]
    leads = [translate.reference_lead(model, pipe, int(n)) for n in numbers]
    assert 0 < sum(right) < len(right)  # the short run gets some right and some wrong
    assert [lead > 0 for lead in leads] == right
