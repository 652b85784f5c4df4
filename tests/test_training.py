"""Tests for training: schedule, label-smoothed loss by hand, metrics, a short real run."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.batching import make_batch
from transformer_course.core.loss import label_smoothed_loss, loss_floor, smoothed_targets
from transformer_course.core.model import TransformerConfig
from transformer_course.core.schedule import noam_lr, peak_lr
from transformer_course.core.training import (
    TrainConfig,
    accuracies,
    evaluate,
    evaluate_decoding,
)
from transformer_course.experiments.ch6_training.task_training import task_batches, train_on_task
from transformer_course.experiments.ch6_training.tasks import TaskConfig, sample_task, sequence_keys


def test_schedule_against_the_formula():
    d, w = 512, 4000
    assert noam_lr(1, d, w) == pytest.approx(512 ** -0.5 * 1 * 4000 ** -1.5)
    assert noam_lr(100, d, w) == pytest.approx(512 ** -0.5 * 100 * 4000 ** -1.5)
    assert noam_lr(16000, d, w) == pytest.approx(512 ** -0.5 / 16000 ** 0.5)
    assert noam_lr(100, d, w, scale=2.0) == pytest.approx(2 * noam_lr(100, d, w))
    assert peak_lr(d, w) == pytest.approx(1 / math.sqrt(512 * 4000))  # about 7.0e-4


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 1024), w=st.integers(2, 5000))
def test_schedule_peaks_at_warmup(d, w):
    rates = [noam_lr(s, d, w) for s in (w - 1, w, w + 1)]
    assert rates[1] >= rates[0] and rates[1] >= rates[2]
    assert noam_lr(1, d, w) == pytest.approx(peak_lr(d, w) / w)  # linear rise from 0


def test_no_warmup_starts_at_the_peak_and_then_follows_the_schedule():
    config = TrainConfig(warmup=50, lr_scale=0.5, use_warmup=False)
    assert config.learning_rate(1, 64) == pytest.approx(peak_lr(64, 50, 0.5))
    assert config.learning_rate(50, 64) == pytest.approx(peak_lr(64, 50, 0.5))
    assert config.learning_rate(200, 64) == pytest.approx(noam_lr(200, 64, 50, 0.5))
    assert TrainConfig(warmup=50).learning_rate(10, 64) == pytest.approx(noam_lr(10, 64, 50))


def test_constant_rate_replaces_the_schedule():
    config = TrainConfig(peak_lr=1e-3, warmup=0, decay="constant")
    assert [config.learning_rate(step, 64) for step in (1, 50, 5000)] == [1e-3] * 3


def test_a_given_peak_rises_linearly_then_decays_as_asked():
    peak, w, steps = 3e-3, 50, 600
    for decay in ("linear", "cosine", "inverse_sqrt", "constant"):
        config = TrainConfig(steps=steps, peak_lr=peak, warmup=w, decay=decay)
        assert config.learning_rate(10) == pytest.approx(peak * 10 / w)
        assert config.learning_rate(w) == pytest.approx(peak)
        rates = [config.learning_rate(s) for s in range(w, steps + 1)]
        assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))  # never rises again
    assert TrainConfig(steps=steps, peak_lr=peak, warmup=w, decay="linear").learning_rate(
        steps) == 0.0
    assert TrainConfig(steps=steps, peak_lr=peak, warmup=w, decay="inverse_sqrt").learning_rate(
        4 * w) == pytest.approx(peak / 2)
    with pytest.raises(ValueError, match="^peak_lr"):
        TrainConfig(warmup=0)  # the paper's schedule needs a warm-up to peak at


def test_smoothed_targets_by_hand():
    q = smoothed_targets(torch.tensor([2, 0]), 4, 0.1)
    assert torch.allclose(q, torch.tensor([[0.025, 0.025, 0.925, 0.025],
                                           [0.925, 0.025, 0.025, 0.025]]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.sampled_from([0.0, 0.1, 0.3]))
def test_loss_matches_its_definition(seed, eps):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 5, 7, generator=g)
    labels = torch.randint(0, 7, (3, 5), generator=g)
    labels[0, 3:] = 0  # padding, ignored
    real = labels.reshape(-1) != 0
    q = smoothed_targets(labels.reshape(-1)[real], 7, eps)
    log_p = torch.log_softmax(logits.reshape(-1, 7)[real], dim=-1)
    by_hand = -(q * log_p).sum(dim=1).mean()
    assert label_smoothed_loss(logits, labels, eps, pad_id=0).item() == pytest.approx(
        by_hand.item(), rel=1e-5)


def test_loss_floor_is_reached_by_predicting_q():
    labels = torch.tensor([[3, 1, 2, 0]])
    q = smoothed_targets(labels[0], 6, 0.1)
    best = label_smoothed_loss(q.log()[None], labels, 0.1)
    assert best.item() == pytest.approx(loss_floor(6, 0.1), rel=1e-5)
    sharper = label_smoothed_loss(10 * torch.nn.functional.one_hot(labels, 6).float(), labels, 0.1)
    assert sharper.item() > best.item()
    assert loss_floor(6, 0.0) == 0.0


def test_loss_refuses_labels_it_cannot_score():
    logits = torch.randn(2, 3, 4)
    with pytest.raises(ValueError, match=r"\blabels\b"):
        label_smoothed_loss(logits, torch.zeros(2, 3, dtype=torch.long))  # a mean over nothing
    with pytest.raises(ValueError, match=r"\blabels\b"):
        label_smoothed_loss(logits, torch.full((2, 3), 3), pad_id=3)
    for bad in (4, -1, 7):
        labels = torch.tensor([[1, 2, 3], [bad, 0, 0]])
        with pytest.raises(ValueError, match=r"\blabels\b"):
            label_smoothed_loss(logits, labels)
    # padding may be any id, even one outside [0, V): it is never scored
    labels = torch.tensor([[1, 2, 3], [7, 7, 7]])
    assert label_smoothed_loss(logits, labels, pad_id=7).item() == pytest.approx(
        label_smoothed_loss(logits[:1], labels[:1], pad_id=7).item(), rel=1e-6)


def test_accuracies_by_hand():
    labels = torch.tensor([[5, 6, 2, 0], [7, 2, 0, 0]])
    predicted = torch.tensor([[5, 6, 2, 9], [7, 8, 0, 0]])
    token, sequence = accuracies(predicted, labels)
    assert token == pytest.approx(4 / 5) and sequence == 0.5
    assert accuracies(predicted[:, :2], labels) == pytest.approx((3 / 5, 0.0))


def tiny_setup():
    task = TaskConfig("copy", num_symbols=5, min_len=2, max_len=5)
    held_out = sample_task(task, 200, torch.Generator().manual_seed(99), unique=True)
    model_config = TransformerConfig(task.vocab_size, task.vocab_size, d_model=32, num_heads=2,
                                     num_encoder_layers=1, num_decoder_layers=1, d_ff=64,
                                     dropout=0.0, max_len=16)
    return task, held_out, model_config


def test_a_short_run_learns_to_copy():
    task, held_out, model_config = tiny_setup()
    config = TrainConfig(steps=300, batch_size=64, warmup=30, lr_scale=0.7, eval_every=25)
    model, result = train_on_task(task, model_config, config, held_out)
    metrics, decoded = evaluate_decoding(model, make_batch(held_out.src, held_out.tgt))
    # Chance is about 0 for whole sequences; seeds 0-3 of this run give 0.90 to 0.995.
    assert metrics.sequence_accuracy >= 0.85, result.evaluations[-1]
    assert metrics.token_accuracy >= 0.95, result.evaluations[-1]
    assert result.losses[-1] < result.losses[0] / 3
    assert decoded.shape[0] == 200 and not model.training


def test_snapshots_are_the_model_at_their_checks_and_change_nothing_in_the_run():
    task, held_out, model_config = tiny_setup()
    config = TrainConfig(steps=40, batch_size=16, warmup=10, eval_every=10)
    kept = {10: None, 30: None}
    model, result = train_on_task(task, model_config, config, held_out, snapshots=kept)
    _, plain = train_on_task(task, model_config, config, held_out)
    assert result.losses == plain.losses  # copying the model at checks changes nothing
    batch = make_batch(held_out.src, held_out.tgt)
    for step, copy in kept.items():
        assert copy is not model and not copy.training
        at_step = next(e.metrics for e in result.evaluations if e.step == step)
        assert evaluate(copy, batch, config.label_smoothing) == at_step
    with pytest.raises(ValueError, match="snapshots"):
        train_on_task(task, model_config, config, held_out, snapshots={15: None})


def test_train_on_task_draws_lengths_with_the_configured_power(monkeypatch):
    import transformer_course.experiments.ch6_training.task_training as training

    task, _, model_config = tiny_setup()
    # a small held-out set: excluding many short sequences would itself skew the lengths
    held_out = sample_task(task, 4, torch.Generator().manual_seed(99), unique=True)
    seen = []

    def spy(*args, **kwargs):
        stream = task_batches(*args, **kwargs)
        while True:
            batch = next(stream)
            seen.append((batch.tgt_out != batch.pad_id).sum(dim=1) - 1)  # lengths, EOS dropped
            yield batch

    monkeypatch.setattr(training, "task_batches", spy)
    config = TrainConfig(steps=5, batch_size=200, warmup=5, eval_every=0)
    for power in (0.0, 3.0):  # the task carries length_power now, not the training config
        train_on_task(dataclasses.replace(task, length_power=power), model_config, config,
                      held_out)
    uniform, biased = torch.cat(seen[:5]).double(), torch.cat(seen[5:]).double()
    # lengths 2..5: mean 3.5 when uniform, (2^4+3^4+4^4+5^4)/(2^3+3^3+4^3+5^3) = 4.37 for power 3
    assert abs(uniform.mean().item() - 3.5) < 0.1 and abs(biased.mean().item() - 4.37) < 0.1


def test_train_on_task_never_draws_held_out_or_excluded_pairs(monkeypatch):
    import transformer_course.experiments.ch6_training.task_training as training

    task, held_out, model_config = tiny_setup()
    test = sample_task(task, 100, torch.Generator().manual_seed(5), unique=True)
    drawn = []

    def spy(*args, **kwargs):
        stream = task_batches(*args, **kwargs)
        while True:
            batch = next(stream)
            drawn.append(batch.src[:, 1:].masked_fill(batch.src[:, 1:] == 2, 0))  # no BOS/EOS
            yield batch

    monkeypatch.setattr(training, "task_batches", spy)
    config = TrainConfig(steps=40, batch_size=128, warmup=5, eval_every=0)
    train_on_task(task, model_config, config, held_out, exclude=test)
    width = task.max_len
    seen = torch.cat([torch.nn.functional.pad(s, (0, width - s.shape[1]))[:, :width]
                      for s in drawn])
    seen_keys = set(sequence_keys(seen, task.vocab_size).tolist())
    for data in (held_out, test):
        assert not seen_keys & set(sequence_keys(data.src, task.vocab_size).tolist())
    # 40 x 128 draws over 3,900 short sequences: without the exclusion they would meet
    assert len(seen_keys) > 2000


def test_evaluate_is_perfect_for_a_model_that_predicts_the_labels():
    class Oracle(torch.nn.Module):
        config = None

        def forward(self, src, tgt_in, src_mask, tgt_mask):
            return 20 * torch.nn.functional.one_hot(self.labels, 9).float()

    data = sample_task(TaskConfig(num_symbols=6, max_len=4), 10, torch.Generator())
    batch = make_batch(data.src, data.tgt)
    oracle = Oracle()
    oracle.labels = batch.tgt_out
    metrics = evaluate(oracle, batch)
    assert metrics.sequence_accuracy == 1.0 and metrics.token_accuracy == 1.0
    assert metrics.loss < 1e-6

