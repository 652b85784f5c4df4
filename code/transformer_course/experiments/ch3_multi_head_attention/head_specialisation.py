"""A task that needs two different lookups, and a one-layer attention model that learns it.

The task: a sequence of T symbols, each a value in 0..V-1, exactly one of them *marked* (token id
V + value instead of value). At every position t >= 1 the target is

    y_t = (value(x[t-1]) + value(x[anchor])) mod V,

where ``anchor`` is the marked position. One lookup is positional (the previous token, wherever it
is); the other is by content (the marked token, wherever it is). The model has a single attention
layer and no residual path, so everything the read-out sees has come through the heads.

Whether the two heads split the two lookups depends on the seed, so the chapter trains several
seeds; :func:`train_lookup_models` trains them side by side, as one batched computation
(``torch.func.vmap`` over stacked copies of the same model), which computes what separate runs
would, up to rounding.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from transformer_course.core.checks import check_array, check_instance, check_positive_int
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.core.positional import LearnedPositionalEmbedding

IGNORE = -100  # target at position 0 (no previous token); skipped by the loss and the accuracy


@dataclass(frozen=True)
class LookupTask:
    """The previous-plus-marked task."""

    num_values: int = 8  # V: plain tokens are 0..V-1, marked ones V..2V-1
    seq_len: int = 12  # T: tokens per sequence

    def __post_init__(self) -> None:
        check_positive_int("num_values", self.num_values)
        check_positive_int("seq_len", self.seq_len)
        if self.num_values < 2:
            raise ValueError(f"num_values must be at least 2; got {self.num_values}")
        if self.seq_len < 2:
            raise ValueError(f"seq_len must be at least 2 (position 0 has no target); "
                             f"got {self.seq_len}")

    @property
    def vocab_size(self) -> int:
        """Number of token ids: V plain and V marked."""
        return 2 * self.num_values


@dataclass(frozen=True)
class LookupBatch:
    """A batch of the task: tokens (B, T), anchors (B,) and targets (B, T) (IGNORE at t = 0)."""

    tokens: torch.Tensor
    anchors: torch.Tensor
    targets: torch.Tensor


def make_lookup_batch(task: LookupTask, batch_size: int, generator: torch.Generator) -> LookupBatch:
    """Draw ``batch_size`` sequences of ``task`` from ``generator``.

    Args:
        task: the task's sizes. batch_size: B. generator: a seeded ``torch.Generator``.

    Returns:
        tokens (B, T) int64 ids, anchors (B,) marked positions, targets (B, T) with IGNORE at t = 0.
    """
    check_instance("task", task, LookupTask)
    check_positive_int("batch_size", batch_size)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    V, T = task.num_values, task.seq_len
    values = torch.randint(0, V, (batch_size, T), generator=generator)  # (B, T)
    anchors = torch.randint(0, T, (batch_size,), generator=generator)  # (B,)
    rows = torch.arange(batch_size)
    tokens = values.clone()
    tokens[rows, anchors] += V  # the marked copy of the anchor's value
    targets = torch.full((batch_size, T), IGNORE, dtype=torch.long)
    targets[:, 1:] = (values[:, :-1] + values[rows, anchors][:, None]) % V  # (B, T - 1)
    return LookupBatch(tokens, anchors, targets)


@dataclass(frozen=True)
class TrainConfig:
    """Model size and training schedule for :func:`train_lookup_model`."""

    d_model: int = 32  # model width
    num_heads: int = 2  # h; must divide d_model
    hidden: int = 64  # width of the read-out MLP
    batch_size: int = 32  # sequences per step
    steps: int = 400  # optimiser steps
    lr: float = 5e-3  # Adam learning rate
    seed: int = 0  # seeds the initial weights and the training data

    def __post_init__(self) -> None:
        for name in ("d_model", "num_heads", "hidden", "batch_size", "steps"):
            check_positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model must be divisible by num_heads; got d_model={self.d_model}, "
                             f"num_heads={self.num_heads}")
        if isinstance(self.lr, bool) or not isinstance(self.lr, int | float) or not self.lr > 0:
            raise ValueError(f"lr must be a positive number; got {self.lr!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {self.seed!r}")


class LookupModel(nn.Module):
    """Embedding + learned positions -> one multi-head attention layer -> MLP read-out.

    Args:
        task: fixes the vocabulary (2V ids), the outputs (V values) and the length T.
        config: d_model, num_heads and hidden.
    """

    def __init__(self, task: LookupTask, config: TrainConfig) -> None:
        super().__init__()
        check_instance("task", task, LookupTask)
        check_instance("config", config, TrainConfig)
        self.task = task
        self.embed = nn.Embedding(task.vocab_size, config.d_model)
        self.positions = LearnedPositionalEmbedding(config.d_model, task.seq_len)
        self.attention = MultiHeadAttention(config.d_model, config.num_heads)
        self.readout = nn.Sequential(nn.Linear(config.d_model, config.hidden), nn.ReLU(),
                                     nn.Linear(config.hidden, task.num_values))

    def forward(self, tokens: torch.Tensor, need_weights: bool = False,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Predict every position's target.

        Args:
            tokens: (B, T) int64 ids in 0..2V-1, T at most the task's seq_len.
            need_weights: also return the per-head attention weights (B, h, T, T).

        Returns:
            logits (B, T, V) and the weights or None.
        """
        check_array("tokens", tokens, kind=torch.Tensor, ndim=2, shape="(B, T)")
        if tokens.is_floating_point() or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must hold integer ids; got dtype {tokens.dtype}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.task.vocab_size):
            raise ValueError(f"tokens must lie in [0, {self.task.vocab_size - 1}]; got values "
                             f"from {int(tokens.min())} to {int(tokens.max())}")
        return self.compute(tokens, need_weights)

    def compute(self, tokens: torch.Tensor, need_weights: bool = False,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """:meth:`forward` without the checks on the token values (usable under ``vmap``)."""
        x = self.positions(self.embed(tokens))  # (B, T, d_model)
        mixed, weights = self.attention(x, x, x, need_weights=need_weights)  # (B, T, d_model)
        return self.readout(mixed), weights  # (B, T, V)


class _Unchecked(nn.Module):
    """Wraps a model so that calling it runs :meth:`LookupModel.compute` (weights on)."""

    def __init__(self, model: LookupModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        # the explicit attention path: under vmap it batches, the fused kernel does not
        return self.model.compute(tokens, need_weights=True)[0]


@dataclass(frozen=True)
class TrainResult:
    """A trained model and its per-step training loss and batch accuracy."""

    model: LookupModel
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)


def _accuracy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Accuracy over the scored positions of the last two dimensions' rows: (...,) from
    logits (..., B, T, V) and targets (..., B, T)."""
    scored = targets != IGNORE
    hits = (logits.argmax(-1) == targets) & scored
    return hits.flatten(-2).sum(-1) / scored.flatten(-2).sum(-1)


def build_lookup_model(task: LookupTask, config: TrainConfig) -> LookupModel:
    """The untrained model that :func:`train_lookup_model` starts from (seeded by config.seed)."""
    torch.manual_seed(config.seed if isinstance(config, TrainConfig) else 0)
    return LookupModel(task, config)


def train_lookup_models(task: LookupTask, config: TrainConfig, seeds: Sequence[int],
                        ) -> list[TrainResult]:
    """Train one fresh :class:`LookupModel` per seed, side by side, with Adam.

    Seed s gives the model :func:`build_lookup_model` builds with ``config.seed = s``, and its own
    stream of training batches. The models are trained as one batched computation: their
    parameters are stacked, ``vmap`` runs the same model code on every copy, and the summed loss
    gives each copy exactly its own gradient, so each copy follows the update separate training
    would make (Adam works entry by entry), up to rounding. Set the thread count (and
    deterministic algorithms) beforehand, e.g. with ``setup_notebook``, for identical reruns.
    """
    check_instance("task", task, LookupTask)
    check_instance("config", config, TrainConfig)
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence) or not seeds:
        raise TypeError(f"seeds must be a non-empty sequence of seeds; got {seeds!r}")
    configs = [replace(config, seed=seed) for seed in seeds]  # checks every seed
    models = [build_lookup_model(task, c) for c in configs]
    params, _ = stack_module_state([_Unchecked(m) for m in models])  # each (S, ...)
    template = copy.deepcopy(_Unchecked(models[0])).to("meta")
    forward = vmap(lambda p, tokens: functional_call(template, p, (tokens,)))
    steps, B = config.steps, config.batch_size
    data = [make_lookup_batch(task, steps * B, torch.Generator().manual_seed(s)) for s in seeds]
    tokens = torch.stack([d.tokens for d in data]).view(len(seeds), steps, B, -1)  # (S, .., T)
    targets = torch.stack([d.targets for d in data]).view(len(seeds), steps, B, -1)
    optimiser = torch.optim.Adam(params.values(), lr=config.lr)
    losses, accuracies = [], []
    for step in range(steps):
        logits = forward(params, tokens[:, step])  # (S, B, T, V)
        loss = nn.functional.cross_entropy(logits.flatten(1, 2).transpose(1, 2),
                                           targets[:, step].flatten(1), ignore_index=IGNORE,
                                           reduction="none")  # (S, B * T)
        scored = targets[:, step].flatten(1) != IGNORE
        per_model = (loss * scored).sum(1) / scored.sum(1)  # (S,): each model's mean loss
        optimiser.zero_grad()
        per_model.sum().backward()
        optimiser.step()
        losses.append(per_model.detach())
        accuracies.append(_accuracy(logits.detach(), targets[:, step]))
    results = []
    for i, model in enumerate(models):
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.copy_(params[f"model.{name}"][i])
        model.eval()
        results.append(TrainResult(model, [float(x[i]) for x in losses],
                                   [float(x[i]) for x in accuracies]))
    return results


def train_lookup_model(task: LookupTask, config: TrainConfig) -> TrainResult:
    """Train one fresh :class:`LookupModel`, seeded by config.seed: :func:`train_lookup_models`
    with the one seed."""
    check_instance("task", task, LookupTask)
    check_instance("config", config, TrainConfig)
    return train_lookup_models(task, config, [config.seed])[0]


@torch.no_grad()
def evaluate_lookup_model(model: LookupModel, batch: LookupBatch) -> tuple[float, torch.Tensor]:
    """Accuracy over the batch's scored positions (t >= 1) and the weights (B, h, T, T)."""
    check_instance("model", model, LookupModel)
    check_instance("batch", batch, LookupBatch)
    was_training = model.training
    model.eval()
    logits, weights = model(batch.tokens, need_weights=True)
    model.train(was_training)
    return float(_accuracy(logits, batch.targets)), weights


@torch.no_grad()
def lookup_loss(model: LookupModel, batch: LookupBatch) -> float:
    """Mean cross-entropy over the batch's scored positions (t >= 1)."""
    check_instance("model", model, LookupModel)
    check_instance("batch", batch, LookupBatch)
    logits, _ = model(batch.tokens)
    return nn.functional.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(),
                                       ignore_index=IGNORE).item()


def lookup_shares(weights: torch.Tensor | np.ndarray, anchors: torch.Tensor | np.ndarray,
                  ) -> np.ndarray:
    """Mean attention weight each head puts on the previous token and on the marked token.

    Averaged over queries t >= 1 whose two lookups are different positions (t - 1 != anchor).

    Args:
        weights: (B, h, T, T) attention weights. anchors: (B,) marked positions.

    Returns:
        (h, 2) float64: column 0 the share on x[t-1], column 1 the share on x[anchor].
    """
    check_array("weights", weights, ndim=4, shape="(B, h, T, T)", floating=True)
    check_array("anchors", anchors, ndim=1, shape="(B,)")
    w = weights.detach().cpu().double().numpy() if isinstance(weights, torch.Tensor) else weights
    a = anchors.detach().cpu().numpy() if isinstance(anchors, torch.Tensor) else anchors
    B, h, T, T_k = w.shape
    if T_k != T or T < 2:
        raise ValueError(f"weights must be self-attention weights (B, h, T, T) with T >= 2; "
                         f"got shape {w.shape}")
    if a.shape[0] != B:
        raise ValueError(f"anchors must have shape (B,) = ({B},); got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= T:
        raise ValueError(f"anchors must be integer positions in [0, {T - 1}]; got {a.tolist()}")
    rows = np.arange(B)[:, None]  # (B, 1)
    t = np.arange(1, T)[None, :]  # (1, T - 1) queries that have a previous token
    on_prev = w[rows, :, t, t - 1]  # (B, T - 1, h)
    on_anchor = w[rows, :, t, a[:, None]]  # (B, T - 1, h)
    keep = (t - 1) != a[:, None]  # (B, T - 1)
    return np.stack([on_prev[keep].mean(0), on_anchor[keep].mean(0)], axis=1)  # (h, 2)


CLEAN_OWN = 0.8  # a head does its job cleanly: at least this share on its own key ...
CLEAN_OTHER = 0.1  # ... and at most this share on the other job's key


@dataclass(frozen=True)
class HeadJobs:
    """Which heads took the two lookups, and how cleanly (shares from :func:`lookup_shares`)."""

    prev_head: int  # the head assigned to x[t-1]
    marked_head: int  # the head assigned to the marked token
    prev_own: float  # prev_head's share on x[t-1]
    prev_other: float  # prev_head's share on the marked token
    marked_own: float  # marked_head's share on the marked token
    marked_other: float  # marked_head's share on x[t-1]

    @property
    def clean(self) -> bool:
        """Each of the two heads puts at least CLEAN_OWN on its job, at most CLEAN_OTHER on the
        other one."""
        return (min(self.prev_own, self.marked_own) >= CLEAN_OWN
                and max(self.prev_other, self.marked_other) <= CLEAN_OTHER)


def head_jobs(shares: np.ndarray) -> HeadJobs:
    """Assign the two lookups to two different heads, the pair with the largest total share.

    Args:
        shares: (h, 2) from :func:`lookup_shares`, h >= 2.
    """
    check_array("shares", shares, kind=np.ndarray, ndim=2, shape="(h, 2)", floating=True)
    if shares.shape[1] != 2 or shares.shape[0] < 2:
        raise ValueError(f"shares must have shape (h, 2) with h >= 2 heads to assign two jobs; "
                         f"got {shares.shape}")
    prev, marked = max(itertools.permutations(range(shares.shape[0]), 2),
                       key=lambda pair: shares[pair[0], 0] + shares[pair[1], 1])
    return HeadJobs(int(prev), int(marked), float(shares[prev, 0]), float(shares[prev, 1]),
                    float(shares[marked, 1]), float(shares[marked, 0]))


def specialisation_table(accuracies: Sequence[float], shares: Sequence[np.ndarray],
                         seeds: Sequence[int]) -> pd.DataFrame:
    """One row per seed: held-out accuracy, the two heads' shares on their jobs and a verdict.

    Args:
        accuracies: held-out accuracy per seed. shares: (h, 2) shares per seed. seeds: the seeds.
    """
    if not len(accuracies) == len(shares) == len(seeds) or not seeds:
        raise ValueError(f"accuracies, shares and seeds must have one entry per seed; got "
                         f"{len(accuracies)}, {len(shares)} and {len(seeds)}")
    rows = []
    for accuracy, s in zip(accuracies, shares, strict=True):
        jobs = head_jobs(s)
        rows.append([100 * accuracy, jobs.prev_head + 1, jobs.prev_own, jobs.prev_other,
                     jobs.marked_head + 1, jobs.marked_own, jobs.marked_other, jobs.clean])
    columns = ["accuracy (%)", "x[t-1] head", "x[t-1] head: on x[t-1]",
               "x[t-1] head: on marked", "marked head", "marked head: on marked",
               "marked head: on x[t-1]", "clean split"]
    return pd.DataFrame(rows, columns=columns, index=pd.Index(list(seeds), name="seed"))


def token_labels(task: LookupTask, tokens: torch.Tensor) -> list[str]:
    """Readable labels for one sequence of ids: the value, with a star on the marked token.

    Args:
        tokens: (T,) ids in 0..2V-1.
    """
    check_instance("task", task, LookupTask)
    check_array("tokens", tokens, kind=torch.Tensor, ndim=1, shape="(T,)")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer ids; got dtype {tokens.dtype}")
    V = task.num_values
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= task.vocab_size):
        raise ValueError(f"tokens must be ids in [0, {task.vocab_size}); got {tokens.tolist()}")
    return [f"{v - V}*" if v >= V else str(v) for v in tokens.tolist()]


def check_lookup_targets(task: LookupTask, tokens: torch.Tensor, targets: torch.Tensor) -> None:
    """Check targets against the task's rule, one position at a time; raise AssertionError if not.

    Args:
        tokens: (B, T) ids with exactly one marked token per row. targets: (B, T).
    """
    check_instance("task", task, LookupTask)
    shape = f"(B, T={task.seq_len})"
    check_array("tokens", tokens, kind=torch.Tensor, ndim=2, shape=shape)
    check_array("targets", targets, kind=torch.Tensor, ndim=2, shape=shape)
    if tokens.shape != targets.shape or tokens.shape[1] != task.seq_len:
        raise ValueError(f"tokens and targets must both have shape {shape}; got "
                         f"{tuple(tokens.shape)} and {tuple(targets.shape)}")
    V = task.num_values
    for b, (row, target) in enumerate(zip(tokens.tolist(), targets.tolist(), strict=True)):
        marked = [i for i, token in enumerate(row) if token >= V]
        if len(marked) != 1:
            raise ValueError(f"tokens row {b} must hold exactly one marked id (>= {V}); "
                             f"got {row}")
        anchor_value = row[marked[0]] - V
        if target[0] != IGNORE:
            raise AssertionError(f"row {b}: target at t=0 must be IGNORE={IGNORE}; got {target[0]}")
        for t in range(1, len(row)):
            want = (row[t - 1] % V + anchor_value) % V
            if target[t] != want:
                raise AssertionError(f"row {b}, t={t}: expected (x[t-1] + x[anchor]) mod {V} = "
                                     f"{want}; got {target[t]}")
