"""Tests for the synthetic tasks: hand-made targets, seeding, exclusion and bad input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID
from transformer_course.experiments.ch6_training.tasks import (
    NUM_SPECIAL,
    TASKS,
    TaskConfig,
    apply_task,
    length_probabilities,
    sample_task,
    sequence_keys,
)

SRC = torch.tensor([[3, 7, 5, 0], [9, 4, 0, 0], [6, 6, 8, 3]])
LENGTHS = torch.tensor([3, 2, 4])


def test_special_tokens_are_distinct_and_below_symbols():
    assert len({PAD_ID, BOS_ID, EOS_ID}) == 3
    assert max(PAD_ID, BOS_ID, EOS_ID) < NUM_SPECIAL
    assert TaskConfig(num_symbols=7).vocab_size == NUM_SPECIAL + 7


def test_apply_task_by_hand():
    assert apply_task("copy", SRC, LENGTHS).tolist() == SRC.tolist()
    assert apply_task("reverse", SRC, LENGTHS).tolist() == [[5, 7, 3, 0], [4, 9, 0, 0],
                                                            [3, 8, 6, 6]]
    assert apply_task("sort", SRC, LENGTHS).tolist() == [[3, 5, 7, 0], [4, 9, 0, 0],
                                                         [3, 6, 6, 8]]


def test_length_probabilities_follow_the_power():
    config = TaskConfig(min_len=3, max_len=10)
    n = torch.arange(3, 11, dtype=torch.float64)
    for power in (0, 1, 2, 0.5):
        p = length_probabilities(config, power)
        assert p.shape == (8,) and abs(p.sum().item() - 1) < 1e-12
        assert torch.allclose(p / p[0], (n / 3) ** power)  # P(n) / P(3) = (n / 3) ** power
    uniform = torch.full((8,), 1 / 8, dtype=torch.float64)
    assert torch.allclose(length_probabilities(config), uniform)


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_drawn_lengths_match_their_probabilities(power):
    config = TaskConfig(min_len=3, max_len=10)
    n_draws = 20_000
    data = sample_task(config, n_draws, torch.Generator().manual_seed(0), length_power=power)
    counts = torch.bincount(data.lengths - 3, minlength=8).double()
    expected = n_draws * length_probabilities(config, power)
    # Each count is binomial: allow 5 standard deviations (a wrong power misses by far more).
    tolerance = 5 * (expected * (1 - expected / n_draws)).sqrt()
    assert ((counts - expected).abs() < tolerance).all(), (counts, expected)
    uniform = sample_task(config, n_draws, torch.Generator().manual_seed(0))
    assert data.lengths.double().mean() > uniform.lengths.double().mean() + 0.5


def test_length_power_zero_is_the_uniform_draw():
    config = TaskConfig("reverse", min_len=2, max_len=9)
    a = sample_task(config, 64, torch.Generator().manual_seed(5))
    b = sample_task(config, 64, torch.Generator().manual_seed(5), length_power=0.0)
    assert torch.equal(a.src, b.src) and torch.equal(a.lengths, b.lengths)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(TASKS))
def test_sampled_pairs_are_well_formed(seed, name):
    config = TaskConfig(name, num_symbols=6, min_len=2, max_len=7)
    data = sample_task(config, 20, torch.Generator().manual_seed(seed))
    assert data.src.shape == data.tgt.shape == (20, 7)
    assert ((data.lengths >= 2) & (data.lengths <= 7)).all()
    real = torch.arange(7)[None, :] < data.lengths[:, None]
    for tokens in (data.src, data.tgt):
        assert (tokens[~real] == PAD_ID).all()
        assert ((tokens[real] >= NUM_SPECIAL) & (tokens[real] < config.vocab_size)).all()
    for s, t, n in zip(data.src, data.tgt, data.lengths.tolist(), strict=True):
        s, t = s[:n].tolist(), t[:n].tolist()
        expected = {"copy": s, "reverse": s[::-1], "sort": sorted(s)}[name]
        assert t == expected


def test_sampling_is_a_function_of_the_seed_only():
    config = TaskConfig("reverse")
    torch.manual_seed(1)
    a = sample_task(config, 50, torch.Generator().manual_seed(3))
    torch.manual_seed(2)  # the global state must not matter
    b = sample_task(config, 50, torch.Generator().manual_seed(3))
    c = sample_task(config, 50, torch.Generator().manual_seed(4))
    assert torch.equal(a.src, b.src) and torch.equal(a.tgt, b.tgt)
    assert not torch.equal(a.src, c.src)


def test_unique_and_exclude():
    config = TaskConfig("copy", num_symbols=3, min_len=1, max_len=2)  # 3 + 9 = 12 sequences
    held = sample_task(config, 12, torch.Generator().manual_seed(0), unique=True)
    keys = sequence_keys(held.src, config.vocab_size)
    assert len(set(keys.tolist())) == 12
    part = keys[:6]
    train = sample_task(config, 300, torch.Generator().manual_seed(1), exclude=part)
    train_keys = set(sequence_keys(train.src, config.vocab_size).tolist())
    assert not train_keys & set(part.tolist())
    assert train_keys == set(keys[6:].tolist())  # everything else does occur


@settings(max_examples=30, deadline=None)
@given(a=st.lists(st.integers(3, 9), min_size=1, max_size=5),
       b=st.lists(st.integers(3, 9), min_size=1, max_size=5))
def test_sequence_keys_are_exact(a, b):
    rows = torch.zeros(2, 5, dtype=torch.long)
    rows[0, : len(a)] = torch.tensor(a)
    rows[1, : len(b)] = torch.tensor(b)
    keys = sequence_keys(rows, 10)
    assert (keys[0] == keys[1]).item() == (a == b)


def test_refusals_where_a_wrong_value_would_not_fail():
    # an unknown task name would be sorted, a unique draw of too many pairs would never end,
    # and keys past 2**63 would overflow and collide
    with pytest.raises(ValueError, match="name"):
        TaskConfig("shuffle")
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match=r"\bn\b"):
        sample_task(TaskConfig(num_symbols=3, min_len=1, max_len=2), 13, g, unique=True)
    with pytest.raises(ValueError, match="vocab_size"):
        sequence_keys(torch.zeros(1, 40, dtype=torch.long), 10)
