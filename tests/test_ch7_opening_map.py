"""Tests for experiments.ch7_translation.opening_map: the stored map chapter 1 opens with, and
the reading that chapter 7's live model must share with it (not its weights, which move with the
CPU's kernels)."""

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


def test_disagreements_find_a_changed_reading_not_a_moved_weight():
    stored = opening_map.stored()
    assert opening_map.disagreements(stored, copy.deepcopy(stored)) == []
    # a weight that moves while the row's strongest column and its lead stay: the same reading
    moved = copy.deepcopy(stored)
    row = moved["weights"][0]
    top = row.index(max(row))
    second = sorted(row)[-2]
    shift = (row[top] - second - opening_map.LEAD) / 3
    row[top] -= shift
    row[(top + 1) % len(row)] += shift
    assert opening_map.disagreements(moved, stored) == []
    # the strongest column of a row it reads changes: a different reading
    swapped = copy.deepcopy(stored)
    for r in opening_map.READ_ROWS[1:2]:
        weights = swapped["weights"][r]
        first, second = sorted(range(len(weights)), key=weights.__getitem__)[-2:][::-1]
        weights[first], weights[second] = weights[second], weights[first]
    assert "strongest" in opening_map.disagreements(swapped, stored)
    # a lead too small to trust, in either map
    weak = copy.deepcopy(stored)
    weights = weak["weights"][0]
    top = weights.index(max(weights))
    runner = sorted(range(len(weights)), key=weights.__getitem__)[-2]
    middle = (weights[top] + weights[runner]) / 2
    weights[top], weights[runner] = middle + opening_map.LEAD / 4, middle - opening_map.LEAD / 4
    assert [d.split(" ")[0] for d in opening_map.disagreements(stored, weak)] == ["lead"]
    renamed = copy.deepcopy(stored)
    renamed["masked_translation"] = "null"
    assert opening_map.disagreements(renamed, stored) == ["masked_translation"]


def test_the_stored_map_reads_as_chapter_1_says():
    reading = opening_map.reading(opening_map.stored())
    assert reading["strongest"] == ["five", "-", "forty"]
    assert reading["translation"] == "fünfundvierzig" and reading["masked_word"] == "five"
    assert min(reading["lead"]) >= opening_map.LEAD


def test_the_stored_map_has_an_environment_record():
    from transformer_course.stored import study

    record = study("ch7-opening-map").environment()
    assert record["recorded"] is True and record["threads"] == 1


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
