"""A recurrent layer stepped by hand, and how its gradient fades with distance.

    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)        (Elman, 1990)

The layer reads one position per step, so T positions take T dependent steps, and everything the
last position knows about the first has passed through T - 1 multiplications by W_hh and tanh'.
:func:`measure_gradient_decay` measures what that does to the gradient, against one layer of
self-attention, which reads every position directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from transformer_course.core.multihead import MultiHeadAttention


class ElmanRNN(nn.Module):
    """One tanh recurrent layer, stepped over time in a Python loop (``nn.RNN``'s maths).

    Args:
        input_size: width of each x_t. hidden_size: width of the state h_t.

    Parameters are initialised as ``nn.RNN`` does: uniform in [-1/sqrt(hidden), 1/sqrt(hidden)].
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.w_ih = nn.Parameter(torch.empty(hidden_size, input_size))
        self.w_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))
        self.b_ih = nn.Parameter(torch.empty(hidden_size))
        self.b_hh = nn.Parameter(torch.empty(hidden_size))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Draw every parameter uniformly from [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None,
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the recurrence over every position.

        Args:
            x: inputs (B, T, input_size).
            h0: initial state (B, hidden_size); zeros if None.

        Returns:
            every state (B, T, hidden_size) and the last one (B, hidden_size).
        """
        B, T, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0  # (B, hidden)
        driven = x @ self.w_ih.T + self.b_ih  # (B, T, hidden): needs no state
        states = []
        for t in range(T):  # sequential: step t needs the state of step t - 1
            h = torch.tanh(driven[:, t] + h @ self.w_hh.T + self.b_hh)  # (B, hidden)
            states.append(h)
        return torch.stack(states, dim=1), h  # (B, T, hidden), (B, hidden)


@torch.no_grad()
def load_torch_rnn_weights(ours: ElmanRNN, theirs: nn.RNN) -> None:
    """Copy a one-layer, unidirectional tanh ``torch.nn.RNN`` (same sizes) into ``ours``."""
    for name in ("w_ih", "w_hh", "b_ih", "b_hh"):
        torch_name = name.replace("w_", "weight_").replace("b_", "bias_") + "_l0"
        getattr(ours, name).copy_(getattr(theirs, torch_name))


def _first_output(result: torch.Tensor | tuple) -> torch.Tensor:
    return result[0] if isinstance(result, tuple) else result


def last_position_jacobian_norms(layer: Callable[[torch.Tensor], object],
                                 x: torch.Tensor) -> torch.Tensor:
    """(T,) Frobenius norm of d(output at the last position) / d(input at position t), each t.

    The d_out rows of the Jacobian come from one backward pass over d_out copies of ``x``, so
    ``layer`` must treat batch rows independently (no dropout, no batch statistics).

    Args:
        layer: maps (B, T, d_model) to (B, T, d_out), or to a tuple whose first item is that.
        x: one input sequence (T, d_model).
    """
    with torch.no_grad():
        d_out = _first_output(layer(x[None])).shape[-1]
    copies = x.detach()[None].repeat(d_out, 1, 1).requires_grad_(True)  # (d_out, T, d_model)
    y = _first_output(layer(copies))  # (d_out, T, d_out)
    rows = torch.arange(d_out)
    (grad,) = torch.autograd.grad(y[rows, -1, rows].sum(), copies)  # grad[i, t] = dy_i / dx_t
    return grad.pow(2).sum(dim=(0, 2)).sqrt()  # (T,)


@dataclass(frozen=True)
class GradientDecayConfig:
    """Sizes and seeds of the gradient-against-distance measurement."""

    seq_len: int = 64  # T, positions in the sequence
    d_model: int = 32  # width of inputs, states and attention
    num_heads: int = 4  # h, heads of the attention layer
    num_seeds: int = 8  # independent initialisations (and inputs) averaged over
    recurrent_gain: float = 1.0  # multiplies W_hh after nn.RNN's default initialisation


@dataclass(frozen=True)
class GradientDecay:
    """Jacobian norms indexed by distance: ``recurrent[s, k]`` is seed s at distance k."""

    distances: np.ndarray  # (T,): 0 .. T - 1, from the last position back
    recurrent: np.ndarray  # (num_seeds, T)
    attention: np.ndarray  # (num_seeds, T)


def measure_gradient_decay(config: GradientDecayConfig = GradientDecayConfig()) -> GradientDecay:
    """Norm of d(last output)/d(input k positions back) for a random RNN and attention layer.

    Each seed draws a fresh ``ElmanRNN`` (with W_hh scaled by ``recurrent_gain``), a fresh
    ``MultiHeadAttention`` and a standard-normal input, in float64 so that tiny gradients do not
    underflow. The global random state is left as it was.
    """
    T, d = config.seq_len, config.d_model
    recurrent, attention = [], []
    for seed in range(config.num_seeds):
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            rnn = ElmanRNN(d, d).double()
            with torch.no_grad():
                rnn.w_hh.mul_(config.recurrent_gain)
            mha = MultiHeadAttention(d, config.num_heads).double()
            x = torch.randn(T, d, dtype=torch.float64)  # (T, d_model)
        recurrent.append(last_position_jacobian_norms(lambda b, rnn=rnn: rnn(b), x))
        attention.append(last_position_jacobian_norms(lambda b, mha=mha: mha(b, b, b), x))
    by_distance = lambda norms: torch.stack(norms).flip(-1).numpy()  # noqa: E731, (seeds, T)
    return GradientDecay(np.arange(T), by_distance(recurrent), by_distance(attention))


def per_step_factor(norms: np.ndarray, distances: np.ndarray) -> float:
    """Factor by which the norm changes per step of distance: exp of the log-linear slope.

    Fits log(norm) = a + b * distance by least squares over distances >= 1 (distance 0 has a
    direct path in every layer) and every seed, and returns exp(b).

    Args:
        norms: (num_seeds, T) or (T,) positive norms indexed by distance.
        distances: (T,) the distances.
    """
    norms = np.atleast_2d(norms)
    far = distances >= 1
    xs = np.broadcast_to(distances[far], norms[:, far].shape).ravel()
    slope = np.polyfit(xs.astype(np.float64), np.log(norms[:, far]).ravel(), 1)[0]
    return float(np.exp(slope))
