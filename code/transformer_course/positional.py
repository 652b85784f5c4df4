"""Positional information: the sinusoidal encoding of the paper and a learned embedding.

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))      (Vaswani et al., 2017, section 3.5)

An odd ``d_model`` is supported: the last (even-indexed) column is a sine with no cosine partner.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .checks import check_array, check_positive_int

BASE = 10000.0


def sinusoidal_encoding_numpy(num_positions: int, d_model: int, base: float = BASE) -> np.ndarray:
    """(num_positions, d_model) sinusoidal encodings, float64."""
    check_positive_int("num_positions", num_positions)
    check_positive_int("d_model", d_model)
    if not base > 1:
        raise ValueError(f"base must be greater than 1; got {base}")
    positions = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    pair_index = np.arange(0, d_model, 2, dtype=np.float64)  # 2i for i = 0 .. ceil(d/2) - 1
    angles = positions / base ** (pair_index / d_model)  # (P, ceil(d/2))
    encoding = np.zeros((num_positions, d_model))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding


def sinusoidal_encoding(num_positions: int, d_model: int, base: float = BASE,
                        dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(num_positions, d_model) sinusoidal encodings as a torch tensor."""
    return torch.from_numpy(sinusoidal_encoding_numpy(num_positions, d_model, base)).to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds fixed sinusoidal encodings to a (B, T, d_model) input; T up to ``max_len``."""

    def __init__(self, d_model: int, max_len: int = 5000) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("max_len", max_len)
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("encoding", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> x + PE[:T], same shape."""
        _check_positions_input(x, self.d_model, self.max_len)
        return x + self.encoding[: x.shape[1]].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position (the paper's Table 3, row E); T up to ``max_len``."""

    def __init__(self, d_model: int, max_len: int) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("max_len", max_len)
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> x + E[:T], same shape."""
        _check_positions_input(x, self.d_model, self.max_len)
        positions = torch.arange(x.shape[1], device=x.device)
        return x + self.embedding(positions).to(x.dtype)


def _check_positions_input(x: torch.Tensor, d_model: int, max_len: int) -> None:
    check_array("x", x, kind=torch.Tensor, ndim=3, shape=f"(B, T, d_model={d_model})",
                floating=True)
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have shape (B, T, d_model={d_model}); got {tuple(x.shape)}")
    if x.shape[1] > max_len:
        raise ValueError(f"x has T={x.shape[1]} positions, more than max_len={max_len}; "
                         f"got shape {tuple(x.shape)}")
