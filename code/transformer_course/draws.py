"""Other CPUs, simulated on this one: draw k moves every initial weight by one float32 ulp.

On another CPU a seeded training run is not a replay. oneDNN and MKL pick other kernels, the
first step rounds differently, and training amplifies the difference until the run is a new draw
from the distribution that the seed's neighbours span. To sample that distribution on one machine,
set :data:`DRAW_ENV` (``TRANSFORMER_COURSE_DRAW=k``, k = 1, 2, ...) before the package is
imported: every weight that ``torch.nn.init`` fills (every torch layer and every model of the
course is initialised through it) then moves by one unit in the last place of float32, up or
down. The directions come from a generator seeded by k and by the filled tensor's own values, so

* draw k is the same "other CPU" in every process and every run;
* two models built alike (the same seed, the same sizes) stay alike, and a model equals its saved
  initial weights, so the identities a chapter checks between them still hold;
* the random streams are untouched: data, dropout and later initialisations are drawn as before.

Zeros stay zero (one ulp relative to the value, 2^-23 or 2^-24 of it). Unset, nothing is changed.
``make other-cpus`` runs every chapter under such draws, and ``make calibrate`` runs them under
many to measure how far each trained number moves (:mod:`transformer_course.claims`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable

import torch
from torch import nn

DRAW_ENV = "TRANSFORMER_COURSE_DRAW"
# torch.nn.init's functions that fill a tensor with initial values; each is wrapped so that
# the values it writes move by one ulp (zeros_ is left out: zeros stay zero anyway).
_FILLERS = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "eye_", "dirac_",
            "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
            "orthogonal_", "sparse_")
_state = threading.local()  # depth of wrapped fillers on this thread: one nudge per fill
_installed: int | None = None


def current_draw() -> int | None:
    """The draw this process simulates (``TRANSFORMER_COURSE_DRAW``), or None on this CPU as it
    is; a value that is not a positive integer raises a ValueError naming the variable."""
    raw = os.environ.get(DRAW_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{DRAW_ENV} must be a positive integer (a draw); got {raw!r}")
    return int(raw)


@torch.no_grad()
def nudge_(tensor: torch.Tensor, draw: int) -> torch.Tensor:
    """Move every nonzero entry of the floating-point ``tensor`` one float32 ulp up or down, in
    place, with directions drawn by a generator seeded by ``draw`` and the tensor's values.
    A tensor on the meta device (a model built only to count its parameters) holds no values
    and is left as it is."""
    if not tensor.is_floating_point() or tensor.numel() == 0 or tensor.is_meta:
        return tensor
    values = tensor.detach().to("cpu", torch.float32).contiguous()
    digest = hashlib.blake2b(values.numpy().tobytes(), digest_size=8,
                             key=draw.to_bytes(8, "little")).digest()
    generator = torch.Generator().manual_seed(int.from_bytes(digest, "little") >> 1)
    up = torch.randint(0, 2, values.shape, generator=generator, dtype=torch.bool)
    towards = torch.where(up, torch.inf, -torch.inf)
    moved = torch.where(values == 0, values, torch.nextafter(values, towards))
    tensor.copy_(moved.to(tensor.dtype) if tensor.dtype == torch.float32
                 else tensor + (moved - values).to(tensor.device, tensor.dtype))
    return tensor


def initial(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``, nudged in place when a draw is installed: for initial weights made without
    ``torch.nn.init`` (``nn.Parameter(gain * torch.randn(...))``)."""
    return tensor if _installed is None else nudge_(tensor, _installed)


def _nudging(fill: Callable[..., torch.Tensor], draw: int) -> Callable[..., torch.Tensor]:
    @functools.wraps(fill)
    def wrapped(tensor: torch.Tensor, *args, **kwargs) -> torch.Tensor:
        _state.depth = getattr(_state, "depth", 0) + 1
        try:
            result = fill(tensor, *args, **kwargs)
        finally:
            _state.depth -= 1
        if _state.depth == 0:  # an outer filler nudges once, whatever it called
            nudge_(tensor, draw)
        return result

    wrapped.__wrapped_filler__ = fill
    return wrapped


def install(draw: int | None) -> None:
    """Make ``torch.nn.init``'s fillers nudge what they write for ``draw`` (None: restore them).
    The package calls this on import with :func:`current_draw`."""
    global _installed
    for name in _FILLERS:
        fill = getattr(nn.init, name)
        fill = getattr(fill, "__wrapped_filler__", fill)
        setattr(nn.init, name, fill if draw is None else _nudging(fill, draw))
    _installed = draw


def installed() -> int | None:
    """The draw ``torch.nn.init`` nudges for now, or None."""
    return _installed
