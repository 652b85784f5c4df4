"""Tests for experiments.ch7_translation.opening_map: the stored map chapter 1 opens with, and
the comparison that lets chapter 7's build catch a stale file."""

import copy

import pytest
import torch

from transformer_course import Transformer
from transformer_course.experiments.ch7_translation import corpus, data, opening_map, recipe


def test_the_stored_map_is_a_distribution_over_the_source_per_target_token():
    stored = opening_map.stored()
    weights = torch.tensor(stored["weights"])
    assert weights.shape == (len(stored["target"]), len(stored["source"]))
    rounding = len(stored["source"]) * 0.5 * 10.0 ** -opening_map.DIGITS
    assert torch.allclose(weights.sum(dim=1), torch.ones(len(weights)), atol=rounding)
    assert stored["source"][0] == "<s>" and stored["source"][-1] == "</s>"
    assert stored["masked_word"] in stored["source"]


def test_differences_finds_a_moved_weight_and_a_changed_token():
    stored = opening_map.stored()
    assert opening_map.differences(stored, copy.deepcopy(stored)) == []
    close = copy.deepcopy(stored)
    close["weights"][0][0] += opening_map.TOLERANCE / 2
    assert opening_map.differences(close, stored) == []
    moved = copy.deepcopy(stored)
    moved["weights"][0][0] += 2 * opening_map.TOLERANCE
    assert len(opening_map.differences(moved, stored)) == 1
    renamed = copy.deepcopy(stored)
    renamed["masked_translation"] = "null"
    assert opening_map.differences(renamed, stored) == ["masked_translation"]


@pytest.fixture(scope="module")
def untrained():
    chapter = corpus.prepare(data.split_numbers(train=300, validation=30, test=30, seed=2))
    config = recipe.model_config(len(chapter.pipeline.source_vocab),
                                 len(chapter.pipeline.target_vocab))
    torch.manual_seed(0)
    return Transformer(config).eval(), chapter.pipeline


def test_opening_map_of_any_model_has_the_stored_form(untrained):
    model, pipeline = untrained
    fresh = opening_map.opening_map(model, pipeline, 45)
    assert fresh["source"] == ["<s>", "forty", "-", "five", "</s>"]
    assert fresh["target"][-1] == "</s>"
    assert len(fresh["weights"]) == len(fresh["target"])
    assert set(fresh) == set(opening_map.stored())
    # the masked word is the one the first target token attends to most
    first = fresh["weights"][0]
    assert fresh["masked_word"] == fresh["source"][first.index(max(first))]
