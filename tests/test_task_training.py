"""Tests for chapter 6's decoding of held-out sets and its training stream
(experiments/ch6_training/task_training.py)."""

from __future__ import annotations

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, make_batch
from transformer_course.core.decoding import greedy_decode
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.core.training import TrainConfig
from transformer_course.experiments.ch6_training.task_training import (
    decode_and_score,
    output_limit,
    training_stream,
)
from transformer_course.experiments.ch6_training.tasks import TaskConfig, sample_task

TASK = TaskConfig("copy", num_symbols=4, min_len=2, max_len=4)


def _model(max_len: int) -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(TASK.vocab_size, TASK.vocab_size, d_model=16, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                               dropout=0.0, max_len=max_len)
    return Transformer(config).eval()


def test_the_output_limit_comes_from_the_sources_or_the_model():
    src = torch.tensor([[3, 4, 5], [3, 0, 0]])  # the longest: 3 symbols, 5 tokens with <s> </s>
    batch = make_batch(src, src)
    assert output_limit(_model(100), batch) == 5 + 50
    assert output_limit(_model(100), batch, extra=3) == 5 + 3
    assert output_limit(_model(20), batch) == 20


def test_decoding_never_reads_the_references():
    model = _model(60)
    src = torch.tensor([[3, 4, 5, 6], [4, 4, 0, 0]])
    long_refs, short_refs = make_batch(src, src), make_batch(src, src[:, :1])
    _, out_long = decode_and_score(model, long_refs)
    _, out_short = decode_and_score(model, short_refs)
    assert torch.equal(out_long, out_short)  # the references' length changes nothing
    expected = greedy_decode(model, long_refs.src, output_limit(model, long_refs), BOS_ID,
                             EOS_ID, src_mask=long_refs.src_mask)
    assert torch.equal(out_long, expected)
    _, beam = decode_and_score(model, long_refs, method="beam", beam_size=1)
    assert torch.equal(beam, expected)  # width 1 is greedy decoding


def test_the_training_stream_is_the_seeded_task_stream_without_the_held_out_pairs():
    held_out = sample_task(TASK, 30, torch.Generator().manual_seed(3), unique=True)
    config = TrainConfig(steps=5, batch_size=64, warmup=2, seed=4)
    stream = training_stream(TASK, config, [held_out])
    again = training_stream(TASK, config, [held_out])
    held = {tuple(t for t in row.tolist() if t > EOS_ID) for row in held_out.src}
    for _ in range(3):
        first, second = next(stream), next(again)
        assert torch.equal(first.src, second.src)  # seeded by the config
        drawn = {tuple(t for t in row.tolist() if t > EOS_ID) for row in first.src}
        assert drawn.isdisjoint(held)
