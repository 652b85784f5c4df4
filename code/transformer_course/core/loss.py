"""Label smoothing (Vaswani et al., 2017, section 5.4, epsilon_ls = 0.1), in PyTorch's definition
(``F.cross_entropy(logits, labels, label_smoothing=eps, ignore_index=pad)``): the target for a
label c is the distribution

    q(k) = (1 - eps) * [k == c] + eps / V     for every class k of the V classes,

padding and the correct class included; the loss is the cross-entropy -sum_k q(k) log p(k),
averaged over the positions whose label is not padding. Its minimum is the entropy of q, not 0.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .checks import Shapes, check_int, check_number, check_token_ids


def smoothed_targets(labels: torch.Tensor, vocab_size: int, epsilon: float) -> torch.Tensor:
    """The target distributions q of label smoothing: (1 - eps) one-hot + eps / V everywhere.

    Args:
        labels: (N,) class ids in [0, V). vocab_size: V. epsilon: eps in [0, 1).

    Returns:
        (N, V) rows that sum to 1.
    """
    check_int("vocab_size", vocab_size)
    check_token_ids("labels", labels, vocab_size, "N")
    check_number("epsilon", epsilon, 0, 1, high_open=True)
    one_hot = F.one_hot(labels.long(), vocab_size).float()  # (N, V)
    return (1 - epsilon) * one_hot + epsilon / vocab_size


def label_smoothed_loss(logits: torch.Tensor, labels: torch.Tensor, epsilon: float = 0.1,
                        pad_id: int = 0) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the non-padding labels (PyTorch's definition).

    Args:
        logits: (B, T, V) unnormalised scores.
        labels: (B, T) integer ids in [0, V); ``pad_id`` positions are ignored, and at least one
            label must be something else.
        epsilon: smoothing eps in [0, 1); 0 gives plain cross-entropy.
    """
    shapes = Shapes()
    V = shapes.tensor("logits", logits, "B T V")["V"]
    shapes.tensor("labels", labels, "B T", dtype="int")
    check_int("pad_id", pad_id, low=0)
    real = labels[labels != pad_id]  # a mean over no labels would be NaN
    if real.numel() == 0:
        raise ValueError(f"labels must hold at least one id other than pad_id={pad_id}; "
                         f"got only padding")
    check_token_ids("labels", real, V, "N")
    check_number("epsilon", epsilon, 0, 1, high_open=True)
    return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1).long(),
                           ignore_index=pad_id, label_smoothing=epsilon)


def loss_floor(vocab_size: int, epsilon: float) -> float:
    """The smallest possible label-smoothed loss: the entropy of the target distribution q."""
    check_int("vocab_size", vocab_size)
    check_number("epsilon", epsilon, 0, 1, high_open=True)
    high = 1 - epsilon + epsilon / vocab_size
    low = epsilon / vocab_size
    return -(high * math.log(high) + ((vocab_size - 1) * low * math.log(low) if low else 0.0))
