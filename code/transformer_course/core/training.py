"""Training: Adam with a warm-up schedule on a label-smoothed loss, and held-out metrics.

:func:`train_step` is one update (section 5: Adam, the schedule of ``schedule``, the loss of
``loss``); :func:`train` repeats it over a stream of batches, checking held-out data as it goes.
Every model in the course trains through these two: the Transformer with the defaults, the
chapters' small models with a loss function of their own (``loss_fn``).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .batching import BOS_ID, EOS_ID, Batch
from .checks import Shapes, check_choice, check_instance, check_int, check_number
from .decoding import beam_search, greedy_decode
from .loss import label_smoothed_loss
from .schedule import noam_lr

DECAYS = ("inverse_sqrt", "linear", "cosine", "constant")


@dataclass(frozen=True)
class TrainConfig:
    """How to train: optimiser, schedule, smoothing, budget and held-out checks."""

    steps: int = 400  # most optimiser updates (training may stop earlier, see target_accuracy)
    batch_size: int = 128  # sequences per update (read by whoever makes the batches)
    warmup: int = 4000  # steps of linear warm-up (paper: 4000; 0: none)
    peak_lr: float | None = None  # rate after warm-up; None: the paper's (d_model warmup)^-0.5
    lr_scale: float = 1.0  # factor on the paper's schedule (paper: 1; used when peak_lr is None)
    decay: str = "inverse_sqrt"  # after warm-up: "inverse_sqrt" (paper), "linear" or "cosine"
    #                              to 0 at the last step, or "constant"
    use_warmup: bool = True  # False: hold the peak rate during the warm-up steps (ablation)
    label_smoothing: float = 0.1  # eps_ls (paper: 0.1)
    betas: tuple[float, float] = (0.9, 0.98)  # Adam beta_1, beta_2 (paper)
    adam_eps: float = 1e-9  # Adam epsilon (paper)
    grad_clip: float | None = None  # largest gradient norm; None: no clipping (as in the paper)
    seed: int = 0  # seeds the model's initialisation, the data stream and dropout
    eval_every: int = 25  # steps between held-out checks, and one after the last (0: none)
    target_accuracy: float | None = 1.0  # held-out sequence accuracy that counts as success
    stop_early: bool = True  # stop at the first check that reaches target_accuracy
    verbose: bool = False  # print a progress line at every check

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size"):
            check_int(name, getattr(self, name))
        for name in ("warmup", "eval_every", "seed"):
            check_int(name, getattr(self, name), low=0)
        check_choice("decay", self.decay, DECAYS)
        if self.peak_lr is None and (self.warmup == 0 or self.decay != "inverse_sqrt"):
            raise ValueError(f"peak_lr must be given unless the schedule is the paper's "
                             f"(warmup > 0, decay 'inverse_sqrt'); got warmup={self.warmup}, "
                             f"decay={self.decay!r}")
        for name in ("use_warmup", "stop_early", "verbose"):
            check_instance(name, getattr(self, name), bool)
        for name in ("peak_lr", "lr_scale", "adam_eps", "grad_clip"):
            if getattr(self, name) is not None:
                check_number(name, getattr(self, name), low=0, low_open=True)
        check_number("label_smoothing", self.label_smoothing, 0, 1, high_open=True)
        check_instance("betas", self.betas, tuple)
        if len(self.betas) != 2:
            raise ValueError(f"betas must be two numbers (beta_1, beta_2); got {self.betas!r}")
        for i, beta in enumerate(self.betas):
            check_number(f"betas[{i}]", beta, 0, 1, high_open=True)
        if self.target_accuracy is not None:
            check_number("target_accuracy", self.target_accuracy, 0, 1)

    def learning_rate(self, step: int, d_model: int | None = None) -> float:
        """The rate at ``step`` (1-based); ``d_model`` sets the paper's peak (peak_lr None)."""
        if self.peak_lr is None:  # the paper's formula, noam_lr
            return noam_lr(step if self.use_warmup else max(step, self.warmup), d_model,
                           self.warmup, self.lr_scale)
        peak = self.peak_lr
        if step <= self.warmup:
            return peak * step / self.warmup if self.use_warmup else peak
        if self.decay == "constant":
            return peak
        if self.decay == "inverse_sqrt":
            return peak * math.sqrt(max(self.warmup, 1) / step)
        left = (self.steps - step) / max(self.steps - self.warmup, 1)  # 1 -> 0
        return peak * left if self.decay == "linear" else peak * 0.5 * (1 - math.cos(math.pi *
                                                                                     left))


def make_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Adam:
    """Adam with the config's betas and epsilon; the rate is set at every step."""
    check_instance("model", model, nn.Module)
    check_instance("config", config, TrainConfig)
    # fused: one kernel updates every parameter (on CPU a few % faster per step than foreach)
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=config.betas, eps=config.adam_eps,
                            fused=True)


LossFunction = Callable[[nn.Module, Any, TrainConfig], torch.Tensor]


def teacher_forced_loss(model: nn.Module, batch: Batch,
                        config: TrainConfig) -> torch.Tensor:
    """Label-smoothed cross-entropy of the next token (the paper's loss)."""
    logits = model(batch.src, batch.tgt_in,
                   batch.src_mask, batch.tgt_mask)  # (B, T, V)
    return label_smoothed_loss(logits, batch.tgt_out,
                               config.label_smoothing, batch.pad_id)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer,
               batch: Any, lr: float, config: TrainConfig,
               loss_fn: LossFunction = teacher_forced_loss) -> float:
    """One update on ``batch`` at learning rate ``lr``; returns its loss."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = loss_fn(model, batch, config)
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
    """(token accuracy, sequence accuracy) of ``predicted`` (B, T') ids, aligned with the
    ``labels`` (B, T) (no BOS; cut or padded to T); padding labels are not scored."""
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
    check_instance("model", model, nn.Module)
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
    """Decode every source of ``batch`` ("greedy" or "beam" ``method``, no teacher forcing);
    return the metrics against its labels (loss nan) and the (B, L) outputs, BOS first."""
    check_instance("model", model, nn.Module)
    check_instance("batch", batch, Batch)
    check_choice("method", method, ("greedy", "beam"))
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
    seconds: float  # training time so far, wall clock (held-out checks excluded)
    cpu_seconds: float  # the same in CPU time of this process (robust to a busy machine)
    metrics: Any  # what the check returned: :class:`Metrics`, or a richer record of the caller's


@dataclass(frozen=True)
class TrainResult:
    """What a training run did: per-step losses and rates, checks, time and when it succeeded."""

    losses: tuple[float, ...]  # training loss at every step
    learning_rates: tuple[float, ...]  # the rate used at every step
    evaluations: tuple[Evaluation, ...] = field(default_factory=tuple)
    seconds: float = 0.0  # wall-clock training time, held-out checks excluded
    cpu_seconds: float = 0.0  # the same in CPU time of this process
    reached_step: int | None = None  # first check at target_accuracy, or None

    @property
    def steps(self) -> int:
        """Optimiser updates made."""
        return len(self.losses)

    @property
    def reached_seconds(self) -> float | None:
        """Training time up to ``reached_step`` (None if the target was not reached)."""
        return next((e.seconds for e in self.evaluations if e.step == self.reached_step), None)

    @property
    def reached_cpu_seconds(self) -> float | None:
        """CPU time up to ``reached_step`` (None if the target was not reached)."""
        return next((e.cpu_seconds for e in self.evaluations if e.step == self.reached_step),
                    None)


def train(model: nn.Module, batches: Iterator[Any], config: TrainConfig,
          held_out: Batch | None = None, *, loss_fn: LossFunction = teacher_forced_loss,
          check: Callable[[nn.Module], Any] | None = None,
          snapshots: MutableMapping[int, nn.Module | None] | None = None) -> TrainResult:
    """Train ``model`` with Adam and the config's schedule on ``batches``.

    Args:
        model: the model (the paper's schedule reads ``model.config.d_model``).
        batches: an iterator of training batches, one per step, as ``loss_fn`` takes them.
        config: a :class:`TrainConfig`.
        held_out: a teacher-forcing batch scored by :func:`evaluate` at every check.
        loss_fn: (model, batch, config) -> scalar loss; default: the Transformer's.
        check: model -> a record with a ``sequence_accuracy``, called at every check instead
            of :func:`evaluate` on ``held_out``. The first check whose sequence accuracy
            reaches ``config.target_accuracy`` is recorded, and training stops there if
            ``config.stop_early``.
        snapshots: steps (keys) at which to keep a copy of the model, in eval mode, as the
            key's value; each a step with a check (a multiple of ``config.eval_every``). Filled
            in as training passes them (a run that stops early leaves the later ones None).
            Copying changes nothing in the run.
    """
    check_instance("model", model, nn.Module)
    check_instance("config", config, TrainConfig)
    check_instance("batches", batches, Iterator)
    check_instance("held_out", held_out, (Batch, type(None)))
    if snapshots is not None and (not config.eval_every or any(
            s % config.eval_every or s > config.steps for s in snapshots)):
        raise ValueError(f"snapshots must be steps with a check (multiples of "
                         f"eval_every={config.eval_every}, at most {config.steps}); "
                         f"got {sorted(snapshots)}")
    if check is None and held_out is not None:
        def check(model: nn.Module) -> Metrics:
            return evaluate(model, held_out, config.label_smoothing)
    d_model = getattr(getattr(model, "config", None), "d_model", None)
    if config.peak_lr is None and d_model is None:
        raise TypeError(f"model must have a config.d_model for the paper's schedule (or set "
                        f"config.peak_lr); got {type(model).__name__}")
    optimizer = make_optimizer(model, config)
    losses: list[float] = []
    rates: list[float] = []
    checks: list[Evaluation] = []
    reached, seconds, cpu_seconds = None, 0.0, 0.0
    model.train()
    for step in range(1, config.steps + 1):
        start, cpu_start = time.perf_counter(), time.process_time()
        rates.append(config.learning_rate(step, d_model))
        batch = next(batches, None)
        if batch is None:
            raise ValueError(f"batches must yield a batch for each of the {config.steps} steps; "
                             f"got {step - 1}")
        losses.append(train_step(model, optimizer, batch, rates[-1], config, loss_fn))
        seconds += time.perf_counter() - start
        cpu_seconds += time.process_time() - cpu_start
        due = step % config.eval_every == 0 or step == config.steps if config.eval_every else False
        if due and snapshots is not None and step in snapshots:
            snapshots[step] = copy.deepcopy(model).eval()
        if check is None or not due:
            continue
        model.eval()
        metrics = check(model)
        model.train()
        checks.append(Evaluation(step, seconds, cpu_seconds, metrics))
        if config.verbose:
            print(f"step {step:5d}  loss {losses[-1]:.4f}  lr {rates[-1]:.2e}  held-out "
                  f"sequence acc {metrics.sequence_accuracy:.4f}  ({seconds:.1f} s)", flush=True)
        if (reached is None and config.target_accuracy is not None
                and metrics.sequence_accuracy >= config.target_accuracy):
            reached = step
            if config.stop_early:
                break
    model.eval()
    return TrainResult(tuple(losses), tuple(rates), tuple(checks), seconds, cpu_seconds, reached)
