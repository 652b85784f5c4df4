"""Tests for experiments.ch2_scaled_dot_product_attention.score_functions."""

import math
from dataclasses import replace

import torch

from transformer_course.experiments.ch2_scaled_dot_product_attention.score_functions import (
    SCORES,
    TRAINING,
    ScoreComparisonConfig,
    additive_scores,
    compare_score_functions,
)

TINY = ScoreComparisonConfig(widths=(4, 8), num_seeds=2, eval_size=16,
                             training=replace(TRAINING, steps=5, batch_size=4))


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
    table = compare_score_functions(replace(TINY, widths=(4,), num_seeds=1,
                                            scores=("dot-product",)))
    assert table["score"].tolist() == ["dot-product"]


def test_scaled_dot_product_learns_the_task():
    config = ScoreComparisonConfig(widths=(16,), num_seeds=2, eval_size=256,
                                   scores=("scaled dot-product",),
                                   training=replace(TRAINING, steps=150))
    assert compare_score_functions(config)["accuracy"].min() > 0.9  # chance is 1 / 8

