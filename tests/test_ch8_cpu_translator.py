"""Chapter 8's CPU translator: its checks, the weights it keeps at each, and scoring them."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from transformer_course.experiments.ch8_real_sentences import cpu_translator, data
from transformer_course.experiments.ch8_real_sentences.stored_models import scores, translate

TINY = replace(cpu_translator.CPU, steps=6, warmup=2, checks=2, batch_tokens=300,
               check_verses=4)


@pytest.fixture(scope="module")
def run() -> cpu_translator.Run:
    lines: list[str] = []
    trained = cpu_translator.train_cpu_translator(TINY, report=lines.append)
    trained.lines = lines  # type: ignore[attr-defined]
    return trained


def test_it_checks_before_the_first_step_and_at_each_check(run):
    assert [c.step for c in run.checks] == [0, 3, 6] and len(run.lines) == 3
    assert run.checks[0].tokens == 0 < run.checks[1].tokens < run.checks[2].tokens
    assert run.checks[0].seconds <= run.checks[1].seconds < run.checks[2].seconds
    assert all(0 <= c.validation_bleu <= 100 for c in run.checks)
    assert len(run.losses) == TINY.steps and not run.model.training


def test_the_model_is_the_recipes_and_each_check_keeps_its_own_weights(run):
    config = run.model.config
    assert (config.num_encoder_layers, config.num_decoder_layers) == (TINY.layers, TINY.layers)
    assert config.norm_first and config.dropout == TINY.dropout
    assert len(run.states) == len(run.checks)
    first, last = run.states[0], run.states[-1]
    assert not torch.equal(first["output_projection.weight"], last["output_projection.weight"])
    assert all(torch.equal(value, run.model.state_dict()[name]) for name, value in last.items())


def test_scoring_a_check_scores_the_model_it_kept(run):
    bleu = cpu_translator.bleu_on_test_books(run, limit=3)
    tokenizer = data.load_bpe()
    test = data.pairs(tokenizer, data.split_by_book(data.load_verses())["test"]).spread(3)
    direct = scores(translate(run.model, test, tokenizer, "cpu"), test.tgt_text)["bleu"]
    assert len(bleu) == len(run.checks) and bleu[-1] == pytest.approx(direct)


@pytest.mark.parametrize(("arguments", "error"), [({"recipe": "fast"}, TypeError),
                                                    ({"seed": -1}, ValueError)])
def test_a_bad_argument_is_refused_by_name(arguments, error):
    with pytest.raises(error, match=next(iter(arguments))):
        cpu_translator.train_cpu_translator(**arguments)


@pytest.mark.parametrize(("changes", "error"), [({"steps": 0}, ValueError),
                                                ({"checks": 7, "steps": 6}, ValueError),
                                                ({"peak_lr": "1e-3"}, TypeError),
                                                ({"warmup": -1}, ValueError)])
def test_a_bad_recipe_is_refused_by_field(changes, error):
    with pytest.raises(error, match=next(iter(changes))):
        cpu_translator.Recipe(**changes)
