"""Tests for transformer_course.decoding.greedy_decode."""

from __future__ import annotations

import pytest
import torch

from transformer_course.decoding import greedy_decode
from transformer_course.model import TransformerConfig, build_model

BOS, EOS = 1, 2


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread; two threads on a busy 2-core machine crawl."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    config = TransformerConfig(20, 20, d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=2, d_ff=32, max_len=12)
    return build_model(config).double().eval()


def slow_greedy(model, src_row: torch.Tensor, max_len: int, eos: int) -> list[int]:
    """One sequence at a time, the full forward pass per step, stopping at EOS."""
    src_row = src_row[None, src_row != 0]  # drop the padding altogether
    out = [BOS]
    while len(out) < max_len and out[-1] != eos:
        logits = model(src_row, torch.tensor([out]))
        out.append(int(logits[0, -1].argmax()))
    return out


def test_batched_greedy_equals_one_by_one_decoding(model):
    src = torch.randint(3, 20, (4, 7))
    src[1, 4:] = 0
    src[3, 2:] = 0
    out = greedy_decode(model, src, 9, BOS, EOS)
    assert out.dtype == torch.long and out.shape[0] == 4 and out.shape[1] <= 9
    for b in range(4):
        expected = slow_greedy(model, src[b], 9, EOS)
        got = out[b].tolist()
        assert got[: len(expected)] == expected
        assert all(t == 0 for t in got[len(expected):])  # pad after EOS


def test_stops_once_every_sequence_has_ended(model):
    src = torch.randint(3, 20, (2, 5))
    first = greedy_decode(model, src, 6, BOS, EOS)[:, 1]
    if first[0] != first[1]:  # make both sequences pick the same first token
        src = src[:1].repeat(2, 1)
        first = greedy_decode(model, src, 6, BOS, EOS)[:, 1]
    out = greedy_decode(model, src, 6, BOS, int(first[0]))  # that token now ends the sequence
    assert out.shape == (2, 2)
    assert out[:, 0].eq(BOS).all()


def test_bad_arguments(model):
    src = torch.randint(3, 20, (2, 5))
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, src, 13, BOS, EOS)
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, src, 0, BOS, EOS)
    with pytest.raises(ValueError, match="bos_id"):
        greedy_decode(model, src, 5, 20, EOS)
    with pytest.raises(TypeError, match="eos_id"):
        greedy_decode(model, src, 5, BOS, 2.0)
    with pytest.raises(ValueError, match="src"):
        greedy_decode(model, src[0], 5, BOS, EOS)
    with pytest.raises(TypeError, match="model"):
        greedy_decode("not a model", src, 5, BOS, EOS)
