"""Our Transformer against torch.nn.Transformer with identical weights."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from transformer_course.core.masks import decoder_self_attention_mask, padding_mask_from_tokens
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.pytorch_parity import (
    load_from_torch_transformer,
    to_torch_transformer,
    torch_masks,
    torch_reference_outputs,
)

SIZES = dict(d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=3, d_ff=48,
             dropout=0.0, max_len=16)
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}



def batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    src = torch.randint(1, 40, (3, 9), generator=g)
    src[0, 6:] = 0  # padded sources
    src[2, 2:] = 0
    tgt = torch.randint(1, 40, (3, 7), generator=g)
    tgt[1, 5:] = 0  # a padded target
    return src, tgt


def ours(src: torch.Tensor, tgt: torch.Tensor, model) -> tuple[torch.Tensor, torch.Tensor]:
    src_mask = padding_mask_from_tokens(src, 0)  # (B, 1, S)
    memory = model.encode(src, src_mask)
    return memory, model.decode(tgt, memory, src_mask, decoder_self_attention_mask(tgt, 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("grad", [True, False], ids=["autograd", "no_grad"])
def test_equal_to_torch_transformer(dtype, norm_first, grad):
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(40, 40, norm_first=norm_first, **SIZES)).to(dtype)
    model.eval()
    ref = to_torch_transformer(model).eval()
    assert (ref.encoder.norm is None) == (not norm_first)
    src, tgt = batch()
    with torch.set_grad_enabled(grad):  # no_grad lets torch take its fused "fast path"
        memory, hidden = ours(src, tgt, model)
        ref_memory, ref_hidden = torch_reference_outputs(model, ref, src, tgt)
    assert (memory - ref_memory).abs().max() <= TOLERANCE[dtype]
    assert (hidden - ref_hidden).abs().max() <= TOLERANCE[dtype]
    assert hidden.abs().max() > 0.1  # not comparing zeros


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", [False, True])
def test_load_from_a_default_torch_transformer_needs_final_norm(norm_first):
    torch.manual_seed(0)
    ref = nn.Transformer(32, 4, 2, 3, 48, dropout=0.0, batch_first=True,
                         norm_first=norm_first).double().eval()
    model = Transformer(TransformerConfig(40, 40, norm_first=norm_first, final_norm=True,
                                          **SIZES)).double().eval()
    load_from_torch_transformer(model, ref)
    src, tgt = batch()
    memory, hidden = ours(src, tgt, model)
    ref_memory, ref_hidden = torch_reference_outputs(model, ref, src, tgt)
    assert (memory - ref_memory).abs().max() <= 1e-10
    assert (hidden - ref_hidden).abs().max() <= 1e-10
    plain = Transformer(TransformerConfig(40, 40, final_norm=False, norm_first=norm_first,
                                          **SIZES))
    with pytest.raises(ValueError, match=r"final_norm(?!\w)"):
        load_from_torch_transformer(plain, ref)


def test_a_changed_weight_breaks_the_match():
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(40, 40, **SIZES)).double().eval()
    ref = to_torch_transformer(model).eval()
    with torch.no_grad():
        model.decoder[2].cross_attn.w_v.weight[0, 0] += 0.5
    src, tgt = batch()
    _, hidden = ours(src, tgt, model)
    _, ref_hidden = torch_reference_outputs(model, ref, src, tgt)
    assert (hidden - ref_hidden).abs().max() > 1e-4


def test_round_trip_copies_every_stack_parameter():
    torch.manual_seed(0)
    first = Transformer(TransformerConfig(40, 40, norm_first=True, **SIZES))
    second = Transformer(TransformerConfig(40, 40, norm_first=True, **SIZES))
    load_from_torch_transformer(second, to_torch_transformer(first))
    for (name, a), (_, b) in zip(first.named_parameters(), second.named_parameters(),
                                 strict=True):
        if name.startswith(("encoder.", "decoder.")):
            torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)
    assert not torch.equal(first.tgt_embed.token.weight, second.tgt_embed.token.weight)


def test_torch_masks_use_the_blocked_convention():
    src, tgt = batch()
    masks = torch_masks(src, tgt, 0)
    assert torch.equal(masks["src_key_padding_mask"], src == 0)
    assert torch.equal(masks["tgt_mask"], torch.ones(7, 7, dtype=torch.bool).triu(1))
    assert torch.equal(~masks["tgt_key_padding_mask"], padding_mask_from_tokens(tgt, 0)[:, 0])


def test_mismatched_or_wrong_objects_are_rejected():
    model = Transformer(TransformerConfig(40, 40, **SIZES))
    other = nn.Transformer(32, 4, 2, 3, 64, batch_first=True)
    with pytest.raises(ValueError, match=r"d_ff(?!\w)"):
        load_from_torch_transformer(model, other)
    other = nn.Transformer(32, 2, 2, 3, 48, batch_first=True)
    with pytest.raises(ValueError, match=r"num_heads(?!\w)"):
        load_from_torch_transformer(model, other)
    gelu = nn.Transformer(32, 4, 2, 3, 48, activation="gelu", batch_first=True)
    with pytest.raises(ValueError, match=r"ReLU(?!\w)"):
        load_from_torch_transformer(
            Transformer(TransformerConfig(40, 40, final_norm=True, **SIZES)), gelu)
    with pytest.raises(TypeError, match=r"\bmodel\b"):
        to_torch_transformer(nn.Linear(2, 2))
    with pytest.raises(TypeError, match=r"\bref\b"):
        load_from_torch_transformer(model, nn.Linear(2, 2))
    with pytest.raises(TypeError, match=r"\bsrc\b"):
        torch_masks([[1]], torch.ones(1, 1), 0)
    with pytest.raises(ValueError, match=r"\bsrc\b"):
        torch_reference_outputs(model, to_torch_transformer(model), torch.tensor([[40]]),
                                torch.tensor([[1]]))
