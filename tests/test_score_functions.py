"""Tests for experiments.ch2_scaled_dot_product_attention.score_functions."""

import math

import pytest
import torch

from transformer_course.experiments.ch2_scaled_dot_product_attention.score_functions import (
    SCORES,
    ScoreComparisonConfig,
    additive_scores,
    compare_score_functions,
)

TINY = ScoreComparisonConfig(widths=(4, 8), num_seeds=2, steps=5, batch_size=4, eval_size=16)


def test_additive_scores_by_hand():
    q = torch.tensor([[0.0, 1.0]])  # (T_q, d)
    k = torch.tensor([[0.0, 0.0], [1.0, -1.0]])  # (T_k, d)
    v = torch.tensor([2.0, 3.0])
    expected = torch.tensor([[2 * math.tanh(0) + 3 * math.tanh(1),
                              2 * math.tanh(1) + 3 * math.tanh(0)]])
    torch.testing.assert_close(additive_scores(q, k, v), expected)


def test_additive_scores_shapes_and_batch_broadcasting():
    q, k = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4)  # (..., T_q, d), (..., T_k, d)
    v = torch.randn(2, 1, 4)  # one v per leading index, broadcast over the middle one
    scores = additive_scores(q, k, v)
    assert scores.shape == (2, 3, 5, 7)
    i, j = 1, 2
    torch.testing.assert_close(scores[1, 0, i, j], torch.tanh(q[1, 0, i] + k[1, 0, j]) @ v[1, 0])


def test_additive_scores_are_bounded_by_the_size_of_v():
    q, k = 100 * torch.randn(4, 16), 100 * torch.randn(6, 16)
    v = torch.randn(16)
    assert additive_scores(q, k, v).abs().max() <= v.abs().sum() + 1e-5


def test_comparison_table_is_complete_and_reproducible():
    first = compare_score_functions(TINY)
    assert len(first) == len(TINY.widths) * len(SCORES) * TINY.num_seeds
    assert set(first["score"]) == set(SCORES) and set(first["d_k"]) == {4, 8}
    assert first["accuracy"].between(0, 1).all()
    assert first.equals(compare_score_functions(TINY))


def test_only_the_requested_scores_are_trained():
    table = compare_score_functions(ScoreComparisonConfig(
        widths=(4,), num_seeds=1, steps=2, batch_size=4, eval_size=8, scores=("dot-product",)))
    assert table["score"].tolist() == ["dot-product"]


def test_scaled_dot_product_learns_the_task():
    config = ScoreComparisonConfig(widths=(16,), num_seeds=2, steps=150, eval_size=256,
                                   scores=("scaled dot-product",))
    assert compare_score_functions(config)["accuracy"].min() > 0.9  # chance is 1 / 8


@pytest.mark.parametrize("call, error, match", [
    (lambda: additive_scores(torch.zeros(2, 3), torch.zeros(2, 4), torch.zeros(3)), ValueError,
     "must share d"),
    (lambda: additive_scores(torch.zeros(3), torch.zeros(2, 3), torch.zeros(3)), ValueError,
     "q must have at least 2 dimensions"),
    (lambda: additive_scores(torch.zeros(2, 3), torch.zeros(2, 3), [1.0, 2.0, 3.0]), TypeError,
     "v must be a torch.Tensor"),
    (lambda: ScoreComparisonConfig(num_keys=40), ValueError, "num_keys must be at most"),
    (lambda: ScoreComparisonConfig(widths=[16]), TypeError, "widths must be a non-empty tuple"),
    (lambda: ScoreComparisonConfig(widths=(16, 0)), ValueError, "widths must be a positive"),
    (lambda: ScoreComparisonConfig(lr=0), ValueError, "lr must be a positive number"),
    (lambda: ScoreComparisonConfig(init_gain=True), ValueError, "init_gain"),
    (lambda: ScoreComparisonConfig(scores=("cosine",)), ValueError, "scores must be"),
    (lambda: ScoreComparisonConfig(steps=0), ValueError, "steps must be a positive int"),
    (lambda: compare_score_functions({"widths": (4,)}), TypeError,
     "config must be a ScoreComparisonConfig"),
])
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()
