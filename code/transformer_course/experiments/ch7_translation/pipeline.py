"""From texts to padded id tensors and back: a source and a target segmenter, and their
vocabularies, built from the training split only."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from transformer_course.core.batching import PAD_ID
from transformer_course.core.checks import check_choice

from .number_corpus import ParallelCorpus
from .subwords import (
    BPESegmenter,
    GermanMorphemes,
    Segmenter,
    Vocabulary,
    WordSegmenter,
    learn_bpe,
)


@dataclass(frozen=True)
class EncodedPairs:
    """n sentence pairs as padded ids, without BOS/EOS (``core.make_batch`` adds them).

    Attributes:
        numbers: (n,) int64, the number each pair writes out.
        src: (n, S) source ids, padded with PAD_ID. tgt: (n, T) target ids, padded alike.
    """

    numbers: torch.Tensor
    src: torch.Tensor
    tgt: torch.Tensor

    def __len__(self) -> int:
        return int(self.numbers.shape[0])

    def subset(self, index: torch.Tensor) -> EncodedPairs:
        """The pairs at ``index`` ((m,) long or (n,) bool), with all-padding columns dropped."""
        src, tgt = self.src[index], self.tgt[index]
        S = max(int((src != PAD_ID).sum(dim=1).max()), 1) if len(src) else 1
        T = max(int((tgt != PAD_ID).sum(dim=1).max()), 1) if len(tgt) else 1
        return EncodedPairs(self.numbers[index], src[:, :S], tgt[:, :T])


@dataclass(frozen=True)
class Pipeline:
    """How texts become ids: a segmenter and a vocabulary for each side."""

    source: Segmenter
    target: Segmenter
    source_vocab: Vocabulary
    target_vocab: Vocabulary
    source_lang: str = "en"
    target_lang: str = "de"

    def encode_source(self, text: str) -> torch.Tensor:
        """One source text -> (S,) ids."""
        return self.source_vocab.encode(self.source.split(text))

    def encode_target(self, text: str) -> torch.Tensor:
        """One target text -> (T,) ids."""
        return self.target_vocab.encode(self.target.split(text))

    def decode_target(self, ids: torch.Tensor) -> str:
        """(L,) target ids (BOS and padding skipped, up to EOS) -> text ("" if none)."""
        tokens = self.target_vocab.decode(ids)
        return self.target.join(tokens) if tokens else ""

    def encode(self, corpus: ParallelCorpus) -> EncodedPairs:
        """Every pair of ``corpus`` as padded ids."""
        src = _padded([self.encode_source(t) for t in corpus.source])
        tgt = _padded([self.encode_target(t) for t in corpus.target])
        return EncodedPairs(torch.tensor(corpus.numbers, dtype=torch.long), src, tgt)


def _padded(rows: list[torch.Tensor]) -> torch.Tensor:
    """(n_i,) id rows as one (B, max n_i) tensor padded right with PAD_ID (``torch``'s padding:
    ``core.batching.pad_sequences`` checks every row, which texts from a vocabulary need not)."""
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=PAD_ID)


TARGET_KINDS = ("morphemes", "words")


def build_pipeline(train: ParallelCorpus, target: str | int = "morphemes") -> Pipeline:
    """Segmenters and vocabularies learned from the training corpus only.

    Args:
        train: the training pairs. target: "morphemes" (German, by rule), "words" (e.g.
            French), or an int: the size of a byte-pair encoding learned on the targets of
            ``train``. The source side is always cut into words.
    """
    if isinstance(target, str):
        check_choice("target", target, TARGET_KINDS)  # any other name would cut into words
        target_segmenter: Segmenter = (GermanMorphemes() if target == "morphemes"
                                       else WordSegmenter())
    else:
        target_segmenter = learn_bpe(train.target, target)
    source_segmenter = WordSegmenter()
    source_vocab = Vocabulary.build(source_segmenter.split(t) for t in train.source)
    target_lists = [target_segmenter.split(t) for t in train.target]
    if isinstance(target_segmenter, BPESegmenter):  # every symbol of the encoding, used or not
        target_lists.append(list(target_segmenter.tokenizer.get_vocab()))
    target_vocab = Vocabulary.build(target_lists)
    return Pipeline(source_segmenter, target_segmenter, source_vocab, target_vocab,
                    train.source_lang, train.target_lang)

