"""Tests for the chapter 5 check in transformer_course.exercises: the check accepts right and
rejects wrong code."""

from __future__ import annotations

import pytest

from transformer_course.exercises import (
    Passed,
    check_decoder_layer_parameters,
    check_encoder_layer_forward,
)


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


def decoder_parameters(d_model, d_ff):
    attention = 4 * (d_model * d_model + d_model)
    feed_forward = d_model * d_ff + d_ff + d_ff * d_model + d_model
    return 2 * attention + feed_forward + 3 * 2 * d_model


def test_decoder_count_by_formula_passes():
    result = check_decoder_layer_parameters(decoder_parameters)
    assert isinstance(result, Passed) and result.cases >= 5
    assert decoder_parameters(512, 2048) == 4_204_032  # the chapter's count by hand
    with pytest.raises(TypeError):
        check_decoder_layer_parameters(4_204_032)


@pytest.mark.parametrize("fn", [
    lambda d, f: decoder_parameters(d, f) - 3 * 2 * d,  # no LayerNorm
    lambda d, f: decoder_parameters(d, f) - 2 * 2 * d,  # two LayerNorms, as in an encoder layer
    lambda d, f: decoder_parameters(d, f) - 4 * (d * d + d),  # one attention block
    lambda d, f: decoder_parameters(d, f) - 8 * d - f - d,  # no biases
    lambda d, f: decoder_parameters(d, d),  # d_ff ignored
])
def test_wrong_decoder_counts_fail(fn):
    with pytest.raises(AssertionError):
        check_decoder_layer_parameters(fn)
