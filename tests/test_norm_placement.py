"""Tests for transformer_course.norm_placement: per-layer output RMS and gradient norms."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.experiments.ch5_full_model.norm_placement import (
    DepthConfig,
    gradient_growth,
    layer_profile,
)

SMALL = DepthConfig(num_layers=3, d_model=16, num_heads=2, d_ff=32, vocab_size=20, batch=3,
                    src_len=5, tgt_len=4, seed=7)


def rebuild(norm_first: bool, c: DepthConfig):
    """The model and batch layer_profile builds, constructed independently here."""
    torch.manual_seed(c.seed)
    model = Transformer(TransformerConfig(c.vocab_size, c.vocab_size, d_model=c.d_model,
                                          num_heads=c.num_heads, d_ff=c.d_ff, dropout=0.0,
                                          num_encoder_layers=c.num_layers,
                                          num_decoder_layers=c.num_layers,
                                          norm_first=norm_first))
    g = torch.Generator().manual_seed(c.seed + 1)
    src = torch.randint(1, c.vocab_size, (c.batch, c.src_len), generator=g)
    tgt = torch.randint(1, c.vocab_size, (c.batch, c.tgt_len + 1), generator=g)
    return model, src, tgt


@pytest.mark.parametrize("norm_first", [False, True])
def test_profile_matches_a_direct_computation(norm_first):
    profile = layer_profile(norm_first, SMALL).set_index(["stack", "layer"])
    model, src, tgt = rebuild(norm_first, SMALL)
    # Outputs: run the encoder layer by layer by hand.
    x = model.src_embed(src)
    for i, layer in enumerate(model.encoder, start=1):
        x = layer(x)
        rms = x.pow(2).mean().sqrt().item()
        assert profile.loc[("encoder", i), "hidden RMS"] == pytest.approx(rms, rel=1e-6)
    # Gradients: autograd.grad on each decoder layer's parameters.
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
    layers = list(model.decoder)
    grads = torch.autograd.grad(loss, [p for layer in layers for p in layer.parameters()])
    start = 0
    for i, layer in enumerate(layers, start=1):
        count = len(list(layer.parameters()))
        norm = torch.cat([g.flatten() for g in grads[start:start + count]]).norm().item()
        start += count
        assert profile.loc[("decoder", i), "gradient norm"] == pytest.approx(norm, rel=1e-5)


def test_rows_columns_and_order():
    profile = layer_profile(True, SMALL)
    assert list(profile.columns) == ["stack", "norm", "layer", "hidden RMS", "gradient norm"]
    assert list(profile["stack"]) == ["encoder"] * 3 + ["decoder"] * 3
    assert list(profile["layer"]) == [1, 2, 3] * 2
    assert set(profile["norm"]) == {"pre-norm"}
    assert (profile["gradient norm"] > 0).all()


def test_post_norm_layers_end_in_unit_rms():
    """A post-norm layer ends in a LayerNorm (unit weight, zero bias at initialisation)."""
    profile = layer_profile(False, SMALL)
    assert profile["hidden RMS"].to_numpy() == pytest.approx(1.0, abs=1e-3)
    pre = layer_profile(True, SMALL)
    assert not pre["hidden RMS"].to_numpy() == pytest.approx(1.0, abs=1e-3)


def test_deterministic_and_seeded():
    a, b = layer_profile(False, SMALL), layer_profile(False, SMALL)
    pd.testing.assert_frame_equal(a, b)
    other = layer_profile(False, dataclasses.replace(SMALL, seed=8))
    assert not a["gradient norm"].equals(other["gradient norm"])


def test_gradient_growth_on_a_constructed_profile():
    table = pd.DataFrame({"stack": ["encoder"] * 3 + ["decoder"] * 3,
                          "layer": [1, 2, 3] * 2,
                          "gradient norm": [1.0, 5.0, 3.0, 2.0, 4.0, 10.0]})
    assert gradient_growth(table) == 5.0
    assert gradient_growth(table, "encoder") == 3.0
