"""Training: the paper's learning-rate schedule, label-smoothed loss, a loop and its metrics.

Schedule (Vaswani et al., 2017, section 5.3), with a scale factor s (the paper: s = 1):

    lrate(step) = s * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5),   step = 1, 2, ...

It rises linearly for ``warmup`` steps, peaks at step = warmup, then decays as step^-0.5.

Label smoothing (section 5.4, epsilon_ls = 0.1), in PyTorch's definition
(``F.cross_entropy(logits, labels, label_smoothing=eps, ignore_index=pad)``): the target for a
label c is the distribution

    q(k) = (1 - eps) * [k == c] + eps / V     for every class k of the V classes,

padding and the correct class included; the loss is the cross-entropy -sum_k q(k) log p(k),
averaged over the positions whose label is not padding. Its minimum is the entropy of q, not 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from .batching import Batch, make_batch, task_batches
from .checks import check_array, check_fraction, check_instance, check_positive_int
from .decoding import beam_search, greedy_decode
from .tasks import BOS_ID, EOS_ID, TaskConfig, TaskData, check_length_power, sequence_keys


def _check_step(step: int) -> None:
    check_positive_int("step", step)


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The paper's learning rate at ``step`` (1-based): peak at step = warmup.

    Args:
        step: optimiser step, from 1. d_model: model width. warmup: warm-up steps.
        scale: factor on the whole schedule.
    """
    _check_step(step)
    check_positive_int("d_model", d_model)
    check_positive_int("warmup", warmup)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
        raise ValueError(f"scale must be a positive number; got {scale!r}")
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def peak_lr(d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The schedule's largest value, scale * (d_model * warmup)^-0.5, reached at step = warmup."""
    return noam_lr(warmup, d_model, warmup, scale)


def smoothed_targets(labels: torch.Tensor, vocab_size: int, epsilon: float) -> torch.Tensor:
    """The target distributions q of label smoothing: (1 - eps) one-hot + eps / V everywhere.

    Args:
        labels: (N,) class ids. vocab_size: V. epsilon: eps in [0, 1).

    Returns:
        (N, V) rows that sum to 1.
    """
    check_array("labels", labels, kind=torch.Tensor, ndim=1, shape="(N,)")
    check_positive_int("vocab_size", vocab_size)
    check_fraction("epsilon", epsilon)
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= vocab_size):
        raise ValueError(f"labels must lie in [0, {vocab_size}); got ids from "
                         f"{int(labels.min())} to {int(labels.max())}")
    one_hot = F.one_hot(labels.long(), vocab_size).float()  # (N, V)
    return (1 - epsilon) * one_hot + epsilon / vocab_size


def label_smoothed_loss(logits: torch.Tensor, labels: torch.Tensor, epsilon: float = 0.1,
                        pad_id: int = 0) -> torch.Tensor:
    """Mean label-smoothed cross-entropy over the non-padding labels (PyTorch's definition).

    Args:
        logits: (B, T, V) unnormalised scores. labels: (B, T) ids; ``pad_id`` positions ignored.
        epsilon: smoothing eps in [0, 1); 0 gives plain cross-entropy.
    """
    check_array("logits", logits, kind=torch.Tensor, ndim=3, shape="(B, T, V)", floating=True)
    check_array("labels", labels, kind=torch.Tensor, ndim=2, shape="(B, T)")
    if labels.shape != logits.shape[:2]:
        raise ValueError(f"labels must have shape (B, T) = {tuple(logits.shape[:2])}; "
                         f"got {tuple(labels.shape)}")
    check_fraction("epsilon", epsilon)
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int; got {pad_id!r}")
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1).long(),
                           ignore_index=pad_id, label_smoothing=epsilon)


def loss_floor(vocab_size: int, epsilon: float) -> float:
    """The smallest possible label-smoothed loss: the entropy of the target distribution q."""
    check_positive_int("vocab_size", vocab_size)
    check_fraction("epsilon", epsilon)
    high = 1 - epsilon + epsilon / vocab_size
    low = epsilon / vocab_size
    return -(high * math.log(high) + ((vocab_size - 1) * low * math.log(low) if low else 0.0))


@dataclass(frozen=True)
class Metrics:
    """Held-out quality: loss and the two accuracies (fractions in [0, 1])."""

    loss: float  # teacher-forced label-smoothed loss (nan for decoded outputs)
    token_accuracy: float  # correct labels / all non-padding labels (EOS included)
    sequence_accuracy: float  # sequences with every label correct / all sequences


def accuracies(predicted: torch.Tensor, labels: torch.Tensor, pad_id: int = 0,
               ) -> tuple[float, float]:
    """Token and whole-sequence accuracy of predictions against labels.

    Args:
        predicted: (B, T') predicted ids aligned with the labels (no BOS); cut or padded to T.
        labels: (B, T) true ids, y_1 .. y_n, EOS, padding; padding positions are not scored.

    Returns:
        (token accuracy, sequence accuracy).
    """
    check_array("predicted", predicted, kind=torch.Tensor, ndim=2, shape="(B, T)")
    check_array("labels", labels, kind=torch.Tensor, ndim=2, shape="(B, T)")
    if predicted.shape[0] != labels.shape[0]:
        raise ValueError(f"predicted must have B={labels.shape[0]} rows like labels; got shape "
                         f"{tuple(predicted.shape)}")
    T = labels.shape[1]
    if predicted.shape[1] < T:
        fill = torch.full((predicted.shape[0], T - predicted.shape[1]), pad_id,
                          dtype=predicted.dtype, device=predicted.device)
        predicted = torch.cat([predicted, fill], dim=1)
    real = labels != pad_id  # (B, T)
    correct = (predicted[:, :T] == labels) & real
    token = correct.sum().item() / max(real.sum().item(), 1)
    sequence = (correct | ~real).all(dim=1).float().mean().item()
    return token, sequence


@torch.no_grad()
def evaluate(model: nn.Module, batch: Batch, epsilon: float = 0.0) -> Metrics:
    """Teacher-forced metrics on ``batch`` (one forward pass, model in eval mode).

    When every teacher-forced prediction of a sequence is right, greedy decoding reproduces it
    exactly, so the sequence accuracy here equals greedy decoding's when it is 1.
    """
    check_instance("batch", batch, Batch)
    was_training = model.training
    model.eval()
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
    model.train(was_training)
    loss = label_smoothed_loss(logits, batch.tgt_out, epsilon, batch.pad_id).item()
    token, sequence = accuracies(logits.argmax(dim=-1), batch.tgt_out, batch.pad_id)
    return Metrics(loss, token, sequence)


@torch.no_grad()
def evaluate_decoding(model: nn.Module, data: TaskData, *, method: str = "greedy",
                      beam_size: int = 4, alpha: float = 0.0,
                      ) -> tuple[Metrics, torch.Tensor]:
    """Decode every source of ``data`` (no teacher forcing) and score against the targets.

    Args:
        model: the trained Transformer. data: held-out pairs.
        method: "greedy" or "beam". beam_size, alpha: beam-search settings.

    Returns:
        the metrics (loss is nan) and the decoded (n, L) outputs, BOS first.
    """
    check_instance("data", data, TaskData)
    if method not in ("greedy", "beam"):
        raise ValueError(f"method must be 'greedy' or 'beam'; got {method!r}")
    batch = make_batch(data.src, data.tgt)
    max_len = batch.tgt_out.shape[1] + 1  # BOS + the longest target + EOS
    was_training = model.training
    model.eval()
    if method == "greedy":
        out = greedy_decode(model, batch.src, max_len, BOS_ID, EOS_ID)
    else:
        out = beam_search(model, batch.src, max_len, BOS_ID, EOS_ID, beam_size=beam_size,
                          alpha=alpha)
    model.train(was_training)
    token, sequence = accuracies(out[:, 1:], batch.tgt_out, batch.pad_id)
    return Metrics(float("nan"), token, sequence), out


@dataclass(frozen=True)
class TrainConfig:
    """How to train: optimiser, schedule, smoothing, budget and logging."""

    steps: int = 400  # most optimiser updates (training may stop earlier, see target_accuracy)
    batch_size: int = 128  # sequences per update
    warmup: int = 4000  # warm-up steps (paper: 4000)
    lr_scale: float = 1.0  # factor on the paper's schedule (paper: 1)
    use_warmup: bool = True  # False: start at the peak rate and decay from there (ablation)
    constant_lr: float | None = None  # a fixed rate instead of the schedule (None: the schedule)
    label_smoothing: float = 0.1  # eps_ls (paper: 0.1)
    betas: tuple[float, float] = (0.9, 0.98)  # Adam beta_1, beta_2 (paper)
    adam_eps: float = 1e-9  # Adam epsilon (paper)
    grad_clip: float | None = None  # largest gradient norm; None: no clipping (as in the paper)
    length_power: float = 0.0  # training lengths n drawn with P(n) ~ n ** length_power (0: uniform)
    seed: int = 0  # seeds the model's initialisation, the data stream and dropout
    eval_every: int = 25  # steps between held-out checks (0: none during training)
    target_accuracy: float | None = 1.0  # held-out sequence accuracy that counts as success
    stop_early: bool = True  # stop at the first check that reaches target_accuracy
    verbose: bool = False  # print a progress line at every check

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "warmup"):
            check_positive_int(name, getattr(self, name))
        if isinstance(self.eval_every, bool) or not isinstance(self.eval_every, int) \
                or self.eval_every < 0:
            raise ValueError(f"eval_every must be a non-negative int; got {self.eval_every!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {self.seed!r}")
        if not isinstance(self.lr_scale, int | float) or not self.lr_scale > 0:
            raise ValueError(f"lr_scale must be a positive number; got {self.lr_scale!r}")
        for name in ("use_warmup", "stop_early", "verbose"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {getattr(self, name)!r}")
        if self.constant_lr is not None and (isinstance(self.constant_lr, bool) or not isinstance(
                self.constant_lr, int | float) or not self.constant_lr > 0):
            raise ValueError(f"constant_lr must be a positive number or None; "
                             f"got {self.constant_lr!r}")
        check_fraction("label_smoothing", self.label_smoothing)
        if len(self.betas) != 2:
            raise ValueError(f"betas must be two numbers; got {self.betas!r}")
        for b in self.betas:
            check_fraction("betas", b)
        if not self.adam_eps > 0:
            raise ValueError(f"adam_eps must be positive; got {self.adam_eps!r}")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"grad_clip must be positive or None; got {self.grad_clip!r}")
        if self.target_accuracy is not None:
            check_fraction("target_accuracy", self.target_accuracy, include_one=True)
        check_length_power(self.length_power)

    def learning_rate(self, step: int, d_model: int) -> float:
        """The rate at ``step``: the paper's schedule, its post-peak part without warm-up, or
        ``constant_lr`` when that is set."""
        _check_step(step)
        if self.constant_lr is not None:
            return float(self.constant_lr)
        effective = step if self.use_warmup else max(step, self.warmup)
        return noam_lr(effective, d_model, self.warmup, self.lr_scale)


@dataclass(frozen=True)
class Evaluation:
    """One held-out check during training."""

    step: int  # optimiser steps done
    seconds: float  # training time so far (held-out checks excluded)
    metrics: Metrics  # teacher-forced, on the held-out set


@dataclass(frozen=True)
class TrainResult:
    """What a training run did: per-step losses and rates, checks, time and when it succeeded."""

    losses: tuple[float, ...]  # training loss at every step
    learning_rates: tuple[float, ...]  # the rate used at every step
    evaluations: tuple[Evaluation, ...] = field(default_factory=tuple)
    seconds: float = 0.0  # wall-clock training time, held-out checks excluded
    reached_step: int | None = None  # first check at target_accuracy, or None

    @property
    def steps(self) -> int:
        """Optimiser updates made."""
        return len(self.losses)

    @property
    def reached_seconds(self) -> float | None:
        """Training time up to ``reached_step`` (None if the target was not reached)."""
        for e in self.evaluations:
            if e.step == self.reached_step:
                return e.seconds
        return None


def train(model: nn.Module, batches: Iterator[Batch], config: TrainConfig,
          held_out: Batch | None = None) -> TrainResult:
    """Train ``model`` with Adam and the paper's schedule on ``batches``.

    Args:
        model: a Transformer (its ``config.d_model`` sets the schedule). batches: an iterator of
            training batches. config: a :class:`TrainConfig`.
        held_out: a teacher-forcing batch checked every ``config.eval_every`` steps; the first
            check whose sequence accuracy reaches ``config.target_accuracy`` is recorded, and
            training stops there if ``config.stop_early``.
    """
    if not isinstance(model, nn.Module) or not hasattr(model, "config"):
        raise TypeError(f"model must be a Transformer (an nn.Module with .config); "
                        f"got {type(model).__name__}")
    check_instance("config", config, TrainConfig)
    if not isinstance(batches, Iterator):
        raise TypeError(f"batches must be an iterator of Batch; got {type(batches).__name__}")
    if held_out is not None and not isinstance(held_out, Batch):
        raise TypeError(f"held_out must be a Batch or None; got {type(held_out).__name__}")
    d_model = model.config.d_model
    # fused: one kernel updates every parameter (on CPU a few % faster per step than foreach)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=config.betas, fused=True,
                                 eps=config.adam_eps)
    losses: list[float] = []
    rates: list[float] = []
    checks: list[Evaluation] = []
    reached, seconds = None, 0.0
    model.train()
    for step in range(1, config.steps + 1):
        start = time.perf_counter()
        lr = config.learning_rate(step, d_model)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = next(batches)
        logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
        loss = label_smoothed_loss(logits, batch.tgt_out, config.label_smoothing, batch.pad_id)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        losses.append(loss.item())
        rates.append(lr)
        seconds += time.perf_counter() - start
        if held_out is not None and config.eval_every and (
                step % config.eval_every == 0 or step == config.steps):
            metrics = evaluate(model, held_out, config.label_smoothing)
            checks.append(Evaluation(step, seconds, metrics))
            if config.verbose:
                print(f"step {step:5d}  loss {losses[-1]:.4f}  lr {lr:.2e}  held-out token acc "
                      f"{metrics.token_accuracy:.4f}  sequence acc {metrics.sequence_accuracy:.4f}"
                      f"  ({seconds:.1f} s)")
            if (reached is None and config.target_accuracy is not None
                    and metrics.sequence_accuracy >= config.target_accuracy):
                reached = step
                if config.stop_early:
                    break
        elif config.verbose and step % 50 == 0:
            print(f"step {step:5d}  loss {losses[-1]:.4f}  lr {lr:.2e}  ({seconds:.1f} s)")
    model.eval()
    return TrainResult(tuple(losses), tuple(rates), tuple(checks), seconds, reached)


def train_on_task(task: TaskConfig, model_config: object, config: TrainConfig,
                  held_out: TaskData) -> tuple[nn.Module, TrainResult]:
    """Seed, build a model, and train it on fresh batches of ``task`` that avoid ``held_out``.

    Args:
        task: the synthetic task. model_config: a ``TransformerConfig`` whose vocabularies fit
            the task. config: training settings (its seed seeds everything). held_out: the pairs
            the training stream never draws, checked during training.

    Returns:
        the trained model (in eval mode) and the :class:`TrainResult`.
    """
    from .model import TransformerConfig, build_model

    check_instance("task", task, TaskConfig)
    check_instance("model_config", model_config, TransformerConfig)
    check_instance("config", config, TrainConfig)
    check_instance("held_out", held_out, TaskData)
    for name in ("src_vocab_size", "tgt_vocab_size"):
        if getattr(model_config, name) < task.vocab_size:
            raise ValueError(f"model_config.{name} must be at least the task's vocab_size "
                             f"{task.vocab_size}; got {getattr(model_config, name)}")
    torch.manual_seed(config.seed)
    model = build_model(model_config)
    generator = torch.Generator().manual_seed(config.seed)
    exclude = sequence_keys(held_out.src, task.vocab_size)
    stream = task_batches(task, config.batch_size, generator, exclude=exclude,
                          length_power=config.length_power)
    result = train(model, stream, config, make_batch(held_out.src, held_out.tgt))
    return model, result
