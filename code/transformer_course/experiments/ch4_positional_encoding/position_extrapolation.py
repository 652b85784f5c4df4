"""A tiny trained test of length extrapolation: copy the token k positions back.

Each input is a row of random tokens; the target at position t is the token at t - offset. One
causal self-attention layer has to find that token. Positions reach it in one of four ways:
none at all (only the causal mask tells positions apart), sinusoids or a learned table added to
the embeddings, or rotary embeddings (RoPE) that rotate queries and keys. Trained on rows of
``train_len`` tokens, the model is then scored position by position on rows of ``test_len`` >
``train_len`` tokens: a learned table has never trained its rows past ``train_len``, the
sinusoidal formula gives those positions vectors all the same, and RoPE's scores depend on
offsets only, some of which (those of ``train_len`` or more) training never showed it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from transformer_course.core.attention import attention
from transformer_course.core.masks import causal_mask
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.core.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
)
from transformer_course.core.training import TrainConfig, train

from .rotary import rotate


@dataclass(frozen=True)
class CopyTaskConfig:
    """Sizes and training settings of the copy-back task."""

    vocab_size: int = 16  # distinct random tokens
    offset: int = 1  # the target at t is the token at t - offset
    d_model: int = 32  # model width
    num_heads: int = 1  # attention heads
    train_len: int = 16  # tokens per training row (positions 0 .. train_len - 1)
    test_len: int = 64  # tokens per evaluation row
    batch_size: int = 64  # rows per training step
    steps: int = 200  # optimizer steps
    lr: float = 1e-2  # Adam learning rate (no weight decay: untrained rows stay as initialised)
    eval_rows: int = 512  # rows scored at test_len

    def training(self, seed: int) -> TrainConfig:
        """Plain Adam (PyTorch's defaults) at a constant ``lr``: no schedule, no smoothing,
        no held-out checks."""
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, peak_lr=self.lr,
                           warmup=0, decay="constant", betas=(0.9, 0.999), adam_eps=1e-8,
                           label_smoothing=0.0, seed=seed, eval_every=0, target_accuracy=None)


class CopyBackModel(nn.Module):
    """Token embedding + positions, one causal self-attention layer, a linear read-out.

    Args:
        config: the task's sizes.
        position: "none", "sinusoidal" or "learned" (added to the embeddings), or "rope"
            (queries and keys rotated by their positions, nothing added).
    """

    def __init__(self, config: CopyTaskConfig, position: str) -> None:
        super().__init__()
        self.config, self.position = config, position
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        nn.init.normal_(self.embed.weight, std=config.d_model ** -0.5)  # x sqrt(d): unit entries
        self.positions: nn.Module = {
            "none": nn.Identity(),
            "sinusoidal": SinusoidalPositionalEncoding(config.d_model, config.test_len),
            "learned": LearnedPositionalEmbedding(config.d_model, config.test_len),
            "rope": nn.Identity(),
        }[position]
        self.attention = MultiHeadAttention(config.d_model, config.num_heads)
        self.readout = nn.Linear(config.d_model, config.vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: (B, T) ints -> logits (B, T, vocab_size)."""
        return self.readout(self._attend(tokens, need_weights=False)[0])  # (B, T, vocab_size)

    @torch.no_grad()
    def weight_on_target(self, tokens: torch.Tensor) -> np.ndarray:
        """Mean attention weight (over rows and heads) that position t puts on t - offset.

        Args:
            tokens: (B, T) ints.

        Returns:
            (T,) float64; NaN for t < offset.
        """
        _, weights = self._attend(tokens, need_weights=True)  # (B, h, T, T)
        offset, T = self.config.offset, tokens.shape[1]
        t = torch.arange(offset, T)
        result = np.full(T, np.nan)
        result[offset:] = weights[:, :, t, t - offset].double().mean(dim=(0, 1)).numpy()
        return result

    @torch.no_grad()
    def weight_by_offset(self, tokens: torch.Tensor, first_query: int) -> np.ndarray:
        """Mean attention weight (over rows, heads and the queries t >= ``first_query``) on the
        key k positions back, for every offset k.

        Args:
            tokens: (B, T) ints. first_query: the first query position averaged over, < T.

        Returns:
            (T,) float64: entry k is the mean weight on key t - k (0 where t - k < 0 counts
            as no weight), so the entries of each query sum to 1 before averaging.
        """
        T = tokens.shape[1]
        _, weights = self._attend(tokens, need_weights=True)  # (B, h, T, T)
        mean = weights.double().mean(dim=(0, 1))  # (T, T): query t, key s
        t = torch.arange(first_query, T)[:, None]  # (Q, 1)
        k = torch.arange(T)[None, :]  # (1, T) offsets
        on_offset = mean[t, (t - k).clamp(min=0)] * (t - k >= 0)  # (Q, T)
        return on_offset.mean(dim=0).numpy()

    def _attend(self, tokens: torch.Tensor, need_weights: bool,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        x = self.positions(self.embed(tokens) * math.sqrt(self.config.d_model))  # (B, T, d)
        mask = causal_mask(tokens.shape[1], device=tokens.device)[None]  # (1, T, T)
        if self.position != "rope":
            return self.attention(x, x, x, mask, need_weights=need_weights)
        attn, (B, T, _) = self.attention, x.shape
        h, d_k = attn.num_heads, attn.d_k
        q = rotate(attn.w_q(x).view(B, T, h, d_k).transpose(1, 2))  # (B, h, T, d_k)
        k = rotate(attn.w_k(x).view(B, T, h, d_k).transpose(1, 2))  # (B, h, T, d_k)
        v = attn.w_v(x).view(B, T, h, d_k).transpose(1, 2)  # (B, h, T, d_k)
        heads, weights = attention(q, k, v, mask[:, None], attn.scale,
                                   need_weights=need_weights)  # (B, h, T, d_k), (B, h, T, T)
        return attn.w_o(heads.transpose(1, 2).reshape(B, T, -1)), weights  # (B, T, d)


def copy_task_batch(config: CopyTaskConfig, rows: int, length: int,
                    generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens (rows, length) and targets (rows, length - offset) = tokens shifted."""
    tokens = torch.randint(config.vocab_size, (rows, length), generator=generator)
    return tokens, tokens[:, : length - config.offset]


@dataclass(frozen=True)
class CopyTaskResult:
    """One trained model's scores on rows of ``test_len`` tokens."""

    position: str  # "none", "sinusoidal", "learned" or "rope"
    accuracy_by_position: np.ndarray  # (test_len,) accuracy at each t; NaN for t < offset
    final_loss: float  # training loss at the last step
    seen_accuracy: float  # mean accuracy over positions offset .. train_len - 1
    unseen_accuracy: float  # mean accuracy over positions train_len .. test_len - 1


def train_copy_task(config: CopyTaskConfig, position: str, seed: int = 0,
                    ) -> tuple[CopyBackModel, CopyTaskResult]:
    """Train a CopyBackModel on rows of train_len tokens, score it on rows of test_len tokens."""
    torch.manual_seed(seed)
    model = CopyBackModel(config, position)
    generator = torch.Generator().manual_seed(seed)

    def batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        while True:
            yield copy_task_batch(config, config.batch_size, config.train_len, generator)

    result = train(model, batches(), config.training(seed), loss_fn=copy_loss)
    return model, _score(model, config, position, result.losses[-1], generator)


def copy_loss(model: CopyBackModel, batch: tuple[torch.Tensor, torch.Tensor],
              config: TrainConfig) -> torch.Tensor:
    """Cross-entropy of the token ``offset`` positions back, at every position that has one."""
    tokens, targets = batch  # (B, T), (B, T - offset)
    logits = model(tokens)[:, model.config.offset:]  # (B, T - offset, vocab)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(),
                           label_smoothing=config.label_smoothing)


@torch.no_grad()
def _score(model: CopyBackModel, config: CopyTaskConfig, position: str, final_loss: float,
           generator: torch.Generator) -> CopyTaskResult:
    model.eval()
    tokens, targets = copy_task_batch(config, config.eval_rows, config.test_len, generator)
    predictions = model(tokens)[:, config.offset:].argmax(dim=-1)  # (rows, test_len - offset)
    accuracy = np.full(config.test_len, np.nan)
    accuracy[config.offset:] = (predictions == targets).double().mean(dim=0).numpy()
    return CopyTaskResult(
        position=position, accuracy_by_position=accuracy, final_loss=final_loss,
        seen_accuracy=float(np.mean(accuracy[config.offset:config.train_len])),
        unseen_accuracy=float(np.mean(accuracy[config.train_len:])) if config.test_len >
        config.train_len else float("nan"))
