"""The paper's learning-rate schedule (Vaswani et al., 2017, section 5.3), with a scale factor s:

    lrate(step) = s * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5),   step = 1, 2, ...

It rises linearly for ``warmup`` steps, peaks at step = warmup, then decays as step^-0.5.
"""

from __future__ import annotations

from .checks import check_int, check_number


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The paper's learning rate at ``step`` (1-based): peak at step = warmup.

    Args:
        step: optimiser step, from 1. d_model: model width. warmup: warm-up steps.
        scale: factor on the whole schedule.
    """
    for name, value in (("d_model", d_model), ("warmup", warmup), ("step", step)):
        check_int(name, value)
    check_number("scale", scale, low=0, low_open=True)
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def peak_lr(d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The schedule's largest value, scale * (d_model * warmup)^-0.5, reached at step = warmup."""
    return noam_lr(warmup, d_model, warmup, scale)
