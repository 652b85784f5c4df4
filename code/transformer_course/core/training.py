"""Training: Adam with the paper's schedule on a label-smoothed loss, and held-out metrics.

:func:`train_step` is one update (section 5: Adam, the schedule of ``schedule``, the loss of
``loss``); :func:`train` repeats it over a stream of batches, checking a held-out batch as it goes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import nn

from .batching import BOS_ID, EOS_ID, Batch
from .checks import (
    Shapes,
    check_fraction,
    check_instance,
    check_int,
    check_number,
    check_positive,
    check_positive_ints,
)
from .decoding import beam_search, greedy_decode
from .loss import label_smoothed_loss
from .schedule import noam_lr


@dataclass(frozen=True)
class TrainConfig:
    """How to train: optimiser, schedule, smoothing, budget and logging."""

    steps: int = 400  # most optimiser updates (training may stop earlier, see target_accuracy)
    batch_size: int = 128  # sequences per update (read by whoever makes the batches)
    warmup: int = 4000  # warm-up steps (paper: 4000)
    lr_scale: float = 1.0  # factor on the paper's schedule (paper: 1)
    use_warmup: bool = True  # False: start at the peak rate and decay from there (ablation)
    constant_lr: float | None = None  # a fixed rate instead of the schedule (None: the schedule)
    label_smoothing: float = 0.1  # eps_ls (paper: 0.1)
    betas: tuple[float, float] = (0.9, 0.98)  # Adam beta_1, beta_2 (paper)
    adam_eps: float = 1e-9  # Adam epsilon (paper)
    grad_clip: float | None = None  # largest gradient norm; None: no clipping (as in the paper)
    seed: int = 0  # seeds the model's initialisation, the data stream and dropout
    eval_every: int = 25  # steps between held-out checks (0: none during training)
    target_accuracy: float | None = 1.0  # held-out sequence accuracy that counts as success
    stop_early: bool = True  # stop at the first check that reaches target_accuracy
    verbose: bool = False  # print a progress line at every check

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "warmup"):
            check_int(name, getattr(self, name))
        check_int("eval_every", self.eval_every, low=0)
        check_int("seed", self.seed, low=0)
        for name in ("use_warmup", "stop_early", "verbose"):
            check_instance(name, getattr(self, name), bool)
        check_positive("lr_scale", self.lr_scale)
        for name in ("constant_lr", "grad_clip"):
            if getattr(self, name) is not None:
                check_positive(name, getattr(self, name))
        check_positive("adam_eps", self.adam_eps)
        check_fraction("label_smoothing", self.label_smoothing)
        check_instance("betas", self.betas, tuple, "tuple (beta_1, beta_2)")
        if len(self.betas) != 2:
            raise ValueError(f"betas must be two numbers (beta_1, beta_2); got {self.betas!r}")
        for i, beta in enumerate(self.betas):
            check_fraction(f"betas[{i}]", beta)
        if self.target_accuracy is not None:
            check_fraction("target_accuracy", self.target_accuracy, include_one=True)

    def learning_rate(self, step: int, d_model: int) -> float:
        """The rate at ``step``: the paper's schedule, its post-peak part without warm-up, or
        ``constant_lr`` when that is set."""
        check_positive_ints(step=step, d_model=d_model)
        if self.constant_lr is not None:
            return float(self.constant_lr)
        effective = step if self.use_warmup else max(step, self.warmup)
        return noam_lr(effective, d_model, self.warmup, self.lr_scale)


def make_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Adam:
    """Adam with the config's betas and epsilon; the rate is set at every step."""
    check_instance("model", model, nn.Module, "torch.nn.Module")
    check_instance("config", config, TrainConfig)
    if next(model.parameters(), None) is None:
        raise ValueError(f"model must have parameters to optimise; got a "
                         f"{type(model).__name__} with none")
    # fused: one kernel updates every parameter (on CPU a few % faster per step than foreach)
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=config.betas, eps=config.adam_eps,
                            fused=True)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer,
               batch: Batch, lr: float, config: TrainConfig) -> float:
    """One update on ``batch`` at learning rate ``lr``; returns its loss."""
    check_instance("model", model, nn.Module, "torch.nn.Module")
    check_instance("optimizer", optimizer, torch.optim.Optimizer,
                   "torch.optim.Optimizer")
    check_instance("batch", batch, Batch)
    check_number("lr", lr, low=0, words="a finite number >= 0")
    check_instance("config", config, TrainConfig)
    for group in optimizer.param_groups:
        group["lr"] = lr
    b, eps = batch, config.label_smoothing
    logits = model(b.src, b.tgt_in, b.src_mask, b.tgt_mask)  # (B, T, V)
    loss = label_smoothed_loss(logits, b.tgt_out, eps, b.pad_id)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if config.grad_clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
    optimizer.step()
    return loss.item()


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
    shapes = Shapes()
    shapes.tensor("labels", labels, "B T", dtype="int")
    shapes.tensor("predicted", predicted, "B T_pred", dtype="int")
    check_int("pad_id", pad_id, low=0)
    T = labels.shape[1]
    if predicted.shape[1] < T:
        predicted = nn.functional.pad(predicted, (0, T - predicted.shape[1]), value=pad_id)
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
    check_instance("model", model, nn.Module, "torch.nn.Module")
    check_instance("batch", batch, Batch)
    was_training = model.training
    model.eval()
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
    model.train(was_training)
    loss = label_smoothed_loss(logits, batch.tgt_out, epsilon, batch.pad_id).item()
    token, sequence = accuracies(logits.argmax(dim=-1), batch.tgt_out, batch.pad_id)
    return Metrics(loss, token, sequence)


@torch.no_grad()
def evaluate_decoding(model: nn.Module, batch: Batch, *, method: str = "greedy",
                      beam_size: int = 4, alpha: float = 0.0, bos_id: int = BOS_ID,
                      eos_id: int = EOS_ID) -> tuple[Metrics, torch.Tensor]:
    """Decode every source of ``batch`` (no teacher forcing) and score against its labels.

    Args:
        model: the trained Transformer. batch: held-out pairs.
        method: "greedy" or "beam". beam_size, alpha: beam-search settings.

    Returns:
        the metrics (loss is nan) and the decoded (B, L) outputs, BOS first.
    """
    check_instance("model", model, nn.Module, "torch.nn.Module")
    check_instance("batch", batch, Batch)
    if method not in ("greedy", "beam"):
        raise ValueError(f"method must be 'greedy' or 'beam'; got {method!r}")
    check_int("beam_size", beam_size)  # checked for either method: a bad value is a bad call
    check_number("alpha", alpha, low=0)
    max_len = batch.tgt_out.shape[1] + 1  # BOS + the longest target + EOS
    was_training = model.training
    model.eval()
    if method == "greedy":
        out = greedy_decode(model, batch.src, max_len, bos_id, eos_id, src_mask=batch.src_mask,
                            pad_id=batch.pad_id)
    else:
        out = beam_search(model, batch.src, max_len, bos_id, eos_id, beam_size=beam_size,
                          alpha=alpha, src_mask=batch.src_mask, pad_id=batch.pad_id)
    model.train(was_training)
    token, sequence = accuracies(out[:, 1:], batch.tgt_out, batch.pad_id)
    return Metrics(float("nan"), token, sequence), out


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
    check_instance("batches", batches, Iterator, "iterator of Batch")
    check_instance("held_out", held_out, (Batch, type(None)), "Batch or None")
    d_model = model.config.d_model
    optimizer = make_optimizer(model, config)
    losses: list[float] = []
    rates: list[float] = []
    checks: list[Evaluation] = []
    reached, seconds = None, 0.0
    model.train()
    for step in range(1, config.steps + 1):
        start = time.perf_counter()
        batch = next(batches, None)
        _check_batch_item(batch, step, config.steps)
        rates.append(config.learning_rate(step, d_model))
        losses.append(train_step(model, optimizer, batch, rates[-1], config))
        seconds += time.perf_counter() - start
        if held_out is None or not config.eval_every or (step % config.eval_every
                                                        and step != config.steps):
            continue
        metrics = evaluate(model, held_out, config.label_smoothing)
        checks.append(Evaluation(step, seconds, metrics))
        if config.verbose:
            print(f"step {step:5d}  loss {losses[-1]:.4f}  lr {rates[-1]:.2e}  held-out token "
                  f"acc {metrics.token_accuracy:.4f}  sequence acc "
                  f"{metrics.sequence_accuracy:.4f}  ({seconds:.1f} s)")
        if (reached is None and config.target_accuracy is not None
                and metrics.sequence_accuracy >= config.target_accuracy):
            reached = step
            if config.stop_early:
                break
    model.eval()
    return TrainResult(tuple(losses), tuple(rates), tuple(checks), seconds, reached)


def _check_batch_item(batch: Batch | None, step: int, steps: int) -> None:
    """Check what ``batches`` yielded for ``step`` (None: it ran out)."""
    if batch is None:
        raise ValueError(f"batches must yield a Batch for each of the {steps} steps; "
                         f"got only {step - 1}")
    if not isinstance(batch, Batch):
        raise TypeError(f"batches must yield Batch objects; got {type(batch).__name__} at "
                        f"step {step}")
