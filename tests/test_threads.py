"""Tests for experiments.ch1_why_attention.threads: per-thread CPU clocks and thread scaling."""

import os
import time

import pandas as pd
import pytest
import torch

from transformer_course.experiments.ch1_why_attention.threads import (
    LAYERS,
    ThreadConfig,
    measure_here,
    measure_thread_scaling,
    psutil_thread_cpu_seconds,
    summarise_threads,
    thread_cpu_seconds,
    time_with_thread_clocks,
)

TINY = ThreadConfig(length=8, d_model=8, num_heads=2, batch=2, rounds=3)


@pytest.mark.parametrize("clocks", [thread_cpu_seconds, psutil_thread_cpu_seconds],
                         ids=["kernel", "psutil"])  # psutil's: what Windows and macOS use
def test_thread_clocks_cover_this_thread_and_count_its_work(clocks):
    before = clocks()
    assert os.getpid() in before  # the main thread's id is the process id
    start = time.thread_time()
    while time.thread_time() - start < 0.2:  # busy for 200 ms of CPU (psutil: 10 ms ticks)
        pass
    used = clocks()[os.getpid()] - before[os.getpid()]
    assert 0.17 < used < 1.0


def test_a_sleeping_call_uses_wall_time_but_no_cpu_time():
    timing = time_with_thread_clocks(lambda: time.sleep(0.05))
    assert timing["wall_s"] >= 0.05
    assert timing["cpu_busiest_s"] < 0.02 and timing["cpu_total_s"] >= timing["cpu_busiest_s"]


def test_measure_here_rows_and_restores_threads():
    threads = torch.get_num_threads()
    raw = measure_here(TINY)
    assert torch.get_num_threads() == threads
    assert len(raw) == TINY.rounds * len(LAYERS) * len(TINY.threads)
    assert set(raw.layer) == set(LAYERS) and set(raw.threads) == set(TINY.threads)
    assert (raw.cpu_busiest_s <= raw.cpu_total_s + 1e-12).all() and (raw.wall_s > 0).all()


def _raw(rows):
    return pd.DataFrame([{"round": r, "layer": layer, "threads": t, "wall_s": wall,
                          "cpu_total_s": total, "cpu_busiest_s": busiest}
                         for r, layer, t, wall, total, busiest in rows])


def test_summary_speedups_by_hand():
    rows = []
    for r in range(3):  # one layer: 2 threads halve the busiest thread's CPU time
        rows += [(r, "a", 1, 1.0 + r, 1.0, 1.0), (r, "a", 2, (1.0 + r) / 4, 1.2, 0.5)]
    summary = summarise_threads(_raw(rows)).set_index("threads")
    assert summary.loc[1, "wall_speedup"] == 1.0 and summary.loc[1, "best_case_speedup"] == 1.0
    assert summary.loc[2, "wall_speedup"] == pytest.approx(4.0)  # paired by round
    assert summary.loc[2, "best_case_speedup"] == pytest.approx(2.0)
    assert summary.loc[2, "cpu_total_ms"] == pytest.approx(1200.0)


def test_fresh_process_runs_the_same_measurement():
    raw = measure_thread_scaling(TINY, fresh_process=True)
    assert set(raw.columns) >= {"round", "layer", "threads", "wall_s", "cpu_total_s",
                                "cpu_busiest_s"}
    assert len(raw) == TINY.rounds * len(LAYERS) * len(TINY.threads)


def test_in_process_needs_the_passive_wait_policy(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with pytest.raises(RuntimeError, match="OMP_WAIT_POLICY=PASSIVE"):
        measure_thread_scaling(TINY)
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert len(measure_thread_scaling(TINY)) == TINY.rounds * len(LAYERS) * 2
