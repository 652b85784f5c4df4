"""Tests for transformer_course.model_exercises: the checks accept right and reject wrong code."""

from __future__ import annotations

import pytest

from transformer_course.exercises import check_encoder_layer_forward


def post_norm(layer, x, mask):
    h = layer.norm1(x + layer.self_attn(x, x, x, mask)[0])
    return layer.norm2(h + layer.feed_forward(h))


def pre_norm(layer, x, mask):
    y = layer.norm1(x)
    h = x + layer.self_attn(y, y, y, mask)[0]
    return h + layer.feed_forward(layer.norm2(h))


def test_correct_forwards_pass():
    assert check_encoder_layer_forward(post_norm) <= 1e-10
    assert check_encoder_layer_forward(pre_norm, norm_first=True) <= 1e-10


def test_wrong_forwards_fail():
    with pytest.raises(AssertionError, match="norm_first=True"):
        check_encoder_layer_forward(post_norm, norm_first=True)

    def no_mask(layer, x, mask):
        return post_norm(layer, x, None)

    def swapped_norms(layer, x, mask):
        h = layer.norm2(x + layer.self_attn(x, x, x, mask)[0])
        return layer.norm1(h + layer.feed_forward(h))

    for wrong in (no_mask, swapped_norms, pre_norm):
        with pytest.raises(AssertionError, match="differs"):
            check_encoder_layer_forward(wrong)
    with pytest.raises(AssertionError, match="shape"):
        check_encoder_layer_forward(lambda layer, x, mask: x[:, :1])


def test_bad_arguments():
    with pytest.raises(TypeError, match="fn"):
        check_encoder_layer_forward("post_norm")
    with pytest.raises(TypeError, match="norm_first"):
        check_encoder_layer_forward(post_norm, norm_first="yes")
