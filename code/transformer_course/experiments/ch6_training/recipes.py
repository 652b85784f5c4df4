"""Training recipes, defined once: chapter 6 trains with them and `make bench` times them.

- The fast recipe: a deliberately small model (one encoder and one decoder layer of width 32,
  two heads, no dropout) trained hard with the paper's schedule (Vaswani et al., 2017, section 5.3)
  scaled to a short warm-up. Beyond size and schedule, three settings depart from the paper,
  and chapter 6 measures each (``RECIPE_DEPARTURES``): Adam's beta_1 is 0.7 (paper: 0.9), there
  is no dropout (paper: 0.1), and the tasks' training streams draw long sequences more often than
  the held-out sets do (``FAST_LENGTH_POWER``; every batch is padded to its longest sequence, so
  long rows cost nothing extra).
- Held-out data: a validation set that decides when training stops, and a disjoint test set that
  only reports (``held_out_split``); the training stream draws neither. Longer sequences than any
  trained on test length generalisation (``longer_set``).
- The seed notebook's recipe, the baseline the benchmark compares against: N = 2 layers,
  d_model 64, d_ff 128, 2 heads, dropout 0.1, Adam at a constant 1e-3, 20 epochs of 20 batches
  of 32 sequences (400 steps).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from transformer_course.core.model import TransformerConfig
from transformer_course.core.schedule import peak_lr
from transformer_course.core.training import TrainConfig
from transformer_course.paper import ADAM_BETAS, BASE_MODEL, DROPOUT, WARMUP_STEPS

from .ablations import Ablation
from .tasks import TaskConfig, TaskData, sample_task

# The tasks as the fast recipe trains on them: long sequences drawn more often, P(n) ~ n^2 (every
# batch is padded to its longest row anyway); held-out sets are drawn with uniform lengths.
FAST_LENGTH_POWER = 2.0
COPY_TASK = TaskConfig("copy", num_symbols=10, min_len=3, max_len=10,
                       length_power=FAST_LENGTH_POWER)
REVERSE_TASK = TaskConfig("reverse", num_symbols=10, min_len=3, max_len=8,  # shorter: quicker
                          length_power=FAST_LENGTH_POWER)
SORT_TASK = TaskConfig("sort", num_symbols=10, min_len=3, max_len=10,  # chapter 6's exercise
                       length_power=FAST_LENGTH_POWER)
HELD_OUT_SIZE = 1000  # distinct held-out sequences, never drawn for training
HELD_OUT_SEEDS = {"copy": 1234, "reverse": 4321, "sort": 2468}
VALIDATION_SIZE = 500  # held-out sequences checked during training: they decide when it stops
TEST_SIZE = 1000  # held-out sequences only reported on, after training
LONGER_SEEDS = {"copy": 5678, "reverse": 8765, "sort": 8642}  # sequences longer than trained on

FAST_TRAINING = TrainConfig(
    steps=800,  # budget; training stops at the first check with every held-out sequence right
    batch_size=128,
    warmup=60,
    lr_scale=1.15,  # peak rate 1.15 * 32^-0.5 * 60^-0.5, about 0.026
    betas=(0.7, 0.98),  # beta_1 0.7, not the paper's 0.9: less momentum, fewer steps
    eval_every=10,
)

PAPER_BETA_1 = ADAM_BETAS[0]  # Adam's beta_1 in the paper (section 5.3)
PAPER_DROPOUT = DROPOUT  # P_drop of the paper's base model (section 5.4)
# the paper's schedule peaks at (d_model * warmup)^-0.5 = (512 * 4000)^-0.5 (section 5.3)
PAPER_PEAK_LR = peak_lr(BASE_MODEL["d_model"], WARMUP_STEPS)
RECIPE_DEPARTURES = (  # FAST_TRAINING with one departure from the paper undone (chapter 6)
    Ablation("beta_1 = 0.9", "Adam's beta_1 as in the paper",
             train_changes={"betas": (PAPER_BETA_1, FAST_TRAINING.betas[1])}),
    Ablation("P_drop = 0.1", "dropout as in the paper's base model",
             model_changes={"dropout": PAPER_DROPOUT}),
    Ablation("uniform lengths", "training lengths drawn uniformly, like the held-out sets",
             task_changes={"length_power": 0.0}),
)

SEED_NOTEBOOK_TRAINING = TrainConfig(
    steps=400,  # 20 epochs x 20 batches
    batch_size=32,
    peak_lr=1e-3,  # plain Adam at a constant 1e-3, no schedule
    warmup=0,
    decay="constant",
    betas=(0.9, 0.999),  # PyTorch's Adam defaults
    adam_eps=1e-8,
    label_smoothing=0.0,
    eval_every=20,  # once per epoch
    stop_early=False,  # the recipe trains its full 20 epochs
)


def small_model(task: TaskConfig) -> TransformerConfig:
    """The fast recipe's model for ``task``: 1 + 1 layers of width 32, 2 heads, no dropout.

    Its ``max_len`` leaves room for sequences twice as long as the task's, so that the trained
    model can be tested on them (the sinusoids have no parameters: training is unchanged).
    """
    V = task.vocab_size
    return TransformerConfig(V, V, d_model=32, num_heads=2, num_encoder_layers=1,
                             num_decoder_layers=1, d_ff=64, dropout=0.0,
                             max_len=2 * task.max_len + 2)


def paper_peak(model_config: TransformerConfig, training: TrainConfig) -> TrainConfig:
    """``training`` with its schedule scaled to peak at the paper's rate, ``PAPER_PEAK_LR``."""
    scale = PAPER_PEAK_LR / peak_lr(model_config.d_model, training.warmup)
    return replace(training, lr_scale=scale)


def seed_notebook_model(task: TaskConfig) -> TransformerConfig:
    """The seed notebook's model for ``task``: 2 + 2 layers of width 64, 2 heads, dropout 0.1."""
    V = task.vocab_size
    return TransformerConfig(V, V, d_model=64, num_heads=2, num_encoder_layers=2,
                             num_decoder_layers=2, d_ff=128, dropout=0.1,
                             max_len=task.max_len + 2)


def seed_notebook_task(task: TaskConfig) -> TaskConfig:
    """``task`` as the seed notebook trained on it: lengths drawn uniformly."""
    return replace(task, length_power=0.0)


def held_out_set(task: TaskConfig, n: int = HELD_OUT_SIZE) -> TaskData:
    """``n`` distinct held-out pairs of ``task``, from the task's fixed held-out seed."""
    generator = torch.Generator().manual_seed(HELD_OUT_SEEDS[task.name])
    return sample_task(task, n, generator, unique=True)


def held_out_split(task: TaskConfig, validation: int = VALIDATION_SIZE,
                   test: int = TEST_SIZE) -> tuple[TaskData, TaskData]:
    """A validation set and a test set of ``task``: distinct pairs, none in both.

    The validation set decides when training stops; the test set is only reported on.
    """
    pairs = held_out_set(task, validation + test)
    return _rows(pairs, slice(0, validation)), _rows(pairs, slice(validation, None))


def longer_set(task: TaskConfig, max_len: int, n: int = HELD_OUT_SIZE) -> TaskData:
    """``n`` distinct pairs of ``task`` with lengths task.max_len + 1 .. ``max_len`` (uniform):
    longer than any sequence the training stream draws."""
    longer = replace(task, min_len=task.max_len + 1, max_len=max_len, length_power=0.0)
    generator = torch.Generator().manual_seed(LONGER_SEEDS[task.name])
    return sample_task(longer, n, generator, unique=True)


def _rows(data: TaskData, rows: slice) -> TaskData:
    return TaskData(data.src[rows], data.tgt[rows], data.lengths[rows])
