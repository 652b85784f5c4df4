"""Tests for ch1 complexity: Table 1 by counting FLOPs and sequential operations."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.core.attention import scaled_dot_product_attention
from transformer_course.experiments.ch1_why_attention.complexity import (
    PAPER_TABLE1,
    TABLE1_KINDS,
    TABLE1_NAMES,
    Table1Config,
    band_mask,
    count_flops,
    count_sequential_ops,
    count_table1,
    counting_device,
    flops_by_length,
    format_table1,
    graph_kind,
    layer_forward,
    paper_term,
    restricted_attention,
    time_forward_by_length,
)
from transformer_course.experiments.ch1_why_attention.paths import KINDS

# FLOPs by hand: 2 per multiply-add. Attention: Q K^T and A V, each n*n*d multiply-adds. nn.RNN:
# W_ih and W_hh, each d*d per position. Conv1d: k*d*d per position. Restricted: r keys per query.
HAND_FLOPS = {
    "self-attention": lambda B, n, d, k, r: 2 * 2 * B * n * n * d,
    "recurrent": lambda B, n, d, k, r: 2 * 2 * B * n * d * d,
    "LSTM": lambda B, n, d, k, r: 2 * 8 * B * n * d * d,  # four gates, each W_ih and W_hh
    "convolutional": lambda B, n, d, k, r: 2 * B * k * n * d * d,
    "dilated convolutional": lambda B, n, d, k, r: 2 * B * k * n * d * d,
    "restricted self-attention": lambda B, n, d, k, r: 2 * 2 * B * n * r * d,
}


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(TABLE1_KINDS), B=st.integers(1, 3), n=st.integers(1, 20),
       d=st.integers(1, 12), k=st.sampled_from([3, 5]), r=st.sampled_from([3, 5, 7]))
def test_counted_flops_match_hand_formulas(kind, B, n, d, k, r):
    fn = layer_forward(kind, n, d, kernel_size=k, neighbourhood=r, batch=B, device="cpu")
    assert count_flops(fn) == HAND_FLOPS[kind](B, n, d, k, r)


def test_counted_flops_on_meta_at_paper_sizes():
    for kind in TABLE1_KINDS:
        fn = layer_forward(kind, 64, 512, kernel_size=3, neighbourhood=9,
                           device=counting_device(kind))
        assert count_flops(fn) == HAND_FLOPS[kind](1, 64, 512, 3, 9)


def test_flops_by_length_matches_hand_formulas():
    d = 16
    table = flops_by_length([4, 32], d)
    assert set(table.columns) == {"length", "layer", "flops"} and len(table) == 10
    for n in (4, 32):
        rows = table[table.length == n].set_index("layer")["flops"]
        assert rows["self-attention (attention only)"] == 4 * n * n * d
        assert rows["self-attention layer (with projections)"] == 8 * n * d * d + 4 * n * n * d
        assert rows["recurrent (nn.RNN)"] == 4 * n * d * d
        assert rows["recurrent (nn.LSTM)"] == 16 * n * d * d
        assert rows["convolutional (k=3)"] == 6 * n * d * d


def test_sequential_ops_on_hand_built_chains():
    x = torch.randn(4, 5)
    assert count_sequential_ops(lambda: ((x + 1) * 2).tanh()) == 3
    assert count_sequential_ops(lambda: (x + 1, x * 2, x.exp())) == 1  # independent: one round
    assert count_sequential_ops(lambda: x.view(5, 4).t().unsqueeze(0)) == 0  # views are free
    assert count_sequential_ops(lambda: x.clone().add_(1).mul_(2)) == 3  # in-place ops chain


def test_recurrent_flops_per_position_times_n_equal_the_whole_layer():
    table = flops_by_length([7], 8).set_index("layer")["flops"]
    for kind, name in (("recurrent", "recurrent (nn.RNN)"), ("LSTM", "recurrent (nn.LSTM)")):
        assert table[name] == count_flops(layer_forward(kind, 7, 8, device="cpu"))


def test_sequential_ops_grow_with_n_only_for_the_recurrent_layers():
    counts = {kind: [count_sequential_ops(layer_forward(kind, n, 4, device="cpu"))
                     for n in (8, 13)] for kind in TABLE1_KINDS}
    assert counts["recurrent"][1] - counts["recurrent"][0] == 3 * 5  # matmul, add, tanh per step
    assert counts["LSTM"][1] - counts["LSTM"][0] == 8 * 5  # gates, cell and state per step
    for kind in TABLE1_KINDS:
        if kind not in ("recurrent", "LSTM"):
            assert counts[kind][0] == counts[kind][1] <= 10


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 3), T=st.integers(1, 12), d=st.integers(1, 6),
       r=st.sampled_from([1, 3, 5, 7, 25]), seed=st.integers(0, 1000))
def test_restricted_attention_equals_band_masked_attention(B, T, d, r, seed):
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, T, d, generator=generator, dtype=torch.float64) for _ in range(3))
    expected, _ = scaled_dot_product_attention(q, k, v, band_mask(T, r))
    torch.testing.assert_close(restricted_attention(q, k, v, r), expected, rtol=1e-12,
                               atol=1e-12)


def test_restricted_attention_with_a_wide_window_is_full_attention():
    q, k, v = (torch.randn(2, 7, 4, dtype=torch.float64) for _ in range(3))
    expected, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(restricted_attention(q, k, v, 13), expected)


def test_band_mask():
    mask = band_mask(5, 3)
    assert mask.dtype == torch.bool and mask.shape == (5, 5)
    assert mask.sum() == 5 + 2 * 4  # the diagonal and one neighbour on each side


def test_count_table1():
    counted = count_table1(Table1Config(n=16, d=32, kernel_size=3, neighbourhood=5))
    assert list(counted.index) == list(TABLE1_KINDS)
    ratios = counted["flops_per_term"].to_dict()
    assert ratios == {"self-attention": 4, "recurrent": 4, "LSTM": 16, "convolutional": 2,
                      "dilated convolutional": 2, "restricted self-attention": 4}
    assert counted.loc["recurrent", "sequential_2n"] - counted.loc["recurrent", "sequential_n"] \
        == 3 * 16
    assert counted.loc["self-attention", "sequential_n"] == counted.loc[
        "self-attention", "sequential_2n"]
    assert counted["path_length"].to_dict() == {
        "self-attention": 1, "recurrent": 15, "LSTM": 15, "convolutional": 15,
        "dilated convolutional": 3, "restricted self-attention": 8}
    assert paper_term("recurrent", 16, 32, 3, 5) == 16 * 32 * 32


def test_format_table1():
    config = Table1Config(n=8, d=16)
    shown = format_table1(count_table1(config), config)
    assert list(shown.index) == [TABLE1_NAMES[kind] for kind in TABLE1_KINDS]
    assert all(isinstance(column, str) for column in shown.columns)  # plain headers
    rnn, lstm = TABLE1_NAMES["recurrent"], TABLE1_NAMES["LSTM"]
    flops, chain, path = shown.columns
    assert shown.loc["Self-attention", flops].startswith("O(n²·d): ")
    assert shown.loc[rnn, flops] == f"O(n·d²): {4 * 8 * 16 * 16 / 1e6:.3g}"
    assert shown.loc[lstm, flops] == f"O(n·d²): {16 * 8 * 16 * 16 / 1e6:.3g}"
    assert shown.loc[rnn, path] == f"{PAPER_TABLE1['recurrent'][2]}: 7"
    assert shown.loc[lstm, path].endswith(": 7")
    assert shown.loc[rnn, chain].endswith(f"{3 * 8 + 2} \u2192 {3 * 16 + 2}")
    assert "n = 8" in chain and "16" in chain


def test_graph_kind():
    assert graph_kind("LSTM") == "recurrent"
    assert [graph_kind(kind) for kind in TABLE1_KINDS if kind != "LSTM"] == list(KINDS)


def test_time_forward_by_length():
    torch.manual_seed(0)
    state = torch.get_rng_state()
    threads = torch.get_num_threads()
    times = time_forward_by_length([4, 8], d_model=8, num_heads=2, batch=2, rounds=3,
                                   threads=1 if threads > 1 else 2)
    assert torch.equal(state, torch.get_rng_state())
    assert torch.get_num_threads() == threads
    assert len(times) == 6 and set(times.length) == {4, 8}
    assert (times.median_s > 0).all()
    assert ((times.min_s <= times.median_s) & (times.median_s <= times.max_s)).all()
    parameters = times.groupby("layer")["parameters"].first()
    assert parameters["recurrent (nn.RNN)"] == 2 * 8 * 8 + 2 * 8
    assert parameters["recurrent (nn.LSTM)"] == 4 * (2 * 8 * 8 + 2 * 8)
    assert parameters["self-attention (MultiHeadAttention)"] == 4 * 8 * 8 + 4 * 8


def test_an_unknown_kind_is_refused():  # it would silently build a convolution
    with pytest.raises(ValueError, match="kind"):
        layer_forward("mamba", 4, 4)
