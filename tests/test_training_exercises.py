"""Tests for the exercise checks: they accept a right answer and reject wrong ones."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_course.exercises import (
    Passed,
    check_loss_floor,
    check_noam_lr,
    check_shift_targets,
)
from transformer_course.experiments.ch6_training.tasks import to_text, token_name


def right_shift(tgt):
    B, L = tgt.shape
    lengths = (tgt != 0).sum(dim=1)
    tgt_in = torch.cat([torch.ones(B, 1, dtype=torch.long), tgt], dim=1)
    tgt_out = torch.cat([tgt, torch.zeros(B, 1, dtype=torch.long)], dim=1)
    tgt_out[torch.arange(B), lengths] = 2
    return tgt_in, tgt_out


def test_right_answers_pass():
    assert check_shift_targets(right_shift) == Passed(cases=3, largest_difference=0.0)
    result = check_noam_lr(lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -1.5))
    assert isinstance(result, Passed) and result.cases == 21  # 3 settings x 7 steps
    assert 0.0 <= result.largest_difference <= 1e-12


def test_wrong_answers_fail():
    with pytest.raises(AssertionError, match="tgt_out"):
        check_shift_targets(lambda t: (right_shift(t)[0], torch.cat(
            [t, torch.full((t.shape[0], 1), 2)], dim=1)))  # eos at the very end, not after n
    with pytest.raises(AssertionError, match="shape"):
        check_shift_targets(lambda t: (t, t))
    with pytest.raises(AssertionError, match="pair"):
        check_shift_targets(lambda t: t)
    with pytest.raises(AssertionError, match="step="):
        check_noam_lr(lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -1.5) * 1.01)
    with pytest.raises(AssertionError, match="step="):
        check_noam_lr(lambda s, d, w: d ** -0.5 * s ** -0.5)  # no warm-up


def test_bad_input_and_names():
    with pytest.raises(TypeError, match="fn"):
        check_shift_targets(3)
    with pytest.raises(TypeError, match="fn"):
        check_noam_lr(None)
    assert [token_name(i) for i in range(5)] == ["_", "<s>", "</s>", "a", "b"]
    assert to_text(torch.tensor([1, 3, 4, 2, 0])) == "<s> a b </s>"
    assert to_text(torch.tensor([3, 0]), show_pad=True) == "a _"


def entropy_of_q(V, eps):
    """The loss at p = q, summed over the V classes one by one."""
    q = [1 - eps + eps / V] + [eps / V] * (V - 1)
    return -sum(x * math.log(x) for x in q if x > 0)


def test_loss_floor_by_entropy_passes():
    result = check_loss_floor(entropy_of_q)
    assert isinstance(result, Passed) and result.cases >= 5
    assert result.largest_difference <= 1e-9


@pytest.mark.parametrize("fn", [
    lambda V, eps: 0.0,  # "a perfect model reaches zero"
    lambda V, eps: entropy_of_q(V - 1, eps),  # smoothing spread over the V - 1 wrong ids
    lambda V, eps: -(1 - eps) * math.log(1 - eps),  # only the label's term
    lambda V, eps: entropy_of_q(V, eps) / V,
    lambda V, eps: None,
])
def test_wrong_loss_floors_fail(fn):
    with pytest.raises(AssertionError):
        check_loss_floor(fn)
