"""Hiding one English word from every attention, over a whole test set, with a control.

Chapter 7 asks its trained model whether the first German token depends on the English word it
attends to most: hide that word from every attention (the source mask that hides padding) and
translate again. Four examples show it; one of them, 512,345, says "five" twice, and on some
draws the model still writes the first "fünf" with the word it attended to hidden. So the claim
rests on every number of a test set, where it is a share and a new draw moves it a little, not
on four examples, where one flip breaks "in every example". The control hides another English
word of the same number, drawn at random, and asks the same question: a first morpheme that
changes about as often either way would say the attention picks nothing out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID, wrap_sources
from transformer_course.core.decoding import greedy_decode
from transformer_course.core.masks import padding_mask_from_tokens
from transformer_course.core.model import Transformer

from .prepared import TranslationData
from .subwords import GermanMorphemes

CONTROL_SEED = 0  # the generator that draws each number's control word


@dataclass(frozen=True)
class MaskingShares:
    """What hiding one English word does to the first German morpheme, over a set.

    Attributes:
        numbers: how many numbers were translated three times (as they are, with the attended
            word hidden, with the control word hidden); numbers of one English word have no
            control word and are left out.
        changed: share of them whose first morpheme changes when the attended word is hidden.
        only_first: share whose first morpheme changes and nothing after it does.
        control: share whose first morpheme changes when the control word is hidden.
    """

    numbers: int
    changed: float
    only_first: float
    control: float


def first_changed(before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether ``after`` replaced or dropped the first morpheme of ``before``."""
    return list(after[:1]) != list(before[:1])


def only_first_changed(before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether ``after`` is ``before`` with its first morpheme replaced (by any number of
    morphemes) or dropped, and everything after it kept."""
    rest = list(before[1:])
    head = list(after[:len(after) - len(rest)])
    return len(after) >= len(rest) and list(after[len(head):]) == rest and head != list(before[:1])


def _other_word(words: int, attended: int, rng: random.Random) -> int:
    """A source position among the ``words`` English tokens (positions 1..words, after <s>)
    other than ``attended``, uniformly; any of them where ``attended`` is <s> or </s>. A number
    of one word gets that word (it is not counted)."""
    others = [p for p in range(1, words + 1) if p != attended] or [1]
    return rng.choice(others)


def _decode(model: Transformer, src: torch.Tensor, keep: torch.Tensor, max_len: int,
            chunk: int) -> list[torch.Tensor]:
    """Greedy outputs of ``src`` (B, S) with the source mask ``keep`` (B, 1, S), in chunks."""
    out: list[torch.Tensor] = []
    for start in range(0, len(src), chunk):
        rows = slice(start, start + chunk)
        out += list(greedy_decode(model, src[rows], max_len, BOS_ID, EOS_ID, src_mask=keep[rows]))
    return out


@torch.no_grad()
def masking_shares(model: Transformer, data: TranslationData, set_name: str = "test", *,
                   chunk: int = 500, extra_len: int = 4) -> MaskingShares:
    """Hide, in each number of ``data``'s set ``set_name``, the English word the first German
    token attends to most (last decoder layer, heads averaged, as the page's maps), then another
    word of the number drawn at random (the control), and compare each greedy output with the
    unmasked one morpheme by morpheme.

    Args:
        chunk: numbers decoded together. extra_len: tokens allowed beyond the longest target.
    """
    model.eval()
    pairs = data.pairs[set_name]
    src = wrap_sources(pairs.src)  # (B, S): <s>, the words, </s>, padding
    keep = padding_mask_from_tokens(src, PAD_ID)  # (B, 1, S)
    start = torch.full((len(src), 1), BOS_ID)  # (B, 1): the query that writes the first token
    first_row = model.attention_maps(src, start, keep)["cross"][-1].mean(dim=1)[:, 0]  # (B, S)
    attended = first_row.argmax(dim=-1)  # (B,)
    words = (keep[:, 0].sum(dim=-1) - 2).tolist()  # English tokens between <s> and </s>
    rng = random.Random(CONTROL_SEED)
    control = torch.tensor([_other_word(n, a, rng)
                            for n, a in zip(words, attended.tolist(), strict=True)])
    max_len = min(pairs.tgt.shape[1] + 2 + extra_len, model.config.max_len)
    morphemes, outputs = GermanMorphemes().split, {}
    for name, hidden in (("as is", None), ("attended", attended), ("control", control)):
        mask = keep.clone()
        if hidden is not None:
            mask[torch.arange(len(src)), 0, hidden] = False
        outputs[name] = [morphemes(data.pipeline.decode_target(row))
                         for row in _decode(model, src, mask, max_len, chunk)]
    counted = [b for b in range(len(src)) if words[b] >= 2]
    before = outputs["as is"]

    def share(test: Callable[[list[str], list[str]], bool], name: str) -> float:
        return sum(test(before[b], outputs[name][b]) for b in counted) / len(counted)

    return MaskingShares(len(counted), share(first_changed, "attended"),
                         share(only_first_changed, "attended"), share(first_changed, "control"))
