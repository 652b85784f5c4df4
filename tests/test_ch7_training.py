"""Chapter 7's recipe: the schedule, a short training run that learns, and translating."""

from __future__ import annotations

import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, wrap_sources
from transformer_course.core.decoding import beam_search
from transformer_course.core.model import Transformer
from transformer_course.experiments.ch7_translation import data, pipeline, recipe, translate


def test_schedule_warms_up_then_decays_to_zero():
    t = recipe.TranslationTraining(steps=100, warmup=10, peak_lr=1e-3)
    assert t.learning_rate(5) == pytest.approx(5e-4) and t.learning_rate(10) == 1e-3
    assert t.learning_rate(55) == pytest.approx(5e-4) and t.learning_rate(100) == 0.0
    cosine = recipe.TranslationTraining(steps=100, warmup=10, decay="cosine")
    assert cosine.learning_rate(55) == pytest.approx(cosine.peak_lr / 2)
    paper = recipe.TranslationTraining(steps=100, warmup=25, decay="inverse_sqrt")
    assert paper.learning_rate(100) == pytest.approx(paper.peak_lr / 2)  # (25 / 100) ** 0.5


@pytest.fixture(scope="module")
def trained():
    """A 4,000-pair corpus and a small model trained for 250 steps (about 5 s)."""
    split = data.split_numbers(train=4000, validation=300, test=300, seed=1)
    train = data.make_corpus(split.train)
    pipe = pipeline.build_pipeline(train)
    encoded = pipe.encode(train)
    validation = pipe.encode(data.make_corpus(split.validation_shapes))
    config = recipe.model_config(len(pipe.source_vocab), len(pipe.target_vocab), d_model=32,
                                 d_ff=64)
    training = recipe.TranslationTraining(steps=250, warmup=20, batch_size=64, peak_lr=5e-3,
                                          eval_every=50)
    model, history = recipe.train_translation(config, training, encoded, validation)
    return model, history, pipe, validation


def test_a_short_run_learns_something_measurable(trained):
    model, history, _, _ = trained
    chance = 1 / 24  # the German morpheme vocabulary: about 24 tokens
    first, last = history.checks[0], history.checks[-1]
    assert len(history.losses) == 250 and history.rates[-1] == 0.0
    assert [c.step for c in history.checks] == [50, 100, 150, 200, 250]
    assert last.token_accuracy > 0.8 > 10 * chance
    assert last.exact_match > 0.1 > first.exact_match
    assert last.cross_entropy < first.cross_entropy / 2
    assert history.losses[-1] < history.losses[0] / 2
    assert not model.training and history.seconds > 0 and history.cpu_seconds > 0


def test_decoding_and_translating(trained):
    model, _, pipe, validation = trained
    subset = validation.subset(torch.arange(20))
    greedy = translate.decode(model, pipe, subset)
    beam = translate.decode(model, pipe, subset, method="beam", chunk=7)
    assert len(greedy) == len(beam) == 20 and all(isinstance(t, str) for t in greedy)
    result = translate.translate(model, pipe, 45)
    assert result.source == "forty-five" and result.reference == "fünfundvierzig"
    assert result.source_tokens == ("forty", "-", "five")
    scores = [h.score for h in result.hypotheses]
    assert scores == sorted(scores, reverse=True) and len(result.hypotheses) >= 4
    src = wrap_sources(pipe.encode_source("forty-five")[None])
    best = beam_search(model, src, 40, BOS_ID, EOS_ID, beam_size=4, alpha=0.6)[0]
    assert result.hypotheses[0].text == pipe.decode_target(best)  # the core's beam agrees
    T, S = len(result.target_tokens) + 1, len(result.source_tokens) + 2
    assert [tuple(m.shape) for m in result.cross] == [(4, T, S)] * 2
    assert torch.allclose(result.cross[0].sum(dim=-1), torch.ones(4, T))


def test_recipe_rejects_bad_input(trained):
    model, _, pipe, validation = trained
    with pytest.raises(ValueError, match="decay"):
        recipe.TranslationTraining(decay="step")
    with pytest.raises(ValueError, match="warmup"):
        recipe.TranslationTraining(steps=10, warmup=20)
    with pytest.raises(ValueError, match="label_smoothing"):
        recipe.TranslationTraining(label_smoothing=1.0)
    with pytest.raises(ValueError, match="step"):
        recipe.TranslationTraining(steps=10, warmup=2).learning_rate(11)
    with pytest.raises(TypeError, match="train"):
        recipe.train_translation(model.config, recipe.TranslationTraining(), "pairs", validation)
    with pytest.raises(ValueError, match="method"):
        translate.decode(model, pipe, validation, method="sampling")
    with pytest.raises(ValueError, match="source"):
        translate.translate(model, pipe, 0)
    with pytest.raises(ValueError, match="unknown"):
        translate.translate(model, pipe, "forty-fiv")
    with pytest.raises(ValueError, match="target"):
        pipeline.build_pipeline(data.make_corpus([1, 2]), "letters")
    with pytest.raises(TypeError, match="model"):
        translate.n_best(Transformer, pipe, "forty-five")
