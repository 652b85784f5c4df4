"""Batches for teacher forcing: padding, shifted targets and the two masks.

For a target y_1 .. y_n the decoder reads ``bos, y_1, .., y_n`` and must predict
``y_1, .., y_n, eos`` at the same positions: the labels are the inputs shifted left by one, so
position t learns to predict token t + 1 from the true tokens before it (teacher forcing).

Masks follow the package convention (bool, True = may attend): the source mask (B, 1, S) hides
padded source keys from every query; the target mask (B, T, T) is causal and hides padded keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .checks import Shapes, check_ids, check_instance, check_int, check_token_ids
from .masks import decoder_self_attention_mask, padding_mask_from_tokens

PAD_ID, BOS_ID, EOS_ID = 0, 1, 2  # the special ids every batch uses unless told otherwise


@dataclass(frozen=True)
class Batch:
    """One padded batch with everything a teacher-forced training step needs (built by
    :func:`make_batch`).

    Attributes:
        src: (B, S) source ids, padded. src_mask: (B, 1, S), True at real source tokens.
        tgt_in: (B, T) decoder input: bos, y_1 .. y_n, then padding.
        tgt_out: (B, T) labels: y_1 .. y_n, eos, then padding.
        tgt_mask: (B, T, T) causal mask with padded keys blocked.
        pad_id: the padding id (labels equal to it are ignored by the loss).
    """

    src: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor
    pad_id: int = PAD_ID

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @property
    def num_tokens(self) -> int:
        """Number of real (non-padding) labels: the tokens the loss averages over."""
        return int((self.tgt_out != self.pad_id).sum())


Sequences = torch.Tensor | Sequence[torch.Tensor]


def pad_sequences(sequences: Sequence[torch.Tensor], pad_id: int = PAD_ID,
                  length: int | None = None) -> torch.Tensor:
    """B 1-D id tensors (n_i,), n_i >= 1, as one (B, L) tensor padded right with ``pad_id``;
    ``length`` L defaults to the longest n_i and must be at least that."""
    check_instance("sequences", sequences, (list, tuple))
    return _padded("sequences", sequences, pad_id, Shapes(), "B L", length)


def _padded(name: str, sequences: Sequences, pad_id: int, shapes: Shapes, spec: str,
            length: int | None = None) -> torch.Tensor:
    """``sequences`` as a checked (B, L) long tensor of ids: padded here unless it is one."""
    check_int("pad_id", pad_id, low=0)
    if not isinstance(sequences, torch.Tensor):
        check_instance(name, sequences, (list, tuple))
        if not sequences:
            raise ValueError(f"{name} must hold at least one sequence; got an empty list")
        for i, s in enumerate(sequences):
            check_token_ids(f"{name}[{i}]", s, None, "n_i")
        longest = max(len(s) for s in sequences)
        if length is not None:
            check_int("length", length, low=longest)
        padded = torch.full((len(sequences), length or longest), pad_id, dtype=torch.long)
        for i, s in enumerate(sequences):
            padded[i, : len(s)] = s
        sequences = padded
    check_token_ids(name, sequences, None, spec, shapes)
    return sequences.long()


def shift_targets(tgt: torch.Tensor, pad_id: int = PAD_ID, bos_id: int = BOS_ID,
                  eos_id: int = EOS_ID) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoder inputs and labels for teacher forcing from ``tgt`` (B, L), rows y_1 .. y_n then
    padding: tgt_in = bos, y_1 .. y_n, padding and tgt_out = y_1 .. y_n, eos, padding."""
    return _shift(_checked_rows("tgt", tgt, pad_id, bos_id, eos_id), pad_id, bos_id, eos_id)


def _checked_rows(name: str, tgt: torch.Tensor, pad_id: int, bos_id: int, eos_id: int,
                  ) -> torch.Tensor:
    """``tgt`` checked: (B, L) ids, each row's tokens first and padding only after them."""
    check_token_ids(name, tgt, None, "B L")
    check_ids(pad_id=pad_id, bos_id=bos_id, eos_id=eos_id)
    real = tgt != pad_id  # (B, L)
    positions = torch.arange(tgt.shape[1], device=tgt.device)
    misplaced = real != (positions < real.sum(dim=1, keepdim=True))
    if bool(misplaced.any()):
        row = int(misplaced.any(dim=1).nonzero()[0])
        raise ValueError(f"{name} must hold each row's tokens first and padding only after them; "
                         f"got row {row} = {tgt[row].tolist()}")
    return tgt.long()


def _shift(tgt: torch.Tensor, pad_id: int, bos_id: int, eos_id: int,
           ) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = (tgt != pad_id).sum(dim=1)  # (B,)
    bos = torch.full((tgt.shape[0], 1), bos_id, dtype=torch.long)
    pad = torch.full((tgt.shape[0], 1), pad_id, dtype=torch.long)
    tgt_in = torch.cat([bos, tgt], dim=1)  # (B, L + 1)
    tgt_out = torch.cat([tgt, pad], dim=1).scatter(1, lengths[:, None], eos_id)
    return tgt_in, tgt_out  # eos right after each row's last token


def wrap_sources(src: torch.Tensor, pad_id: int = PAD_ID, bos_id: int = BOS_ID,
                 eos_id: int = EOS_ID) -> torch.Tensor:
    """Each source row as bos, x_1 .. x_n, eos, then padding: (B, S) -> (B, S + 2).

    The encoder then sees both ends of a sequence as tokens at fixed places (BOS at 0, EOS right
    after the last symbol), not only through the padding mask.
    """
    return _wrap(_checked_rows("src", src, pad_id, bos_id, eos_id), pad_id, bos_id, eos_id)


def _wrap(src: torch.Tensor, pad_id: int, bos_id: int, eos_id: int) -> torch.Tensor:
    tgt_in, _ = _shift(src, pad_id, bos_id, eos_id)  # bos, x_1 .. x_n, padding
    lengths = (src != pad_id).sum(dim=1)  # (B,)
    pad = torch.full((src.shape[0], 1), pad_id, dtype=torch.long)
    return torch.cat([tgt_in, pad], dim=1).scatter(1, lengths[:, None] + 1, eos_id)  # (B, S + 2)


def make_batch(src: Sequences, tgt: Sequences, *, pad_id: int = PAD_ID, bos_id: int = BOS_ID,
               eos_id: int = EOS_ID, wrap_source: bool = True) -> Batch:
    """A teacher-forcing :class:`Batch` from sources and targets.

    Args:
        src: (B, S) padded integer ids, or B 1-D tensors of different lengths (padded here).
        tgt: (B, L) padded ids without bos/eos, or B 1-D tensors.
        wrap_source: put each source between bos and eos (see :func:`wrap_sources`).
    """
    shapes = Shapes()  # src and tgt must hold the same number of sequences B
    src = _checked_rows("src", _padded("src", src, pad_id, shapes, "B S"), pad_id, bos_id, eos_id)
    tgt = _checked_rows("tgt", _padded("tgt", tgt, pad_id, shapes, "B L"), pad_id, bos_id, eos_id)
    check_instance("wrap_source", wrap_source, bool)
    if wrap_source:
        src = _wrap(src, pad_id, bos_id, eos_id)  # (B, S + 2)
    tgt_in, tgt_out = _shift(tgt, pad_id, bos_id, eos_id)
    return Batch(src=src, src_mask=padding_mask_from_tokens(src, pad_id), tgt_in=tgt_in,
                 tgt_out=tgt_out, tgt_mask=decoder_self_attention_mask(tgt_in, pad_id),
                 pad_id=pad_id)


def trim_batch(batch: Batch) -> Batch:
    """The same batch with all-padding columns at the right removed (less work per step)."""
    check_instance("batch", batch, Batch)
    S = max(int(batch.src_mask.sum(dim=-1).max()), 1)
    T = max(int((batch.tgt_in != batch.pad_id).sum(dim=1).max()), 1)
    return Batch(src=batch.src[:, :S], src_mask=batch.src_mask[..., :S],
                 tgt_in=batch.tgt_in[:, :T], tgt_out=batch.tgt_out[:, :T],
                 tgt_mask=batch.tgt_mask[:, :T, :T], pad_id=batch.pad_id)
