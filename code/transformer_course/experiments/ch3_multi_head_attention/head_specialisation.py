"""A task that needs two different lookups, and a one-layer attention model that learns it.

The task: a sequence of T symbols, each a value in 0..V-1, exactly one of them *marked* (token id
V + value instead of value). At every position t >= 1 the target is

    y_t = (value(x[t-1]) + value(x[anchor])) mod V,

where ``anchor`` is the marked position. One lookup is positional (the previous token, wherever it
is); the other is by content (the marked token, wherever it is). The model has a single attention
layer and no residual path, so everything the read-out sees has come through the heads.

Whether the two heads split the two lookups depends on the seed, so the chapter trains several
seeds; :func:`train_lookup_models` trains them side by side, as one batched computation
(``torch.func.vmap`` over stacked copies of the same model, trained by
:func:`transformer_course.core.training.train`), which computes what separate runs would, up to
rounding.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.core.positional import LearnedPositionalEmbedding
from transformer_course.core.training import TrainConfig, train

IGNORE = -100  # target at position 0 (no previous token); skipped by the loss and the accuracy


@dataclass(frozen=True)
class LookupTask:
    """The previous-plus-marked task."""

    num_values: int = 8  # V >= 2: plain tokens are 0..V-1, marked ones V..2V-1
    seq_len: int = 12  # T >= 2: tokens per sequence (position 0 has no target)

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

    Returns:
        tokens (B, T) int64 ids, anchors (B,) marked positions, targets (B, T) with IGNORE at t = 0.
    """
    V, T = task.num_values, task.seq_len
    values = torch.randint(0, V, (batch_size, T), generator=generator)  # (B, T)
    anchors = torch.randint(0, T, (batch_size,), generator=generator)  # (B,)
    rows = torch.arange(batch_size)
    tokens = values.clone()
    tokens[rows, anchors] += V  # the marked copy of the anchor's value
    targets = torch.full((batch_size, T), IGNORE, dtype=torch.long)
    targets[:, 1:] = (values[:, :-1] + values[rows, anchors][:, None]) % V  # (B, T - 1)
    return LookupBatch(tokens, anchors, targets)


#: Adam at a constant rate, with PyTorch's default betas and epsilon; the loss is plain
#: cross-entropy. The runs' seeds are given to :func:`train_lookup_models`.
TRAINING = TrainConfig(steps=600, batch_size=32, peak_lr=5e-3, warmup=0, decay="constant",
                       label_smoothing=0.0, betas=(0.9, 0.999), adam_eps=1e-8, eval_every=0)


@dataclass(frozen=True)
class LookupConfig:
    """The lookup model's sizes, and how it is trained."""

    d_model: int = 32  # model width
    num_heads: int = 2  # h; must divide d_model
    hidden: int = 64  # width of the read-out MLP
    training: TrainConfig = TRAINING  # steps, sequences per step (batch_size), Adam


class LookupModel(nn.Module):
    """Embedding + learned positions -> one multi-head attention layer -> MLP read-out.

    Args:
        task: fixes the vocabulary (2V ids), the outputs (V values) and the length T.
        config: d_model, num_heads and hidden.
    """

    def __init__(self, task: LookupTask, config: LookupConfig) -> None:
        super().__init__()
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
        x = self.positions(self.embed(tokens))  # (B, T, d_model)
        mixed, weights = self.attention(x, x, x, need_weights=need_weights)  # (B, T, d_model)
        return self.readout(mixed), weights  # (B, T, V)


def build_lookup_model(task: LookupTask, config: LookupConfig, seed: int = 0) -> LookupModel:
    """The untrained model that the run with ``seed`` starts from."""
    torch.manual_seed(seed)
    return LookupModel(task, config)


class _Stacked(nn.Module):
    """Copies of one model as a single module: each parameter stacked along a new first dimension
    S (one entry per copy); calling it runs the model on every copy with ``vmap``."""

    def __init__(self, models: Sequence[LookupModel]) -> None:
        super().__init__()
        params, _ = stack_module_state(list(models))  # each (S, ...)
        self.names = list(params)
        self.stacked = nn.ParameterList(nn.Parameter(p.detach()) for p in params.values())
        self.template = (copy.deepcopy(models[0]).to("meta"),)  # a tuple: not a submodule

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (S, B, T, V) from tokens (S, B, T): copy s reads tokens[s]."""
        def one(params: tuple[torch.Tensor, ...], tokens: torch.Tensor) -> torch.Tensor:
            # need_weights: the explicit attention path, which vmap batches (the fused one not)
            return functional_call(self.template[0], dict(zip(self.names, params, strict=True)),
                                   (tokens, True))[0]
        return vmap(one)(tuple(self.stacked), tokens)


def _accuracy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Accuracy over the scored positions of the last two dimensions' rows: (...,) from
    logits (..., B, T, V) and targets (..., B, T)."""
    scored = targets != IGNORE
    hits = (logits.argmax(-1) == targets) & scored
    return hits.flatten(-2).sum(-1) / scored.flatten(-2).sum(-1)


def _per_model_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(S,) each copy's mean cross-entropy over its scored positions, from logits (S, B, T, V)
    and targets (S, B, T)."""
    loss = nn.functional.cross_entropy(logits.flatten(1, 2).transpose(1, 2), targets.flatten(1),
                                       ignore_index=IGNORE, reduction="none")  # (S, B * T)
    scored = targets.flatten(1) != IGNORE
    return (loss * scored).sum(1) / scored.sum(1)


def train_lookup_models(task: LookupTask, config: LookupConfig, seeds: Sequence[int],
                        ) -> tuple[list[LookupModel], np.ndarray, np.ndarray]:
    """Train one fresh :class:`LookupModel` per seed, side by side, with ``config.training``.

    Seed s gives the model :func:`build_lookup_model` builds with that seed, and its own stream of
    training batches, drawn one batch at a time, so a run of n steps sees the first n batches of a
    longer run with the same seed (and, at a constant learning rate, is its first n steps).

    The models are trained as one batched computation: their parameters are stacked, ``vmap`` runs
    the same model code on every copy, and the summed loss gives each copy exactly its own
    gradient, so each copy follows the update separate training would make (Adam works entry by
    entry), up to rounding. Set the thread count (and deterministic algorithms) beforehand, e.g.
    with ``setup_notebook``, for identical reruns.

    Returns:
        the trained models (in eval mode), and each one's training loss and accuracy on its
        batch at every step, (S, steps) each.
    """
    models = [build_lookup_model(task, config, seed) for seed in seeds]
    stacked = _Stacked(models)
    steps, B = config.training.steps, config.training.batch_size
    generators = [torch.Generator().manual_seed(s) for s in seeds]
    # batch by batch, so that the first n steps' data do not depend on the number of steps
    data = [[make_lookup_batch(task, B, g) for _ in range(steps)] for g in generators]
    tokens = torch.stack([torch.stack([d.tokens for d in run]) for run in data])  # (S, steps, B, T)
    targets = torch.stack([torch.stack([d.targets for d in run]) for run in data])
    losses, accuracies = [], []

    def loss_fn(model: _Stacked, batch: tuple[torch.Tensor, torch.Tensor],
                training: TrainConfig) -> torch.Tensor:
        logits = model(batch[0])  # (S, B, T, V)
        per_model = _per_model_loss(logits, batch[1])  # (S,)
        losses.append(per_model.detach())
        accuracies.append(_accuracy(logits.detach(), batch[1]))
        return per_model.sum()

    train(stacked, ((tokens[:, i], targets[:, i]) for i in range(steps)), config.training,
          loss_fn=loss_fn)
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, p in zip(stacked.names, stacked.stacked, strict=True):
                model.get_parameter(name).copy_(p[i])
            model.eval()
    return models, torch.stack(losses, 1).numpy(), torch.stack(accuracies, 1).numpy()


@torch.no_grad()
def evaluate_lookup_model(model: LookupModel, batch: LookupBatch) -> tuple[float, torch.Tensor]:
    """Accuracy over the batch's scored positions (t >= 1) and the weights (B, h, T, T)."""
    was_training = model.training
    model.eval()
    logits, weights = model(batch.tokens, need_weights=True)
    model.train(was_training)
    return float(_accuracy(logits, batch.targets)), weights


@torch.no_grad()
def lookup_loss(model: LookupModel, batch: LookupBatch) -> float:
    """Mean cross-entropy over the batch's scored positions (t >= 1)."""
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
    w = weights.detach().cpu().double().numpy() if isinstance(weights, torch.Tensor) else weights
    a = anchors.detach().cpu().numpy() if isinstance(anchors, torch.Tensor) else anchors
    B, h, T, _ = w.shape
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

    @property
    def clean_margin(self) -> float:
        """How far the split lies inside the two thresholds: the smaller of the weaker head's
        lead over CLEAN_OWN and the larger off-job share's room below CLEAN_OTHER. At least 0
        for a clean split, negative otherwise."""
        return min(min(self.prev_own, self.marked_own) - CLEAN_OWN,
                   CLEAN_OTHER - max(self.prev_other, self.marked_other))

    @property
    def separation(self) -> float:
        """How cleanly the weaker of the two heads keeps to its job: the smaller of the two
        heads' share on its own job's token minus its share on the other job's token (near 1:
        each head reads one token only; near 0 or below: a head reads both alike)."""
        return min(self.prev_own - self.prev_other, self.marked_own - self.marked_other)


def head_jobs(shares: np.ndarray) -> HeadJobs:
    """Assign the two lookups to two different heads, the pair with the largest total share.

    Args:
        shares: (h, 2) from :func:`lookup_shares`, h >= 2.
    """
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
    V = task.num_values
    return [f"{v - V}*" if v >= V else str(v) for v in tokens.tolist()]


def check_lookup_targets(task: LookupTask, tokens: torch.Tensor, targets: torch.Tensor) -> None:
    """Check a batch against the task's rule, one position at a time: exactly one marked token
    per row, and every target right; raise AssertionError where not.

    Args:
        tokens: (B, T) ids. targets: (B, T).
    """
    V = task.num_values
    for b, (row, target) in enumerate(zip(tokens.tolist(), targets.tolist(), strict=True)):
        marked = [i for i, token in enumerate(row) if token >= V]
        if len(marked) != 1:
            raise AssertionError(f"row {b}: expected exactly one marked id (>= {V}); got {row}")
        anchor_value = row[marked[0]] - V
        if target[0] != IGNORE:
            raise AssertionError(f"row {b}: target at t=0 must be IGNORE={IGNORE}; got {target[0]}")
        for t in range(1, len(row)):
            want = (row[t - 1] % V + anchor_value) % V
            if target[t] != want:
                raise AssertionError(f"row {b}, t={t}: expected (x[t-1] + x[anchor]) mod {V} = "
                                     f"{want}; got {target[t]}")


def knock_out_head(model: LookupModel, head: int) -> LookupModel:
    """A copy of ``model`` whose head ``head`` (counted from 0) no longer reaches the output.

    The head's output is zeroed before the output projection, done by zeroing the columns of
    ``W_O`` that read its slice of the concatenated heads (the projection's bias stays). The
    attention layer itself is not changed, so the copy still returns every head's weights.
    """
    knocked = copy.deepcopy(model)
    d_k = knocked.attention.d_k
    with torch.no_grad():
        knocked.attention.w_o.weight[:, head * d_k:(head + 1) * d_k] = 0.0
    return knocked


@dataclass(frozen=True)
class LookupResponse:
    """Whether a model's answers respond to each lookup's token, and its accuracy.

    ``responds_prev``: the share of tested queries whose predicted value changes when only the
    value of their previous token is changed. ``responds_marked``: the same when only the marked
    token's value is changed. An answer that ignores the token scores 0; a correct one scores 1
    (the target changes with either token).
    """

    accuracy: float  # on the unchanged batch, over positions t >= 1
    responds_prev: float
    responds_marked: float


def perturb_lookups(task: LookupTask, batch: LookupBatch, generator: torch.Generator,
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The two changed copies of ``batch`` that :func:`lookup_response` reads.

    In each sequence one unmarked position p <= T - 2 (drawn from ``generator``; needs T >= 3)
    gets a different value: only query p + 1 has it as its previous token. In a second copy the
    marked token gets a different value (it stays marked).

    Returns:
        prev_tokens (B, T), the positions p (B,), marked_tokens (B, T).
    """
    V, T = task.num_values, task.seq_len
    B = batch.tokens.shape[0]
    rows = torch.arange(B)
    p = torch.randint(0, T - 2, (B,), generator=generator)  # T - 2 slots: 0..T-2 without anchor
    p = p + (p >= batch.anchors).long()
    prev_tokens = batch.tokens.clone()
    shift = torch.randint(1, V, (B,), generator=generator)  # nonzero: a different value
    prev_tokens[rows, p] = (prev_tokens[rows, p] + shift) % V
    marked_tokens = batch.tokens.clone()
    shift = torch.randint(1, V, (B,), generator=generator)
    marked_value = batch.tokens[rows, batch.anchors] - V
    marked_tokens[rows, batch.anchors] = V + (marked_value + shift) % V
    return prev_tokens, p, marked_tokens


@torch.no_grad()
def lookup_response(model: LookupModel, batch: LookupBatch, generator: torch.Generator,
                    ) -> LookupResponse:
    """Score each lookup of ``model`` on its own, by changing its token (see
    :class:`LookupResponse`); the changes are drawn from ``generator`` by
    :func:`perturb_lookups`.

    A changed marked token is scored at every query t >= 1 whose previous token is not the marked
    one (there the two lookups meet).
    """
    task = model.task
    prev_tokens, p, marked_tokens = perturb_lookups(task, batch, generator)
    rows = torch.arange(batch.tokens.shape[0])
    base = model(batch.tokens)[0].argmax(-1)  # (B, T)
    scored = batch.targets != IGNORE
    accuracy = float(((base == batch.targets) & scored).sum() / scored.sum())
    after = model(prev_tokens)[0].argmax(-1)[rows, p + 1]  # (B,) at query p + 1 only
    responds_prev = float((after != base[rows, p + 1]).double().mean())
    after = model(marked_tokens)[0].argmax(-1)  # (B, T)
    t = torch.arange(task.seq_len)[None, :]
    keep = (t >= 1) & (t - 1 != batch.anchors[:, None])  # (B, T)
    responds_marked = float((after != base)[keep].double().mean())
    return LookupResponse(accuracy, responds_prev, responds_marked)


def first_step_reaching(accuracies: np.ndarray, threshold: float, window: int) -> int | None:
    """The first training step (counted from 1) at which the mean batch accuracy of the last
    ``window`` steps reaches ``threshold``; None if it never does.

    Args:
        accuracies: (steps,) batch accuracy per step.
    """
    running = np.convolve(np.asarray(accuracies, dtype=float), np.ones(window) / window, "valid")
    reached = np.flatnonzero(running >= threshold)
    return int(reached[0]) + window if reached.size else None
