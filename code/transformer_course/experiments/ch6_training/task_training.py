"""Training the core's Transformer on a synthetic task: a stream of fresh batches, and a run.

The training stream never draws a held-out source, and draws lengths as the task's
``length_power`` says; everything is seeded by the training configuration's seed.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import nn

from transformer_course.core.batching import Batch, make_batch, trim_batch
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.core.training import TrainConfig, TrainResult, train

from .tasks import TaskConfig, TaskData, sample_task, sequence_keys


def task_batches(config: TaskConfig, batch_size: int, generator: torch.Generator, *,
                 exclude: torch.Tensor | None = None) -> Iterator[Batch]:
    """An endless stream of fresh training batches of a task.

    Args:
        config: the task (its ``length_power`` biases the lengths drawn).
        batch_size: sequences per batch. generator: a seeded torch.Generator.
        exclude: keys (from ``tasks.sequence_keys``) of held-out sources never to draw.
    """
    while True:
        data = sample_task(config, batch_size, generator, exclude=exclude,
                           length_power=config.length_power)
        yield trim_batch(make_batch(data.src, data.tgt))


def train_on_task(task: TaskConfig, model_config: TransformerConfig, config: TrainConfig,
                  held_out: TaskData, *, exclude: TaskData | None = None,
                  ) -> tuple[nn.Module, TrainResult]:
    """Seed, build a model, and train it on fresh batches of ``task`` that avoid ``held_out``.

    Args:
        task: the synthetic task. model_config: a ``TransformerConfig`` whose vocabularies fit
            the task. config: training settings (its seed seeds everything). held_out: the pairs
            the training stream never draws, checked during training (the validation set).
        exclude: more pairs the stream never draws but training never looks at (the test set).

    Returns:
        the trained model (in eval mode) and the :class:`TrainResult`.
    """
    torch.manual_seed(config.seed)
    model = Transformer(model_config)
    generator = torch.Generator().manual_seed(config.seed)
    never = [data for data in (held_out, exclude) if data is not None]
    keys = torch.cat([sequence_keys(data.src, task.vocab_size) for data in never])  # (m,)
    stream = task_batches(task, config.batch_size, generator, exclude=keys)
    result = train(model, stream, config, make_batch(held_out.src, held_out.tgt))
    return model, result
