"""The training chapters' pipelines give the same numbers in two fresh processes.

Chapters 6 and 7 are re-executed in full by ``make bench`` only (a minute or more each, against
``make test``'s budget of 150 s); this is the part of that check that fits in ``make test``. Each
process has its own string hashing (PYTHONHASHSEED differs), as two kernels do, so anything that
leans on the order of a set or a dict built from strings (vocabularies, subword merges, groupings)
shows up here, at the size of a unit test: chapter 7's data split, morphemes and BPE, encoding and
a short training run with its validation checks and greedy translations; chapter 6's task sampling
and an ablation table.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

RUN = textwrap.dedent("""\
    from dataclasses import replace

    import torch
    from transformer_course.core.model import TransformerConfig
    from transformer_course.core.training import TrainConfig
    from transformer_course.experiments.ch6_training.ablations import (
        DEFAULT_ABLATIONS, run_ablations)
    from transformer_course.experiments.ch6_training.tasks import TaskConfig, sample_task
    from transformer_course.experiments.ch7_translation import (
        number_corpus, pipeline, recipe, subwords, translate)
    from transformer_course.notebook import setup_notebook

    setup_notebook()
    split = number_corpus.split_numbers(train=800, validation=60, test=60, seed=3)
    train = number_corpus.make_corpus(split.train)
    pipe = pipeline.build_pipeline(train)
    bpe = pipeline.build_pipeline(train, 60)
    print("vocab", pipe.source_vocab.tokens, pipe.target_vocab.tokens)
    print("bpe", bpe.target_vocab.tokens)
    validation = pipe.encode(number_corpus.make_corpus(split.validation_shapes))
    config = recipe.model_config(len(pipe.source_vocab), len(pipe.target_vocab), d_model=16,
                                 num_heads=2, d_ff=32)
    training = replace(recipe.RECIPE, steps=20, warmup=5, batch_size=32, eval_every=10)
    model, result = recipe.train_translation(config, training, pipe.encode(train), validation)
    print("losses", list(result.losses))
    print("checks", [(e.metrics.loss, e.metrics.exact_match) for e in result.evaluations])
    test = pipe.encode(number_corpus.make_corpus(split.test[:20]))
    print("greedy", translate.decode(model, pipe, test))

    task = TaskConfig("reverse", num_symbols=4, min_len=2, max_len=4)
    held_out = sample_task(task, 30, torch.Generator().manual_seed(7), unique=True)
    model_config = TransformerConfig(task.vocab_size, task.vocab_size, d_model=16, num_heads=2,
                                     num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                                     dropout=0.1, max_len=12)
    train_config = TrainConfig(steps=10, batch_size=16, warmup=5, eval_every=5)
    table = run_ablations(task, model_config, train_config, held_out, DEFAULT_ABLATIONS[:3],
                          seeds=(0, 1))
    print("ablations", table.drop(columns="seconds").to_csv())
    """)


def run_in_fresh_process(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_two_processes_with_different_string_hashing_print_the_same_numbers() -> None:
    first, second = run_in_fresh_process("1"), run_in_fresh_process("2")
    labels = [line.split(" ", 1)[0] for line in first.splitlines()]
    assert labels[:6] == ["vocab", "bpe", "losses", "checks", "greedy", "ablations"], labels
    assert first == second, (hashlib.sha256(first.encode()).hexdigest(),
                             hashlib.sha256(second.encode()).hexdigest())
