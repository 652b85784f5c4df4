"""Property tests (hypothesis) for the invariants the core relies on.

Properties already tested with hypothesis elsewhere are not repeated here: attention rows summing
to one with masked weights exactly zero, causal attention and the decoder's causality,
permutation-equivariant self-attention, padded source content being ignored under its mask, the
schedule's peak at warm-up, the loss against its definition, beam width 1 against greedy
decoding, and the masks built from lengths and tokens (see test_attention, test_multihead,
test_model, test_training, test_decoding, test_masks).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    beam_search,
    combine_masks,
    greedy_decode,
    label_smoothed_loss,
    length_penalty,
    loss_floor,
    make_batch,
    noam_lr,
    pad_sequences,
    padding_mask_from_tokens,
    peak_lr,
    scaled_dot_product_attention,
    scaled_dot_product_attention_numpy,
    shift_targets,
    smoothed_targets,
    softmax,
    trim_batch,
    wrap_sources,
)

PROPERTY = settings(max_examples=60, deadline=None)
SLOW = settings(max_examples=25, deadline=None)  # each example runs a model
SEEDS = st.integers(0, 2**16)
V = 9  # vocabulary of the small models: 0 pad, 1 bos, 2 eos, 3.. symbols


@functools.cache
def model(positional: str = "sinusoidal", norm_first: bool = False) -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(V, V, d_model=8, num_heads=2, num_encoder_layers=2,
                               num_decoder_layers=2, d_ff=16, dropout=0.0, max_len=16,
                               positional=positional, norm_first=norm_first)
    return Transformer(config).double().eval()


MODELS = st.builds(model, st.sampled_from(["sinusoidal", "learned", "none"]), st.booleans())


def symbols(g: torch.Generator, *shape: int) -> torch.Tensor:
    """Random real tokens (never pad, bos or eos)."""
    return torch.randint(3, V, shape, generator=g)


def random_mask(g: torch.Generator, shape: tuple[int, ...], p: float = 0.6) -> torch.Tensor:
    return torch.rand(shape, generator=g) < p


def broadcast_shape(draw_ones: list[bool], full: tuple[int, ...]) -> tuple[int, ...]:
    """``full`` with the dimensions flagged in ``draw_ones`` set to 1."""
    return tuple(1 if one else size for one, size in zip(draw_ones, full, strict=True))


# ------------------------------------------------------------------------------ attention


@PROPERTY
@given(lead=st.lists(st.integers(1, 3), min_size=1, max_size=2), T_q=st.integers(1, 6),
       T_k=st.integers(1, 6), d_k=st.integers(1, 5), d_v=st.integers(1, 4),
       ones=st.lists(st.booleans(), min_size=4, max_size=4), masked=st.booleans(), seed=SEEDS)
def test_numpy_explicit_and_fused_attention_agree(lead, T_q, T_k, d_k, d_v, ones, masked, seed):
    """The three paths give the same output (float64), for any broadcastable mask, fully masked
    rows included (zero output there)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, T_q, d_k, generator=g, dtype=torch.float64) * 3
    k = torch.randn(*lead, T_k, d_k, generator=g, dtype=torch.float64) * 3
    v = torch.randn(*lead, T_k, d_v, generator=g, dtype=torch.float64)
    full = (*lead, T_q, T_k)
    mask = random_mask(g, broadcast_shape(ones[-len(full):], full)) if masked else None
    explicit, weights = scaled_dot_product_attention(q, k, v, mask)
    fused, none = scaled_dot_product_attention(q, k, v, mask, need_weights=False)
    numpy_out, numpy_weights = scaled_dot_product_attention_numpy(
        q.numpy(), k.numpy(), v.numpy(), None if mask is None else mask.numpy())
    assert none is None
    torch.testing.assert_close(fused, explicit, atol=1e-10, rtol=0)
    np.testing.assert_allclose(numpy_out, explicit.numpy(), atol=1e-10, rtol=0)
    np.testing.assert_allclose(numpy_weights, weights.numpy(), atol=1e-12, rtol=0)
    if mask is not None:
        empty = ~mask.expand(full).any(-1)  # queries with nothing to attend to
        assert torch.all(explicit[empty] == 0) and torch.all(fused[empty] == 0)


@PROPERTY
@given(B=st.integers(1, 3), T_q=st.integers(1, 5), T_k=st.integers(1, 5),
       row=st.integers(0, 4), bad=st.sampled_from([math.nan, math.inf, -math.inf]),
       masked=st.booleans(), seed=SEEDS)
def test_non_finite_query_gives_nan_row_on_every_path(B, T_q, T_k, row, bad, masked, seed):
    """NaN in is NaN out: a non-finite query gives a NaN output row on the NumPy, explicit and
    fused paths, even where the mask leaves it nothing to attend to; the other rows stay finite."""
    row = row % T_q
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, n, 4, generator=g, dtype=torch.float64) for n in (T_q, T_k, T_k))
    q[:, row, seed % 4] = bad
    mask = random_mask(g, (B, T_q, T_k)) if masked else None
    outs = [scaled_dot_product_attention(q, k, v, mask, need_weights=w)[0] for w in (True, False)]
    outs.append(torch.from_numpy(scaled_dot_product_attention_numpy(
        q.numpy(), k.numpy(), v.numpy(), None if mask is None else mask.numpy())[0]))
    for out in outs:
        assert out[:, row].isnan().all()
        assert torch.cat([out[:, :row], out[:, row + 1:]], dim=1).isfinite().all()


@PROPERTY
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), shift=st.floats(-50, 50),
       seed=SEEDS)
def test_softmax_is_shift_invariant_and_keeps_nan(shape, shift, seed):
    x = np.random.default_rng(seed).standard_normal(shape) * 10
    p = softmax(x)
    np.testing.assert_allclose(softmax(x + shift), p, atol=1e-12)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    assert np.all(p >= 0)
    x.flat[0] = np.nan  # NaN in, NaN out: never a finite row of zeros
    assert np.isnan(softmax(x).reshape(-1, shape[-1])[0]).all()


@PROPERTY
@given(B=st.integers(1, 3), T_q=st.integers(1, 5), T_k=st.integers(1, 6),
       h=st.sampled_from([1, 2, 4]), ones=st.lists(st.booleans(), min_size=3, max_size=3),
       seed=SEEDS)
def test_multi_head_fused_and_explicit_paths_agree(B, T_q, T_k, h, ones, seed):
    torch.manual_seed(seed)
    module = MultiHeadAttention(8, h).double()
    x, memory = torch.randn(B, T_q, 8).double(), torch.randn(B, T_k, 8).double()
    mask = torch.rand(broadcast_shape(ones, (B, T_q, T_k))) < 0.6
    fused, _ = module(x, memory, memory, mask)
    explicit, weights = module(x, memory, memory, mask, need_weights=True)
    torch.testing.assert_close(fused, explicit, atol=1e-12, rtol=0)
    assert weights.shape == (B, h, T_q, T_k)


@PROPERTY
@given(B=st.integers(1, 3), T_q=st.integers(1, 5), T_k=st.integers(2, 6), seed=SEEDS,
       need_weights=st.booleans())
def test_cross_attention_ignores_the_order_of_the_keys(B, T_q, T_k, seed, need_weights):
    """Permuting the memory (keys and values together, and the mask's key axis) leaves the output
    unchanged: attention sees a set of keys."""
    torch.manual_seed(seed)
    module = MultiHeadAttention(8, 2).double()
    x, memory = torch.randn(B, T_q, 8).double(), torch.randn(B, T_k, 8).double()
    mask = torch.rand(B, 1, T_k) < 0.7
    perm = torch.randperm(T_k)
    out, _ = module(x, memory, memory, mask, need_weights=need_weights)
    permuted, _ = module(x, memory[:, perm], memory[:, perm], mask[..., perm],
                         need_weights=need_weights)
    torch.testing.assert_close(permuted, out, atol=1e-12, rtol=0)


@PROPERTY
@given(shapes=st.lists(st.lists(st.integers(1, 3), min_size=1, max_size=3), min_size=1,
                       max_size=3), seed=SEEDS)
def test_combine_masks_is_a_broadcast_logical_and(shapes, seed):
    g = torch.Generator().manual_seed(seed)
    masks = [random_mask(g, tuple(s)) for s in shapes]
    try:
        expected = np.logical_and.reduce(np.broadcast_arrays(*(m.numpy() for m in masks)))
    except ValueError:
        return  # shapes that do not broadcast: a bad call, tested in test_bad_calls
    assert combine_masks(*masks, None).numpy().tolist() == np.asarray(expected).tolist()


# ------------------------------------------------------------------------------ the model


@SLOW
@given(m=MODELS, B=st.integers(1, 3), S=st.integers(1, 6), extra=st.integers(1, 4),
       T=st.integers(1, 5), seed=SEEDS)
def test_appending_padding_to_the_source_changes_nothing(m, B, S, extra, T, seed):
    """With its padding mask, a source with padding appended gives the same memory at the real
    positions, the same logits and the same greedy output."""
    g = torch.Generator().manual_seed(seed)
    src, tgt = symbols(g, B, S), symbols(g, B, T)
    padded = torch.cat([src, torch.full((B, extra), PAD_ID)], dim=1)
    mask, padded_mask = padding_mask_from_tokens(src, PAD_ID), padding_mask_from_tokens(padded,
                                                                                        PAD_ID)
    torch.testing.assert_close(m.encode(padded, padded_mask)[:, :S], m.encode(src, mask),
                               atol=1e-12, rtol=0)
    torch.testing.assert_close(m(padded, tgt, padded_mask), m(src, tgt, mask), atol=1e-12, rtol=0)
    assert torch.equal(greedy_decode(m, padded, 6, BOS_ID, EOS_ID),
                       greedy_decode(m, src, 6, BOS_ID, EOS_ID))


@SLOW
@given(m=MODELS, lengths=st.lists(st.integers(1, 6), min_size=2, max_size=4),
       T=st.integers(1, 5), seed=SEEDS)
def test_each_row_of_a_batch_is_computed_alone(m, lengths, T, seed):
    """A row's logits and decoded outputs do not depend on the other rows of its batch."""
    g = torch.Generator().manual_seed(seed)
    src = pad_sequences([symbols(g, n) for n in lengths])
    tgt = symbols(g, len(lengths), T)
    mask = padding_mask_from_tokens(src, PAD_ID)
    logits = m(src, tgt, mask)
    greedy = greedy_decode(m, src, 7, BOS_ID, EOS_ID)
    beam2 = functools.partial(beam_search, beam_size=2)
    beam = beam2(m, src, 7, BOS_ID, EOS_ID)
    for b, n in enumerate(lengths):
        alone = src[b:b + 1, :n]
        torch.testing.assert_close(logits[b:b + 1], m(alone, tgt[b:b + 1]), atol=1e-12, rtol=0)
        for batched, decode in ((greedy, greedy_decode), (beam, beam2)):
            one = decode(m, alone, 7, BOS_ID, EOS_ID)[0].tolist()
            row = batched[b].tolist()
            assert row[:len(one)] == one and all(t == PAD_ID for t in row[len(one):])


# ------------------------------------------------------------------------------ batching

SEQUENCES = st.lists(st.lists(st.integers(3, 20), min_size=1, max_size=6), min_size=1, max_size=4)


@PROPERTY
@given(sequences=SEQUENCES, pad_id=st.integers(0, 2), extra=st.integers(0, 3))
def test_pad_sequences_keeps_every_sequence_and_pads_with_pad_id(sequences, pad_id, extra):
    longest = max(map(len, sequences))
    out = pad_sequences([torch.tensor(s) for s in sequences], pad_id, longest + extra or None)
    assert out.shape == (len(sequences), longest + extra) and out.dtype == torch.long
    for row, s in zip(out.tolist(), sequences, strict=True):
        assert row[:len(s)] == s and row[len(s):] == [pad_id] * (longest + extra - len(s))


@PROPERTY
@given(sequences=SEQUENCES)
def test_shift_targets_then_dropping_bos_and_eos_gives_back_the_input(sequences):
    tgt = pad_sequences([torch.tensor(s) for s in sequences])
    tgt_in, tgt_out = shift_targets(tgt)
    assert tgt_in.shape == tgt_out.shape == (tgt.shape[0], tgt.shape[1] + 1)
    for b, s in enumerate(sequences):
        n = len(s)
        assert tgt_in[b, 0] == BOS_ID and tgt_in[b, 1:n + 1].tolist() == s
        assert tgt_out[b, :n].tolist() == s and tgt_out[b, n] == EOS_ID
        assert (tgt_in[b, n + 1:] == PAD_ID).all() and (tgt_out[b, n + 1:] == PAD_ID).all()
        # teacher forcing: the label at t is the input at t + 1
        assert tgt_out[b, :n].tolist() == tgt_in[b, 1:n + 1].tolist()
    wrapped = wrap_sources(tgt)
    for b, s in enumerate(sequences):
        row = wrapped[b].tolist()
        assert row[0] == BOS_ID and row[1:len(s) + 1] == s and row[len(s) + 1] == EOS_ID
        assert all(t == PAD_ID for t in row[len(s) + 2:])


def symbol_tensors(sequences: list[list[int]]) -> list[torch.Tensor]:
    """Hypothesis's lists of ints in [3, 20] as tensors of the small models' symbols [3, V)."""
    return [(torch.tensor(s) - 3) % (V - 3) + 3 for s in sequences]


@SLOW
@given(m=MODELS, src=SEQUENCES, tgt=SEQUENCES, extra=st.integers(0, 3))
def test_make_batch_masks_and_trim_batch_changes_no_logit(m, src, tgt, extra):
    """make_batch's masks are the padding mask and the causal-and-padding mask; dropping the
    all-padding columns (trim_batch) leaves every logit that is kept, and the loss, as they were."""
    tgt = (tgt * len(src))[:len(src)]  # as many targets as sources
    longest_src, longest_tgt = max(map(len, src)), max(map(len, tgt))
    wide = make_batch(pad_sequences(symbol_tensors(src), length=longest_src + extra),
                      pad_sequences(symbol_tensors(tgt), length=longest_tgt + extra))
    assert torch.equal(wide.src_mask, (wide.src != PAD_ID)[:, None])
    T = wide.tgt_in.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    assert torch.equal(wide.tgt_mask, causal & (wide.tgt_in != PAD_ID)[:, None])
    trimmed = trim_batch(wide)
    assert trimmed.src.shape[1] == longest_src + 2 and trimmed.tgt_in.shape[1] == longest_tgt + 1
    full = m(wide.src, wide.tgt_in, wide.src_mask, wide.tgt_mask)
    cut = m(trimmed.src, trimmed.tgt_in, trimmed.src_mask, trimmed.tgt_mask)
    torch.testing.assert_close(cut, full[:, :cut.shape[1]], atol=1e-12, rtol=0)
    torch.testing.assert_close(label_smoothed_loss(cut, trimmed.tgt_out),
                               label_smoothed_loss(full, wide.tgt_out), atol=1e-12, rtol=0)


# ------------------------------------------------------------------------------ loss, schedule


@PROPERTY
@given(B=st.integers(1, 3), T=st.integers(1, 5), V_=st.integers(2, 12),
       eps=st.floats(0, 0.9), scale=st.floats(0.01, 100), seed=SEEDS)
def test_loss_is_never_below_its_floor(B, T, V_, eps, scale, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V_, generator=g, dtype=torch.float64) * scale
    labels = torch.randint(1, V_, (B, T), generator=g)
    labels[:, T // 2 + 1:] = 0  # some padding, never all of it
    loss = label_smoothed_loss(logits, labels, eps, pad_id=0).item()
    assert loss >= loss_floor(V_, eps) - 1e-9
    q = smoothed_targets(labels[labels != 0], V_, eps)
    torch.testing.assert_close(q.sum(-1), torch.ones(q.shape[0]), atol=1e-6, rtol=0)
    assert torch.equal(q.argmax(-1), labels[labels != 0])  # the label keeps the most mass


@PROPERTY
@given(step=st.integers(1, 100_000), d_model=st.integers(1, 1024), warmup=st.integers(1, 5000),
       scale=st.floats(1e-3, 10))
def test_the_peak_rate_is_the_largest_of_the_schedule(step, d_model, warmup, scale):
    """peak_lr bounds the whole schedule (not only its neighbours at step = warmup)."""
    rate = noam_lr(step, d_model, warmup, scale)
    assert 0 < rate <= peak_lr(d_model, warmup, scale) * (1 + 1e-12)


@PROPERTY
@given(n=st.integers(0, 200), alpha=st.one_of(st.just(0.0), st.floats(0.01, 3)))
def test_length_penalty_grows_with_length(n, alpha):
    """lp is 1 at one token, grows with n for alpha > 0, and is 1 everywhere for alpha = 0."""
    assert length_penalty(n + 1, alpha) >= length_penalty(n, alpha)
    assert length_penalty(1, alpha) == 1.0 and length_penalty(n, 0.0) == 1.0
    if alpha > 0 and n > 1:
        assert length_penalty(n, alpha) > 1.0


# ------------------------------------------------------------------------------ decoding


def random_step(seed: int, vocab: int):
    """A deterministic step function: log-probabilities from the prefix's last token and
    length, so different rows and prefixes get different distributions."""
    g = torch.Generator().manual_seed(seed)
    by_token = torch.randn(vocab, vocab, generator=g) * 3
    by_length = torch.randn(32, vocab, generator=g) * 3

    def step(prefix: torch.Tensor, source_index: torch.Tensor) -> torch.Tensor:
        logits = by_token[prefix[:, -1]] + by_length[prefix.shape[1]] + source_index[:, None]
        return torch.log_softmax(logits, dim=-1)

    return step


def assert_decoder_format(out: torch.Tensor, max_len: int, bos: int, eos: int, pad: int) -> None:
    assert out.dtype == torch.long and out.shape[1] <= max_len
    assert (out[:, 0] == bos).all()
    assert (out[:, -1] != pad).any()  # no all-padding column at the right
    for row in out.tolist():
        assert row.count(eos) <= 1
        end = row.index(eos) + 1 if eos in row else len(row)
        assert pad not in row[:end]  # the decoders never choose padding
        assert all(t == pad for t in row[end:])


@PROPERTY
@given(seed=SEEDS, vocab=st.integers(4, 8), B=st.integers(1, 4), max_len=st.integers(2, 9),
       beam_size=st.integers(1, 4), alpha=st.sampled_from([0.0, 0.6, 1.0]),
       ids=st.permutations([0, 1, 2, 3]))
def test_decoders_output_bos_then_tokens_then_one_eos_then_padding(seed, vocab, B, max_len,
                                                                   beam_size, alpha, ids):
    bos, eos, pad = ids[:3]
    step = random_step(seed, vocab)
    src = torch.zeros(B, 1, dtype=torch.long)
    greedy = greedy_decode(step, src, max_len, bos, eos, pad_id=pad)
    beam = beam_search(step, src, max_len, bos, eos, beam_size=beam_size, alpha=alpha,
                       pad_id=pad)
    for out in (greedy, beam):
        assert_decoder_format(out, max_len, bos, eos, pad)


@SLOW
@given(m=MODELS, B=st.integers(1, 3), S=st.integers(1, 5), beam_size=st.integers(1, 3),
       seed=SEEDS)
def test_model_decoders_output_format(m, B, S, beam_size, seed):
    src = symbols(torch.Generator().manual_seed(seed), B, S)
    for out in (greedy_decode(m, src, 8, BOS_ID, EOS_ID),
                beam_search(m, src, 8, BOS_ID, EOS_ID, beam_size=beam_size, alpha=0.6)):
        assert_decoder_format(out, 8, BOS_ID, EOS_ID, PAD_ID)
