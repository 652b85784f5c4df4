"""Tests for experiments.ch7_translation.masking: hiding one English word over a whole test set,
against hiding another word of the same number."""

import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_course import Transformer
from transformer_course.core.batching import PAD_ID
from transformer_course.experiments.ch7_translation import (
    masking,
)


@pytest.mark.parametrize(("after", "only_first"), [
    (["sechs", "und", "vier", "zig"], True),  # replaced
    (["und", "vier", "zig"], True),  # dropped
    (["sechs", "hundert", "und", "vier", "zig"], True),  # replaced by two
    (["fünf", "und", "drei", "zig"], False),  # a later morpheme changed, the first kept
    (["sechs", "und", "drei", "zig"], False),  # the first and a later one changed
    (["fünf", "und", "vier", "zig"], False),  # nothing changed
    ([], False),  # everything dropped
])
def test_only_a_changed_first_morpheme_with_the_rest_kept_counts(after, only_first):
    before = ["fünf", "und", "vier", "zig"]
    assert masking.only_first_changed(before, after) is only_first
    assert masking.first_changed(before, after) is (after[:1] != before[:1])
    if only_first:  # only the first changed implies the first changed
        assert masking.first_changed(before, after)


@given(words=st.integers(2, 12), attended=st.integers(0, 13), seed=st.integers(0, 10**6))
def test_the_control_word_is_another_word_of_the_number(words, attended, seed):
    attended = min(attended, words + 1)  # <s> is 0, </s> is words + 1
    control = masking._other_word(words, attended, random.Random(seed))
    assert 1 <= control <= words and control != attended


def test_a_decoder_that_cannot_read_the_source_changes_nothing_when_a_word_is_hidden(untrained_ch7):
    model, chapter = untrained_ch7
    deaf = Transformer(model.config).eval()
    deaf.load_state_dict(model.state_dict())
    with torch.no_grad():
        for layer in deaf.decoder:  # cross-attention adds nothing to the residual stream
            layer.cross_attn.w_o.weight.zero_()
            if layer.cross_attn.w_o.bias is not None:
                layer.cross_attn.w_o.bias.zero_()
    shares = masking.masking_shares(deaf, chapter)
    words = (chapter.pairs["test"].src != PAD_ID).sum(dim=1)  # (B,) English tokens
    assert shares.numbers == int((words >= 2).sum())  # a number of one word has no control
    assert shares.changed == shares.only_first == shares.control == 0.0


def test_a_decoder_that_reads_the_source_can_change_when_a_word_is_hidden(untrained_ch7):
    model, chapter = untrained_ch7
    shares = masking.masking_shares(model, chapter)
    assert 0 < shares.numbers <= len(chapter.texts["test"].source)
    assert 0.0 <= shares.only_first <= shares.changed <= 1.0
    # an untrained model's first token still reads the source: some output moves either way
    assert shares.changed + shares.control > 0
