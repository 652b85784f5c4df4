"""Tests for experiments.ch7_translation.opening_map: the stored map chapter 1 opens with, and
how a map is read in words (chapter 7 shows its live map's reading beside the stored one's)."""

import copy

import pytest
import torch

from transformer_course.experiments.ch7_translation import (
    opening_map,
)


def test_the_stored_map_is_a_distribution_over_the_source_per_target_token():
    stored = opening_map.stored()
    weights = torch.tensor(stored["weights"])
    assert weights.shape == (len(stored["target"]), len(stored["source"]))
    rounding = len(stored["source"]) * 0.5 * 10.0 ** -opening_map.DIGITS
    assert torch.allclose(weights.sum(dim=1), torch.ones(len(weights)), atol=rounding)
    assert stored["source"][0] == "<s>" and stored["source"][-1] == "</s>"
    assert stored["masked_word"] in stored["source"]


def test_the_lead_as_read_falls_when_another_word_takes_a_row():
    stored = opening_map.stored()
    lead = opening_map.lead_as_read(stored)
    assert lead == pytest.approx(min(opening_map.reading(stored)["lead"]))  # read as chapter 1
    # another column takes the row of "vier": the lead turns negative
    swapped = copy.deepcopy(stored)
    weights = swapped["weights"][2]
    forty = stored["source"].index("forty")
    other = max((c for c in range(len(weights)) if c != forty), key=weights.__getitem__)
    weights[forty], weights[other] = weights[other], weights[forty]
    assert opening_map.lead_as_read(swapped) < 0
    assert opening_map.reading(swapped)["strongest"][2] != "forty"


def test_the_stored_map_reads_as_chapter_1_says():
    reading = opening_map.reading(opening_map.stored())
    assert reading["target"] == ["fünf", "und", "vier"]
    assert reading["strongest"] == list(opening_map.READ_AS)
    assert min(reading["lead"]) >= opening_map.LEAD


def test_the_stored_map_has_an_environment_record():
    from transformer_course.stored import study

    record = study("ch7-opening-map").environment()
    assert record["recorded"] is True and record["threads"] == 1


def test_opening_map_of_any_model_has_the_stored_form(untrained_ch7):
    model, chapter = untrained_ch7
    pipeline = chapter.pipeline
    fresh = opening_map.opening_map(model, pipeline, 45)
    assert fresh["source"] == ["<s>", "forty", "-", "five", "</s>"]
    assert fresh["target"][-1] == "</s>"
    assert len(fresh["weights"]) == len(fresh["target"])
    assert set(fresh) == set(opening_map.stored())
    # the masked word is the one the first target token attends to most
    first = fresh["weights"][0]
    assert fresh["masked_word"] == fresh["source"][first.index(max(first))]
