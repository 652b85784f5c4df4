"""Tests for the tied-embedding scale experiment: inputs and logits share one scale."""

from __future__ import annotations

import math

import pytest

from transformer_course.experiments.ch5_full_model.embedding_scale import (
    embedding_scale,
    embedding_scales,
)


def test_xavier_scale_follows_the_formula_and_the_logits_follow_the_inputs():
    row = embedding_scale(2000, 64, "xavier")
    assert row["embedding RMS"] == pytest.approx(math.sqrt(2 * 64 / (2000 + 64)), rel=0.02)
    assert row["logit std"] == pytest.approx(row["embedding RMS"], rel=0.1)
    assert row["encoding RMS"] == pytest.approx(math.sqrt(0.5), rel=1e-6)
    assert row["hidden RMS"] == pytest.approx(1.0, rel=0.01)  # post-norm: a LayerNorm output


def test_normal_initialisation_gives_unit_scale_at_any_vocabulary():
    for V, tolerance in ((50, 0.25), (5000, 0.05)):  # few rows: a noisier estimate
        row = embedding_scale(V, 64, "normal")
        assert row["embedding RMS"] == pytest.approx(1.0, rel=tolerance)
        assert row["logit std"] == pytest.approx(1.0, rel=tolerance)


def test_table_has_one_row_per_size_and_init_and_is_repeatable():
    table = embedding_scales([(20, 16), (40, 8)])
    assert list(zip(table["V"], table["init"], strict=True)) == [
        (20, "xavier"), (20, "normal"), (40, "xavier"), (40, "normal")]
    assert table.equals(embedding_scales([(20, 16), (40, 8)]))


def test_an_unknown_initialisation_is_refused():
    # any other name would silently measure the Xavier initialisation
    with pytest.raises(ValueError, match="init"):
        embedding_scale(10, 8, "uniform")
