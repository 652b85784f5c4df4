"""Tests for scoring greedy outputs by sequence length and by output position."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID
from transformer_course.experiments.ch6_training.generalisation import (
    accuracy_by_length,
    accuracy_by_position,
)
from transformer_course.experiments.ch6_training.tasks import TaskData


def pairs() -> TaskData:
    tgt = torch.tensor([[4, 5, 0, 0], [6, 7, 0, 0], [4, 4, 5, 0], [5, 6, 7, 8]])
    return TaskData(tgt.clone(), tgt, torch.tensor([2, 2, 3, 4]))


def decoded(rows: list[list[int]]) -> torch.Tensor:
    """Rows of output ids (no BOS), padded, with BOS prepended as the decoders return them."""
    width = max(map(len, rows))
    body = torch.tensor([row + [PAD_ID] * (width - len(row)) for row in rows])
    return torch.cat([torch.full((len(rows), 1), BOS_ID), body], dim=1)


def test_lengths_are_scored_by_hand():
    outputs = decoded([[4, 5, EOS_ID], [6, 9, EOS_ID], [4, 4, 5, 5, EOS_ID], [5, 6, 7, 8]])
    table = accuracy_by_length(outputs, pairs())
    assert table["length"].tolist() == [2, 3, 4] and table["pairs"].tolist() == [2, 1, 1]
    assert table["sequence accuracy"].tolist() == pytest.approx([0.5, 0.0, 0.0])
    # length 2: 5 of 6 labels right; length 3: the symbols but no EOS (3 of 4); length 4: the
    # symbols but the output stops without EOS (4 of 5)
    assert table["token accuracy"].tolist() == pytest.approx([5 / 6, 3 / 4, 4 / 5])


def test_positions_are_scored_over_the_pairs_that_reach_them():
    outputs = decoded([[4, 5, EOS_ID], [6, 9, EOS_ID], [4, 4, 9, EOS_ID], [5, 6, 7]])
    accuracy = accuracy_by_position(outputs, pairs())
    assert accuracy.dtype == np.float64 and accuracy.shape == (4,)
    assert accuracy.tolist() == pytest.approx([1.0, 3 / 4, 1 / 2, 0.0])


def test_perfect_outputs_score_one():
    data = pairs()
    outputs = decoded([row[:n].tolist() + [EOS_ID]
                       for row, n in zip(data.tgt, data.lengths, strict=True)])
    assert (accuracy_by_length(outputs, data)["sequence accuracy"] == 1).all()
    assert (accuracy_by_position(outputs, data) == 1).all()
