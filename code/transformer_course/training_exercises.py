"""Checks for the training chapter's exercises: they test a reader's function, loudly.

Each check calls the reader's function on cases with known answers (from the package's own,
tested implementation) and raises an AssertionError saying which case went wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .batching import shift_targets
from .training import noam_lr


def check_shift_targets(fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]) -> None:
    """Check ``fn(tgt) -> (tgt_in, tgt_out)`` against :func:`batching.shift_targets`.

    ``tgt`` is (B, L) with padding id 0 after each row's tokens; BOS is 1 and EOS is 2.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    g = torch.Generator().manual_seed(0)
    cases = [torch.tensor([[5, 6, 7]]), torch.tensor([[5, 0, 0], [6, 7, 0]])]
    lengths = torch.randint(1, 7, (8,), generator=g)
    random = torch.randint(3, 12, (8, 6), generator=g)
    cases.append(random.masked_fill(torch.arange(6)[None, :] >= lengths[:, None], 0))
    for i, tgt in enumerate(cases):
        want_in, want_out = shift_targets(tgt)
        got = fn(tgt.clone())
        if not (isinstance(got, tuple) and len(got) == 2):
            raise AssertionError(f"case {i}: fn must return a pair (tgt_in, tgt_out); got {got!r}")
        for name, have, want in (("tgt_in", got[0], want_in), ("tgt_out", got[1], want_out)):
            if not isinstance(have, torch.Tensor) or have.shape != want.shape:
                shape = tuple(have.shape) if isinstance(have, torch.Tensor) else type(have)
                raise AssertionError(f"case {i}: {name} must have shape {tuple(want.shape)}; "
                                     f"got {shape}")
            if not torch.equal(have.long(), want):
                raise AssertionError(f"case {i}: for tgt={tgt.tolist()}, {name} should be "
                                     f"{want.tolist()}; got {have.tolist()}")


def check_noam_lr(fn: Callable[[int, int, int], float]) -> None:
    """Check ``fn(step, d_model, warmup)`` against the paper's schedule at several steps."""
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    for d_model, warmup in ((512, 4000), (64, 30), (1024, 1)):
        for step in (1, 2, warmup // 2 + 1, warmup, warmup + 1, 3 * warmup, 100_000):
            want, got = noam_lr(step, d_model, warmup), fn(step, d_model, warmup)
            if not abs(float(got) - want) <= 1e-9 + 1e-6 * want:
                raise AssertionError(f"at step={step}, d_model={d_model}, warmup={warmup} the "
                                     f"rate should be {want:.6g}; got {got!r}")
