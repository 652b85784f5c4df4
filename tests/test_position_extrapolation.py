"""Tests for the copy-back task used to test length extrapolation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from transformer_course.experiments.ch4_positional_encoding.position_extrapolation import (
    CopyBackModel,
    CopyTaskConfig,
    copy_task_batch,
    train_copy_task,
)

SMALL = CopyTaskConfig(vocab_size=8, d_model=16, train_len=8, test_len=20, batch_size=32,
                       steps=100, eval_rows=64)


@pytest.mark.parametrize("position", ["none", "sinusoidal", "learned", "rope"])
def test_model_shapes_and_causality(position):
    torch.manual_seed(0)
    model = CopyBackModel(SMALL, position).eval()
    tokens = torch.randint(SMALL.vocab_size, (3, 12))
    logits = model(tokens)
    assert logits.shape == (3, 12, SMALL.vocab_size)
    changed = tokens.clone()
    changed[:, 7] = (changed[:, 7] + 1) % SMALL.vocab_size
    with torch.no_grad():
        before, after = model(tokens), model(changed)
    assert torch.equal(before[:, :7], after[:, :7])  # earlier positions cannot see position 7
    assert not torch.equal(before[:, 7:], after[:, 7:])
    weights = model.weight_on_target(tokens)
    assert weights.shape == (12,) and np.isnan(weights[0])
    assert np.all((weights[1:] >= 0) & (weights[1:] <= 1))


def test_rope_scores_depend_on_offsets_only():
    # The same token at every position: with RoPE, query 11's weights on its last six keys
    # (offsets 5 .. 0), renormalised, are query 5's weights on all of its six keys. With a
    # learned table every position has its own vector, so they differ.
    torch.manual_seed(0)
    tokens = torch.full((1, 12), 3)
    for position, same in (("rope", True), ("learned", False)):
        model = CopyBackModel(SMALL, position).eval()
        if position == "learned":
            torch.nn.init.normal_(model.positions.embedding.weight, std=1.0)
        with torch.no_grad():
            _, weights = model._attend(tokens, need_weights=True)  # (1, h, T, T)
        late, early = weights[0, 0, 11, 6:], weights[0, 0, 5, :6]
        assert torch.allclose(late / late.sum(), early / early.sum(), atol=1e-5) is same


def test_weight_by_offset_sums_each_query_to_one():
    torch.manual_seed(0)
    model = CopyBackModel(SMALL, "rope").eval()
    tokens = torch.randint(SMALL.vocab_size, (4, 15))
    by_offset = model.weight_by_offset(tokens, first_query=3)
    assert by_offset.shape == (15,) and by_offset.sum() == pytest.approx(1.0)
    assert by_offset[1] == pytest.approx(np.nanmean(model.weight_on_target(tokens)[3:]))


def test_batch_targets_are_shifted_tokens():
    config = replace(SMALL, offset=2)
    tokens, targets = copy_task_batch(config, 4, 10, torch.Generator().manual_seed(0))
    assert tokens.shape == (4, 10) and targets.shape == (4, 8)
    assert torch.equal(targets, tokens[:, :8])
    assert int(tokens.max()) < config.vocab_size and int(tokens.min()) >= 0


def test_training_learns_seen_positions_and_leaves_unseen_rows_untouched():
    torch.manual_seed(0)
    initial = CopyBackModel(SMALL, "learned").positions.embedding.weight.detach().clone()
    model, result = train_copy_task(SMALL, "learned", seed=0)
    assert result.seen_accuracy > 0.9  # chance is 1 / 8
    assert result.accuracy_by_position.shape == (SMALL.test_len,)
    assert np.isnan(result.accuracy_by_position[0])
    assert result.seen_accuracy == pytest.approx(np.mean(result.accuracy_by_position[1:8]))
    assert result.unseen_accuracy == pytest.approx(np.mean(result.accuracy_by_position[8:]))
    trained = model.positions.embedding.weight.detach()
    assert torch.equal(trained[SMALL.train_len:], initial[SMALL.train_len:])
    assert not torch.equal(trained[:SMALL.train_len], initial[:SMALL.train_len])


def test_training_is_deterministic():
    config = replace(SMALL, steps=20)
    _, first = train_copy_task(config, "sinusoidal", seed=3)
    _, second = train_copy_task(config, "sinusoidal", seed=3)
    assert np.array_equal(first.accuracy_by_position, second.accuracy_by_position, equal_nan=True)
    assert first.final_loss == second.final_loss
