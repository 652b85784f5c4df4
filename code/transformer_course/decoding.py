"""Decoding: turning a trained encoder-decoder into output sequences.

Greedy decoding picks the most probable next token at every step. This version re-runs the
decoder over the whole prefix at each step (no key/value cache): simple, and O(T^2) decoder work.
"""

from __future__ import annotations

import torch

from .checks import check_array, check_positive_int
from .masks import padding_mask_from_tokens
from .model import Transformer


def _check_id(name: str, value: int, vocab_size: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int token id; got {value!r}")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} must lie in [0, {vocab_size}); got {value}")


@torch.no_grad()
def greedy_decode(model: Transformer, src: torch.Tensor, max_len: int, bos_id: int,
                  eos_id: int) -> torch.Tensor:
    """Greedy decoding of a batch; padding in ``src`` is ``model.config.pad_id``.

    Args:
        model: the Transformer (put it in ``eval()`` mode first, or dropout stays on).
        src: (B, S) source token ids.
        max_len: longest output, BOS included (at most ``model.config.max_len``).
        bos_id: the start token every output begins with. eos_id: the token that ends a sequence.

    Returns:
        (B, L) long tensor, L <= max_len: BOS, the chosen tokens, EOS; positions after a
        sequence's EOS hold ``pad_id``. Decoding stops early once every sequence has its EOS.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a transformer_course Transformer; "
                        f"got {type(model).__name__}")
    c = model.config
    check_array("src", src, kind=torch.Tensor, ndim=2, shape="(B, S)")
    check_positive_int("max_len", max_len)
    if max_len > c.max_len:
        raise ValueError(f"max_len must be at most the model's max_len={c.max_len}; "
                         f"got {max_len}")
    _check_id("bos_id", bos_id, c.tgt_vocab_size)
    _check_id("eos_id", eos_id, c.tgt_vocab_size)
    src_mask = padding_mask_from_tokens(src, c.pad_id)  # (B, 1, S)
    memory = model.encode(src, src_mask)  # (B, S, d_model)
    B = src.shape[0]
    out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        if bool(finished.all()):
            break
        hidden = model.decode(out, memory, src_mask)  # (B, t, d_model), causal mask
        next_token = model.project(hidden[:, -1:]).argmax(dim=-1).squeeze(-1)  # (B,)
        next_token = next_token.masked_fill(finished, c.pad_id)
        out = torch.cat([out, next_token[:, None]], dim=1)  # (B, t + 1)
        finished |= next_token == eos_id
    return out
