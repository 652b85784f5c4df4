"""The recipes shared by chapter 6 and the benchmarks: what the issue and the seed notebook say."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from transformer_course.core.model import Transformer, count_parameters
from transformer_course.experiments.ch6_training import recipes
from transformer_course.experiments.ch6_training.tasks import sequence_keys


def test_seed_notebook_recipe_trains_at_one_rate_to_its_last_step():
    """The seed notebook's recipe, as chapter 6 describes it: no warm-up or decay, no early stop."""
    training = recipes.SEED_NOTEBOOK_TRAINING
    d_model = recipes.seed_notebook_model(recipes.COPY_TASK).d_model
    rates = {training.learning_rate(step, d_model) for step in range(1, training.steps + 1)}
    assert len(rates) == 1 and not training.stop_early


def test_recipe_tasks_carry_their_length_power():
    # The fast recipe trains on lengths drawn with P(n) ~ n^2; the seed notebook drew uniformly.
    for task in (recipes.COPY_TASK, recipes.REVERSE_TASK, recipes.SORT_TASK):
        assert task.length_power == recipes.FAST_LENGTH_POWER == 2.0
        seed_task = recipes.seed_notebook_task(task)
        assert seed_task.length_power == 0.0
        assert dataclasses.replace(seed_task, length_power=2.0) == task  # nothing else changes
    uniform = [a for a in recipes.RECIPE_DEPARTURES if a.task_changes]
    assert [a.task_changes for a in uniform] == [{"length_power": 0.0}]


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


def test_validation_and_test_sets_are_disjoint_and_fixed():
    validation, test = recipes.held_out_split(recipes.COPY_TASK, 50, 80)
    assert (len(validation), len(test)) == (50, 80)
    vocab = recipes.COPY_TASK.vocab_size
    keys = set(sequence_keys(validation.src, vocab).tolist())
    test_keys = set(sequence_keys(test.src, vocab).tolist())
    assert len(keys) == 50 and len(test_keys) == 80 and not keys & test_keys
    again, _ = recipes.held_out_split(recipes.COPY_TASK, 50, 80)
    assert torch.equal(again.src, validation.src)


def test_longer_set_holds_only_untrained_lengths():
    task = recipes.COPY_TASK
    longer = recipes.longer_set(task, 14, 200)
    assert longer.lengths.min() == task.max_len + 1 and longer.lengths.max() == 14
    assert longer.src.shape == (200, 14) and torch.equal(longer.src, longer.tgt)  # copy task
    assert recipes.small_model(task).max_len >= 14 + 2  # the recipe's model can read them


def test_paper_peak_scales_the_schedule_to_the_papers_peak():
    from transformer_course.core.schedule import peak_lr

    config, training = recipes.small_model(recipes.COPY_TASK), recipes.FAST_TRAINING
    slow = recipes.paper_peak(config, training)
    assert peak_lr(config.d_model, slow.warmup, slow.lr_scale) == pytest.approx(
        peak_lr(512, 4000), rel=1e-12)
    assert slow.learning_rate(slow.warmup, config.d_model) == pytest.approx(
        recipes.PAPER_PEAK_LR, rel=1e-12)
    assert slow.warmup == training.warmup and slow.betas == training.betas


def test_departures_undo_one_setting_each():
    changes = [(a.name, a.model_changes, a.train_changes, a.task_changes)
               for a in recipes.RECIPE_DEPARTURES]
    assert changes == [
        ("beta_1 = 0.9", {}, {"betas": (0.9, recipes.FAST_TRAINING.betas[1])}, {}),
        ("P_drop = 0.1", {"dropout": 0.1}, {}, {}),
        ("uniform lengths", {}, {}, {"length_power": 0.0})]
