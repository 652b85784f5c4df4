"""Tests for greedy and beam-search decoding: hand-built distributions, width 1, the KV cache."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.decoding import (
    beam_search,
    greedy_decode,
    length_penalty,
    model_step_function,
    sequence_log_prob,
)
from transformer_course.core.masks import padding_mask_from_tokens
from transformer_course.core.model import Transformer, TransformerConfig

PAD, BOS, EOS, A, B_ = 0, 1, 2, 3, 4
V = 5


def table_step(table: dict[tuple[int, ...], dict[int, float]]):
    """A step function whose next-token probabilities depend only on the prefix."""

    def step(prefix: torch.Tensor, source_index: torch.Tensor) -> torch.Tensor:
        out = torch.full((prefix.shape[0], V), 1e-9)
        for i, row in enumerate(prefix.tolist()):
            for token, p in table.get(tuple(row), {EOS: 1.0}).items():
                out[i, token] = p
        return (out / out.sum(dim=1, keepdim=True)).log()

    return step


# Greedy takes A (0.6) and ends with probability 0.6 * 0.4 * 1 = 0.24;
# B then EOS has probability 0.4 * 0.9 = 0.36.
TRAP = table_step({
    (BOS,): {A: 0.6, B_: 0.4},
    (BOS, A): {A: 0.4, B_: 0.3, EOS: 0.3},
    (BOS, B_): {EOS: 0.9, A: 0.05, B_: 0.05},
})
SRC = torch.zeros(1, 1, dtype=torch.long)


def test_beam_search_beats_greedy_where_greedy_is_wrong():
    greedy = greedy_decode(TRAP, SRC, 6, BOS, EOS)
    beam, score = beam_search(TRAP, SRC, 6, BOS, EOS, beam_size=2, return_scores=True)
    assert greedy.tolist() == [[BOS, A, A, EOS]]
    assert beam.tolist() == [[BOS, B_, EOS]]
    greedy_lp = sequence_log_prob(TRAP, SRC, greedy, EOS)
    beam_lp = sequence_log_prob(TRAP, SRC, beam, EOS)
    assert greedy_lp.item() == pytest.approx(math.log(0.24), abs=1e-5)
    assert beam_lp.item() == pytest.approx(math.log(0.36), abs=1e-5)
    assert score.item() == pytest.approx(beam_lp.item(), abs=1e-5)


def test_beam_width_one_on_the_trap_is_greedy():
    greedy = greedy_decode(TRAP, SRC, 6, BOS, EOS)
    assert torch.equal(beam_search(TRAP, SRC, 6, BOS, EOS, beam_size=1), greedy)


def test_length_penalty_prefers_longer_hypotheses():
    # Short: EOS at once (0.5). Long: A, A, EOS with probability 0.45 * 1 * 1.
    table = table_step({(BOS,): {EOS: 0.5, A: 0.45, B_: 0.05}, (BOS, A): {A: 1.0},
                        (BOS, A, A): {EOS: 1.0}})
    assert beam_search(table, SRC, 6, BOS, EOS, beam_size=3).tolist() == [[BOS, EOS]]
    long = beam_search(table, SRC, 6, BOS, EOS, beam_size=3, alpha=1.0)
    assert long.tolist() == [[BOS, A, A, EOS]]  # log 0.45 / (8/6) > log 0.5 / 1
    assert length_penalty(1, 0.6) == pytest.approx(1.0)


def test_unfinished_rows_are_truncated_at_max_len():
    loop = table_step({(BOS,): {A: 1.0}, (BOS, A): {A: 1.0}, (BOS, A, A): {A: 1.0}})
    assert greedy_decode(loop, SRC, 3, BOS, EOS).tolist() == [[BOS, A, A]]
    assert beam_search(loop, SRC, 3, BOS, EOS, beam_size=2).tolist() == [[BOS, A, A]]


def small_model(seed: int):
    torch.manual_seed(seed)
    config = TransformerConfig(9, 9, d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
    return Transformer(config).eval()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000))
def test_beam_width_one_equals_greedy_on_random_models(seed):
    model = small_model(seed)
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 9, (4, 5), generator=g)
    src[1, 3:] = 0  # padding
    greedy = greedy_decode(model, src, 8, BOS, EOS)
    beam = beam_search(model, src, 8, BOS, EOS, beam_size=1)
    assert torch.equal(greedy, beam)
    wide, score = beam_search(model, src, 8, BOS, EOS, beam_size=3, return_scores=True)
    assert torch.allclose(score, sequence_log_prob(model, src, wide, EOS), atol=1e-4)
    assert (wide[:, 0] == BOS).all()


def test_outputs_are_padded_after_eos():
    model = small_model(0)
    src = torch.randint(3, 9, (6, 4), generator=torch.Generator().manual_seed(1))
    for out in (greedy_decode(model, src, 10, BOS, EOS),
                beam_search(model, src, 10, BOS, EOS, beam_size=2)):
        for row in out.tolist():
            if EOS in row:
                assert all(t == PAD for t in row[row.index(EOS) + 1 :])


def test_model_step_function_and_log_prob_match_a_forward_pass():
    model = small_model(3)
    src = torch.tensor([[3, 4, 5, 0], [6, 7, 0, 0]])
    mask = padding_mask_from_tokens(src, 0)
    tokens = torch.tensor([[BOS, 5, 6, EOS], [BOS, 7, EOS, PAD]])
    step = model_step_function(model, src, mask)
    logits = model(src, tokens, mask)  # (B, T, V)
    log_probs = torch.log_softmax(logits, dim=-1)
    assert torch.allclose(step(tokens[:, :2], torch.arange(2)), log_probs[:, 1], atol=1e-5)
    expected = torch.stack([log_probs[0, [0, 1, 2], [5, 6, EOS]].sum(),
                            log_probs[1, [0, 1], [7, EOS]].sum()])
    assert torch.allclose(sequence_log_prob(model, src, tokens, EOS), expected, atol=1e-5)


# Greedy decoding against one-sequence-at-a-time decoding (from the chapter 5 branch).


@pytest.fixture(scope="module")
def model16():
    torch.manual_seed(3)
    config = TransformerConfig(20, 20, d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=2, d_ff=32, max_len=12)
    return Transformer(config).double().eval()


def slow_greedy(model, src_row: torch.Tensor, max_len: int, eos: int) -> list[int]:
    """One sequence at a time, the full forward pass per step, stopping at EOS."""
    src_row = src_row[None, src_row != 0]  # drop the padding altogether
    out = [BOS]
    while len(out) < max_len and out[-1] != eos:
        logits = model(src_row, torch.tensor([out]))
        logits[0, -1, 0] = float("-inf")  # the decoders never choose padding (id 0)
        out.append(int(logits[0, -1].argmax()))
    return out


def test_batched_greedy_equals_one_by_one_decoding(model16):
    src = torch.randint(3, 20, (4, 7))
    src[1, 4:] = 0
    src[3, 2:] = 0
    out = greedy_decode(model16, src, 9, BOS, EOS)
    assert out.dtype == torch.long and out.shape[0] == 4 and out.shape[1] <= 9
    for b in range(4):
        expected = slow_greedy(model16, src[b], 9, EOS)
        got = out[b].tolist()
        assert got[: len(expected)] == expected
        assert all(t == 0 for t in got[len(expected):])  # pad after EOS


def test_stops_once_every_sequence_has_ended(model16):
    src = torch.randint(3, 20, (2, 5))
    first = greedy_decode(model16, src, 6, BOS, EOS)[:, 1]
    if first[0] != first[1]:  # make both sequences pick the same first token
        src = src[:1].repeat(2, 1)
        first = greedy_decode(model16, src, 6, BOS, EOS)[:, 1]
    out = greedy_decode(model16, src, 6, BOS, int(first[0]))  # that token now ends the sequence
    assert out.shape == (2, 2)
    assert out[:, 0].eq(BOS).all()


def test_a_row_that_has_ended_is_not_run_again():
    # row 0 ends at once, row 1 after two tokens, row 2 runs to max_len; each call is recorded
    ends_after = {0: 0, 1: 2, 2: 99}
    calls = []

    def step(prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        calls.append(rows.tolist())
        generated = prefix.shape[1] - 1  # tokens after BOS so far, the same in every row
        out = torch.full((len(rows), V), -10.0)
        for i, row in enumerate(rows.tolist()):
            out[i, EOS if generated >= ends_after[row] else A] = 0.0
        return out

    out = greedy_decode(step, torch.zeros(3, 1, dtype=torch.long), 6, BOS, EOS)
    assert out.tolist() == [[BOS, EOS, PAD, PAD, PAD, PAD],
                            [BOS, A, A, EOS, PAD, PAD],
                            [BOS, A, A, A, A, A]]
    assert calls == [[0, 1, 2], [1, 2], [1, 2], [2], [2]]


# The KV cache: the same outputs as re-running the decoder over the prefix.


@pytest.mark.parametrize(("seed", "norm_first"), [(1, True), (3, True), (4, False)])
def test_cached_decoding_gives_the_outputs_of_uncached_decoding(seed, norm_first):
    """Greedy and beam search (widths 2 and 4, with and without a length penalty) on a batch
    with padded sources, for three output lengths: the cache changes no token, and the scores
    only by float rounding."""
    torch.manual_seed(seed)
    config = TransformerConfig(12, 12, d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=2, d_ff=32, dropout=0.0, max_len=16,
                               norm_first=norm_first)
    model = Transformer(config).eval()
    src = torch.randint(3, 12, (4, 6), generator=torch.Generator().manual_seed(seed))
    src[1, 3:] = 0
    src[2, 5:] = 0
    lengths = set()
    for max_len in (3, 8, 16):
        greedy = greedy_decode(model, src, max_len, BOS, EOS)
        assert torch.equal(greedy, greedy_decode(model, src, max_len, BOS, EOS, use_cache=False))
        for beam_size, alpha in ((2, 0.0), (4, 0.6)):
            kw = dict(beam_size=beam_size, alpha=alpha, return_scores=True)
            cached, score = beam_search(model, src, max_len, BOS, EOS, **kw)
            uncached, expected = beam_search(model, src, max_len, BOS, EOS, use_cache=False, **kw)
            assert torch.equal(cached, uncached)
            torch.testing.assert_close(score, expected, rtol=0, atol=1e-5)
            lengths |= set((cached != PAD).sum(dim=1).tolist())
    assert len(lengths) >= 3  # outputs of several lengths, not all ended at once
