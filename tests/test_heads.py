"""Tests for the cross-attention interventions of chapter 6 (experiments/ch6_training/heads.py)."""

from __future__ import annotations

import pytest
import torch

from transformer_course.core.batching import make_batch
from transformer_course.core.model import Transformer, TransformerConfig
from transformer_course.experiments.ch6_training.heads import anti_diagonal, diagonal, with_head

CONFIG = TransformerConfig(8, 8, d_model=16, num_heads=2, num_encoder_layers=1,
                           num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=12)


@pytest.fixture(scope="module")
def model_and_batch():
    torch.manual_seed(0)
    model = Transformer(CONFIG).eval()
    src = torch.tensor([[3, 4, 5, 6], [7, 3, 0, 0]])  # lengths 4 and 2
    return model, make_batch(src, src)


def _logits(model, batch, src=None):
    src = batch.src if src is None else src
    with torch.no_grad():
        return model(src, batch.tgt_in, batch.src_mask, batch.tgt_mask)


def test_ideal_patterns_point_where_they_say():
    mask = torch.tensor([[[True] * 6], [[True] * 4 + [False] * 2]])  # n = 4 and n = 2
    weights = anti_diagonal(mask, 5)  # (2, 5, 6)
    assert weights.shape == (2, 5, 6) and torch.all(weights.sum(-1) == 1)
    assert weights[0].argmax(-1).tolist() == [4, 3, 2, 1, 0]  # x_4 .. x_1, then <s>
    assert weights[1].argmax(-1).tolist() == [2, 1, 0, 0, 0]
    assert diagonal(mask, 5)[0].argmax(-1).tolist() == [1, 2, 3, 4, 5]
    assert diagonal(mask, 5)[1].argmax(-1).tolist() == [1, 2, 3, 3, 3]  # </s> at 3


def test_the_heads_own_weights_change_nothing_and_the_original_is_untouched(model_and_batch):
    model, batch = model_and_batch
    before = _logits(model, batch)
    maps = model.attention_maps(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    own = maps["cross"][-1][:, 1]  # (B, T, S): head 2's weights for this batch
    same = with_head(model, 1, lambda mask, T: own[:, :T])
    torch.testing.assert_close(_logits(same, batch), before)
    changed = with_head(model, 1, anti_diagonal)
    assert not torch.allclose(_logits(changed, batch), before)
    torch.testing.assert_close(_logits(model, batch), before)  # the original is not changed


def test_knocking_out_every_head_cuts_the_decoder_off_from_the_source(model_and_batch):
    model, batch = model_and_batch
    raw = torch.tensor([[6, 5, 4, 3], [5, 5, 0, 0]])  # same lengths, other symbols
    other = make_batch(raw, raw).src
    one_out = with_head(model, 0)
    assert not torch.allclose(_logits(one_out, batch), _logits(one_out, batch, other))
    both_out = with_head(one_out, 1)
    torch.testing.assert_close(_logits(both_out, batch), _logits(both_out, batch, other))


def test_bad_head_is_refused(model_and_batch):
    with pytest.raises(ValueError, match="head"):
        with_head(model_and_batch[0], 2)
