"""Training the core's Transformer on a synthetic task: a stream of fresh batches, a run, and
decoding the held-out sets.

The training stream never draws a held-out source, and draws lengths as the task's
``length_power`` says; everything is seeded by the training configuration's seed. Decoding never
looks at the references to decide how long an output may be: as in the paper (section 6.1), the
longest output is the input's length + 50 tokens, or the model's last position if that is nearer.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence

import torch
from torch import nn

from transformer_course.core.batching import BOS_ID, EOS_ID, Batch, make_batch, trim_batch
from transformer_course.core.checks import check_choice, check_instance, check_int
from transformer_course.core.decoding import beam_search, greedy_decode
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.core.training import Metrics, TrainConfig, TrainResult, accuracies, train

from .tasks import TaskConfig, TaskData, sample_task, sequence_keys

EXTRA_OUTPUT_TOKENS = 50  # the paper's longest output: input length + 50 (section 6.1)


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


def training_stream(task: TaskConfig, config: TrainConfig, never: Sequence[TaskData],
                    ) -> Iterator[Batch]:
    """The training batches of a run with ``config`` (its seed and batch size): fresh pairs of
    ``task``, none of whose sources is in any of the ``never`` sets."""
    keys = torch.cat([sequence_keys(data.src, task.vocab_size) for data in never])  # (m,)
    generator = torch.Generator().manual_seed(config.seed)
    return task_batches(task, config.batch_size, generator, exclude=keys)


def train_on_task(task: TaskConfig, model_config: TransformerConfig, config: TrainConfig,
                  held_out: TaskData, *, exclude: TaskData | None = None,
                  snapshots: MutableMapping[int, nn.Module | None] | None = None,
                  ) -> tuple[nn.Module, TrainResult]:
    """Seed, build a model, and train it on fresh batches of ``task`` that avoid ``held_out``.

    Args:
        task: the synthetic task. model_config: a ``TransformerConfig`` whose vocabularies fit
            the task. config: training settings (its seed seeds everything). held_out: the pairs
            the training stream never draws, checked during training (the validation set).
        exclude: more pairs the stream never draws but training never looks at (the test set).
        snapshots: steps at which to keep a copy of the model (as for ``train``).

    Returns:
        the trained model (in eval mode) and the :class:`TrainResult`.
    """
    torch.manual_seed(config.seed)
    model = Transformer(model_config)
    never = [data for data in (held_out, exclude) if data is not None]
    stream = training_stream(task, config, never)
    result = train(model, stream, config, make_batch(held_out.src, held_out.tgt),
                   snapshots=snapshots)
    return model, result


def output_limit(model: nn.Module, batch: Batch, extra: int = EXTRA_OUTPUT_TOKENS) -> int:
    """The longest output (BOS included) the decoders may write for ``batch``: its longest
    source (in tokens) + ``extra``, or the model's ``config.max_len`` if that is smaller."""
    longest_source = int(batch.src_mask.sum(dim=-1).max())
    return min(longest_source + extra, model.config.max_len)


@torch.no_grad()
def decode_and_score(model: nn.Module, batch: Batch, *, method: str = "greedy",
                     beam_size: int = 4, alpha: float = 0.0, use_cache: bool = True,
                     extra: int = EXTRA_OUTPUT_TOKENS) -> tuple[Metrics, torch.Tensor]:
    """Decode every source of ``batch`` and score the outputs against its labels.

    Args:
        model: a trained ``Transformer``. batch: the pairs (only the sources are decoded; the
            labels only score). method: "greedy" or "beam" (``beam_size``, length penalty
            ``alpha``). use_cache: as for the decoders. extra: outputs may be this many tokens
            longer than the longest source (see :func:`output_limit`).

    Returns:
        the metrics (loss nan; an output is right only if it ends where its label does) and the
        (B, L) outputs, BOS first.
    """
    check_instance("batch", batch, Batch)
    check_choice("method", method, ("greedy", "beam"))
    check_int("extra", extra, low=0)
    max_len = output_limit(model, batch, extra)
    was_training = model.training
    model.eval()
    if method == "greedy":
        out = greedy_decode(model, batch.src, max_len, BOS_ID, EOS_ID, src_mask=batch.src_mask,
                            pad_id=batch.pad_id, use_cache=use_cache)
    else:
        out = beam_search(model, batch.src, max_len, BOS_ID, EOS_ID, beam_size=beam_size,
                          alpha=alpha, src_mask=batch.src_mask, pad_id=batch.pad_id,
                          use_cache=use_cache)
    model.train(was_training)
    token, sequence = accuracies(out[:, 1:], batch.tgt_out, batch.pad_id)
    return Metrics(float("nan"), token, sequence), out
