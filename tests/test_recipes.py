"""The recipes shared by chapter 6 and the benchmarks: what the issue and the seed notebook say."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from transformer_course.core.model import Transformer, count_parameters
from transformer_course.experiments.ch6_training import recipes
from transformer_course.experiments.ch6_training.tasks import TaskConfig, sequence_keys


def test_seed_notebook_recipe_is_the_stated_one():
    config = recipes.seed_notebook_model(recipes.COPY_TASK)
    assert (config.num_encoder_layers, config.num_decoder_layers, config.d_model, config.d_ff,
            config.num_heads, config.dropout) == (2, 2, 64, 128, 2, 0.1)
    training = recipes.SEED_NOTEBOOK_TRAINING
    assert training.steps == 20 * 20 and training.batch_size == 32
    assert {training.learning_rate(s, 64) for s in (1, 200, 400)} == {1e-3}
    assert not training.stop_early


def test_recipe_tasks_carry_their_length_power():
    # The fast recipe trains on lengths drawn with P(n) ~ n^2; the seed notebook drew uniformly.
    for task in (recipes.COPY_TASK, recipes.REVERSE_TASK, recipes.SORT_TASK):
        assert task.length_power == recipes.FAST_LENGTH_POWER == 2.0
        seed_task = recipes.seed_notebook_task(task)
        assert seed_task.length_power == 0.0
        assert dataclasses.replace(seed_task, length_power=2.0) == task  # nothing else changes
    uniform = [a for a in recipes.RECIPE_DEPARTURES if a.task_changes]
    assert [a.task_changes for a in uniform] == [{"length_power": 0.0}]
    with pytest.raises(TypeError, match="task must be a TaskConfig; got str"):
        recipes.seed_notebook_task("copy")  # type: ignore[arg-type]


def test_fast_recipe_is_smaller_than_the_seed_recipe():
    for task in (recipes.COPY_TASK, recipes.REVERSE_TASK):
        fast = count_parameters(Transformer(recipes.small_model(task)))
        seed = count_parameters(Transformer(recipes.seed_notebook_model(task)))
        assert fast < seed / 4
        assert recipes.small_model(task).src_vocab_size == task.vocab_size


def test_fast_recipe_learns_to_copy_every_held_out_sequence():
    # The recipe chapter 6 and `make bench` time: seed 0 must get all 1,000 held-out copies right
    # (teacher-forced, then by greedy decoding) well inside its budget of steps.
    from transformer_course.core.batching import make_batch
    from transformer_course.core.training import evaluate_decoding
    from transformer_course.experiments.ch6_training.task_training import train_on_task

    task, recipe = recipes.COPY_TASK, recipes.FAST_TRAINING
    held_out = recipes.held_out_set(task)
    model, result = train_on_task(task, recipes.small_model(task), recipe, held_out)
    assert result.reached_step is not None and result.reached_step <= recipe.steps // 4, result
    metrics, _ = evaluate_decoding(model, make_batch(held_out.src, held_out.tgt))
    assert metrics.sequence_accuracy == 1.0


def test_held_out_sets_are_fixed_and_distinct():
    first = recipes.held_out_set(recipes.COPY_TASK, 200)
    again = recipes.held_out_set(recipes.COPY_TASK, 200)
    assert torch.equal(first.src, again.src) and torch.equal(first.tgt, again.tgt)
    keys = sequence_keys(first.src, recipes.COPY_TASK.vocab_size)
    assert keys.unique().numel() == 200
    assert torch.equal(recipes.held_out_set(recipes.REVERSE_TASK, 5).tgt,
                       recipes.held_out_set(recipes.REVERSE_TASK, 5).tgt)


def test_recipes_reject_bad_input():
    with pytest.raises(TypeError, match="task"):
        recipes.small_model("copy")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="task"):
        recipes.held_out_set(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n"):
        recipes.held_out_set(TaskConfig("copy", num_symbols=2, min_len=1, max_len=1), 5)
