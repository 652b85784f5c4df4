"""Tests for transformer_course.model: configuration, structure, masks, counts, bad input."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.kv_cache import DecoderCache, decode_with_cache
from transformer_course.core.masks import (
    causal_mask,
    decoder_self_attention_mask,
    padding_mask_from_tokens,
)
from transformer_course.core.model import (
    DecoderLayer,
    EncoderLayer,
    Residual,
    Transformer,
    TransformerConfig,
    count_parameters,
)
from transformer_course.core.multihead import MultiHeadAttention
from transformer_course.experiments.ch8_real_sentences.models import DecoderOnly

SMALL = dict(d_model=16, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=24,
             max_len=12)


def small(src_vocab: int = 23, tgt_vocab: int = 29, **kw) -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab, tgt_vocab, **{**SMALL, "dropout": 0.0, **kw})
    return Transformer(config).double().eval()


@functools.cache
def shared_small() -> Transformer:
    """One default small model for the property tests, which only read it."""
    return small()


# ------------------------------------------------------------------------------ configuration


def test_config_is_frozen_and_final_norm_defaults_to_norm_first():
    config = TransformerConfig(10, 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 8
    assert not config.has_final_norm
    assert TransformerConfig(10, 10, norm_first=True).has_final_norm
    assert TransformerConfig(10, 10, final_norm=True).has_final_norm
    assert not TransformerConfig(10, 10, norm_first=True, final_norm=False).has_final_norm


# ---------------------------------------------------------------------------------- structure
@pytest.mark.parametrize("norm_first", [False, True])
def test_final_norm_present_exactly_when_configured(norm_first):
    model = small(norm_first=norm_first)
    final_norms = [m for m in (model.encoder_norm, model.decoder_norm)
                   if isinstance(m, torch.nn.LayerNorm)]
    assert len(final_norms) == (2 if norm_first else 0)
    assert len(model.encoder) == len(model.decoder) == 2
    assert all(isinstance(layer, EncoderLayer) for layer in model.encoder)
    assert all(isinstance(layer, DecoderLayer) for layer in model.decoder)
    residuals = [r for layer in (*model.encoder, *model.decoder) for r in layer.sublayers]
    assert len(residuals) == 2 * 2 + 2 * 3 and all(isinstance(r, Residual) for r in residuals)
    assert all(r.norm_first == norm_first for r in residuals)
    layer_norms = sum(isinstance(m, torch.nn.LayerNorm) for m in model.modules())
    assert layer_norms == len(residuals) + len(final_norms)
    # The stacks' outputs: the last layer's, through the final LayerNorm exactly when there is one.
    src = torch.randint(1, 23, (2, 5))
    x = model.src_embed(src)
    for layer in model.encoder:
        x = layer(x)
    expected = final_norms[0](x) if norm_first else x
    torch.testing.assert_close(model.encode(src), expected, rtol=0, atol=0)
    switched = small(norm_first=norm_first, final_norm=not norm_first)  # the switch overrides
    assert isinstance(switched.encoder_norm, torch.nn.LayerNorm) == (not norm_first)
    assert isinstance(switched.decoder_norm, torch.nn.LayerNorm) == (not norm_first)


def test_shared_weights_are_one_tensor_and_stay_shared_after_a_step():
    model = small(src_vocab=29, tgt_vocab=29)
    weight = model.tgt_embed.token.weight
    assert model.output_projection.weight is weight
    assert model.src_embed.token.weight is weight
    src = torch.randint(1, 29, (2, 5))
    model(src, src).pow(2).mean().backward()
    with torch.no_grad():  # one plain gradient step, in place
        for p in model.parameters():
            p -= 0.1 * p.grad
    assert model.output_projection.weight.data_ptr() == model.src_embed.token.weight.data_ptr()


def test_source_embedding_separate_when_vocabularies_differ():
    model = small(src_vocab=23, tgt_vocab=29)
    assert model.output_projection.weight is model.tgt_embed.token.weight
    assert model.src_embed.token.weight is not model.tgt_embed.token.weight


def test_no_sharing_when_switched_off():
    model = small(src_vocab=29, tgt_vocab=29, share_embeddings=False)
    weights = {id(model.output_projection.weight), id(model.src_embed.token.weight),
               id(model.tgt_embed.token.weight)}
    assert len(weights) == 3


def test_embeddings_are_scaled_by_sqrt_d_model():
    model = small(positional="none")
    ids = torch.tensor([[3, 0, 7]])
    expected = model.src_embed.token.weight[ids] * math.sqrt(16)
    torch.testing.assert_close(model.src_embed(ids), expected, rtol=0, atol=1e-12)


def test_xavier_init_bounds_and_zero_biases():
    model = small()
    w = model.encoder[0].feed_forward.linear1.weight  # (d_ff, d_model)
    bound = math.sqrt(6 / (16 + 24))
    assert w.abs().max() <= bound and w.abs().max() > 0.8 * bound
    assert torch.count_nonzero(model.encoder[0].self_attn.w_q.bias) == 0


# ---------------------------------------------------------------------------- parameter count
def hand_count(V_src: int, V_tgt: int, d: int, d_ff: int, n_enc: int, n_dec: int, *,
               shared: bool, final_norm: bool, learned_len: int = 0) -> int:
    attention = 4 * (d * d + d)
    ffn = d * d_ff + d_ff + d_ff * d + d
    norm = 2 * d
    encoder = n_enc * (attention + ffn + 2 * norm) + (norm if final_norm else 0)
    decoder = n_dec * (2 * attention + ffn + 3 * norm) + (norm if final_norm else 0)
    if shared:
        embeddings = V_tgt * d + (0 if V_src == V_tgt else V_src * d)
    else:
        embeddings = V_src * d + 2 * V_tgt * d
    return embeddings + encoder + decoder + 2 * learned_len * d


@pytest.mark.parametrize("vocabs", [(23, 29), (29, 29)])
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "none"])
def test_count_equals_hand_formula(vocabs, shared, norm_first, positional):
    model = small(*vocabs, share_embeddings=shared, norm_first=norm_first, positional=positional)
    expected = hand_count(*vocabs, 16, 24, 2, 2, shared=shared, final_norm=norm_first,
                          learned_len=12 if positional == "learned" else 0)
    assert count_parameters(model) == expected


def test_count_skips_frozen_parameters_and_rejects_non_modules():
    model = small()
    before = count_parameters(model)
    model.encoder[0].sublayers[0].norm.weight.requires_grad_(False)
    assert count_parameters(model) == before - 16
    with pytest.raises(TypeError, match=r"\bmodel\b"):
        count_parameters("a model")


@pytest.mark.parametrize(("sizes", "paper"), [
    (dict(), 65e6),
    (dict(d_model=1024, num_heads=16, d_ff=4096, dropout=0.3), 213e6),
])
def test_paper_base_and_big_counts_within_five_percent(sizes, paper):
    with torch.device("meta"):
        model = Transformer(TransformerConfig(37000, 37000, **sizes))
    assert abs(count_parameters(model) / paper - 1) < 0.05


# ------------------------------------------------------------------------------------- masks
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoding_through_a_cache_gives_the_logits_of_the_whole_prefix(norm_first):
    """Three positions, then one at a time, through one DecoderCache: the logits of one call
    over the whole prefix, with padded sources and a padded target's (B, T, T) mask."""
    model = small(norm_first=norm_first)
    g = torch.Generator().manual_seed(1)
    src, tgt = torch.randint(1, 23, (3, 6), generator=g), torch.randint(1, 29, (3, 8), generator=g)
    src[1, 4:] = 0
    tgt[2, 6:] = 0
    src_mask = padding_mask_from_tokens(src, 0)  # (B, 1, S)
    tgt_mask = decoder_self_attention_mask(tgt, 0)  # (B, T, T)
    memory = model.encode(src, src_mask)
    full = model.project(model.decode(tgt, memory, src_mask, tgt_mask))  # (B, T, V)
    cache = DecoderCache()
    steps = [model.project(decode_with_cache(model, tgt[:, :t], memory, src_mask,
                                            tgt_mask[:, :t, :t], cache))
             for t in (3, 4, 5, 6, 7, 8)]
    assert [s.shape[1] for s in steps] == [3, 1, 1, 1, 1, 1] and cache.length == 8
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(t=st.integers(0, 6), seed=st.integers(0, 2**16))
def test_decoder_output_at_t_ignores_later_target_tokens(t, seed):
    model = shared_small()
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 23, (2, 5), generator=g)
    tgt = torch.randint(1, 29, (2, 7), generator=g)
    changed = tgt.clone()
    changed[:, t + 1:] = torch.randint(1, 29, changed[:, t + 1:].shape, generator=g)
    memory = model.encode(src)
    a, b = model.decode(tgt, memory), model.decode(changed, memory)  # default mask: causal
    torch.testing.assert_close(a[:, : t + 1], b[:, : t + 1], rtol=0, atol=1e-12)
    explicit = model.decode(tgt, memory, tgt_mask=causal_mask(7)[None])  # (1, T, T)
    torch.testing.assert_close(a, explicit, rtol=0, atol=0)


def test_decoder_without_causal_mask_does_see_the_future():
    model = small()
    src, tgt = torch.randint(1, 23, (1, 5)), torch.randint(1, 29, (1, 6))
    changed = tgt.clone()
    changed[0, -1] = (tgt[0, -1] % 28) + 1
    memory = model.encode(src)
    everything = torch.ones(1, 6, 6, dtype=torch.bool)
    a, b = model.decode(tgt, memory, tgt_mask=everything), model.decode(changed, memory,
                                                                        tgt_mask=everything)
    assert (a[0, 0] - b[0, 0]).abs().max() > 1e-6


@settings(max_examples=25, deadline=None)
@given(length=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_encoder_real_positions_ignore_padded_content(length, seed):
    model = shared_small()
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 23, (1, 8), generator=g)
    src[0, length:] = 0
    other = src.clone()
    other[0, length:] = torch.randint(1, 23, (8 - length,), generator=g)  # content, not pad
    mask = padding_mask_from_tokens(src, 0)  # the same mask for both
    a, b = model.encode(src, mask), model.encode(other, mask)
    torch.testing.assert_close(a[0, :length], b[0, :length], rtol=0, atol=1e-12)
    tgt = torch.randint(1, 29, (1, 4), generator=g)
    torch.testing.assert_close(model(src, tgt, mask), model(other, tgt, mask), rtol=0,
                               atol=1e-12)


def test_encoder_without_positions_is_permutation_equivariant():
    model = small(positional="none")
    src = torch.randint(1, 23, (2, 6))
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    torch.testing.assert_close(model.encode(src)[:, perm], model.encode(src[:, perm]),
                               rtol=0, atol=1e-12)
    with_positions = small()
    assert (with_positions.encode(src)[:, perm] - with_positions.encode(src[:, perm])).abs().max() \
        > 1e-3


# ------------------------------------------------------------------------- attention and modes
def test_attention_maps_shapes_rows_and_masks():
    model = small(num_encoder_layers=3)
    src = torch.randint(1, 23, (2, 5))
    src[1, 3:] = 0
    tgt = torch.randint(1, 29, (2, 4))
    src_mask = padding_mask_from_tokens(src, 0)
    maps = model.attention_maps(src, tgt, src_mask, decoder_self_attention_mask(tgt, 0))
    assert [tuple(m.shape) for m in maps["encoder"]] == [(2, 4, 5, 5)] * 3
    assert [tuple(m.shape) for m in maps["decoder_self"]] == [(2, 4, 4, 4)] * 2
    assert [tuple(m.shape) for m in maps["cross"]] == [(2, 4, 4, 5)] * 2
    for weights in (*maps["encoder"], *maps["decoder_self"], *maps["cross"]):
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1],
                                                                dtype=weights.dtype))
    assert maps["encoder"][0][1, :, :, 3:].abs().max() == 0  # padded keys get no weight
    assert maps["cross"][1][1, :, :, 3:].abs().max() == 0
    assert maps["decoder_self"][0][..., 0, 1:].abs().max() == 0  # causal: row 0 sees only 0


def test_attention_maps_path_gives_the_same_output_as_forward():
    # attention_maps records the weights with hooks that switch every attention to the explicit
    # path (need_weights=True); the model's output on that pass must equal a plain forward's,
    # and the hooks must be gone afterwards.
    model = small()
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    seen: list[torch.Tensor] = []
    handle = model.register_forward_hook(lambda _module, _args, output: seen.append(output))
    try:
        maps = model.attention_maps(src, tgt)
    finally:
        handle.remove()
    assert len(seen) == 1 and len(maps["encoder"]) == 2
    torch.testing.assert_close(seen[0], model(src, tgt), rtol=0, atol=1e-12)
    attention = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    assert len(attention) == 2 + 2 * 2
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in attention)
    _, first = model.encoder[0].self_attn(*[model.src_embed(src)] * 3, need_weights=True)
    torch.testing.assert_close(maps["encoder"][0], first, rtol=0, atol=0)


def test_dropout_active_in_training_only():
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(23, 29, **SMALL, dropout=0.3))
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    assert (model(src, tgt) - model(src, tgt)).abs().max() > 1e-4
    model.eval()
    torch.testing.assert_close(model(src, tgt), model(src, tgt), rtol=0, atol=0)


def test_every_parameter_gets_a_gradient():
    model = small(positional="learned")
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    model(src, tgt).logsumexp(-1).mean().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.any()]
    assert missing == []


def test_unscaled_attention_switch_changes_the_output():
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    a, b = small(), small(scaled_attention=False)  # same seed, same weights
    assert a.encoder[0].self_attn.scale == 1 / math.sqrt(16 // 4)
    assert b.encoder[0].self_attn.scale == 1.0
    assert (a(src, tgt) - b(src, tgt)).abs().max() > 1e-6


def test_the_decoder_alone_reads_every_layer_switch_from_its_config():
    """DecoderOnly's layers come from the config as the Transformer's do (it once dropped the
    scaling switch)."""
    config = TransformerConfig(29, 29, d_model=16, num_heads=4, num_decoder_layers=2, d_ff=32,
                               norm_first=True, scaled_attention=False, layer_norm_eps=1e-3)
    alone, pair = DecoderOnly(config), Transformer(config)
    for mine, theirs in zip(alone.layers, pair.encoder, strict=False):
        assert mine.self_attn.scale == theirs.self_attn.scale == 1.0
        assert [r.norm.eps for r in mine.sublayers] == [r.norm.eps for r in theirs.sublayers]
        assert [r.norm_first for r in mine.sublayers] == [True, True]
    assert alone.norm is not None and alone.norm.eps == pair.decoder_norm.eps == 1e-3


# ---------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [-1, 23])
def test_source_ids_outside_vocabulary(bad):
    model = small()
    src = torch.tensor([[1, 2, bad]])
    with pytest.raises(ValueError, match=r"\bsrc\b"):
        model.encode(src)


def test_target_ids_outside_vocabulary():
    model = small()
    memory = model.encode(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match=r"\btgt\b"):
        model.decode(torch.tensor([[1, 29]]), memory)
    with pytest.raises(ValueError, match=r"\btgt\b"):
        model(torch.tensor([[1, 2]]), torch.tensor([[-2, 1]]))


def test_sequences_longer_than_max_len():
    model = small()
    with pytest.raises(ValueError, match=r"\bsrc\b"):
        model.encode(torch.ones(1, 13, dtype=torch.long))
    memory = model.encode(torch.ones(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\btgt\b"):
        model.decode(torch.ones(1, 13, dtype=torch.long), memory)


@pytest.mark.parametrize("src", [torch.ones(2, 3), torch.ones(2, 3, 1, dtype=torch.long),
                                 torch.ones(2, 0, dtype=torch.long), [[1, 2]]])
def test_source_of_wrong_kind_shape_or_dtype(src):
    with pytest.raises((TypeError, ValueError), match=r"\bsrc\b"):
        small().encode(src)


SRC_MASK_3D = (r"src_mask must have 3 dimensions \(B=2, S=5, S=5\), each of size 1 or the full "
               r"size \(\(B, 1, S\) for padding\); got shape ")


def test_masks_of_wrong_shape_or_dtype():
    model = small()
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.encode(src, torch.ones(2, 1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.encode(src, torch.ones(2, 1, 1, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"\bsrc_mask\b"):
        model.encode(src, torch.ones(2, 1, 5))
    memory = model.encode(src)
    with pytest.raises(ValueError, match=r"\btgt_mask\b"):
        model.decode(tgt, memory, tgt_mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\btgt_mask\b"):
        model.decode(tgt, memory, tgt_mask=torch.ones(3, 4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.decode(tgt, memory, src_mask=torch.ones(2, 1, 4, dtype=torch.bool))


AMBIGUOUS = r"a mask with fewer dimensions is ambiguous: \(B, T_k\) or \(T_q, T_k\)\?"


def test_two_dimensional_masks_are_refused_everywhere():
    # A 2-D mask could mean (B, S) padding or (T_q, T_k); the model refuses to guess.
    model = small()
    src, tgt = torch.randint(1, 23, (2, 5)), torch.randint(1, 29, (2, 4))
    memory = model.encode(src)
    padding = torch.ones(2, 5, dtype=torch.bool)  # (B, S)
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.encode(src, padding)
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.decode(tgt, memory, src_mask=padding)
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model(src, tgt, padding)
    with pytest.raises(ValueError, match=r"\btgt_mask\b"):
        model.decode(tgt, memory, tgt_mask=causal_mask(4))  # pass causal_mask(4)[None]
    with pytest.raises(ValueError, match=r"\btgt_mask\b"):
        model(src, tgt, tgt_mask=causal_mask(4))
    with pytest.raises(ValueError, match=r"\btgt_mask\b"):
        model.attention_maps(src, tgt, tgt_mask=causal_mask(4))


def test_square_padding_mask_with_batch_equal_to_length_is_refused_not_misread():
    # B == S == 5: a (B, S) padding mask has the shape of an (S, S) attention mask, which the
    # first edition broadcast as one and so applied row b of the padding to query b of every
    # sequence. Now it is refused, and the 3-D form (B, 1, S) gives the padding's meaning.
    model = small()
    g = torch.Generator().manual_seed(1)
    src = torch.randint(1, 23, (5, 5), generator=g)
    for b in range(5):
        src[b, 5 - b:] = 0  # row b has 5 - b real tokens
    src[4, 1] = 3  # every row keeps at least one
    padding = src != 0  # (B, S) = (5, 5)
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model.encode(src, padding)
    tgt = torch.randint(1, 29, (5, 4), generator=g)
    with pytest.raises(ValueError, match=r"\bsrc_mask\b"):
        model(src, tgt, padding)
    right = model.encode(src, padding[:, None])  # (B, 1, S)
    torch.testing.assert_close(right, model.encode(src, padding_mask_from_tokens(src, 0)),
                               rtol=0, atol=0)
    misread = model.encode(src, padding[None])  # (1, S, S): the old, wrong reading
    assert (right - misread).abs().max() > 1e-6
    for b in range(5):  # the right reading: real positions ignore the padded content
        other = src.clone()
        other[b, padding[b].logical_not()] = 7
        changed = model.encode(other, padding[:, None])
        n = int(padding[b].sum())
        torch.testing.assert_close(changed[b, :n], right[b, :n], rtol=0, atol=1e-12)


def test_memory_and_hidden_of_wrong_shape():
    model = small()
    tgt = torch.randint(1, 29, (2, 4))
    with pytest.raises(ValueError, match=r"\b(memory|tgt)\b"):
        model.decode(tgt, torch.zeros(3, 5, 16, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"\bmemory\b"):
        model.decode(tgt, torch.zeros(2, 5, 8, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"\bmemory\b"):
        model.decode(tgt, torch.zeros(2, 5, 16, dtype=torch.long))
