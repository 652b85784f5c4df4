"""The two-lookup task, its model, training and the specialisation measure."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.experiments.ch3_multi_head_attention.head_specialisation import (
    CLEAN_OTHER,
    CLEAN_OWN,
    IGNORE,
    HeadJobs,
    LookupBatch,
    LookupModel,
    LookupTask,
    TrainConfig,
    build_lookup_model,
    check_lookup_targets,
    evaluate_lookup_model,
    head_jobs,
    lookup_loss,
    lookup_shares,
    make_lookup_batch,
    specialisation_table,
    token_labels,
    train_lookup_model,
    train_lookup_models,
)

torch.set_num_threads(1)


@settings(max_examples=30, deadline=None)
@given(V=st.integers(2, 9), T=st.integers(2, 10), B=st.integers(1, 6), seed=st.integers(0, 999))
def test_generator_targets_follow_the_rule(V, T, B, seed) -> None:
    task = LookupTask(num_values=V, seq_len=T)
    batch = make_lookup_batch(task, B, torch.Generator().manual_seed(seed))
    assert batch.tokens.shape == batch.targets.shape == (B, T)
    assert batch.tokens.min() >= 0 and batch.tokens.max() < 2 * V
    marked = batch.tokens >= V
    assert torch.equal(marked.sum(1), torch.ones(B, dtype=torch.long))
    assert torch.equal(marked.float().argmax(1), batch.anchors)
    check_lookup_targets(task, batch.tokens, batch.targets)  # the rule, one position at a time


def test_targets_by_hand() -> None:
    task = LookupTask(num_values=5, seq_len=4)
    tokens = torch.tensor([[1, 8, 4, 2]])  # the marked token is 8 = 5 + 3, so x[anchor] = 3
    check_lookup_targets(task, tokens, torch.tensor([[IGNORE, 4, 1, 2]]))  # (1+3, 3+3, 4+3) mod 5
    with pytest.raises(AssertionError, match="t=2"):
        check_lookup_targets(task, tokens, torch.tensor([[IGNORE, 4, 2, 2]]))
    with pytest.raises(AssertionError, match="t=0"):
        check_lookup_targets(task, tokens, torch.tensor([[0, 4, 1, 2]]))


def test_generator_is_reproducible() -> None:
    task = LookupTask()
    a = make_lookup_batch(task, 8, torch.Generator().manual_seed(3))
    b = make_lookup_batch(task, 8, torch.Generator().manual_seed(3))
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.targets, b.targets)


def test_lookup_shares_on_constructed_weights() -> None:
    B, h, T = 2, 3, 5
    anchors = np.array([0, 3])
    weights = np.zeros((B, h, T, T))
    for t in range(1, T):
        weights[:, 0, t, t - 1] = 1.0  # head 0: previous token
        weights[np.arange(B), 1, t, anchors] = 1.0  # head 1: the marked token
    weights[:, 2] = 1.0 / T  # head 2: uniform
    shares = lookup_shares(weights, anchors)
    np.testing.assert_allclose(shares, [[1.0, 0.0], [0.0, 1.0], [1 / T, 1 / T]])
    np.testing.assert_allclose(lookup_shares(torch.from_numpy(weights), torch.from_numpy(anchors)),
                               shares)


def test_short_training_is_reproducible_and_learns() -> None:
    task = LookupTask(num_values=4, seq_len=6)
    config = TrainConfig(d_model=16, hidden=32, steps=60, batch_size=32, lr=1e-2, seed=5)
    first, second = train_lookup_model(task, config), train_lookup_model(task, config)
    assert first.losses == second.losses and len(first.losses) == 60
    assert np.mean(first.losses[-10:]) < np.mean(first.losses[:10])
    batch = make_lookup_batch(task, 16, torch.Generator().manual_seed(0))
    accuracy, weights = evaluate_lookup_model(first.model, batch)
    assert 0.0 <= accuracy <= 1.0 and weights.shape == (16, 2, 6, 6)
    assert not first.model.training


def test_chapter_configuration_specialises() -> None:
    """The chapter's claim: accurate, one head on x[t-1], the other on the marked token."""
    task, config = LookupTask(), TrainConfig()
    result = train_lookup_model(task, config)
    batch = make_lookup_batch(task, 512, torch.Generator().manual_seed(1))
    accuracy, weights = evaluate_lookup_model(result.model, batch)
    assert accuracy > 0.95
    shares = lookup_shares(weights, batch.anchors)
    assert shares[:, 0].max() > 0.8 and shares[:, 1].max() > 0.8
    assert shares[:, 0].argmax() != shares[:, 1].argmax()


def test_models_trained_together_equal_models_trained_alone() -> None:
    task = LookupTask(num_values=4, seq_len=6)
    config = TrainConfig(d_model=16, hidden=16, steps=20, batch_size=8)
    together = train_lookup_models(task, config, [3, 5])
    for seed, result in zip((3, 5), together, strict=True):
        alone = train_lookup_model(task, replace(config, seed=seed))
        np.testing.assert_allclose(result.losses, alone.losses, rtol=1e-5, atol=1e-6)
        for (name, a), (_, b) in zip(result.model.named_parameters(),
                                     alone.model.named_parameters(), strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=name)
    assert together[0].losses != together[1].losses  # different seeds, different runs
    assert not together[0].model.training and len(together[1].accuracies) == 20


def test_lookup_loss_is_the_mean_cross_entropy_of_scored_positions() -> None:
    task = LookupTask(num_values=3, seq_len=4)
    model = build_lookup_model(task, TrainConfig(d_model=8, hidden=8))
    batch = make_lookup_batch(task, 5, torch.Generator().manual_seed(0))
    logits, _ = model(batch.tokens)
    expected = torch.nn.functional.cross_entropy(logits[:, 1:].flatten(0, 1),
                                                 batch.targets[:, 1:].flatten())
    assert lookup_loss(model, batch) == pytest.approx(expected.item())


def test_head_jobs_picks_two_different_heads() -> None:
    shares = np.array([[0.9, 0.05], [0.02, 0.85], [0.3, 0.3]])
    jobs = head_jobs(shares)
    assert (jobs.prev_head, jobs.marked_head) == (0, 1) and jobs.clean
    assert (jobs.prev_own, jobs.prev_other) == (0.9, 0.05)
    assert (jobs.marked_own, jobs.marked_other) == (0.85, 0.02)
    both_on_prev = head_jobs(np.array([[0.9, 0.05], [0.8, 0.1]]))  # one head is forced to marked
    assert both_on_prev.prev_head != both_on_prev.marked_head and not both_on_prev.clean


@pytest.mark.parametrize("own, other, clean", [
    (CLEAN_OWN, CLEAN_OTHER, True), (CLEAN_OWN - 0.01, 0.0, False),
    (1.0, CLEAN_OTHER + 0.01, False),
])
def test_clean_split_thresholds(own, other, clean) -> None:
    assert HeadJobs(0, 1, own, other, 0.95, 0.01).clean is clean
    assert HeadJobs(0, 1, 0.95, 0.01, own, other).clean is clean


def test_specialisation_table() -> None:
    shares = [np.array([[0.9, 0.0], [0.0, 0.9]]), np.array([[0.5, 0.4], [0.4, 0.5]])]
    table = specialisation_table([1.0, 0.99], shares, [7, 8])
    assert list(table.index) == [7, 8] and table.index.name == "seed"
    assert table["clean split"].tolist() == [True, False]
    assert table["accuracy (%)"].tolist() == [100.0, 99.0]
    assert table["x[t-1] head"].tolist() == [1, 1]  # heads numbered from 1
    assert table["marked head: on marked"].tolist() == [0.9, 0.5]


def test_build_gives_the_starting_point_of_training() -> None:
    task, config = LookupTask(num_values=3, seq_len=4), TrainConfig(d_model=8, hidden=8, steps=1,
                                                                    lr=1e-9, seed=3)
    start = build_lookup_model(task, config)
    barely_trained = train_lookup_model(task, config).model  # Adam moves each weight by ~lr
    for (name, a), (_, b) in zip(start.named_parameters(), barely_trained.named_parameters(),
                                 strict=True):
        torch.testing.assert_close(a, b, atol=1e-8, rtol=0, msg=name)
    other = build_lookup_model(task, TrainConfig(d_model=8, hidden=8, seed=4))
    assert not torch.equal(other.embed.weight, start.embed.weight)


def test_model_shapes() -> None:
    task = LookupTask(num_values=3, seq_len=5)
    model = LookupModel(task, TrainConfig(d_model=8, num_heads=2, hidden=4))
    logits, weights = model(torch.zeros(2, 5, dtype=torch.long), need_weights=True)
    assert logits.shape == (2, 5, 3) and weights.shape == (2, 2, 5, 5)
    assert model(torch.zeros(2, 4, dtype=torch.long))[1] is None


# ---- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"num_values": 1}, ValueError, "num_values"),
    ({"num_values": 0}, ValueError, "num_values"),
    ({"seq_len": 1}, ValueError, "seq_len"),
    ({"seq_len": 2.5}, TypeError, "seq_len"),
])
def test_task_rejects_bad_sizes(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        LookupTask(**kwargs)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"d_model": 0}, ValueError, "d_model"),
    ({"d_model": 30, "num_heads": 4}, ValueError, "divisible"),
    ({"hidden": -1}, ValueError, "hidden"),
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"steps": 1.5}, TypeError, "steps"),
    ({"lr": 0.0}, ValueError, "lr"),
    ({"seed": -1}, ValueError, "seed"),
])
def test_config_rejects_bad_values(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        TrainConfig(**kwargs)


def test_new_functions_reject_bad_input() -> None:
    task = LookupTask(num_values=3, seq_len=4)
    with pytest.raises(TypeError, match="seeds must be a non-empty sequence"):
        train_lookup_models(task, TrainConfig(), [])
    with pytest.raises(TypeError, match="seeds must be a non-empty sequence"):
        train_lookup_models(task, TrainConfig(), 3)
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        train_lookup_models(task, TrainConfig(), [0, -1])
    with pytest.raises(TypeError, match="config"):
        train_lookup_models(task, "config", [0])
    with pytest.raises(ValueError, match=r"h >= 2 heads"):
        head_jobs(np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match=r"shares must have 2 dimensions"):
        head_jobs(np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="one entry per seed"):
        specialisation_table([1.0], [np.ones((2, 2))], [0, 1])
    with pytest.raises(TypeError, match="model"):
        lookup_loss(None, make_lookup_batch(task, 2, torch.Generator()))


def test_functions_reject_bad_input() -> None:
    task, gen = LookupTask(num_values=3, seq_len=4), torch.Generator()
    with pytest.raises(TypeError, match="task"):
        make_lookup_batch((3, 4), 2, gen)
    with pytest.raises(ValueError, match="batch_size"):
        make_lookup_batch(task, 0, gen)
    with pytest.raises(TypeError, match="generator"):
        make_lookup_batch(task, 2, 0)
    with pytest.raises(TypeError, match="config"):
        LookupModel(task, {"d_model": 8})
    with pytest.raises(TypeError, match="config"):
        train_lookup_model(task, None)
    with pytest.raises(TypeError, match="task"):
        build_lookup_model("task", TrainConfig())
    model = LookupModel(task, TrainConfig(d_model=8, hidden=4))
    with pytest.raises(ValueError, match=r"tokens must have 2 dimensions, shape \(B, T\)"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match="tokens must hold integer ids"):
        model(torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"tokens must lie in \[0, 5\]"):
        model(torch.full((2, 4), 6))
    with pytest.raises(ValueError, match="T=5 positions, more than max_len=4"):
        model(torch.zeros(2, 5, dtype=torch.long))
    batch = make_lookup_batch(task, 2, gen)
    with pytest.raises(TypeError, match="model"):
        evaluate_lookup_model(torch.nn.Linear(2, 2), batch)
    with pytest.raises(TypeError, match="batch"):
        evaluate_lookup_model(model, batch.tokens)
    assert isinstance(batch, LookupBatch)


def test_lookup_shares_rejects_bad_input() -> None:
    w = np.full((2, 2, 4, 4), 0.25)
    with pytest.raises(ValueError, match=r"weights must have 4 dimensions, shape \(B, h, T, T\)"):
        lookup_shares(w[0], np.array([0, 1]))
    with pytest.raises(ValueError, match=r"self-attention weights.*\(2, 2, 4, 3\)"):
        lookup_shares(w[..., :3], np.array([0, 1]))
    with pytest.raises(ValueError, match=r"anchors must have shape \(B,\) = \(2,\)"):
        lookup_shares(w, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"anchors must be integer positions in \[0, 3\]"):
        lookup_shares(w, np.array([0, 4]))
    with pytest.raises(TypeError, match="weights must have a floating-point dtype"):
        lookup_shares(w.astype(int), np.array([0, 1]))


def test_check_lookup_targets_rejects_bad_input() -> None:
    task = LookupTask(num_values=3, seq_len=4)
    with pytest.raises(ValueError, match=r"tokens and targets must both have shape \(B, T=4\)"):
        check_lookup_targets(task, torch.zeros(2, 4, dtype=torch.long),
                             torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="exactly one marked"):
        check_lookup_targets(task, torch.zeros(1, 4, dtype=torch.long),
                             torch.zeros(1, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="task"):
        check_lookup_targets(None, torch.zeros(1, 4), torch.zeros(1, 4))


def test_token_labels_star_the_marked_token() -> None:
    task = LookupTask(num_values=4, seq_len=5)
    assert token_labels(task, torch.tensor([0, 3, 6, 1, 2])) == ["0", "3", "2*", "1", "2"]
    batch = make_lookup_batch(task, 3, torch.Generator().manual_seed(0))
    for row, anchor in zip(batch.tokens, batch.anchors.tolist(), strict=True):
        labels = token_labels(task, row)
        assert [i for i, label in enumerate(labels) if label.endswith("*")] == [anchor]


def test_token_labels_reject_bad_input() -> None:
    task = LookupTask(num_values=4, seq_len=5)
    with pytest.raises(TypeError, match="task"):
        token_labels(None, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="tokens"):
        token_labels(task, torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="tokens"):
        token_labels(task, torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="tokens"):
        token_labels(task, torch.tensor([0, 8]))
