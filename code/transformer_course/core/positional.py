"""Positional information: the sinusoidal encoding of the paper and a learned embedding.

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))      (Vaswani et al., 2017, section 3.5)

An odd ``d_model`` is supported: the last (even-indexed) column is a sine with no cosine partner,
at the frequency the formula gives it. Such a column breaks the relative-position property (see
``relative_position``), which holds exactly only for an even ``d_model``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .checks import Shapes, check_int, check_number, checked_by

BASE = 10000.0


def sinusoidal_frequencies(d_model: int, base: float = BASE) -> np.ndarray:
    """Angular frequencies omega_i = base^(-2i / d_model), one per sine/cosine pair:
    (ceil(d_model / 2),) float64, decreasing from 1 towards 1 / base (10000 in the paper)."""
    check_int("d_model", d_model)
    check_number("base", base, low=1, low_open=True)
    pair_index = np.arange(0, d_model, 2, dtype=np.float64)  # 2i for i = 0 .. ceil(d/2) - 1
    return 1.0 / float(base) ** (pair_index / d_model)


def sinusoidal_wavelengths(d_model: int, base: float = BASE) -> np.ndarray:
    """Wavelengths 2 pi / omega_i in positions, (ceil(d_model / 2),): a geometric progression
    from 2 pi."""
    return 2 * np.pi / sinusoidal_frequencies(d_model, base)


def sinusoidal_encoding_numpy(num_positions: int, d_model: int, base: float = BASE) -> np.ndarray:
    """(num_positions, d_model) float64 sinusoidal encodings of positions 0 .. P - 1 (odd
    d_model allowed; ``base`` > 1)."""
    check_int("num_positions", num_positions)
    positions = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    angles = positions * sinusoidal_frequencies(d_model, base)  # (P, ceil(d/2))
    encoding = np.zeros((num_positions, d_model))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding


def sinusoidal_encoding(num_positions: int, d_model: int, base: float = BASE,
                        dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """:func:`sinusoidal_encoding_numpy` as a torch tensor of floating-point ``dtype``."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype; got {dtype!r}")
    return torch.from_numpy(sinusoidal_encoding_numpy(num_positions, d_model, base)).to(dtype)


def _check_positions_input(module: nn.Module, x: torch.Tensor) -> None:
    """The checks of a positional module's forward: x (B, T, d_model) with T <= max_len."""
    T = Shapes(d_model=module.d_model).tensor("x", x, "B T d_model")["T"]
    if T > module.max_len:
        raise ValueError(f"x must have at most max_len={module.max_len} positions; "
                         f"got shape {tuple(x.shape)}")


class SinusoidalPositionalEncoding(nn.Module):
    """Adds fixed sinusoidal encodings to a (B, T, d_model) input; T up to ``max_len``.

    The table is kept in float64 and cast to the input's dtype, so a float64 model gets the
    encoding to float64 rounding.

    Args:
        d_model: model width. max_len: length of the precomputed table (not a limit of the
            formula, which extends to any position: pass a larger one to encode longer inputs).
    """

    def __init__(self, d_model: int, max_len: int = 5000) -> None:
        super().__init__()
        check_int("max_len", max_len)
        self.d_model, self.max_len = d_model, max_len
        table = sinusoidal_encoding(max_len, d_model, dtype=torch.float64)  # checks d_model
        self.register_buffer("encoding", table, persistent=False)

    @checked_by(_check_positions_input)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> x + PE[:T], same shape."""
        return x + self.encoding[:x.shape[1]].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position (the paper's Table 3, row E); T up to ``max_len``.

    Args:
        d_model: model width. max_len: number of rows in the table; a position at or past it
            has no vector, so longer inputs raise a ValueError.
    """

    def __init__(self, d_model: int, max_len: int) -> None:
        super().__init__()
        check_int("d_model", d_model)
        check_int("max_len", max_len)
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    @checked_by(_check_positions_input)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> x + E[:T], same shape."""
        return x + self.embedding.weight[:x.shape[1]].to(x.dtype)
