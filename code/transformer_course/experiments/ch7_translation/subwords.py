"""Cutting number words into tokens: words, German morphemes, or a learned byte-pair encoding.

A *segmenter* turns a text into a list of token strings (``split``) and back (``join``); the round
trip gives the text back exactly. Three kinds:

- :class:`WordSegmenter`: English or French words, with "-" and "," as tokens of their own
  ("forty-five" -> forty - five). English number words are already morphemes, so the source
  side always uses it.
- :class:`GermanMorphemes`: a German number word cut by rule into its morphemes, longest match
  first ("fünfundvierzig" -> fünf und vier zig); a fixed inventory of 22 morphemes.
- :class:`BPESegmenter`: a byte-pair encoding learned with HuggingFace ``tokenizers`` on training
  texts only, as the paper did (37,000 tokens shared by English and German; here a few hundred).
  Words after the first of a text start with "▁", so ``join`` can restore the spaces; a German
  number is one word, so its pieces carry no marker and join by concatenation.

:class:`Vocabulary` maps tokens to ids, with padding, BOS and EOS at 0, 1, 2 as in
``core.batching``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID

WORD_START = "▁"  # marks a BPE piece that begins a new word (SentencePiece's convention)
GERMAN_MORPHEMES = (  # every morpheme of the German number words 1 .. 999,999
    "ein", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sech", "sieben", "sieb", "acht",
    "neun", "zehn", "elf", "zwölf", "zwanzig", "zig", "ßig", "und", "hundert", "tausend", "null",
)
_WORD_PATTERN = re.compile(r"[^\s,-]+|[,-]")


class Segmenter(Protocol):
    """What every segmenter offers: a name, and a lossless split and join."""

    name: str

    def split(self, text: str) -> list[str]:
        """Cut ``text`` into tokens."""
        ...

    def join(self, tokens: Sequence[str]) -> str:
        """The text the tokens came from."""
        ...


class WordSegmenter:
    """Words, with "-" and "," as tokens: "one thousand, two hundred and thirty-four" ->
    one thousand , two hundred and thirty - four."""

    name = "words"

    def split(self, text: str) -> list[str]:
        """Cut ``text`` at spaces, and around every "-" and ","."""
        return _WORD_PATTERN.findall(text)

    def join(self, tokens: Sequence[str]) -> str:
        """Words joined by spaces; no space before "," nor around "-"."""
        text = ""
        for i, token in enumerate(tokens):
            glued = i == 0 or token in (",", "-") or tokens[i - 1] == "-"
            text += token if glued else " " + token
        return text


class GermanMorphemes:
    """German number words cut into morphemes by longest match: "einundzwanzig" -> ein und
    zwanzig, "siebzehntausend" -> sieb zehn tausend, "dreißig" -> drei ßig."""

    name = "morphemes"

    def __init__(self) -> None:
        self.inventory = tuple(sorted(GERMAN_MORPHEMES, key=len, reverse=True))
        # an alternation tries its branches in order: the longest morpheme that matches wins
        self._longest = re.compile("|".join(map(re.escape, self.inventory)))

    def split(self, text: str) -> list[str]:
        """Morphemes of a German number word (one word, no spaces); ValueError if ``text`` is
        not made of the inventory's morphemes."""
        tokens, i = [], 0
        while i < len(text):
            match = self._longest.match(text, i)
            if match is None:
                raise ValueError(f"text must be a German number word made of the morphemes "
                                 f"{GERMAN_MORPHEMES}; got {text!r}, stuck at {text[i:]!r}")
            tokens.append(match.group())
            i = match.end()
        return tokens

    def split_lenient(self, text: str) -> list[str]:
        """Like :meth:`split`, but a character that starts no morpheme becomes a token of its
        own (for scoring a model's output, which need not be a number word)."""
        tokens, i = [], 0
        while i < len(text):
            match = self._longest.match(text, i)
            token = match.group() if match else text[i]
            tokens.append(token)
            i += len(token)
        return tokens

    def join(self, tokens: Sequence[str]) -> str:
        """The morphemes written together as one word."""
        return "".join(tokens)


def uniquely_decodable(pieces: Iterable[str]) -> bool:
    """Whether no two different sequences of ``pieces`` join (written together) into the same
    text: the Sardinas-Patterson test. It follows the "dangling" rests a piece leaves where it
    is the start of another piece or of a rest; the pieces are ambiguous exactly when some rest
    is itself a piece ("eins" = "ein" + "s" would be, were "s" a piece)."""
    code = set(pieces)

    def rests(fronts: set[str], wholes: set[str]) -> set[str]:
        return {w[len(f):] for f in fronts for w in wholes if w.startswith(f) and w != f}

    dangling, seen = rests(code, code), set()
    while dangling - seen:
        if dangling & code:
            return False
        seen |= dangling
        dangling = rests(code, dangling) | rests(dangling, code)
    return True


class BPESegmenter:
    """A byte-pair encoding learned by HuggingFace ``tokenizers`` (see :func:`learn_bpe`).

    Args:
        tokenizer: a trained ``tokenizers.Tokenizer`` with a BPE model.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.name = f"BPE {tokenizer.get_vocab_size()}"

    @property
    def vocab_size(self) -> int:
        """Symbols the encoding knows: the initial characters plus one per merge."""
        return self.tokenizer.get_vocab_size()

    def merges(self) -> list[tuple[str, str]]:
        """The learned merges in the order they apply (what a reimplementation needs)."""
        state = json.loads(self.tokenizer.to_str())["model"]["merges"]
        return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state]

    def split(self, text: str) -> list[str]:
        """BPE pieces of each word; the first piece of every word after the first starts with
        :data:`WORD_START`."""
        pieces: list[str] = []
        for i, word in enumerate(text.split(" ")):
            encoded = self.tokenizer.encode(word).tokens
            if "".join(encoded) != word:
                raise ValueError(f"text must use only characters seen in training; "
                                 f"{word!r} came back as {encoded}")
            pieces += [WORD_START + encoded[0] if i else encoded[0], *encoded[1:]]
        return pieces

    def join(self, tokens: Sequence[str]) -> str:
        """Pieces concatenated, :data:`WORD_START` read as a space."""
        return "".join(tokens).replace(WORD_START, " ")


def learn_bpe(texts: Iterable[str], vocab_size: int) -> BPESegmenter:
    """Learn a byte-pair encoding of ``vocab_size`` symbols from ``texts`` (training split only).

    Words are learned separately (split at spaces); the initial alphabet is every character
    seen, and each merge adds one symbol until ``vocab_size`` is reached (or nothing is left to
    merge). Deterministic: the same texts give the same merges.
    """
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[],
                                  show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    return BPESegmenter(tokenizer)


SPECIALS = ("<pad>", "<s>", "</s>")  # ids PAD_ID, BOS_ID, EOS_ID


class Vocabulary:
    """Token strings <-> ids; ids 0, 1, 2 are padding, BOS and EOS (``core.batching``).

    Args:
        tokens: the content tokens, in id order (ids 3, 4, ...); no duplicates, no specials.
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2)
        self.tokens: tuple[str, ...] = (*SPECIALS, *tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> Vocabulary:
        """Every token of ``token_lists`` (e.g. the segmented training split), sorted."""
        seen: set[str] = set()
        for tokens in token_lists:
            seen.update(tokens)
        return cls(sorted(seen))

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str]) -> torch.Tensor:
        """Tokens -> (n,) long ids (no BOS/EOS: ``core.batching`` adds them)."""
        return torch.tensor([self.ids[t] for t in tokens], dtype=torch.long)

    def decode(self, ids: Sequence[int] | torch.Tensor) -> list[str]:
        """Ids -> tokens, skipping padding and BOS and stopping at the first EOS."""
        tokens = []
        for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
            if i == EOS_ID:
                break
            if i not in (PAD_ID, BOS_ID):
                tokens.append(self.tokens[i])
        return tokens
