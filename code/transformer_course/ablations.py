"""Ablations: retrain with one ingredient removed or changed, same seed and budget, and measure.

Each variant changes the baseline's model configuration or training configuration in one place,
trains from the same seed with the same budget of steps (stopping early, if the baseline's
configuration says so, once every held-out sequence is right), and is scored on the same held-out
set by greedy decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd

from .batching import make_batch
from .tasks import TaskConfig, TaskData
from .training import TrainConfig, evaluate, evaluate_decoding, train_on_task


@dataclass(frozen=True)
class Ablation:
    """One variant: a name, what it changes, and the changed fields of the two configurations."""

    name: str  # short label for the table
    description: str  # what changes, in words
    model_changes: dict[str, Any] = field(default_factory=dict)  # TransformerConfig fields
    train_changes: dict[str, Any] = field(default_factory=dict)  # TrainConfig fields


DEFAULT_ABLATIONS = (
    Ablation("baseline", "the recipe unchanged"),
    Ablation("no positional encoding", "nothing added to the embeddings",
             model_changes={"positional": "none"}),
    Ablation("no sqrt(d_k) scaling", "scores Q K^T without the 1/sqrt(d_k) factor",
             model_changes={"scaled_attention": False}),
    Ablation("pre-norm", "LayerNorm inside each residual branch (the baseline is post-norm)",
             model_changes={"norm_first": True}),
    Ablation("no warm-up", "start at the peak learning rate, then the same decay",
             train_changes={"use_warmup": False}),
    Ablation("no label smoothing", "plain cross-entropy (eps_ls = 0)",
             train_changes={"label_smoothing": 0.0}),
)


def _check_changes(name: str, changes: Any, config: Any) -> None:
    if not isinstance(changes, dict):
        raise TypeError(f"{name} must be a dict of field names to values; "
                        f"got {type(changes).__name__}")
    known = {f.name for f in fields(config)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise ValueError(f"{name} names unknown {type(config).__name__} fields: {unknown}")


def run_ablations(task: TaskConfig, model_config: Any, train_config: TrainConfig,
                  held_out: TaskData, ablations: Sequence[Ablation] = DEFAULT_ABLATIONS, *,
                  seeds: Sequence[int] = (0,)) -> pd.DataFrame:
    """Train every variant on every seed and measure it on ``held_out``.

    Args:
        task: the task. model_config: the baseline ``TransformerConfig``.
        train_config: the baseline training (its ``steps`` is every variant's budget, its
            ``stop_early`` and ``target_accuracy`` decide whether runs stop on success).
        held_out: the held-out pairs (never drawn for training).
        ablations: the variants. seeds: one run per variant and seed.

    Returns:
        one row per run: variant, seed, held-out greedy sequence and token accuracy and
        teacher-forced cross-entropy (no smoothing, so variants compare) at the end of the run,
        the first check at ``train_config.target_accuracy`` (NaN if never), steps taken, and the
        training seconds.
    """
    from .model import TransformerConfig

    if not isinstance(model_config, TransformerConfig):
        raise TypeError(f"model_config must be a TransformerConfig; "
                        f"got {type(model_config).__name__}")
    if not isinstance(train_config, TrainConfig):
        raise TypeError(f"train_config must be a TrainConfig; got {type(train_config).__name__}")
    if not isinstance(held_out, TaskData):
        raise TypeError(f"held_out must be a TaskData; got {type(held_out).__name__}")
    if isinstance(ablations, Ablation) or not ablations:
        raise ValueError("ablations must be a non-empty sequence of Ablation")
    for i, ablation in enumerate(ablations):
        if not isinstance(ablation, Ablation):
            raise TypeError(f"ablations[{i}] must be an Ablation; got {type(ablation).__name__}")
        _check_changes(f"ablations[{i}].model_changes", ablation.model_changes, model_config)
        _check_changes(f"ablations[{i}].train_changes", ablation.train_changes, train_config)
    if isinstance(seeds, int) or not seeds:
        raise ValueError(f"seeds must be a non-empty sequence of ints; got {seeds!r}")
    batch = make_batch(held_out.src, held_out.tgt)
    rows = []
    for ablation in ablations:
        model_cfg = replace(model_config, **ablation.model_changes)
        for seed in seeds:
            cfg = replace(train_config, seed=seed, verbose=False, **ablation.train_changes)
            model, result = train_on_task(task, model_cfg, cfg, held_out)
            decoded, _ = evaluate_decoding(model, held_out)
            rows.append({
                "variant": ablation.name,
                "seed": seed,
                "sequence_accuracy": decoded.sequence_accuracy,
                "token_accuracy": decoded.token_accuracy,
                "cross_entropy": evaluate(model, batch, epsilon=0.0).loss,
                "first_step_at_target": (float("nan") if result.reached_step is None
                                         else result.reached_step),
                "steps": result.steps,
                "seconds": result.seconds,
            })
    return pd.DataFrame(rows)
