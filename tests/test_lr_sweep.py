"""Tests for experiments.ch2_scaled_dot_product_attention.lr_sweep."""

from dataclasses import replace

import pandas as pd

from transformer_course.experiments.ch2_scaled_dot_product_attention import lr_sweep
from transformer_course.experiments.ch2_scaled_dot_product_attention.score_functions import (
    TRAINING,
    ScoreComparisonConfig,
)

TINY = ScoreComparisonConfig(widths=(4, 8), num_seeds=2, eval_size=16,
                             training=replace(TRAINING, steps=5, batch_size=4))


def test_a_cell_rerun_equals_its_rows_in_the_sweep():
    config = replace(TINY, widths=(8,), scores=("dot-product", "additive"))
    sweep = lr_sweep.run_sweep(config, learning_rates=(1e-3, 1e-2))
    assert len(sweep) == 2 * 2 * config.num_seeds
    cell = lr_sweep.sweep_cell("dot-product", 8, 1e-2, config)
    rows = sweep.query("score == 'dot-product' and d_k == 8 and lr == 1e-2")
    assert cell.equals(rows.reset_index(drop=True))


def test_best_of_sweep_takes_each_functions_own_best_median():
    rows = [{"d_k": 8, "score": score, "lr": lr, "seed": seed, "accuracy": acc, "loss": 1.0}
            for score, accs in (("a", {1e-2: (0.2, 0.4, 0.9), 1e-1: (0.5, 0.6, 0.6)}),
                                ("b", {1e-2: (0.99, 0.995, 1.0), 1e-1: (0.1, 0.1, 0.1)}))
            for lr, values in accs.items() for seed, acc in enumerate(values)]
    best = lr_sweep.best_of_sweep(pd.DataFrame(rows)).set_index("score")
    assert best.loc["a", "best_lr"] == 1e-1 and best.loc["a", "median"] == 0.6
    assert (best.loc["a", "worst"], best.loc["a", "best"]) == (0.5, 0.6)
    assert best.loc["a", "median_at_1e-2"] == 0.4
    assert best.loc["b", "best_lr"] == 1e-2 and best.loc["b", "median"] == 0.995
    assert (best.loc["a", "rates_at_99"], best.loc["b", "rates_at_99"]) == (0, 1)


def test_reparametrised_unscaled_model_follows_the_scaled_one():
    config = replace(TINY, widths=(16,), training=replace(TINY.training, steps=8))
    pair = lr_sweep.adam_equivalence(16, 1e-2, config)
    gap = (pair["scaled"] - pair["unscaled, reparametrised"]).abs() / pair["scaled"]
    assert gap.max() < 1e-3 and pair["scaled"].iloc[-1] != pair["scaled"].iloc[0]


def test_the_stored_sweep_is_complete():
    sweep = lr_sweep.stored_sweep()
    config = lr_sweep.SWEEP
    cells = sweep.groupby(["score", "d_k", "lr"])["seed"].apply(sorted)
    assert len(cells) == len(config.scores) * len(config.widths) * len(lr_sweep.LEARNING_RATES)
    assert all(seeds == list(range(config.num_seeds)) for seeds in cells)
    assert set(sweep["lr"]) == set(lr_sweep.LEARNING_RATES)
    assert sweep["accuracy"].between(0, 1).all()


def test_the_stored_sweep_records_where_it_was_made():
    from transformer_course.stored import study

    record = study("ch2-lr-sweep")
    assert record.path == lr_sweep.SWEEP_PATH
    env = record.environment()
    assert env["recorded"] and env["threads"] == 1  # main() runs the sweep on one thread
    assert {"cpu", "cpu_capability", "torch", "numpy"} <= set(env)
