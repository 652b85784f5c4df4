"""Synthetic sequence-to-sequence tasks (copy, reverse, sort) from seeded generators.

Every draw takes a ``torch.Generator`` from the caller and never touches the global random state,
so a data set is a pure function of its seed. Token ids are shared by every task:

    0 = padding, 1 = beginning of sequence (BOS), 2 = end of sequence (EOS),
    3 .. 3 + num_symbols - 1 = the content symbols.

Sequences are stored padded: row i of a (n, L) tensor holds ``lengths[i]`` content symbols, then
padding. Source and target of these tasks always have the same length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID
from transformer_course.core.checks import check_choice

NUM_SPECIAL = 3  # content symbols start at this id
TASKS = ("copy", "reverse", "sort")


@dataclass(frozen=True)
class TaskConfig:
    """A synthetic task: which transformation, how many symbols, which lengths."""

    name: str = "copy"  # "copy" | "reverse" | "sort"
    num_symbols: int = 10  # content symbols, ids NUM_SPECIAL .. NUM_SPECIAL + num_symbols - 1
    min_len: int = 1  # shortest source sequence (content symbols, no BOS/EOS)
    max_len: int = 10  # longest source sequence
    length_power: float = 0.0  # the training stream (task_batches) draws lengths n with
    #                            P(n) ~ n ** length_power; held-out sets stay uniform

    def __post_init__(self) -> None:
        check_choice("name", self.name, TASKS)  # apply_task would silently sort any other name

    @property
    def vocab_size(self) -> int:
        """Number of token ids: the special tokens plus the content symbols."""
        return NUM_SPECIAL + self.num_symbols


@dataclass(frozen=True)
class TaskData:
    """n padded source/target pairs of one task.

    Attributes:
        src: (n, L) source ids, padded with PAD_ID. tgt: (n, L) target ids, padded alike.
        lengths: (n,) number of content symbols per row (the same for source and target).
    """

    src: torch.Tensor
    tgt: torch.Tensor
    lengths: torch.Tensor

    def __len__(self) -> int:
        return int(self.src.shape[0])


def apply_task(name: str, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The target of task ``name`` for each padded source row.

    Args:
        name: "copy", "reverse" or "sort".
        src: (n, L) content ids, padded with PAD_ID after ``lengths[i]`` symbols.
        lengths: (n,) lengths.

    Returns:
        (n, L) targets, padded the same way.
    """
    n, L = src.shape
    positions = torch.arange(L, device=src.device).expand(n, L)  # (n, L)
    real = positions < lengths[:, None]  # (n, L)
    if name == "copy":
        return src.masked_fill(~real, PAD_ID)
    if name == "reverse":
        source_pos = (lengths[:, None] - 1 - positions).clamp(min=0)  # (n, L) read index
        return src.gather(1, source_pos).masked_fill(~real, PAD_ID)
    big = torch.iinfo(torch.long).max  # padding sorts last
    keys = src.long().masked_fill(~real, big)
    return keys.sort(dim=1).values.masked_fill(~real, PAD_ID).to(src.dtype)


def sequence_keys(src: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """One exact int64 key per padded row (the row read as a base-``vocab_size`` number).

    Two rows get the same key only if they hold the same tokens. Args: src (n, L) ids in
    [0, vocab_size) with vocab_size ** L < 2 ** 63. Returns (n,) int64.
    """
    L = src.shape[1]
    if vocab_size ** L >= 2 ** 63:  # the keys would silently overflow and collide
        raise ValueError(f"vocab_size ** L must be below 2**63 for exact keys; got "
                         f"vocab_size={vocab_size}, L={L}")
    powers = vocab_size ** torch.arange(L, dtype=torch.long, device=src.device)  # (L,)
    return (src.long() * powers).sum(dim=1)


def length_probabilities(config: TaskConfig, length_power: float = 0.0) -> torch.Tensor:
    """P(n) for n = min_len .. max_len when lengths are drawn with P(n) proportional to
    n ** length_power: (max_len - min_len + 1,) float64, summing to 1 (0: uniform)."""
    weights = torch.arange(config.min_len, config.max_len + 1, dtype=torch.float64)
    weights = weights ** float(length_power)
    return weights / weights.sum()


def _draw_lengths(config: TaskConfig, n: int, generator: torch.Generator,
                  length_power: float) -> torch.Tensor:
    if length_power == 0:  # uniform: randint, so uniform draws match earlier versions exactly
        return torch.randint(config.min_len, config.max_len + 1, (n,), generator=generator)
    probabilities = length_probabilities(config, length_power)
    picks = torch.multinomial(probabilities, n, replacement=True, generator=generator)
    return picks + config.min_len


def sample_task(config: TaskConfig, n: int, generator: torch.Generator, *,
                exclude: torch.Tensor | None = None, unique: bool = False,
                length_power: float = 0.0) -> TaskData:
    """Draw ``n`` source sequences of uniform symbols, and their targets.

    Args:
        config: the task. n: number of pairs. generator: a seeded ``torch.Generator``.
        exclude: optional (m,) keys from :func:`sequence_keys`; sources with these keys are
            redrawn, so a training stream never contains a held-out sequence.
        unique: redraw duplicates, so all n sources differ (for a held-out set).
        length_power: lengths n are drawn with probability proportional to n ** length_power:
            0 (the default) draws them uniformly, 1 in proportion to their length, 2 to its
            square (more long sequences; see :func:`length_probabilities`).

    Returns:
        a :class:`TaskData` with sources of width ``config.max_len``.
    """
    space = sum(config.num_symbols ** k for k in range(config.min_len, config.max_len + 1))
    if unique and n > space:  # the loop below would never end
        raise ValueError(f"n must be at most {space}, the number of distinct sequences, when "
                         f"unique=True; got {n}")
    src = torch.empty(0, config.max_len, dtype=torch.long)
    lengths = torch.empty(0, dtype=torch.long)
    while src.shape[0] < n:
        need = n - src.shape[0]
        new_len = _draw_lengths(config, need, generator, length_power)
        symbols = torch.randint(NUM_SPECIAL, config.vocab_size, (need, config.max_len),
                                generator=generator)  # (need, L)
        real = torch.arange(config.max_len)[None, :] < new_len[:, None]  # (need, L)
        src = torch.cat([src, symbols.masked_fill(~real, PAD_ID)])
        lengths = torch.cat([lengths, new_len])
        keys = sequence_keys(src, config.vocab_size)
        keep = torch.ones(src.shape[0], dtype=torch.bool)
        if exclude is not None:
            keep &= ~torch.isin(keys, exclude)
        if unique:
            first = torch.zeros_like(keep)
            _, inverse = torch.unique(keys, return_inverse=True)
            seen: set[int] = set()
            for i, k in enumerate(inverse.tolist()):  # keep the first draw of each key
                if k not in seen:
                    seen.add(k)
                    first[i] = True
            keep &= first
        src, lengths = src[keep], lengths[keep]
    return TaskData(src, apply_task(config.name, src, lengths), lengths)


def token_name(token: int) -> str:
    """A readable name for a token id: "_" (padding), "<s>", "</s>", then "a", "b", ..."""
    special = {PAD_ID: "_", BOS_ID: "<s>", EOS_ID: "</s>"}
    if token in special:
        return special[token]
    index = token - NUM_SPECIAL
    return chr(ord("a") + index) if index < 26 else f"s{index}"


def to_text(ids: torch.Tensor, *, show_pad: bool = False) -> str:
    """One sequence of ids as space-separated names, e.g. "<s> c a b </s>" (padding dropped).

    Args:
        ids: (L,) integer ids.
    """
    return " ".join(token_name(int(t)) for t in ids.tolist() if show_pad or t != PAD_ID)
