"""The chapter's data: verse pairs split by whole book, a joint BPE, and batches of about N tokens.

The split holds out whole books, so no verse of a test book was seen in training, nor its
neighbour. Books that retell each other (Samuel and Kings with Chronicles, the four Gospels,
Jude with 2 Peter, Kings with Isaiah 36-39 and Jeremiah 52, Ezra with Nehemiah) all stay in
training: a held-out book with a near-copy in training would be scored on text the model saw.
The held-out books mix the kinds of text: story, poetry, wisdom, prophecy and letters.
"""

from __future__ import annotations

import lzma
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID, Batch, make_batch
from transformer_course.core.checks import check_instance, check_int

HERE = Path(__file__).parent
CORPUS = HERE / "corpus.tsv.xz"
BPE = HERE / "bpe.json"
TEST_BOOKS = ("Ruth", "Eccl", "Dan", "1Cor")
VALIDATION_BOOKS = ("Esth", "Lam", "Amos", "Gal", "Phil", "1Thess", "Titus", "Phlm", "Jas")
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")  # ids 0, 1, 2, 3: PAD_ID, BOS_ID, EOS_ID
UNK_ID = 3
BPE_SIZE = 8000
MAX_TRAIN_TOKENS = 128  # longer training verses are dropped (a handful; the model takes 256)


@dataclass(frozen=True)
class Verse:
    """One verse pair: where it stands, and its English and Spanish text."""

    book: str
    chapter: int
    verse: int
    english: str
    spanish: str


def load_verses(path: Path = CORPUS) -> list[Verse]:
    """Every verse pair of the shipped corpus (``extract.py`` made it), in canonical order."""
    lines = lzma.decompress(path.read_bytes()).decode("utf-8").splitlines()
    return [Verse(book, int(chapter), int(verse), english, spanish)
            for book, chapter, verse, english, spanish in (line.split("\t") for line in lines)]


def split_by_book(verses: Sequence[Verse]) -> dict[str, list[Verse]]:
    """{"train", "validation", "test"}: the test and validation books held out whole."""
    sets: dict[str, list[Verse]] = {"train": [], "validation": [], "test": []}
    for verse in verses:
        name = ("test" if verse.book in TEST_BOOKS else
                "validation" if verse.book in VALIDATION_BOOKS else "train")
        sets[name].append(verse)
    return sets


def train_bpe(texts: Sequence[str], vocab_size: int = BPE_SIZE) -> Tokenizer:
    """A byte-pair encoding learned on ``texts`` (both languages: one vocabulary, as the paper
    shared one between English and German). Words are cut at spaces and punctuation is cut off
    them ("tierra." is "▁tierra" "."), and a piece that follows a space carries "▁"
    (SentencePiece's marker), so decoding restores the spaces."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(),
                                                       pre_tokenizers.Punctuation()])
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def load_bpe(path: Path = BPE) -> Tokenizer:
    """The BPE the stored models were trained with."""
    return Tokenizer.from_file(str(path))


def encode(tokenizer: Tokenizer, texts: Sequence[str]) -> list[torch.Tensor]:
    """Each text as a 1-D tensor of ids (no BOS or EOS)."""
    return [torch.tensor(e.ids, dtype=torch.long)  # _fast: without the character offsets
            for e in tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)]


def decode(tokenizer: Tokenizer, ids: torch.Tensor) -> str:
    """One output row (BOS, tokens, EOS, padding) as text."""
    tokens = [int(i) for i in ids if int(i) not in (PAD_ID, BOS_ID)]
    if EOS_ID in tokens:
        tokens = tokens[:tokens.index(EOS_ID)]
    return tokenizer.decode(tokens)


@dataclass(frozen=True)
class Pairs:
    """Sources and targets as id tensors, with their texts."""

    src: list[torch.Tensor]
    tgt: list[torch.Tensor]
    src_text: list[str]
    tgt_text: list[str]

    def __len__(self) -> int:
        return len(self.src)

    def spread(self, n: int | None) -> Pairs:
        """``n`` pairs spaced evenly through the set (every book has its share); all if None."""
        if n is None or n >= len(self):
            return self
        rows = torch.linspace(0, len(self) - 1, n).round().long().tolist()
        return Pairs(*([items[i] for i in rows] for items in (self.src, self.tgt, self.src_text,
                                                              self.tgt_text)))

    def batch(self, rows: Sequence[int], device: str | torch.device = "cpu") -> Batch:
        """A teacher-forcing batch of the pairs ``rows``, on ``device``."""
        batch = make_batch([self.src[i] for i in rows], [self.tgt[i] for i in rows])
        return Batch(*(t.to(device) for t in (batch.src, batch.src_mask, batch.tgt_in,
                                              batch.tgt_out, batch.tgt_mask)), batch.pad_id)


def pairs(tokenizer: Tokenizer, verses: Sequence[Verse], source: str = "spanish",
          max_tokens: int | None = None) -> Pairs:
    """The verses as (source, target) pairs: Spanish to English by default. ``max_tokens``
    drops a pair whose either side is longer (training only; held-out sets keep every verse)."""
    target = "english" if source == "spanish" else "spanish"
    src_text = [getattr(v, source) for v in verses]
    tgt_text = [getattr(v, target) for v in verses]
    src, tgt = encode(tokenizer, src_text), encode(tokenizer, tgt_text)
    keep = [i for i in range(len(src))
            if max_tokens is None or max(len(src[i]), len(tgt[i])) <= max_tokens]
    return Pairs([src[i] for i in keep], [tgt[i] for i in keep], [src_text[i] for i in keep],
                 [tgt_text[i] for i in keep])


class Counted:
    """Batches for ``core.train``, counting the tokens they hold: ``tokens``, the count so far,
    and ``history``, the count after each batch. ``make(rows, device)`` returns a batch of the
    rows and its token count."""

    def __init__(self, make: Callable[[list[int], str], tuple[Any, int]],
                 rows: Iterator[list[int]], device: str = "cpu") -> None:
        self.make, self.rows, self.device = make, rows, device
        self.history: list[int] = []

    @property
    def tokens(self) -> int:
        return self.history[-1] if self.history else 0

    def __iter__(self) -> Counted:
        return self

    def __next__(self) -> Any:
        batch, tokens = self.make(next(self.rows), self.device)
        self.history.append(self.tokens + tokens)
        return batch


def pair_batches(pairs: Pairs, max_tokens: int, generator: torch.Generator,
                 device: str = "cpu") -> Counted:
    """Endless teacher-forcing batches of ``pairs`` (:func:`token_batches`: similar lengths, at
    most ``max_tokens`` padded tokens), counting the tokens each holds: the source's and the
    target's labels (its pieces and EOS)."""
    check_instance("pairs", pairs, Pairs)
    check_int("max_tokens", max_tokens)
    check_instance("generator", generator, torch.Generator)
    lengths = [max(len(s) + 2, len(t) + 1) for s, t in zip(pairs.src, pairs.tgt, strict=True)]

    def make(rows: list[int], device: str) -> tuple[Batch, int]:
        return pairs.batch(rows, device), sum(len(pairs.src[r]) + len(pairs.tgt[r]) + 1
                                              for r in rows)

    return Counted(make, token_batches(lengths, max_tokens, generator), device)


def token_batches(lengths: Sequence[int], max_tokens: int, generator: torch.Generator,
                  ) -> Iterator[list[int]]:
    """Endless batches of row indices, each of similar lengths and at most ``max_tokens`` padded
    tokens (rows x longest row): every epoch, rows are shuffled, sorted by length within pools
    of 100 batches' worth, cut into batches, and the batches shuffled."""
    lengths = torch.as_tensor(lengths)
    pool = max(100 * max_tokens // max(int(lengths.float().mean()), 1), 1)
    while True:
        order = torch.randperm(len(lengths), generator=generator)
        batches: list[list[int]] = []
        for start in range(0, len(order), pool):
            chunk = order[start:start + pool]
            chunk = chunk[torch.argsort(lengths[chunk], stable=True)]
            rows: list[int] = []
            for row in chunk.tolist():  # ascending lengths: the new row is the longest
                if rows and (len(rows) + 1) * int(lengths[row]) > max_tokens:
                    batches.append(rows)
                    rows = []
                rows.append(row)
            if rows:
                batches.append(rows)
        for i in torch.randperm(len(batches), generator=generator).tolist():
            yield batches[i]
