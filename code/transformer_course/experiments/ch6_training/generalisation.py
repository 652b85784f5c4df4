"""Length generalisation: how a trained model does on each sequence length, trained ones or not.

Chapter 4 predicted that a model trained on short sequences need not use the positions beyond
them well. Given a model's greedy outputs for a set of pairs, :func:`accuracy_by_length` scores
them by length, and :func:`accuracy_by_position` shows where in a sequence the errors sit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from transformer_course.core.batching import EOS_ID, PAD_ID
from transformer_course.core.training import accuracies

from .tasks import TaskData


def _predictions(outputs: torch.Tensor, data: TaskData) -> torch.Tensor:
    """(n, L + 1) predictions aligned with :func:`_labels` from (n, L') ``outputs`` (BOS first)."""
    width = data.tgt.shape[1] + 1  # the symbols, then EOS
    return nn.functional.pad(outputs[:, 1:], (0, width), value=PAD_ID)[:, :width]


def _labels(data: TaskData) -> torch.Tensor:
    """(n, L + 1) labels: the target's symbols, EOS, then padding."""
    n, L = data.tgt.shape
    labels = torch.cat([data.tgt, torch.full((n, 1), PAD_ID, dtype=data.tgt.dtype)], dim=1)
    labels[torch.arange(n), data.lengths] = EOS_ID
    return labels


def accuracy_by_length(outputs: torch.Tensor, data: TaskData) -> pd.DataFrame:
    """Score greedy outputs against their pairs, one row per sequence length.

    Args:
        outputs: (n, L') decoded ids in the decoders' format (BOS first, EOS, then padding),
            e.g. from ``task_training.decode_and_score``.
        data: the n pairs decoded.

    Returns:
        columns "length", "pairs", "sequence accuracy", "token accuracy" (fractions; tokens
        include the end-of-sequence label, as in :func:`core.training.accuracies`).
    """
    predicted, labels = _predictions(outputs, data), _labels(data)
    rows = []
    for length in sorted(set(data.lengths.tolist())):
        picked = data.lengths == length  # (n,)
        token, sequence = accuracies(predicted[picked], labels[picked], PAD_ID)
        rows.append({"length": int(length), "pairs": int(picked.sum()),
                     "sequence accuracy": sequence, "token accuracy": token})
    return pd.DataFrame(rows)


def accuracy_by_position(outputs: torch.Tensor, data: TaskData) -> np.ndarray:
    """The fraction of pairs whose decoded symbol is right, at each output position.

    Args:
        outputs: (n, L') greedy outputs (BOS first), as for :func:`accuracy_by_length`.
        data: the n pairs decoded; their targets have width L.

    Returns:
        (L,) float64: at index i, the share of pairs with at least i + 1 symbols whose decoded
        symbol i + 1 is right (end-of-sequence labels not included).
    """
    predicted = _predictions(outputs, data)[:, :-1]  # (n, L): symbols only
    symbols = torch.arange(data.tgt.shape[1])[None, :] < data.lengths[:, None]  # (n, L)
    right = (predicted == data.tgt) & symbols
    return (right.sum(dim=0) / symbols.sum(dim=0).clamp(min=1)).double().numpy()
