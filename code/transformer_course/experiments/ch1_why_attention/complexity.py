"""Table 1 of Vaswani et al. (2017), by counting rather than by asymptotics.

For self-attention, recurrent (Elman RNN and LSTM), convolutional and restricted self-attention
layers, three costs:

- FLOPs of one real layer, counted by ``torch.utils.flop_counter.FlopCounterMode`` on the ``meta``
  device (shapes only, so counting a large layer costs nothing).
- Sequential operations: the longest chain of dependent tensor operations in one forward pass,
  read from the operations PyTorch actually dispatches (views cost nothing).
- Maximum path length: from :mod:`.paths` (breadth-first search).

Beside the counts, :func:`time_forward_by_length` measures forward time on one thread.
"""

from __future__ import annotations

import math
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from transformer_course.core.attention import scaled_dot_product_attention
from transformer_course.core.checks import check_choice
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.experiments.ch1_why_attention.paths import counted_path_length
from transformer_course.notebook import time_call
from transformer_course.paper import TABLE1

#: The layer kinds of Table 1 as counted here: the paper's rows, with the recurrent row twice,
#: as a plain (Elman) RNN and as the LSTM the paper's recurrent baselines used.
TABLE1_KINDS = ("self-attention", "recurrent", "LSTM", "convolutional", "dilated convolutional",
                "restricted self-attention")
TABLE1_NAMES = {"self-attention": "Self-attention", "recurrent": "RNN (Elman)", "LSTM": "LSTM",
                "convolutional": "CNN", "dilated convolutional": "Dilated CNN",
                "restricted self-attention": "Restricted attention"}  # short enough for a phone


def graph_kind(kind: str) -> str:
    """The connectivity graph of ``kind`` in :mod:`.paths`: an LSTM is wired like any RNN."""
    return "recurrent" if kind == "LSTM" else kind

# --- restricted self-attention -----------------------------------------------------------------

def restricted_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         neighbourhood: int) -> torch.Tensor:
    """Self-attention in which position i sees only keys j with |i - j| <= neighbourhood // 2.

    Only the r = ``neighbourhood`` keys of each window are multiplied, so the cost is r * n * d
    instead of n^2 * d. Equal to full attention under a band mask.

    Args:
        q: queries (..., T, d_k). k: keys (..., T, d_k). v: values (..., T, d_v).
        neighbourhood: r, the odd window size centred on each query.

    Returns:
        output (..., T, d_v).
    """
    T, w = q.shape[-2], neighbourhood // 2
    k_win = F.pad(k, (0, 0, w, w)).unfold(-2, neighbourhood, 1)  # (..., T, d_k, r)
    v_win = F.pad(v, (0, 0, w, w)).unfold(-2, neighbourhood, 1)  # (..., T, d_v, r)
    scores = (q.unsqueeze(-2) @ k_win).squeeze(-2) / math.sqrt(q.shape[-1])  # (..., T, r)
    key_index = (torch.arange(T, device=q.device)[:, None]
                 + torch.arange(neighbourhood, device=q.device)[None, :] - w)  # (T, r)
    inside = (key_index >= 0) & (key_index < T)  # window slots that hold a real key
    weights = torch.softmax(scores.masked_fill(~inside, float("-inf")), dim=-1)  # (..., T, r)
    return (v_win @ weights.unsqueeze(-1)).squeeze(-1)  # (..., T, d_v)


def band_mask(T: int, neighbourhood: int) -> torch.Tensor:
    """(T, T) boolean mask, True where |i - j| <= neighbourhood // 2."""
    index = torch.arange(T)
    return (index[:, None] - index[None, :]).abs() <= neighbourhood // 2


# --- counting FLOPs and sequential operations -------------------------------------------------

def count_flops(fn: Callable[[], object]) -> int:
    """FLOPs (2 per multiply-add, matrix products and convolutions only) of calling ``fn()``."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


class _DepthTracker(TorchDispatchMode):
    """Records, for every tensor produced, the length of the chain of operations behind it."""

    def __init__(self) -> None:
        super().__init__()
        self.depth: dict[int, int] = {}
        self.alive: list[torch.Tensor] = []  # keeps tensors alive, so their ids stay unique
        self.longest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        if not inputs:  # a constant (zeros, arange): available at step 0
            step = 0
        else:
            step = max(self.depth.get(id(t), 0) for t in inputs) + (0 if func.is_view else 1)
        written = [a for a, spec in zip(args, func._schema.arguments, strict=False)
                   if isinstance(a, torch.Tensor) and spec.alias_info is not None
                   and spec.alias_info.is_write]
        for t in [*tree_leaves(out), *written]:
            if isinstance(t, torch.Tensor):
                self.depth[id(t)] = step
                self.alive.append(t)
        self.longest = max(self.longest, step)
        return out


def count_sequential_ops(fn: Callable[[], object]) -> int:
    """Longest chain of dependent (non-view) tensor operations dispatched while calling ``fn()``.

    Each operation (a matrix product, a softmax) is itself parallel; the chain is the number of
    rounds that must run one after another, the paper's "sequential operations".
    """
    with torch.no_grad(), _DepthTracker() as tracker:
        fn()
    return tracker.longest


def layer_forward(kind: str, n: int, d: int, *, kernel_size: int = 3, neighbourhood: int = 5,
                  batch: int = 1, device: str | torch.device = "meta") -> Callable[[], object]:
    """A zero-argument forward pass of one ``kind`` layer on a (batch, n, d) input.

    Self-attention is the attention operation itself (the paper's n^2 * d); the recurrent layers are
    ``nn.RNN`` (tanh) and ``nn.LSTM``; convolutions are ``nn.Conv1d`` with ``same`` padding (the
    dilated one has dilation ``kernel_size``: the cost of any layer of a dilated stack). The LSTM
    runs PyTorch's step-by-step implementation, not oneDNN's fused kernel, so that its operations
    can be counted (the two compute the same thing).
    """
    check_choice("kind", kind, TABLE1_KINDS)  # an unknown name would build a convolution
    x = torch.zeros(batch, n, d, device=device)  # (B, T, d_model); values do not matter
    if kind == "self-attention":
        return lambda: scaled_dot_product_attention(x, x, x)
    if kind == "restricted self-attention":
        return lambda: restricted_attention(x, x, x, neighbourhood)
    with torch.random.fork_rng():  # initialising a layer leaves the global random state alone
        if kind == "recurrent":
            rnn = nn.RNN(d, d, batch_first=True, device=device)
            return lambda: rnn(x)
        if kind == "LSTM":
            lstm = nn.LSTM(d, d, batch_first=True, device=device)
            return lambda: _without_onednn(lambda: lstm(x))
        dilation = kernel_size if kind == "dilated convolutional" else 1
        conv = nn.Conv1d(d, d, kernel_size, padding=dilation * (kernel_size // 2),
                         dilation=dilation, device=device)
    return lambda: conv(x.transpose(1, 2))  # (B, d_model, T)


def _without_onednn(fn: Callable[[], object]) -> object:
    """Call ``fn`` with oneDNN switched off, so that an LSTM dispatches one operation per step."""
    with warnings.catch_warnings():  # switching the flag warns about Intel GPUs, which we lack
        warnings.simplefilter("ignore", UserWarning)
        with torch.backends.mkldnn.flags(enabled=False):
            return fn()


# --- Table 1 ---------------------------------------------------------------------------------

#: The paper's entries (complexity, sequential operations, path length) for each counted kind.
#: The paper's rows are ``paper.TABLE1``; its convolutional row, whose path is O(log_k(n)), is the
#: dilated stack. Two rows are the course's: the LSTM (the paper's recurrent row covers it) and
#: the contiguous convolution, whose O(n/k) path section 4 gives.
PAPER_TABLE1 = {
    "self-attention": TABLE1["self-attention"],
    "recurrent": TABLE1["recurrent"],
    "LSTM": TABLE1["recurrent"],  # the course's row
    "convolutional": (*TABLE1["convolutional"][:2], "O(n/k) (§4)"),  # the course's row
    "dilated convolutional": TABLE1["convolutional"],
    "restricted self-attention": TABLE1["restricted self-attention"],
}


@dataclass(frozen=True)
class Table1Config:
    """The concrete sizes at which Table 1 is counted."""

    n: int = 64  # sequence length
    d: int = 512  # representation width, the paper's d_model
    kernel_size: int = 3  # k, convolution kernel width
    neighbourhood: int = 9  # r, restricted self-attention window


def paper_term(kind: str, n: int, d: int, kernel_size: int, neighbourhood: int) -> int:
    """The paper's complexity-per-layer expression evaluated at the given sizes."""
    return {"self-attention": n * n * d, "recurrent": n * d * d, "LSTM": n * d * d,
            "convolutional": kernel_size * n * d * d,
            "dilated convolutional": kernel_size * n * d * d,
            "restricted self-attention": neighbourhood * n * d}[kind]


def counting_device(kind: str) -> str:
    """Where to count ``kind``'s FLOPs: ``meta`` for a few large operations (nothing is computed),
    the CPU for the recurrent layers, whose many small steps run faster there than on ``meta``."""
    return "cpu" if kind in ("recurrent", "LSTM") else "meta"


def count_table1(config: Table1Config = Table1Config()) -> pd.DataFrame:
    """Table 1 counted at ``config``: one row per layer kind, numeric columns."""
    n, d, k, r = config.n, config.d, config.kernel_size, config.neighbourhood
    options = {"kernel_size": k, "neighbourhood": r}
    rows = []
    for kind in TABLE1_KINDS:
        flops = count_flops(layer_forward(kind, n, d, device=counting_device(kind), **options))
        term = paper_term(kind, n, d, k, r)
        rows.append({
            "layer": kind, "flops": flops, "paper_term": term, "flops_per_term": flops / term,
            "sequential_n": count_sequential_ops(layer_forward(kind, n, 8, device="cpu",
                                                               **options)),
            "sequential_2n": count_sequential_ops(layer_forward(kind, 2 * n, 8, device="cpu",
                                                                **options)),
            "path_length": counted_path_length(graph_kind(kind), n, **options),
        })
    return pd.DataFrame(rows).set_index("layer")


def format_table1(counted: pd.DataFrame, config: Table1Config = Table1Config()) -> pd.DataFrame:
    """The counted table beside the paper's asymptotic entries, as strings for display.

    One row per layer kind, as in the paper; each cell gives the paper's entry, then the count
    (FLOPs in millions; operations that must run one after another at n and 2n; the path length
    at n).
    """
    n = config.n
    rows = {}
    for kind, row in counted.iterrows():
        complexity, sequential, path = PAPER_TABLE1[kind]
        path = path.removesuffix(" (§4)").replace("log_k(n)", "log\u2096 n")
        chain = f"{int(row['sequential_n'])} \u2192 {int(row['sequential_2n'])}"
        rows[TABLE1_NAMES[kind]] = {
            "FLOPs, millions": f"{complexity}: {row['flops'] / 1e6:.3g}",
            f"One after another, n = {n} \u2192 {2 * n}": f"{sequential}: {chain}",
            "Path length": f"{path}: {int(row['path_length'])}",
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("Layer")


def flops_by_length(lengths: Sequence[int], d: int, *, kernel_size: int = 3) -> pd.DataFrame:
    """Counted FLOPs per layer against sequence length: columns length, layer, flops.

    Layers: the attention operation, a full multi-head self-attention layer (with its four
    d x d projections), ``nn.RNN`` and ``nn.LSTM`` (each counted for one position, times n),
    and ``nn.Conv1d``.
    """
    full_layer = _multihead_flops(lengths, d)
    # A recurrent layer does the same arithmetic at every position; counting it one position
    # long and multiplying by n saves dispatching thousands of small steps (Table 1 counts the
    # layers whole, and the tests check that the two agree).
    rnn_step = count_flops(layer_forward("recurrent", 1, d, device="cpu"))
    lstm_step = count_flops(layer_forward("LSTM", 1, d, device="cpu"))
    rows = []
    for n in lengths:
        counts = {
            "self-attention (attention only)": count_flops(layer_forward("self-attention", n, d)),
            "self-attention layer (with projections)": full_layer[n],
            "recurrent (nn.RNN)": n * rnn_step,
            "recurrent (nn.LSTM)": n * lstm_step,
            f"convolutional (k={kernel_size})": count_flops(
                layer_forward("convolutional", n, d, kernel_size=kernel_size)),
        }
        rows += [{"length": n, "layer": name, "flops": f} for name, f in counts.items()]
    return pd.DataFrame(rows)


def _multihead_flops(lengths: Sequence[int], d: int) -> dict[int, int]:
    """FLOPs of a whole :class:`MultiHeadAttention` self-attention layer at each length, counted
    on the ``meta`` device (shapes only, nothing computed)."""
    flops = {}
    with torch.device("meta"):
        layer = MultiHeadAttention(d, 8 if d % 8 == 0 else 1)
        for n in lengths:
            x = torch.zeros(1, n, d)  # (B, T, d_model)
            flops[n] = count_flops(lambda x=x: layer(x, x, x, need_weights=True))
    return flops


# --- measured time ----------------------------------------------------------------------------

def time_forward_by_length(lengths: Sequence[int], *, d_model: int = 128, num_heads: int = 4,
                           batch: int = 4, rounds: int = 7, threads: int = 1) -> pd.DataFrame:
    """CPU time of one forward pass of a recurrent and a self-attention layer, per length.

    Layers of width d_model: ``nn.RNN``, ``nn.LSTM`` (each one call, stepping over positions
    inside) and :class:`MultiHeadAttention`. Inputs are (batch, length, d_model); gradients are
    off. Every round times each (layer, length) once, in rotating order, so that a change in the
    machine's load falls on all of them alike; the clock is the process's CPU time, which does not
    count the moments the process waits for a core. Runs on ``threads`` CPU threads; the thread
    count and the global random state are restored afterwards.

    Returns:
        columns length, layer, parameters, median_s, min_s, max_s (one row per layer and length).
    """
    with torch.random.fork_rng():
        torch.manual_seed(0)
        rnn = nn.RNN(d_model, d_model, batch_first=True)
        lstm = nn.LSTM(d_model, d_model, batch_first=True)
        mha = MultiHeadAttention(d_model, num_heads)
        layers = {"recurrent (nn.RNN)": (rnn, rnn), "recurrent (nn.LSTM)": (lstm, lstm),
                  "self-attention (MultiHeadAttention)": (mha, lambda x: mha(x, x, x))}
        inputs = {n: torch.randn(batch, n, d_model) for n in lengths}  # (B, T, d_model)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        samples = _time_rounds(layers, inputs, rounds)
    finally:
        torch.set_num_threads(previous_threads)
    rows = []
    for (n, name), seconds in samples.items():
        rows.append({"length": n, "layer": name,
                     "parameters": sum(p.numel() for p in layers[name][0].parameters()),
                     "median_s": statistics.median(seconds), "min_s": min(seconds),
                     "max_s": max(seconds)})
    return pd.DataFrame(rows)


def _time_rounds(layers: dict[str, tuple[nn.Module, Callable[[torch.Tensor], object]]],
                 inputs: dict[int, torch.Tensor], rounds: int,
                 ) -> dict[tuple[int, str], list[float]]:
    calls = {(n, name): (lambda f=forward, x=x: f(x))
             for n, x in inputs.items() for name, (_, forward) in layers.items()}
    keys, samples = list(calls), {key: [] for key in calls}
    with torch.no_grad():
        for key in keys:
            calls[key]()  # warm-up
        for r in range(rounds):
            for key in keys[r % len(keys):] + keys[:r % len(keys)]:
                timing = time_call(calls[key], repeats=1, warmup=0, clock=time.process_time)
                samples[key].append(timing.median)
    return samples
