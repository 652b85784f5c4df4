"""Tests for the chapter 5 check in transformer_course.exercises: the check accepts right and
rejects wrong code."""

from __future__ import annotations

import pytest

from transformer_course.exercises import Passed, check_encoder_layer_forward


def post_norm(layer, x, mask):
    attention, feed_forward = layer.sublayers
    h = attention.norm(x + layer.self_attn(x, x, x, mask)[0])
    return feed_forward.norm(h + layer.feed_forward(h))


def pre_norm(layer, x, mask):
    attention, feed_forward = layer.sublayers
    y = attention.norm(x)
    h = x + layer.self_attn(y, y, y, mask)[0]
    return h + layer.feed_forward(feed_forward.norm(h))


def test_correct_forwards_pass():
    for fn, norm_first in ((post_norm, False), (pre_norm, True)):
        result = check_encoder_layer_forward(fn, norm_first=norm_first)
        assert isinstance(result, Passed) and result.cases == 1
        assert 0.0 <= result.largest_difference <= 1e-10


def test_wrong_forwards_fail():
    with pytest.raises(AssertionError, match=r"norm_first=True"):  # the case that failed
        check_encoder_layer_forward(post_norm, norm_first=True)

    def no_mask(layer, x, mask):
        return post_norm(layer, x, None)

    def swapped_norms(layer, x, mask):
        attention, feed_forward = layer.sublayers
        h = feed_forward.norm(x + layer.self_attn(x, x, x, mask)[0])
        return attention.norm(h + layer.feed_forward(h))

    for wrong in (no_mask, swapped_norms, pre_norm):
        with pytest.raises(AssertionError, match=r"norm_first=False"):
            check_encoder_layer_forward(wrong)
    with pytest.raises(AssertionError, match=r"\(3, 7, 16\)(.|\n)*\(3, 1, 16\)"):  # both shapes
        check_encoder_layer_forward(lambda layer, x, mask: x[:, :1])


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"\bfn\b"):
        check_encoder_layer_forward("post_norm")
    with pytest.raises(TypeError, match=r"\bnorm_first\b"):
        check_encoder_layer_forward(post_norm, norm_first="yes")
