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



@pytest.mark.parametrize("position", ["none", "sinusoidal", "learned"])
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


@pytest.mark.parametrize(("changes", "pattern"), [
    ({"offset": 8}, "offset < train_len <= test_len"),
    ({"test_len": 4}, "offset < train_len <= test_len"),
    ({"vocab_size": 0}, "vocab_size"),
    ({"steps": -1}, "steps"),
    ({"lr": 0.0}, "lr"),
    ({"lr": 1}, "lr"),
])
def test_config_rejects_bad_values(changes, pattern):
    with pytest.raises(ValueError, match=pattern):
        replace(SMALL, **changes)


def test_bad_inputs():
    with pytest.raises(ValueError, match="position must be one of"):
        CopyBackModel(SMALL, "rotary")
    model = CopyBackModel(SMALL, "learned")
    with pytest.raises(ValueError, match=r"max_len=20"):
        model(torch.zeros(1, 21, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tokens must have 2 dimensions.*\(B, T\)"):
        model(torch.zeros(1, 2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="tokens must hold integer ids"):
        model(torch.zeros(1, 4))
    with pytest.raises(ValueError, match="length must exceed offset"):
        copy_task_batch(SMALL, 2, 1, torch.Generator())
    with pytest.raises(ValueError, match="rows"):
        copy_task_batch(SMALL, 0, 5, torch.Generator())
