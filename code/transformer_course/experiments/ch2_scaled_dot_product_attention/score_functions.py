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
function are trained side by side as one batched model (every tensor has a leading seed
dimension), through :func:`transformer_course.core.training.train`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from transformer_course.core.checks import check_choice
from transformer_course.core.training import TrainConfig, train
from transformer_course.draws import initial

SCORES = ("additive", "dot-product", "scaled dot-product")

#: Adam at a constant rate, with PyTorch's default betas and epsilon; no label smoothing.
TRAINING = TrainConfig(steps=300, batch_size=32, peak_lr=1e-2, warmup=0, decay="constant",
                       label_smoothing=0.0, betas=(0.9, 0.999), adam_eps=1e-8, eval_every=0)


def additive_scores(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Additive (Bahdanau) scores v . tanh(q_i + k_j) for every query i and key j.

    Args:
        q: projected queries (..., T_q, d). k: projected keys (..., T_k, d). v: (..., d).

    Returns:
        scores (..., T_q, T_k).
    """
    hidden = torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3))  # (..., T_q, T_k, d)
    return (hidden @ v[..., None, :, None]).squeeze(-1)  # (..., T_q, T_k)


@dataclass(frozen=True)
class ScoreComparisonConfig:
    """Task sizes, widths, seeds and training of :func:`compare_score_functions`."""

    num_symbols: int = 32  # V: distinct key symbols
    num_keys: int = 8  # T_k: keys per query (distinct symbols, at most V)
    num_labels: int = 8  # C: labels a key can carry
    widths: tuple[int, ...] = (32, 64, 128)  # d_k values compared
    num_seeds: int = 4  # independent runs per width and score function
    init_gain: float = 1.0  # multiplies the initial W^Q and W^K
    eval_size: int = 2048  # held-out queries per run
    scores: tuple[str, ...] = SCORES  # the score functions to train
    training: TrainConfig = TRAINING  # steps, queries per step (batch_size) and Adam


class RetrievalModel(nn.Module):
    """``num_seeds`` copies of the retrieval model as one: every tensor has a leading seed
    dimension S. Symbols and label vectors are fixed; W^Q, W^K, the read-out and, for the
    additive score, v are learned."""

    def __init__(self, score: str, d_k: int, config: ScoreComparisonConfig,
                 generator: torch.Generator) -> None:
        super().__init__()
        check_choice("score", score, SCORES)  # an unknown name would train a dot product
        S, V, C = config.num_seeds, config.num_symbols, config.num_labels
        randn = lambda *shape: torch.randn(*shape, generator=generator)  # noqa: E731
        self.register_buffer("symbols", randn(S, V, d_k))
        self.register_buffer("label_vectors", randn(S, C, d_k) / math.sqrt(d_k))
        gain = config.init_gain / math.sqrt(d_k)  # q and k entries of variance gain^2 * d_k
        # initial(): nudged by one ulp when a simulated other CPU is asked for (draws.py)
        self.w_q = nn.Parameter(initial(gain * randn(S, d_k, d_k)))
        self.w_k = nn.Parameter(initial(gain * randn(S, d_k, d_k)))
        v = initial(randn(S, d_k) / math.sqrt(d_k))  # drawn for every score: the same start
        self.v = nn.Parameter(v) if score == "additive" else None
        self.w_out = nn.Parameter(initial(randn(S, d_k, C) / math.sqrt(d_k)))
        self.divisor = math.sqrt(d_k) if score == "scaled dot-product" else 1.0

    def forward(self, keys: torch.Tensor, query: torch.Tensor, labels: torch.Tensor,
                ) -> torch.Tensor:
        """Logits (S, B, C) from keys' symbols (S, B, T_k), the query's (S, B, 1) and the keys'
        labels (S, B, T_k)."""
        d_k = self.w_q.shape[-1]
        q_table, k_table = self.symbols @ self.w_q, self.symbols @ self.w_k  # (S, V, d_k)
        rows = lambda table, ids: table.gather(1, ids.flatten(1)[..., None].expand(  # noqa: E731
            -1, -1, d_k)).view(*ids.shape, d_k)
        q, k = rows(q_table, query), rows(k_table, keys)  # (S, B, 1, d_k), (S, B, T_k, d_k)
        if self.v is not None:
            s = additive_scores(q, k, self.v[:, None, :])  # (S, B, 1, T_k)
        else:
            s = q @ k.transpose(-2, -1) / self.divisor  # (S, B, 1, T_k)
        weights = torch.softmax(s.squeeze(-2), dim=-1)  # (S, B, T_k)
        mass = torch.zeros(*weights.shape[:2], self.w_out.shape[-1]).scatter_add(
            -1, labels, weights)  # (S, B, C)
        return mass @ (self.label_vectors @ self.w_out)  # (S, B, C)


def _batch(config: ScoreComparisonConfig, size: int, generator: torch.Generator,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Keys' symbols (S, B, T_k), the query symbol (S, B, 1), labels (S, B, T_k), answer (S, B)."""
    S, V, T_k = config.num_seeds, config.num_symbols, config.num_keys
    symbols = torch.rand(S, size, V, generator=generator).argsort(-1)[..., :T_k]  # distinct
    labels = torch.randint(0, config.num_labels, (S, size, T_k), generator=generator)
    pick = torch.randint(0, T_k, (S, size, 1), generator=generator)  # which key is asked for
    return symbols, symbols.gather(-1, pick), labels, labels.gather(-1, pick).squeeze(-1)


def _retrieval_loss(model: RetrievalModel, batch: tuple[torch.Tensor, ...],
                    config: TrainConfig) -> torch.Tensor:
    """Cross-entropy summed over seeds (mean within each), so each seed gets its own gradient."""
    keys, query, labels, answer = batch
    loss = F.cross_entropy(model(keys, query, labels).flatten(0, 1), answer.flatten())
    return loss * answer.shape[0]


def train_one(score: str, d_k: int, config: ScoreComparisonConfig,
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Held-out accuracy (S,) and cross-entropy (S,) of num_seeds runs of one score function at
    one width."""
    generator = torch.Generator().manual_seed(d_k)  # the same task and start for every score
    model = RetrievalModel(score, d_k, config, generator)
    B, steps = config.training.batch_size, config.training.steps
    data = _batch(config, steps * B, generator)  # every step's batch, drawn at once
    batches = (tuple(x[:, i * B:(i + 1) * B] for x in data) for i in range(steps))
    train(model, batches, config.training, loss_fn=_retrieval_loss)
    with torch.no_grad():
        keys, query, labels, answer = _batch(config, config.eval_size, generator)
        logits = model(keys, query, labels)  # (S, B, C)
        loss = F.cross_entropy(logits.transpose(1, 2), answer, reduction="none").mean(-1)
        return (logits.argmax(-1) == answer).double().mean(-1), loss  # (S,), (S,)


def compare_score_functions(config: ScoreComparisonConfig = ScoreComparisonConfig(),
                            ) -> pd.DataFrame:
    """Train the retrieval model with each score function at each width, ``num_seeds`` times.

    Returns:
        one row per (d_k, score, seed): the held-out ``accuracy`` and cross-entropy ``loss``.
    """
    rows = []
    for d_k in config.widths:
        for score in config.scores:
            accuracy, loss = train_one(score, d_k, config)
            runs = enumerate(zip(accuracy.tolist(), loss.tolist(), strict=True))
            rows += [{"d_k": d_k, "score": score, "seed": seed, "accuracy": a, "loss": ce}
                     for seed, (a, ce) in runs]
    return pd.DataFrame(rows)
