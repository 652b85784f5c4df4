"""Maximum path length (Vaswani et al., 2017, Table 1, last column), by breadth-first search.

Each layer type is a connectivity graph on positions: ``A[i, j]`` is True when output position i
reads input position j in one hop. A hop is one layer for stacks of attention or convolution
layers, and one time step inside a recurrent layer. The maximum path length is the largest number
of hops between any input position and any output position that depends on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from transformer_course.core.checks import check_choice

KINDS = ("self-attention", "recurrent", "convolutional", "dilated convolutional",
         "restricted self-attention")


def connectivity(kind: str, n: int, *, kernel_size: int = 3, neighbourhood: int = 5,
                 layer: int = 0) -> np.ndarray:
    """(n, n) boolean adjacency of one hop: ``A[i, j]`` is True when output i reads position j.

    Convolutions and restricted attention see a window centred on i; the recurrent hop is one time
    step (h_i reads h_{i-1} and x_i). The dilated convolution is causal, as in ByteNet and WaveNet:
    at ``layer`` l (from 0), output i reads i - m * k**l for m = 0 .. k - 1. ``layer`` is ignored
    by the other kinds.
    """
    check_choice("kind", kind, KINDS)  # an unknown name would fall through to the dilated one
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]  # (n, n): i - j
    if kind == "self-attention":
        return np.ones((n, n), dtype=bool)
    if kind == "recurrent":
        return (offset == 0) | (offset == 1)
    if kind == "restricted self-attention":
        return np.abs(offset) <= neighbourhood // 2
    if kind == "convolutional":
        return np.abs(offset) <= kernel_size // 2
    if kernel_size ** layer >= n:  # every tap but m = 0 falls before the sequence
        return offset == 0
    dilation = kernel_size ** layer
    return (offset >= 0) & (offset % dilation == 0) & (offset <= dilation * (kernel_size - 1))


def bfs_distances(adjacency: np.ndarray, source: int) -> np.ndarray:
    """(n,) fewest hops from position ``source`` to every position; -1 where unreachable.

    Args:
        adjacency: (n, n) boolean, ``adjacency[i, j]`` True when i reads j in one hop.
        source: the input position the paths start from.
    """
    n = adjacency.shape[0]
    distance = np.full(n, -1)
    distance[source] = 0
    frontier = np.zeros(n, dtype=bool)  # the positions first reached at the current hop
    frontier[source] = True
    hop = 0
    while frontier.any():  # level by level: every position that reads the frontier
        hop += 1
        frontier = adjacency[:, frontier].any(axis=1) & (distance < 0)
        distance[frontier] = hop
    return distance


def max_path_length(adjacency: np.ndarray) -> int:
    """Longest shortest path, in hops, over the ordered pairs of positions joined by some path.

    Breadth-first search from every source at once: column j of ``reached`` is the search from j.
    """
    n = adjacency.shape[0]
    step = adjacency.astype(np.float64)  # BLAS matrix product; counts stay exact
    reached = np.eye(n, dtype=bool)  # reached[i, j]: output i found from source j
    frontier = reached.copy()
    hops = 0
    while True:
        frontier = ((step @ frontier) > 0) & ~reached  # (n, n)
        if not frontier.any():
            return hops
        hops += 1
        reached |= frontier


def stacked_path_length(adjacencies: Sequence[np.ndarray]) -> int:
    """Maximum path length through a stack of layers that may differ (dilations grow, say).

    Breadth-first search layer by layer: the pair (input j, output i) is ``L`` hops apart when
    output i of the L-th layer is the first to depend on input j. A position always reads itself
    (each layer's adjacency must contain its diagonal), so dependence, once there, persists.

    Args:
        adjacencies: one (n, n) boolean one-layer adjacency per layer, bottom layer first.

    Returns:
        the largest such L over the pairs that the whole stack connects.
    """
    n = adjacencies[0].shape[0]
    reach = np.eye(n, dtype=bool)  # reach[i, j]: output i depends on input j
    longest = 0
    for depth, a in enumerate(adjacencies, start=1):
        grown = (a.astype(np.float64) @ reach) > 0  # (n, n)
        if (grown & ~reach).any():
            longest = depth
        reach = grown
    return longest


def counted_path_length(kind: str, n: int, *, kernel_size: int = 3,
                        neighbourhood: int = 5) -> int:
    """Maximum path length of ``kind`` for n positions, by breadth-first search.

    Uniform stacks (and the recurrent chain) are searched as one graph; the dilated convolution,
    whose layers differ, as a stack deep enough that more layers connect nothing new.
    """
    options = {"kernel_size": kernel_size, "neighbourhood": neighbourhood}
    if kind != "dilated convolutional":
        return max_path_length(connectivity(kind, n, **options))
    depth = 1  # layers whose dilation k**l reaches past the sequence add nothing
    while kernel_size ** depth < n:
        depth += 1
    return stacked_path_length([connectivity(kind, n, layer=layer, **options)
                                for layer in range(depth)])


def path_length_formula(kind: str, n: int, *, kernel_size: int = 3,
                        neighbourhood: int = 5) -> int:
    """Closed form of :func:`counted_path_length`: the exact counts behind the paper's O(.)."""
    check_choice("kind", kind, KINDS)
    if n == 1:
        return 0
    if kind == "self-attention":
        return 1
    if kind == "recurrent":
        return n - 1
    if kind == "convolutional":
        return -(-(n - 1) // (kernel_size // 2))  # ceil((n - 1) / half-width)
    if kind == "restricted self-attention":
        return -(-(n - 1) // (neighbourhood // 2))
    layers = 0  # L layers of base-k digits reach back k**L - 1 positions: smallest k**L >= n
    while kernel_size ** layers < n:
        layers += 1
    return layers
