"""Tests for ch1 paths: connectivity graphs and maximum path length by BFS."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_course.exercises import Passed, check_path_length_formula
from transformer_course.experiments.ch1_why_attention.paths import (
    KINDS,
    bfs_distances,
    connectivity,
    counted_path_length,
    max_path_length,
    path_length_formula,
    stacked_path_length,
)

odd = st.sampled_from([3, 5, 7, 9])


@pytest.mark.parametrize("kind, n, options, expected", [
    # hand-derived: ceil((n - 1) / half-width) for windows, smallest L with k**L >= n if dilated
    ("self-attention", 64, {}, 1),
    ("recurrent", 64, {}, 63),
    ("convolutional", 64, {"kernel_size": 3}, 63),
    ("convolutional", 64, {"kernel_size": 5}, 32),
    ("convolutional", 10, {"kernel_size": 7}, 3),
    ("restricted self-attention", 64, {"neighbourhood": 9}, 16),
    ("restricted self-attention", 17, {"neighbourhood": 5}, 8),
    ("dilated convolutional", 64, {"kernel_size": 3}, 4),
    ("dilated convolutional", 81, {"kernel_size": 3}, 4),
    ("dilated convolutional", 82, {"kernel_size": 3}, 5),
    ("dilated convolutional", 26, {"kernel_size": 5}, 3),
    ("self-attention", 1, {}, 0),
    ("recurrent", 1, {}, 0),
])
def test_counted_path_lengths_by_hand(kind, n, options, expected):
    assert counted_path_length(kind, n, **options) == expected
    assert path_length_formula(kind, n, **options) == expected


@settings(max_examples=50, deadline=None)
@given(kind=st.sampled_from(KINDS), n=st.integers(1, 60), k=odd, r=odd)
def test_counted_path_length_matches_closed_form(kind, n, k, r):
    assert counted_path_length(kind, n, kernel_size=k, neighbourhood=r) == path_length_formula(
        kind, n, kernel_size=k, neighbourhood=r)


def test_connectivity_shapes_and_diagonal():
    for kind in KINDS:
        for layer in (0, 1, 3):
            a = connectivity(kind, 11, layer=layer)
            assert a.shape == (11, 11) and a.dtype == np.bool_
            assert a.diagonal().all()
    assert connectivity("self-attention", 5).all()
    chain = connectivity("recurrent", 4)
    np.testing.assert_array_equal(chain, np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0],
                                                   [0, 0, 1, 1]], dtype=bool))
    dilated = connectivity("dilated convolutional", 10, kernel_size=3, layer=1)
    np.testing.assert_array_equal(np.flatnonzero(dilated[9]), [3, 6, 9])  # reads 9, 9-3, 9-6


def test_bfs_distances_on_a_chain():
    chain = connectivity("recurrent", 6)
    np.testing.assert_array_equal(bfs_distances(chain, 2), [-1, -1, 0, 1, 2, 3])


def _slow_bfs(adjacency: np.ndarray, source: int) -> np.ndarray:
    distance = {source: 0}
    queue = [source]
    while queue:
        j = queue.pop(0)
        for i in range(adjacency.shape[0]):
            if adjacency[i, j] and i not in distance:
                distance[i] = distance[j] + 1
                queue.append(i)
    return np.array([distance.get(i, -1) for i in range(adjacency.shape[0])])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), density=st.floats(0.0, 0.6), seed=st.integers(0, 10_000))
def test_bfs_and_max_path_length_on_random_graphs(n, density, seed):
    adjacency = np.random.default_rng(seed).random((n, n)) < density
    distances = [_slow_bfs(adjacency, s) for s in range(n)]
    for s in range(n):
        np.testing.assert_array_equal(bfs_distances(adjacency, s), distances[s])
    assert max_path_length(adjacency) == max(int(d.max()) for d in distances)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["self-attention", "convolutional", "restricted self-attention",
                             "recurrent"]), n=st.integers(1, 30), k=odd)
def test_stacking_a_uniform_layer_equals_bfs_diameter(kind, n, k):
    a = connectivity(kind, n, kernel_size=k, neighbourhood=k)
    assert stacked_path_length([a] * n) == max_path_length(a)


def test_check_path_length_formula():
    assert check_path_length_formula(lambda n, k: -(-(n - 1) // (k // 2))) == \
        Passed(cases=120, largest_difference=0.0)  # n = 1 .. 40 for kernel sizes 3, 5, 7
    with pytest.raises(AssertionError):
        check_path_length_formula(lambda n, k: (n - 1) // (k // 2))  # floor instead of ceiling
    with pytest.raises(AssertionError, match="n=1"):  # it names the first failing case
        check_path_length_formula(lambda n, k: 1)


def test_an_unknown_kind_is_refused():  # it would silently count a dilated convolution
    for call in (connectivity, counted_path_length, path_length_formula):
        with pytest.raises(ValueError, match="kind"):
            call("lstm", 4)
