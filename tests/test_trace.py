"""Tests for the shape trace by forward hooks (experiments.ch5_full_model.trace)."""

from __future__ import annotations

import pytest
import torch

from transformer_course.core.masks import decoder_self_attention_mask, padding_mask_from_tokens
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.experiments.ch5_full_model.trace import shape_trace


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = TransformerConfig(30, 35, d_model=16, num_heads=2, num_encoder_layers=2,
                               num_decoder_layers=1, d_ff=20, max_len=10)
    return Transformer(config).eval()


def inputs() -> tuple[torch.Tensor, ...]:
    src = torch.randint(1, 30, (3, 6))
    src[0, 4:] = 0
    tgt = torch.randint(1, 35, (3, 5))
    return src, tgt, padding_mask_from_tokens(src, 0), decoder_self_attention_mask(tgt, 0)


def test_every_module_is_traced_with_its_shapes(model):
    table = shape_trace(model, *inputs())
    names = {name for name, m in model.named_modules()
             if name and not isinstance(m, torch.nn.ModuleList)}
    assert set(table["module"]) == names
    by_name = table.set_index("module")
    assert by_name.loc["encoder.1.feed_forward.linear1", "output shape"] == "(3, 6, 20)"
    assert by_name.loc["decoder.0.cross_attn", "output shape"] == "(3, 5, 16), None"
    assert by_name.loc["output_projection", "output shape"] == "(3, 5, 35)"
    cross_in = by_name.loc["decoder.0.cross_attn", "input shapes"]
    assert cross_in == ("query=(3, 5, 16), key=(3, 6, 16), value=(3, 6, 16), "
                        "mask=(3, 1, 6)")
    assert by_name.loc["decoder.0", "input shapes"].endswith("tgt_mask=(3, 5, 5)")
    assert by_name.loc["encoder.0", "type"] == "EncoderLayer"
    assert by_name.loc["encoder.0.sublayers.1", "type"] == "Residual"
    assert by_name.loc["encoder.0.sublayers.1.norm", "type"] == "LayerNorm"
    assert "LayerNorm" not in set(by_name.loc[["encoder.1", "decoder.0"], "type"])
    assert by_name.loc["encoder.1.feed_forward.linear2", "input shapes"] == "(3, 6, 20)"
    assert by_name.loc["src_embed", "input shapes"] == "(3, 6)"


def test_rows_in_call_order_parents_first(model):
    table = shape_trace(model, *inputs())
    order = list(table["module"])
    assert order[0] == "src_embed" and order[-1] == "output_projection"
    assert "encoder" not in order and "decoder" not in order  # ModuleLists are never called
    for parent, child in (("encoder.0", "encoder.0.sublayers.0"),
                          ("encoder.0.sublayers.0", "encoder.0.self_attn"),
                          ("encoder.1.self_attn", "encoder.1.self_attn.w_q")):
        assert order.index(parent) < order.index(child)
    assert order.index("encoder.0") < order.index("encoder.1") < order.index("tgt_embed") \
        < order.index("decoder.0") < order.index("output_projection")


def test_max_depth_and_hooks_removed(model):
    # A layer of a stack ("encoder.1") is one level below the model, its parts two.
    table = shape_trace(model, *inputs(), max_depth=2)
    assert table["depth"].max() == 2
    assert {"encoder.1", "src_embed.token", "encoder.1.self_attn",
            "encoder.1.sublayers.0"} <= set(table["module"])
    assert "encoder.1.self_attn.w_q" not in set(table["module"])
    assert "encoder.1.sublayers.0.norm" not in set(table["module"])
    top = shape_trace(model, *inputs(), max_depth=1)
    children = {name for name, m in model.named_children()
                if not isinstance(m, torch.nn.ModuleList)}  # embeddings, final norms, output
    assert {"src_embed", "tgt_embed", "output_projection"} <= children
    assert set(top["module"]) == children | {"encoder.0", "encoder.1", "decoder.0"}
    for module in model.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks


def test_hooks_removed_after_a_failing_forward(model):
    src, tgt, *_ = inputs()
    with pytest.raises(ValueError, match="tgt"):
        shape_trace(model, src, tgt + 100)
    for module in model.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks
