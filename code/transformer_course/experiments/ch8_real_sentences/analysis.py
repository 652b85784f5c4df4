"""What the chapter measures on the stored models: a trivial baseline, the kinds of error, and
what masking a source word does to the translation."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations
from typing import Any

import pandas as pd
import torch

from transformer_course.core.decoding import greedy_decode, smallest_lead
from transformer_course.core.masks import padding_mask_from_tokens
from transformer_course.core.model import Transformer

from . import data, models, stored_models, weights

_WORD = re.compile(r"[A-Za-z’']+")
_OPENING = re.compile(r"[.!?:;“‘\"(][”’\"]*$")  # what may come before a sentence's first word


@cache
def stored() -> dict[str, Any]:
    """The stored study ``ch8-stored-models`` (scores, curves, outputs, samples)."""
    return stored_models.STUDY.load()


def translator() -> Transformer:
    """The stored translator, in eval mode, on the CPU."""
    return stored_models.load_translator(stored_models.HERE / "translator.bin")


def writer() -> models.DecoderOnly:
    """The stored decoder-only model, in eval mode, on the CPU."""
    model = models.DecoderOnly(models.writer_config(data.load_bpe().get_vocab_size()))
    model.load_state_dict(weights.load_state(stored_models.HERE / "writer.bin"))
    return model.eval()


def words(text: str) -> list[str]:
    """The words of an English text, punctuation dropped."""
    return _WORD.findall(text)


@lru_cache(maxsize=2)
def _word_counts(texts: tuple[str, ...]) -> Counter[str]:
    """How often each word occurs in ``texts``, counted once for every function below that asks
    about the same training English (the callers only read it)."""
    return Counter(w for text in texts for w in words(text))


def names(text: str) -> list[str]:
    """Capitalised words that do not start a sentence or a quotation: names, mostly (and "God",
    "Lord" and their like, which the WEB capitalises)."""
    found = []
    for match in re.finditer(r"\b[A-Z][a-z]+\b", text):
        before = text[:match.start()].rstrip()
        if before and not _OPENING.search(before):
            found.append(match.group())
    return found


def recall(hypotheses: Sequence[str], references: Sequence[str], pick: Any) -> float:
    """The fraction of the references' words chosen by ``pick`` (text -> words) that the
    matching output contains (each counted at most as often as the output has it)."""
    found = total = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        wanted, have = Counter(pick(ref)), Counter(words(hyp))
        found += sum(min(n, have[w]) for w, n in wanted.items())
        total += sum(wanted.values())
    return found / max(total, 1)


@dataclass(frozen=True)
class ErrorKinds:
    """Recall of kinds of reference word in the outputs, and output length against reference."""

    name_recall: float  # names (capitalised mid-sentence)
    rare_name_recall: float  # names seen 1 to 4 times in training
    common_recall: float  # lower-case words seen 100 times or more in training
    rare_recall: float  # lower-case words seen 1 to 4 times in training
    unseen_recall: float  # lower-case words never seen in training English
    length_ratio: float  # output words / reference words
    short_ratio: float  # the same for the third of sources that are shortest
    long_ratio: float  # and for the longest third


def error_kinds(hypotheses: Sequence[str], references: Sequence[str], sources: Sequence[str],
                training_english: Sequence[str]) -> ErrorKinds:
    """How the outputs fare on names, common, rare and unseen words, and length."""
    counts = _word_counts(tuple(training_english))

    def lower(lo: int, hi: float) -> Any:
        return lambda text: [w for w in words(text) if w.islower() and lo <= counts[w] <= hi]

    def ratio(rows: Sequence[int]) -> float:
        return (sum(len(words(hypotheses[i])) for i in rows)
                / sum(len(words(references[i])) for i in rows))

    by_length = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    third = len(by_length) // 3
    def rare_names(text: str) -> list[str]:
        return [w for w in names(text) if 1 <= counts[w] <= 4]

    return ErrorKinds(recall(hypotheses, references, names),
                      recall(hypotheses, references, rare_names),
                      recall(hypotheses, references, lower(100, float("inf"))),
                      recall(hypotheses, references, lower(1, 4)),
                      recall(hypotheses, references, lower(0, 0)),
                      ratio(range(len(sources))), ratio(by_length[:third]),
                      ratio(by_length[-third:]))


MISSED_BANDS = ("common words (100+ times in training)", "words seen 5-99 times",
                "words seen 1-4 times", "words never seen", "names (capitalised)",
                "capitalised words opening a sentence")


def missed_words(hypotheses: Sequence[str], references: Sequence[str],
                 training_english: Sequence[str]) -> dict[str, float]:
    """Where the reference words an output misses fall: the share of every missed word (each
    counted as often as the reference has it beyond the output) in each of
    :data:`MISSED_BANDS`, lower-case words by how often the training English has them."""
    counts = _word_counts(tuple(training_english))

    def band(word: str, named: set[str]) -> str:
        if not word.islower():
            return MISSED_BANDS[4] if word in named else MISSED_BANDS[5]
        seen = counts[word]
        return MISSED_BANDS[0 if seen >= 100 else 1 if seen >= 5 else 2 if seen >= 1 else 3]

    bands: Counter[str] = Counter()
    for hyp, ref in zip(hypotheses, references, strict=True):
        named = set(names(ref))
        for word, n in (Counter(words(ref)) - Counter(words(hyp))).items():
            bands[band(word, named)] += n
    total = sum(bands.values())
    return {name: bands[name] / total for name in MISSED_BANDS}


def common_misses_among(hypotheses: Sequence[str], references: Sequence[str],
                        training_english: Sequence[str], most_frequent: int) -> float:
    """Of the missed common words (:func:`missed_words`' first band), the share that are among
    the training English's ``most_frequent`` lower-case words ("the", "and", "of", ...)."""
    counts = Counter({w: n for w, n in _word_counts(tuple(training_english)).items()
                      if w.islower()})  # in first-seen order, as most_common's ties need
    top = {w for w, _ in counts.most_common(most_frequent)}
    common = among = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        for word, n in (Counter(words(ref)) - Counter(words(hyp))).items():
            if word.islower() and counts[word] >= 100:
                common += n
                among += n * (word in top)
    return among / common


@dataclass(frozen=True)
class NearCopy:
    """A held-out text that shares many of its word n-grams with one training text."""

    held_out: int  # its index among the held-out texts
    training: int  # the training text it shares the most n-grams with
    share: float  # the share of its distinct n-grams found in that training text


def near_copies(held_out: Sequence[str], training: Sequence[str], n: int = 4,
                share: float = 0.5) -> list[NearCopy]:
    """The held-out texts with at least ``share`` of their distinct word n-grams (lower-cased
    words, punctuation dropped) in one training text, in the held-out order."""
    def grams(text: str) -> set[tuple[str, ...]]:
        w = words(text.lower())
        return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}

    held_grams = [grams(text) for text in held_out]
    wanted = set().union(*held_grams)
    where: dict[tuple[str, ...], list[int]] = {}
    for j, text in enumerate(training):
        for gram in grams(text) & wanted:
            where.setdefault(gram, []).append(j)
    found = []
    for i, own in enumerate(held_grams):
        hits = Counter(j for gram in own for j in where.get(gram, ()))
        if hits:
            j, shared = hits.most_common(1)[0]
            if shared / len(own) >= share:
                found.append(NearCopy(i, j, shared / len(own)))
    return found


@dataclass(frozen=True)
class WordOrder:
    """How far outputs keep their references' word order."""

    pairs_in_order: float  # of the pairs of shared words, the share in the reference's order
    verses_in_order: float  # of the verses with such a pair, the share with every pair in order


def word_order(hypotheses: Sequence[str], references: Sequence[str]) -> WordOrder:
    """Word order, on the words (lower-cased) found exactly once in both an output and its
    reference: a pair of them is in order when the output puts them as the reference does (a
    concordant pair, as in Kendall's tau). A shuffled output scores about 1/2."""
    agree = pairs = verses = perfect = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        out, want = ([w.lower() for w in words(t)] for t in (hyp, ref))
        have, counts = Counter(out), Counter(want)
        shared = [w for w in want if counts[w] == 1 and have[w] == 1]  # in the reference's order
        place = {w: out.index(w) for w in shared}
        ordered = sum(place[a] < place[b] for a, b in combinations(shared, 2))
        total = len(shared) * (len(shared) - 1) // 2
        agree, pairs = agree + ordered, pairs + total
        verses, perfect = verses + (total > 0), perfect + (total > 0 and ordered == total)
    return WordOrder(agree / max(pairs, 1), perfect / max(verses, 1))


@dataclass(frozen=True)
class Reading:
    """One translation with its last decoder layer's cross-attention, heads averaged."""

    source_tokens: list[str]  # <s>, the source pieces, </s>
    output_tokens: list[str]  # the output pieces, </s>
    output: str
    cross: torch.Tensor  # (T, S): row t writes output token t


def _source_ids(tokenizer: Any, source: str) -> list[int]:
    return [data.BOS_ID, *tokenizer.encode(source, add_special_tokens=False).ids, data.EOS_ID]


def _source_mask(src: torch.Tensor, hidden: Sequence[int | None]) -> torch.Tensor:
    """The padding mask of ``src`` (B, S) -> (B, 1, S), with row i's position ``hidden[i]``
    hidden too where given."""
    src_mask = padding_mask_from_tokens(src, data.PAD_ID)
    for row, position in enumerate(hidden):
        if position is not None:
            src_mask[row, 0, position] = False
    return src_mask


@torch.no_grad()
def _translate_all(model: Transformer, sources: Sequence[list[int]],
                   hidden: Sequence[int | None]) -> list[torch.Tensor]:
    """Greedy outputs (<s> .. </s>) of every source at once, source i's position ``hidden[i]``
    hidden from every attention where given. Padding is masked, so a row's output is the one
    it gets alone (up to the rounding of a larger product)."""
    src = torch.nn.utils.rnn.pad_sequence([torch.tensor(ids) for ids in sources],
                                          batch_first=True, padding_value=data.PAD_ID)
    src_mask = _source_mask(src, hidden)
    out = greedy_decode(model, src, models.MAX_LEN, data.BOS_ID, data.EOS_ID, src_mask=src_mask,
                        pad_id=data.PAD_ID)
    return [row[:int((row != data.PAD_ID).sum())] for row in out]


@torch.no_grad()
def _reading(model: Transformer, tokenizer: Any, ids: list[int], out: torch.Tensor,
             hidden: int | None) -> Reading:
    src = torch.tensor([ids])
    maps = model.attention_maps(src, out[None, :-1], _source_mask(src, [hidden]))
    cross = maps["cross"][-1][0].mean(dim=0)  # (T, S)
    pieces = [tokenizer.id_to_token(int(i)) for i in out[1:]]
    return Reading([tokenizer.id_to_token(i) for i in ids], pieces,
                   data.decode(tokenizer, out), cross)


@torch.no_grad()
def read(model: Transformer, tokenizer: Any, source: str,
         hidden: int | None = None) -> Reading:
    """Translate ``source`` greedily, hiding source position ``hidden`` (counting <s> as 0)
    from every attention if given, and read the cross-attention of the last decoder layer."""
    ids = _source_ids(tokenizer, source)
    [out] = _translate_all(model, [ids], [hidden])
    return _reading(model, tokenizer, ids, out, hidden)


# A greedy choice that leads the next piece by more than this many logits is the same on every
# CPU: five numeric paths of one machine (torch's kernel levels, MKL's compatible mode, oneDNN
# capped at AVX2, the oldest torch) moved the page's smallest such lead by under 1e-5.
GREEDY_MARGIN = 1e-3


@torch.no_grad()
def greedy_margin(model: Transformer, tokenizer: Any, source: str,
                  hidden: int | None = None) -> float:
    """How far each greedy choice of :func:`read`'s output leads the next most probable piece, in
    logits, at the step where it leads least. Where that exceeds what rounding can move a logit,
    another CPU writes the same output from these weights."""
    ids = _source_ids(tokenizer, source)
    [out] = _translate_all(model, [ids], [hidden])
    src = torch.tensor([ids])  # (1, S)
    logits = model(src, out[None, :-1], _source_mask(src, [hidden]))[0]  # (T, V)
    return smallest_lead(logits, out[1:])  # row t of the logits wrote out[t + 1]


@dataclass(frozen=True)
class Masking:
    """Hiding the source piece an output word attends to most, against hiding another piece."""

    verses: int  # verses tried
    lost_when_attended_hidden: float  # fraction where the output word disappears
    lost_when_other_hidden: float  # the same when a random other source piece is hidden


@torch.no_grad()
def masking_test(model: Transformer, tokenizer: Any, sources: Sequence[str],
                 seed: int = 0, flattest: bool = False) -> Masking:
    """For each source: translate it, take the output word (a piece starting a word of four or
    more letters) with the strongest cross-attention peak (the weakest if ``flattest``), hide
    that peak's source piece and translate again; then hide a random other piece instead (a
    control). Count how often the word is gone. (The translations run as three batches: all
    sources as they are, then each with its peak hidden, then each with its other piece.)"""
    generator = torch.Generator().manual_seed(seed)
    all_ids = [_source_ids(tokenizer, source) for source in sources]
    tested = []  # (source ids, the word, its attended position, the other position)
    for ids, out in zip(all_ids, _translate_all(model, all_ids, [None] * len(all_ids)),
                        strict=True):
        reading = _reading(model, tokenizer, ids, out, None)
        rows = [t for t, piece in enumerate(reading.output_tokens)
                if piece.startswith("▁") and len(piece) >= 5]
        if not rows:
            continue
        peaks = reading.cross[rows, 1:-1].max(dim=1)  # never <s> or </s>
        best = int(peaks.values.argmin() if flattest else peaks.values.argmax())
        word = reading.output_tokens[rows[best]].lstrip("▁")
        attended = int(peaks.indices[best]) + 1
        others = [s for s in range(1, len(reading.source_tokens) - 1) if s != attended]
        if not others:
            continue
        other = others[int(torch.randint(len(others), (1,), generator=generator))]
        tested.append((ids, word, attended, other))
    if not tested:
        return Masking(0, 0.0, 0.0)

    def gone(hidden: list[int]) -> list[bool]:
        """Whether each tested word is missing from its source's translation with ``hidden``."""
        outputs = _translate_all(model, [t[0] for t in tested], hidden)
        return [word not in words(data.decode(tokenizer, out))
                for (_, word, _, _), out in zip(tested, outputs, strict=True)]

    lost, control = gone([t[2] for t in tested]), gone([t[3] for t in tested])
    return Masking(len(tested), sum(lost) / len(tested), sum(control) / len(tested))


# What the page reads from the stored study ``ch8-stored-models`` (:func:`stored`). Each function
# returns the numbers the page glues; ``stored_models.data_claims`` checks the page's sentences
# about them on the same numbers.


@dataclass(frozen=True)
class DropoutCurves:
    """The two stored translator runs' validation BLEU as they trained (dropout 0.1 and 0.3)."""

    early_tokens: float  # tokens read at the third check
    early_bleu: dict[float, float]  # validation BLEU at the third check, by dropout rate
    final_gap: float  # how far apart the two runs' last checks are, in BLEU
    last_bleu: float  # dropout 0.1's last check
    fourth_last_bleu: float  # dropout 0.1's fourth check from the end
    first_quarter_best: float  # the best BLEU of either run in the first quarter of its tokens


def dropout_curves(results: dict[str, Any]) -> DropoutCurves:
    """The stored runs' curves (``results``: the stored study, :func:`stored`), summarised."""
    points = {r["dropout"]: r["curve"] for r in results["candidate_records"]}
    total = points[0.1][-1]["tokens"]
    return DropoutCurves(
        early_tokens=points[0.1][2]["tokens"],
        early_bleu={d: c[2]["validation_bleu"] for d, c in points.items()},
        final_gap=abs(points[0.1][-1]["validation_bleu"] - points[0.3][-1]["validation_bleu"]),
        last_bleu=points[0.1][-1]["validation_bleu"],
        fourth_last_bleu=points[0.1][-4]["validation_bleu"],
        first_quarter_best=max(p["validation_bleu"] for c in points.values() for p in c
                               if p["tokens"] <= total / 4))


def lowest_validation_loss_tokens(record: dict[str, Any]) -> float:
    """The tokens a stored translator (``record``: its entry in :func:`stored`) had read at the
    check with its lowest validation loss."""
    return min(record["curve"], key=lambda point: point["validation_loss"])["tokens"]


def exact_matches(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """The share of outputs identical to their reference."""
    return sum(h == r for h, r in zip(hypotheses, references, strict=True)) / len(references)


@dataclass(frozen=True)
class Errors:
    """What the stored translator gets wrong on the test books (its stored outputs)."""

    kinds: dict[str, ErrorKinds]  # "greedy" and "beam" outputs
    order: WordOrder  # the greedy outputs' word order
    shuffled: WordOrder  # the same outputs, each shuffled (a seeded baseline)
    frequent_names: float  # share of the references' names seen 100 times or more in training
    ruth: dict[int, str]  # the greedy outputs of Ruth 1:2 and 1:3, by verse


def errors(results: dict[str, Any], sets: dict[str, list[data.Verse]]) -> Errors:
    """The kinds of error in the stored test outputs (``results``: :func:`stored`), against the
    test books of ``sets`` (:func:`data.split_by_book`) and the English of its training books."""
    outputs = results["outputs"]
    refs = [v.english for v in sets["test"]]
    sources = [v.spanish for v in sets["test"]]
    training_english = [v.english for v in sets["train"]]
    kinds = {how: error_kinds(outputs[f"test_{how}"], refs, sources, training_english)
             for how in ("greedy", "beam")}
    shuffle = random.Random(0)
    shuffled = word_order([" ".join(shuffle.sample(h.split(), len(h.split())))
                           for h in outputs["test_greedy"]], refs)
    name_counts = pd.Series([n for r in refs for n in names(r)]).map(
        pd.Series(training_english).str.split().explode().str.strip(",.;:!?“”‘’").value_counts())
    ruth = {v.verse: outputs["test_greedy"][i] for i, v in enumerate(sets["test"])
            if (v.book, v.chapter) == ("Ruth", 1) and v.verse in (2, 3)}
    return Errors(kinds, word_order(outputs["test_greedy"], refs), shuffled,
                  float((name_counts.fillna(0) >= 100).mean()), ruth)


def best_check(curve: Sequence[dict[str, Any]]) -> int:
    """The check of the stored writer's curve with the lowest validation perplexity."""
    return min(range(len(curve)), key=lambda i: curve[i]["validation_perplexity"])


def final_bleu(results: dict[str, Any]) -> dict[float, list[float]]:
    """Validation BLEU of every stored translator run's last checkpoint (both seeds), by
    dropout rate."""
    runs = results["candidate_records"] + results["replicates"]
    return {d: [r["final_checkpoint_bleu"]["validation"] for r in runs if r["dropout"] == d]
            for d in (0.1, 0.3)}
