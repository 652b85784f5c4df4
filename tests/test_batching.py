"""Tests for batching: padding, shifted targets and masks on a hand-made batch; bad input."""

from __future__ import annotations

import torch

from transformer_course.core.batching import (
    Batch,
    make_batch,
    pad_sequences,
    shift_targets,
    trim_batch,
    wrap_sources,
)
from transformer_course.experiments.ch6_training.task_training import task_batches
from transformer_course.experiments.ch6_training.tasks import TaskConfig, sample_task, sequence_keys

T, F = True, False


def hand_batch() -> Batch:
    src = [torch.tensor([5, 6, 7]), torch.tensor([8])]
    tgt = [torch.tensor([7, 6, 5]), torch.tensor([8])]
    return make_batch(src, tgt)  # pad 0, bos 1, eos 2


def test_hand_made_batch():
    b = hand_batch()
    assert b.src.tolist() == [[1, 5, 6, 7, 2], [1, 8, 2, 0, 0]]  # wrapped in bos .. eos
    assert b.src_mask.tolist() == [[[T, T, T, T, T]], [[T, T, T, F, F]]]
    assert b.tgt_in.tolist() == [[1, 7, 6, 5], [1, 8, 0, 0]]
    assert b.tgt_out.tolist() == [[7, 6, 5, 2], [8, 2, 0, 0]]
    causal = [[T, F, F, F], [T, T, F, F], [T, T, T, F], [T, T, T, T]]
    padded = [[T, F, F, F], [T, T, F, F], [T, T, F, F], [T, T, F, F]]
    assert b.tgt_mask.tolist() == [causal, padded]
    assert b.num_tokens == 6 and len(b) == 2


def test_shifted_targets_are_labels_moved_by_one():
    g = torch.Generator().manual_seed(0)
    data = sample_task(TaskConfig("reverse", max_len=6), 40, g)
    tgt_in, tgt_out = shift_targets(data.tgt)
    for i, n in enumerate(data.lengths.tolist()):
        assert tgt_in[i, 1 : n + 1].tolist() == tgt_out[i, :n].tolist() == data.tgt[i, :n].tolist()
        assert tgt_in[i, 0] == 1 and tgt_out[i, n] == 2
        assert (tgt_in[i, n + 1 :] == 0).all() and (tgt_out[i, n + 1 :] == 0).all()


def test_padded_tensors_and_lists_give_the_same_batch():
    a = hand_batch()
    b = make_batch(torch.tensor([[5, 6, 7], [8, 0, 0]]), torch.tensor([[7, 6, 5], [8, 0, 0]]))
    for name in ("src", "src_mask", "tgt_in", "tgt_out", "tgt_mask"):
        assert torch.equal(getattr(a, name), getattr(b, name))


def test_pad_sequences_and_trim():
    out = pad_sequences([torch.tensor([3]), torch.tensor([4, 5])], pad_id=9, length=4)
    assert out.tolist() == [[3, 9, 9, 9], [4, 5, 9, 9]]
    wide = make_batch(torch.tensor([[5, 0, 0, 0]]), torch.tensor([[6, 0, 0, 0]]))
    trimmed = trim_batch(wide)
    assert trimmed.src.tolist() == [[1, 5, 2]] and trimmed.tgt_in.tolist() == [[1, 6]]
    assert trimmed.tgt_out.tolist() == [[6, 2]] and trimmed.tgt_mask.shape == (1, 2, 2)
    assert trimmed.src_mask.shape == (1, 1, 3)
    bare = trim_batch(make_batch(torch.tensor([[5, 0]]), torch.tensor([[6, 0]]),
                                 wrap_source=False))
    assert bare.src.tolist() == [[5]] and bare.src_mask.shape == (1, 1, 1)
    assert wrap_sources(torch.tensor([[4, 5, 0], [6, 0, 0]])).tolist() == [[1, 4, 5, 2, 0],
                                                                           [1, 6, 2, 0, 0]]


def test_task_batches_are_seeded_and_avoid_excluded():
    config = TaskConfig("copy", num_symbols=3, min_len=1, max_len=2)
    held = sample_task(config, 6, torch.Generator().manual_seed(0), unique=True)
    keys = sequence_keys(held.src, config.vocab_size)
    a = task_batches(config, 64, torch.Generator().manual_seed(5), exclude=keys)
    b = task_batches(config, 64, torch.Generator().manual_seed(5), exclude=keys)
    for _ in range(3):
        x, y = next(a), next(b)
        assert torch.equal(x.src, y.src) and torch.equal(x.tgt_out, y.tgt_out)
        inner = x.src[:, 1:].masked_fill(x.src[:, 1:] == 2, 0)  # unwrap: drop bos and eos
        padded = torch.nn.functional.pad(inner, (0, config.max_len - inner.shape[1]))
        assert not torch.isin(sequence_keys(padded, config.vocab_size), keys).any()

