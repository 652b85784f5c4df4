"""Additive against dot-product attention as d_k grows (Vaswani et al., 2017, section 3.2.1).

The paper: "for small values of d_k the two mechanisms perform similarly, additive attention
outperforms dot product attention without scaling for larger values of d_k". We test that on a
retrieval task small enough to train many times in seconds.

The task: T_k keys, each a different symbol out of V and each carrying a label out of C; the query
is one of the key symbols, and the answer is that key's label. Symbols are fixed random vectors
of width d_k (unit-variance entries). The model learns W^Q and W^K (d_k x d_k), scores the query
against every key with one of three score functions,

    additive:           v^T tanh(q + k)          (Bahdanau et al., 2014; v learned too)
    dot-product:        q . k
    scaled dot-product: q . k / sqrt(d_k)

averages the keys' label vectors (fixed, random) with the softmax weights and reads the label
out with a learned linear map. Projections start with entries of variance 1 / d_k, so q and k
have unit-variance entries, the premise of the paper's footnote 4.

Every seed draws its own symbols, labels and initial weights; the seeds of one width and score
function are trained side by side as one batched computation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F

from transformer_course.core.checks import check_array, check_instance, check_positive_int

SCORES = ("additive", "dot-product", "scaled dot-product")


def additive_scores(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Additive (Bahdanau) scores v . tanh(q_i + k_j) for every query i and key j.

    Args:
        q: projected queries (..., T_q, d). k: projected keys (..., T_k, d). v: (..., d).

    Returns:
        scores (..., T_q, T_k).
    """
    for name, x in (("q", q), ("k", k)):
        check_array(name, x, kind=torch.Tensor, min_ndim=2, shape="(..., T, d)", floating=True)
    check_array("v", v, kind=torch.Tensor, min_ndim=1, shape="(..., d)", floating=True)
    if not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        raise ValueError(f"q (..., T_q, d), k (..., T_k, d) and v (..., d) must share d; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    hidden = torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3))  # (..., T_q, T_k, d)
    return (hidden @ v[..., None, :, None]).squeeze(-1)  # (..., T_q, T_k)


@dataclass(frozen=True)
class ScoreComparisonConfig:
    """Task sizes, widths, seeds and training schedule of :func:`compare_score_functions`."""

    num_symbols: int = 32  # V: distinct key symbols
    num_keys: int = 8  # T_k: keys per query (distinct symbols)
    num_labels: int = 8  # C: labels a key can carry
    widths: tuple[int, ...] = (32, 64, 128)  # d_k values compared
    num_seeds: int = 4  # independent runs per width and score function
    steps: int = 300  # Adam steps
    batch_size: int = 32  # queries per step
    lr: float = 1e-2  # Adam learning rate
    init_gain: float = 1.0  # multiplies the initial W^Q and W^K
    eval_size: int = 2048  # held-out queries per run
    scores: tuple[str, ...] = SCORES  # the score functions to train

    def __post_init__(self) -> None:
        for name in ("num_symbols", "num_keys", "num_labels", "num_seeds", "steps",
                     "batch_size", "eval_size"):
            check_positive_int(name, getattr(self, name))
        if self.num_keys > self.num_symbols:
            raise ValueError(f"num_keys must be at most num_symbols={self.num_symbols} (keys "
                             f"are distinct symbols); got {self.num_keys}")
        if not isinstance(self.widths, tuple) or not self.widths:
            raise TypeError(f"widths must be a non-empty tuple of positive ints; got "
                            f"{self.widths!r}")
        for width in self.widths:
            check_positive_int("widths", width)
        if not isinstance(self.scores, tuple) or not self.scores or any(
                score not in SCORES for score in self.scores):
            raise ValueError(f"scores must be a non-empty tuple drawn from {SCORES}; got "
                             f"{self.scores!r}")
        for name in ("lr", "init_gain"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{name} must be a positive number; got {value!r}")


def _batch(config: ScoreComparisonConfig, size: int, generator: torch.Generator,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Keys' symbols (S, B, T_k), the query symbol (S, B, 1), labels (S, B, T_k), answer (S, B)."""
    S, V, T_k = config.num_seeds, config.num_symbols, config.num_keys
    symbols = torch.rand(S, size, V, generator=generator).argsort(-1)[..., :T_k]  # distinct
    labels = torch.randint(0, config.num_labels, (S, size, T_k), generator=generator)
    pick = torch.randint(0, T_k, (S, size, 1), generator=generator)  # which key is asked for
    return symbols, symbols.gather(-1, pick), labels, labels.gather(-1, pick).squeeze(-1)


def _train_one(score: str, d_k: int, config: ScoreComparisonConfig) -> torch.Tensor:
    """Held-out accuracy (S,) of num_seeds runs of one score function at one width."""
    S, V, C = config.num_seeds, config.num_symbols, config.num_labels
    generator = torch.Generator().manual_seed(d_k)  # the same task and start for every score
    randn = lambda *shape: torch.randn(*shape, generator=generator)  # noqa: E731
    symbols, label_vectors = randn(S, V, d_k), randn(S, C, d_k) / math.sqrt(d_k)
    gain = config.init_gain / math.sqrt(d_k)  # q and k entries of variance gain^2 * d_k
    w_q, w_k = (gain * randn(S, d_k, d_k)).requires_grad_(), (gain * randn(S, d_k, d_k))
    w_k.requires_grad_(True)
    v = (randn(S, d_k) / math.sqrt(d_k)).requires_grad_(True)
    w_out = (randn(S, d_k, C) / math.sqrt(d_k)).requires_grad_(True)
    learned = [w_q, w_k, w_out] + ([v] if score == "additive" else [])
    optimiser = torch.optim.Adam(learned, lr=config.lr, fused=True)

    def logits(keys, query, labels):  # (S, B, T_k), (S, B, 1), (S, B, T_k) -> (S, B, C)
        q_table, k_table = symbols @ w_q, symbols @ w_k  # (S, V, d_k): every symbol projected
        rows = lambda table, ids: table.gather(1, ids.flatten(1)[..., None].expand(  # noqa: E731
            -1, -1, d_k)).view(*ids.shape, d_k)
        q, k = rows(q_table, query), rows(k_table, keys)  # (S, B, 1, d_k), (S, B, T_k, d_k)
        if score == "additive":
            s = additive_scores(q, k, v[:, None, :])  # (S, B, 1, T_k)
        else:
            s = q @ k.transpose(-2, -1) / (math.sqrt(d_k) if score == SCORES[2] else 1.0)
        weights = torch.softmax(s.squeeze(-2), dim=-1)  # (S, B, T_k)
        mass = torch.zeros(*weights.shape[:2], C).scatter_add(-1, labels, weights)  # (S, B, C)
        return mass @ (label_vectors @ w_out)  # (S, B, C)

    B = config.batch_size
    data = _batch(config, config.steps * B, generator)  # every step's batch, drawn at once
    for step in range(config.steps):
        keys, query, labels, answer = (x[:, step * B:(step + 1) * B] for x in data)
        loss = F.cross_entropy(logits(keys, query, labels).flatten(0, 1), answer.flatten())
        optimiser.zero_grad()
        (loss * S).backward()  # the sum over seeds: each seed gets its own gradient
        optimiser.step()
    with torch.no_grad():
        keys, query, labels, answer = _batch(config, config.eval_size, generator)
        return (logits(keys, query, labels).argmax(-1) == answer).double().mean(-1)  # (S,)


def compare_score_functions(config: ScoreComparisonConfig = ScoreComparisonConfig(),
                            ) -> pd.DataFrame:
    """Train the retrieval model with each score function at each width, ``num_seeds`` times.

    Returns:
        one row per (d_k, score, seed): the held-out ``accuracy``.
    """
    check_instance("config", config, ScoreComparisonConfig)
    rows = []
    for d_k in config.widths:
        for score in config.scores:
            accuracy = _train_one(score, d_k, config)
            rows += [{"d_k": d_k, "score": score, "seed": seed, "accuracy": float(a)}
                     for seed, a in enumerate(accuracy)]
    return pd.DataFrame(rows)
