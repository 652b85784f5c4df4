"""Tests for experiments.ch2_scaled_dot_product_attention.attention_stats (no timed assertions)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from transformer_course.experiments.ch2_scaled_dot_product_attention import attention_stats as stats


def test_dot_product_variance_matches_theory():
    table = stats.dot_product_variance([1, 16, 256], num_samples=20_000, seed=1)
    assert table["d_k"].tolist() == [1, 16, 256]
    # Relative standard error of the sample variance is below 2% here; allow 10%.
    np.testing.assert_allclose(table["var_unscaled"], table["d_k"], rtol=0.1)
    np.testing.assert_allclose(table["var_scaled"], 1.0, rtol=0.1)
    again = stats.dot_product_variance([1, 16, 256], num_samples=20_000, seed=1)
    assert again.equals(table)


def test_attention_entropy_limits_and_formula():
    uniform = torch.full((3, 8), 1 / 8, dtype=torch.float64)
    torch.testing.assert_close(stats.attention_entropy(uniform), torch.full((3,), math.log(8),
                                                                             dtype=torch.float64))
    one_hot = torch.eye(4)
    assert torch.all(stats.attention_entropy(one_hot) == 0)
    p = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    expected = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert stats.attention_entropy(p).item() == pytest.approx(expected, abs=1e-15)


def test_softmax_input_gradient_matches_closed_form():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 7, generator=gen, dtype=torch.float64) * 3
    g = torch.randn(5, 7, generator=gen, dtype=torch.float64)
    p = torch.softmax(logits, dim=-1)
    expected = p * (g - (p * g).sum(-1, keepdim=True))
    torch.testing.assert_close(stats.softmax_input_gradient(logits, g), expected, atol=1e-14,
                               rtol=0)
    assert not logits.requires_grad  # the input is left untouched
    saturated = torch.tensor([[100.0, 0.0, 0.0]], dtype=torch.float64)
    assert stats.softmax_input_gradient(saturated, torch.ones(1, 3, dtype=torch.float64)).abs() \
        .max() < 1e-40


def test_softmax_saturation_shows_the_effect_of_scaling():
    table = stats.softmax_saturation([1, 4, 256], T_k=32, num_queries=300, seed=0)
    assert len(table) == 6 and set(table["scaling"]) == {"scaled", "unscaled"}
    by = table.set_index(["d_k", "scaling"])
    # d_k = 1: scaling changes nothing.
    assert by.loc[(1, "scaled"), "entropy"] == by.loc[(1, "unscaled"), "entropy"]
    # d_k = 256: unscaled weights are nearly one-hot, scaled ones are not.
    assert by.loc[(256, "unscaled"), "entropy"] < 0.5 < 2.5 < by.loc[(256, "scaled"), "entropy"]
    assert by.loc[(256, "unscaled"), "max_weight"] > 0.8 > 0.3 > by.loc[(256, "scaled"),
                                                                        "max_weight"]
    assert by.loc[(256, "unscaled"), "grad_norm"] < by.loc[(256, "scaled"), "grad_norm"]
    assert (table["entropy"] <= math.log(32) + 1e-12).all()


def test_attention_memory_grows_quadratically():
    table = stats.attention_memory([256, 512, 1024], d_k=16, batch=2)
    assert table["weights_bytes"].tolist() == [2 * T * T * 4 for T in (256, 512, 1024)]
    assert (table["peak_bytes"] >= table["weights_bytes"]).all()
    assert 1.8 < stats.loglog_slope(table["T"], table["peak_bytes"]) < 2.2


def test_attention_time_returns_one_row_per_point_and_restores_threads():
    threads = torch.get_num_threads()
    samples = stats.attention_time_samples([8, 16], d_k=4, rounds=3, threads=1, clock="wall")
    assert torch.get_num_threads() == threads
    assert len(samples) == 3 * 2 * len(stats.TIMED_PATHS)
    assert sorted(samples["round"].unique()) == [0, 1, 2]
    table = stats.attention_time(samples)
    assert len(table) == 2 * len(stats.TIMED_PATHS)
    assert set(table["path"]) == set(stats.TIMED_PATHS)
    assert (table["seconds"] >= table["min_seconds"]).all() and (table["min_seconds"] >= 0).all()


def _samples(times: dict[int, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"round": r, "T": T, "path": "p", "seconds": t}
                         for T, ts in times.items() for r, t in enumerate(ts)])


def test_growth_exponent_pairs_rounds_and_takes_the_median():
    # quadratic in every round but one disturbed round; the per-round ratio is 4 in two of three
    samples = _samples({100: [1.0, 2.0, 1.0], 200: [4.0, 8.0, 40.0]})
    assert stats.growth_exponent(samples, "p", 100, 200) == pytest.approx(2.0)
    # a drift that slows both lengths alike in one round does not change the paired ratio
    drift = _samples({100: [1.0, 10.0, 1.0], 200: [2.0, 20.0, 2.0]})
    assert stats.growth_exponent(drift, "p", 100, 200) == pytest.approx(1.0)


def test_loglog_slope_recovers_the_exponent():
    x = np.array([2.0, 4.0, 8.0, 16.0])
    assert stats.loglog_slope(x, 3 * x**2) == pytest.approx(2.0, abs=1e-12)
    assert stats.loglog_slope(list(x), list(0.5 * x**-0.5)) == pytest.approx(-0.5, abs=1e-12)
