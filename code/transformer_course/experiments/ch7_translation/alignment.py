"""Gold word alignments of number words, and how often cross-attention finds them.

Each English token and each German morpheme has a *role*: the group it belongs to (the
thousands, before "thousand"/"tausend", or the units after it) and its slot in that group:

    slot        English                German
    hundreds    "seven" (hundred)      "sieben" (hundert)
    hundred     "hundred"              "hundert"
    tens        "seventy"              "sieb" and "zig" (siebzig), "zwanzig"
    und         "-" (seventy-seven)    "und" (siebenundsiebzig)
    units       "seven"                "sieben"
    teen        "seventeen"            "sieb" and "zehn" (siebzehn), "elf", "zwölf"
    thousand    "thousand"             "tausend"

("and" and "," have no German morpheme.) A German morpheme's gold alignment is the English
tokens with its role. For 45: fünf -> five, und -> "-", vier -> forty, zig -> forty: the units
come first in German, so the alignment crosses.

The score of a layer and head: the fraction of target tokens whose strongest cross-attention
weight, at the decoder position that *predicts* the token (teacher-forced), falls on a gold
source token. For other target pieces (BPE) there are two scores: per piece, a hit on any word
of the morphemes it covers (lenient: a long piece has many gold words), and per morpheme, a hit
on that morpheme's own words by the query of the piece that holds it (strict, and comparable
across segmentations: one query cannot point at the four words of "neunhundertneunund").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from transformer_course.core.model import Transformer

from .number_corpus import number_words
from .pipeline import EncodedPairs
from .recipe import pair_batch
from .subwords import GermanMorphemes, WordSegmenter

Role = tuple[str, str]  # (group, slot), e.g. ("thousands", "tens"); ("", "thousand")
ENGLISH_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
ENGLISH_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                 "seventeen", "eighteen", "nineteen")
ENGLISH_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
GERMAN_DIGITS = ("ein", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht",
                 "neun")
KINDS = ("hundreds digit", "hundert", "units digit", "tens stem", "zig/ßig", "und", "teen",
         "tausend")


def _groups(tokens: Sequence[str], thousand: str) -> list[tuple[str, list[int]]]:
    """Indices of the tokens before and after the ``thousand`` token, with their group."""
    if thousand in tokens:
        i = list(tokens).index(thousand)
        return [("thousands", list(range(i))), ("units", list(range(i + 1, len(tokens))))]
    return [("units", list(range(len(tokens))))]


def english_roles(tokens: Sequence[str]) -> list[Role | None]:
    """The role of every English token (None for "and" and ",")."""
    roles: list[Role | None] = [None] * len(tokens)
    for group, index in _groups(tokens, "thousand"):
        for k, i in enumerate(index):
            word = tokens[i]
            if word == "hundred":
                roles[i] = (group, "hundred")
            elif k + 1 < len(index) and tokens[index[k + 1]] == "hundred":
                roles[i] = (group, "hundreds")
            elif word == "-":
                roles[i] = (group, "und")
            elif word in ENGLISH_TENS:
                roles[i] = (group, "tens")
            elif word in ENGLISH_TEENS:
                roles[i] = (group, "teen")
            elif word in ENGLISH_UNITS:
                roles[i] = (group, "units")
    if "thousand" in tokens:
        roles[list(tokens).index("thousand")] = ("", "thousand")
    return roles


def german_roles(morphemes: Sequence[str]) -> list[tuple[Role, str]]:
    """The role and kind (one of :data:`KINDS`) of every German morpheme."""
    out: list[tuple[Role, str] | None] = [None] * len(morphemes)
    for group, index in _groups(morphemes, "tausend"):
        words = [morphemes[i] for i in index]
        start = 0
        if "hundert" in words:
            h = words.index("hundert")
            out[index[h]] = ((group, "hundred"), "hundert")
            if h:
                out[index[h - 1]] = ((group, "hundreds"), "hundreds digit")
            start = h + 1
        rest = index[start:]
        rest_words = words[start:]
        teen = (rest_words in (["zehn"], ["elf"], ["zwölf"])
                or (len(rest_words) == 2 and rest_words[1] == "zehn"))
        for k, i in enumerate(rest):
            word = morphemes[i]
            if teen:
                out[i] = ((group, "teen"), "teen")
            elif word == "und":
                out[i] = ((group, "und"), "und")
            elif word in ("zig", "ßig"):
                out[i] = ((group, "tens"), "zig/ßig")
            elif word == "zwanzig" or (k + 1 < len(rest) and morphemes[rest[k + 1]]
                                       in ("zig", "ßig")):
                out[i] = ((group, "tens"), "tens stem")
            elif word in GERMAN_DIGITS:
                out[i] = ((group, "units"), "units digit")
    if "tausend" in morphemes:
        out[list(morphemes).index("tausend")] = (("", "thousand"), "tausend")
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class GoldAlignment:
    """The gold alignment of one number.

    Attributes:
        english: the English tokens (words, "-" and ","). german: the German morphemes.
        links: for each morpheme, the indices of the English tokens it means.
        kinds: for each morpheme, its kind (one of :data:`KINDS`).
    """

    english: tuple[str, ...]
    german: tuple[str, ...]
    links: tuple[tuple[int, ...], ...]
    kinds: tuple[str, ...]

    def pairs(self) -> list[tuple[str, str]]:
        """(morpheme, English words it aligns to), for reading."""
        return [(g, " ".join(self.english[i] for i in link))
                for g, link in zip(self.german, self.links, strict=True)]


def gold_alignment(number: int) -> GoldAlignment:
    """The gold alignment of ``number``'s German morphemes to its English tokens."""
    english = WordSegmenter().split(number_words(number, "en"))
    german = GermanMorphemes().split(number_words(number, "de"))
    e_roles = english_roles(english)
    g_roles = german_roles(german)
    links = tuple(tuple(i for i, r in enumerate(e_roles) if r == role) for role, _ in g_roles)
    assert all(links), f"no English token for a morpheme of {number}"
    return GoldAlignment(tuple(english), tuple(german), links,
                         tuple(kind for _, kind in g_roles))


def _spans(parts: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) character offsets of consecutive parts of one word."""
    spans, start = [], 0
    for part in parts:
        spans.append((start, start + len(part)))
        start += len(part)
    return spans


def project_links(morphemes: Sequence[str], links: Sequence[Sequence[int]],
                  pieces: Sequence[str]) -> list[tuple[int, ...]]:
    """Gold links of other pieces of the same word (e.g. BPE): each piece gets the links of
    every morpheme its characters overlap."""
    return [tuple(sorted({i for (a, b), link in zip(_spans(morphemes), links, strict=True)
                          if a < end and start < b for i in link}))
            for start, end in _spans(pieces)]


def piece_of_morpheme(morphemes: Sequence[str], pieces: Sequence[str]) -> list[int]:
    """For each morpheme, the index of the piece holding its first character."""
    piece_spans = _spans(pieces)
    return [next(j for j, (a, b) in enumerate(piece_spans) if a <= start < b)
            for start, _ in _spans(morphemes)]


@dataclass(frozen=True)
class AlignmentScores:
    """Cross-attention alignment over a set of pairs.

    Attributes:
        per_head: (N_dec, h) fraction of target tokens whose strongest weight in that layer and
            head falls on a gold source token.
        per_layer: (N_dec,) the same for the layer's weights averaged over heads.
        kinds: {kind: (N_dec, h) fraction} for the items of each kind.
        tokens: how many items (target tokens, or morphemes) were scored.
    """

    per_head: torch.Tensor
    per_layer: torch.Tensor
    kinds: dict[str, torch.Tensor]
    tokens: int

    def best_head(self) -> tuple[int, int, float]:
        """(layer, head, score) of the head that aligns best (0-based)."""
        flat = int(self.per_head.argmax())
        layer, head = divmod(flat, self.per_head.shape[1])
        return layer, head, float(self.per_head[layer, head])


@torch.no_grad()
def alignment_scores(model: Transformer, pairs: EncodedPairs,
                     links: Sequence[Sequence[Sequence[int]]],
                     kinds: Sequence[Sequence[str]] | None = None,
                     positions: Sequence[Sequence[int]] | None = None) -> AlignmentScores:
    """Score every decoder layer and head of ``model`` against gold links.

    Args:
        model: a trained Transformer. pairs: n pairs (sources are wrapped in BOS/EOS, so source
            token i sits at position i + 1).
        links: for pair b, one entry per scored item: the gold source token indices.
        kinds: optional kind of each item, for a score per kind.
        positions: for pair b, the target token whose query scores each item; None: item t is
            target token t (one item per target token). Several items may share a token, e.g.
            the morphemes inside one BPE piece: one query cannot point at all their words.
    """
    if positions is None:
        positions = [range(n) for n in (pairs.tgt != 0).sum(dim=1).tolist()]
    batch = pair_batch(pairs)
    maps = model.attention_maps(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)["cross"]
    item_b = torch.tensor([b for b, p in enumerate(positions) for _ in p])  # (N,)
    item_t = torch.tensor([t for p in positions for t in p])  # (N,)
    gold = torch.zeros(len(item_b), batch.src.shape[1], dtype=torch.bool)  # (N, S)
    for n, link in enumerate(link for pair_links in links for link in pair_links):
        gold[n, [i + 1 for i in link]] = True
    per_head, per_layer, hits_by_head = [], [], []
    for weights in maps:  # (B, h, T, S) each
        top = weights.argmax(dim=-1)[item_b, :, item_t]  # (N, h): the strongest source position
        hit = gold.gather(1, top)  # (N, h)
        hits_by_head.append(hit)
        per_head.append(hit.float().mean(dim=0))
        mean_top = weights.mean(dim=1).argmax(dim=-1)[item_b, item_t]  # (N,)
        per_layer.append(gold.gather(1, mean_top[:, None]).float().mean())
    by_kind: dict[str, torch.Tensor] = {}
    if kinds is not None:
        flat = [k for row in kinds for k in row]
        for kind in sorted(set(flat)):
            mask = torch.tensor([k == kind for k in flat])  # (N,)
            by_kind[kind] = torch.stack([h[mask].float().mean(dim=0) for h in hits_by_head])
    return AlignmentScores(torch.stack(per_head), torch.stack(per_layer), by_kind,
                           len(item_b))
