"""The two-lookup task, its model, training and the specialisation measure."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_course.experiments.ch3_multi_head_attention.head_specialisation import (
    CLEAN_OTHER,
    CLEAN_OWN,
    IGNORE,
    TRAINING,
    HeadJobs,
    LookupConfig,
    LookupModel,
    LookupTask,
    build_lookup_model,
    check_lookup_targets,
    evaluate_lookup_model,
    first_step_reaching,
    head_jobs,
    knock_out_head,
    lookup_loss,
    lookup_response,
    lookup_shares,
    make_lookup_batch,
    perturb_lookups,
    specialisation_table,
    token_labels,
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
    with pytest.raises(AssertionError, match="one marked"):
        check_lookup_targets(task, tokens % 5, torch.tensor([[IGNORE, 4, 1, 2]]))


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


def _config(d_model: int = 16, hidden: int = 32, **training) -> LookupConfig:
    return LookupConfig(d_model=d_model, hidden=hidden, training=replace(TRAINING, **training))


def test_short_training_is_reproducible_and_learns() -> None:
    task = LookupTask(num_values=4, seq_len=6)
    config = _config(steps=60, peak_lr=1e-2)
    (first,), losses, accuracies = train_lookup_models(task, config, [5])
    _, again, _ = train_lookup_models(task, config, [5])
    np.testing.assert_array_equal(losses, again)
    assert losses.shape == accuracies.shape == (1, 60)
    assert losses[0, -10:].mean() < losses[0, :10].mean()
    batch = make_lookup_batch(task, 16, torch.Generator().manual_seed(0))
    accuracy, weights = evaluate_lookup_model(first, batch)
    assert 0.0 <= accuracy <= 1.0 and weights.shape == (16, 2, 6, 6)
    assert not first.training


def test_chapter_configuration_specialises() -> None:
    """The chapter's claim: accurate, one head on x[t-1], the other on the marked token."""
    task = LookupTask()
    (model,), _, _ = train_lookup_models(task, LookupConfig(), [0])
    batch = make_lookup_batch(task, 512, torch.Generator().manual_seed(1))
    accuracy, weights = evaluate_lookup_model(model, batch)
    assert accuracy > 0.95
    shares = lookup_shares(weights, batch.anchors)
    assert shares[:, 0].max() > 0.8 and shares[:, 1].max() > 0.8
    assert shares[:, 0].argmax() != shares[:, 1].argmax()


def test_models_trained_together_equal_models_trained_alone() -> None:
    task = LookupTask(num_values=4, seq_len=6)
    config = _config(hidden=16, steps=20, batch_size=8)
    models, losses, accuracies = train_lookup_models(task, config, [3, 5])
    for i, seed in enumerate((3, 5)):
        (alone,), alone_losses, alone_accuracies = train_lookup_models(task, config, [seed])
        np.testing.assert_allclose(losses[i], alone_losses[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(accuracies[i], alone_accuracies[0])
        for (name, a), (_, b) in zip(models[i].named_parameters(), alone.named_parameters(),
                                     strict=True):
            if name == "attention.w_k.bias":  # adds q . b to every score of a query: softmax
                continue  # ignores it, its gradient is rounding noise that Adam scales up
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=name)
    assert not np.array_equal(losses[0], losses[1])  # different seeds, different runs


def test_lookup_loss_is_the_mean_cross_entropy_of_scored_positions() -> None:
    task = LookupTask(num_values=3, seq_len=4)
    model = build_lookup_model(task, LookupConfig(d_model=8, hidden=8))
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
    for jobs in (HeadJobs(0, 1, own, other, 0.95, 0.01), HeadJobs(0, 1, 0.95, 0.01, own, other)):
        assert (jobs.clean_margin >= 0) is clean  # the margin says what clean says


def test_clean_margin_and_separation_by_hand() -> None:
    jobs = HeadJobs(0, 1, prev_own=0.9, prev_other=0.05, marked_own=0.85, marked_other=0.02)
    assert jobs.clean_margin == pytest.approx(min(0.85 - CLEAN_OWN, CLEAN_OTHER - 0.05))
    assert jobs.separation == pytest.approx(min(0.9 - 0.05, 0.85 - 0.02))
    sharing = HeadJobs(0, 1, prev_own=0.5, prev_other=0.45, marked_own=0.4, marked_other=0.45)
    assert sharing.separation == pytest.approx(-0.05) and sharing.clean_margin < 0


def test_specialisation_table() -> None:
    shares = [np.array([[0.9, 0.0], [0.0, 0.9]]), np.array([[0.5, 0.4], [0.4, 0.5]])]
    table = specialisation_table([1.0, 0.99], shares, [7, 8])
    assert list(table.index) == [7, 8] and table.index.name == "seed"
    assert table["clean split"].tolist() == [True, False]
    assert table["accuracy (%)"].tolist() == [100.0, 99.0]
    assert table["x[t-1] head"].tolist() == [1, 1]  # heads numbered from 1
    assert table["marked head: on marked"].tolist() == [0.9, 0.5]


def test_build_gives_the_starting_point_of_training() -> None:
    task, config = LookupTask(num_values=3, seq_len=4), _config(8, 8, steps=1, peak_lr=1e-9)
    start = build_lookup_model(task, config, seed=3)
    (barely_trained,), _, _ = train_lookup_models(task, config, [3])  # Adam moves each by ~lr
    for (name, a), (_, b) in zip(start.named_parameters(), barely_trained.named_parameters(),
                                 strict=True):
        torch.testing.assert_close(a, b, atol=1e-8, rtol=0, msg=name)
    other = build_lookup_model(task, config, seed=4)
    assert not torch.equal(other.embed.weight, start.embed.weight)


def test_model_shapes() -> None:
    task = LookupTask(num_values=3, seq_len=5)
    model = LookupModel(task, LookupConfig(d_model=8, num_heads=2, hidden=4))
    logits, weights = model(torch.zeros(2, 5, dtype=torch.long), need_weights=True)
    assert logits.shape == (2, 5, 3) and weights.shape == (2, 2, 5, 5)
    assert model(torch.zeros(2, 4, dtype=torch.long))[1] is None


def test_token_labels_star_the_marked_token() -> None:
    task = LookupTask(num_values=4, seq_len=5)
    assert token_labels(task, torch.tensor([0, 3, 6, 1, 2])) == ["0", "3", "2*", "1", "2"]
    batch = make_lookup_batch(task, 3, torch.Generator().manual_seed(0))
    for row, anchor in zip(batch.tokens, batch.anchors.tolist(), strict=True):
        labels = token_labels(task, row)
        assert [i for i, label in enumerate(labels) if label.endswith("*")] == [anchor]



def test_a_shorter_run_is_the_start_of_a_longer_one() -> None:
    task = LookupTask(num_values=4, seq_len=6)
    _, short, _ = train_lookup_models(task, _config(hidden=16, steps=8, batch_size=8), [2])
    _, long, _ = train_lookup_models(task, _config(hidden=16, steps=12, batch_size=8), [2])
    np.testing.assert_allclose(long[0, :8], short[0], rtol=1e-6)


def test_knock_out_head_cuts_that_head_only() -> None:
    task, config = LookupTask(num_values=4, seq_len=6), LookupConfig(d_model=8, hidden=8)
    model = build_lookup_model(task, config, seed=0)
    before = {name: p.clone() for name, p in model.named_parameters()}
    knocked = knock_out_head(model, 1)
    for name, p in model.named_parameters():  # the original is untouched
        assert torch.equal(p, before[name]), name
    tokens = make_lookup_batch(task, 4, torch.Generator().manual_seed(0)).tokens
    d_k = model.attention.d_k

    def output_after_changing_values_of(head: int) -> torch.Tensor:
        changed = copy.deepcopy(knocked)
        with torch.no_grad():
            changed.attention.w_v.weight[head * d_k:(head + 1) * d_k] += 1.0
        return changed(tokens)[0]

    reference = knocked(tokens)[0]
    torch.testing.assert_close(output_after_changing_values_of(1), reference)  # head 1 is cut
    assert not torch.allclose(output_after_changing_values_of(0), reference)  # head 0 is not
    assert not torch.allclose(reference, model(tokens)[0])


class _RuleModel(nn.Module):
    """Answers by the task's rule, optionally blind to the previous or the marked token."""

    def __init__(self, task: LookupTask, sees_prev: bool, sees_marked: bool) -> None:
        super().__init__()
        self.task, self.sees_prev, self.sees_marked = task, sees_prev, sees_marked

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, None]:
        V = self.task.num_values
        values = tokens % V
        marked = (values * (tokens >= V)).sum(1, keepdim=True)  # (B, 1)
        prev = torch.cat([values[:, :1], values[:, :-1]], 1)  # (B, T)
        answer = (prev * self.sees_prev + marked * self.sees_marked) % V
        return nn.functional.one_hot(answer, V).float(), None


@pytest.mark.parametrize("sees_prev, sees_marked", [(True, True), (False, True), (True, False)])
def test_lookup_response_hears_only_the_tokens_a_model_reads(sees_prev, sees_marked) -> None:
    task = LookupTask(num_values=5, seq_len=7)
    batch = make_lookup_batch(task, 200, torch.Generator().manual_seed(1))
    response = lookup_response(_RuleModel(task, sees_prev, sees_marked), batch,
                               torch.Generator().manual_seed(2))
    assert response.responds_prev == float(sees_prev)
    assert response.responds_marked == float(sees_marked)
    assert (response.accuracy == 1.0) is (sees_prev and sees_marked)


@settings(max_examples=20, deadline=None)
@given(V=st.integers(2, 9), T=st.integers(3, 10), seed=st.integers(0, 999))
def test_perturb_lookups_changes_one_token_each(V, T, seed) -> None:
    task = LookupTask(num_values=V, seq_len=T)
    batch = make_lookup_batch(task, 6, torch.Generator().manual_seed(seed))
    prev_tokens, p, marked_tokens = perturb_lookups(task, batch, torch.Generator().manual_seed(0))
    rows = torch.arange(6)
    for changed in (prev_tokens, marked_tokens):
        assert torch.equal((changed != batch.tokens).sum(1), torch.ones(6, dtype=torch.long))
        assert torch.equal((changed >= V).float().argmax(1), batch.anchors)  # still one marked
    assert torch.all(p <= T - 2) and torch.all(p != batch.anchors)
    assert torch.all(prev_tokens[rows, p] != batch.tokens[rows, p])
    assert torch.all(marked_tokens[rows, batch.anchors] != batch.tokens[rows, batch.anchors])


def test_first_step_reaching() -> None:
    accuracies = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    assert first_step_reaching(accuracies, 1.0, window=2) == 4  # steps 3 and 4
    assert first_step_reaching(accuracies, 0.5, window=2) == 3  # steps 2 and 3: 0.5
    assert first_step_reaching(accuracies, 1.0, window=4) is None
