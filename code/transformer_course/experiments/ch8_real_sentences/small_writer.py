"""A writer small enough to train while you read: the decoder alone (:class:`DecoderOnly`) on the
training books' English, over a byte-pair vocabulary of 300 pieces learned from that English
(pieces about two letters long, where the stored writer's 8,000 are about four), so that a few
seconds of one CPU thread teach it to spell.

Chapter 8 runs :data:`PAGE` (300 steps) live. :data:`LONGER` is the same recipe for ten times the
steps (minutes, with a progress bar); its run is stored as study ``ch8-small-writer``:

    python -m transformer_course.experiments.ch8_real_sentences.small_writer

Its losses are in bits per character of the validation books' English, so that it and the stored
writer, whose pieces are longer, read on one axis (:func:`bits_per_character`).
"""

from __future__ import annotations

import json
import math
import re
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from torch import nn

from transformer_course.core.batching import pad_sequences, wrap_sources
from transformer_course.core.checks import check_instance, check_int
from transformer_course.core.model import TransformerConfig
from transformer_course.core.training import TrainConfig, train
from transformer_course.stored import (
    DataClaim,
    check_data_claims,
    data_claim,
    declare,
    record_environment,
)

from . import data
from .data import Verse
from .models import DecoderOnly, sample
from .progress import NoTarget, Progress
from .stored_models import perplexity

STUDY = declare(__file__, "ch8-small-writer", (8,), "small_writer.json", "about 3 CPU-minutes")
PROMPT = "In the beginning"
SAMPLE_SETTING = {"temperature": 0.7, "top_k": 40}  # as the stored writer's samples in the table
SAMPLE_PIECES = 40
WORD_SAMPLES = 10  # samples (seeds 0-9) whose words are looked up in the training text
WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Recipe:
    """The small writer and how it trains (pre-norm, no dropout, Adam with linear warm-up and
    decay)."""

    vocab_size: int = 300
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    steps: int = 300
    checks: int = 4
    batch_tokens: int = 1024  # padded pieces per batch
    peak_lr: float = 5e-3
    warmup: int = 30
    max_pieces: int = 120  # longer training verses (about 1 in 300) are left out


PAGE = Recipe()
LONGER = replace(PAGE, steps=3000, checks=10, warmup=300)


@dataclass(frozen=True)
class Check:
    """The writer at one check: ``characters`` of training text read, its validation loss in
    bits per character, and a seeded sample after :data:`PROMPT`."""

    step: int
    characters: int
    bits_per_character: float
    sample: str


@dataclass
class Run:
    """A trained small writer: its tokenizer and model, its checks (step 0 first), the training
    loss at every step (nats per piece), the seconds training took, and the share of the words
    it wrote that are words of the training text, before training and at the end."""

    tokenizer: Tokenizer
    model: DecoderOnly
    checks: list[Check]
    losses: list[float]
    seconds: float
    word_share: tuple[float, float]


def characters(texts: Sequence[str]) -> int:
    """Characters in ``texts``, each verse's end counted as one (the EOS a model predicts)."""
    return sum(len(text) + 1 for text in texts)


def bits_per_character(model: DecoderOnly, ids: Sequence[torch.Tensor], chars: int) -> float:
    """The model's loss on the verses ``ids`` (pieces; BOS and EOS added) in bits per
    character: log2 of its perplexity per piece x pieces / characters, so that vocabularies of
    any size compare."""
    pieces = sum(len(verse) + 1 for verse in ids)  # each verse's pieces and its EOS
    # batches of 64 verses: on one CPU thread a small model reads them about twice as fast as
    # 256 (less padding, and they fit the caches)
    return math.log2(perplexity(model, list(ids), "cpu", batch=64)) * pieces / chars


def characters_per_piece(tokenizer: Tokenizer, texts: Sequence[str]) -> float:
    """Characters of ``texts`` per piece of ``tokenizer``, each verse's end counted in both."""
    return characters(texts) / sum(len(ids) + 1 for ids in data.encode(tokenizer, texts))


def next_piece_loss(model: nn.Module, tokens: torch.Tensor, config: TrainConfig) -> torch.Tensor:
    """Cross-entropy of every next piece of ``tokens`` (B, T): BOS, verse, EOS, padding."""
    logits = model(tokens[:, :-1])
    return nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten(),
                                       ignore_index=0)


def write(model: DecoderOnly, tokenizer: Tokenizer, seed: int = 0,
          prompt: str = PROMPT) -> str:
    """One seeded sample after ``prompt`` (:data:`SAMPLE_SETTING`), prompt included."""
    was_training = model.training
    model.eval()
    start = torch.tensor([data.BOS_ID, *tokenizer.encode(prompt, add_special_tokens=False).ids])
    with torch.no_grad():
        ids = sample(model, start, SAMPLE_PIECES, **SAMPLE_SETTING,
                     generator=torch.Generator().manual_seed(seed))
    model.train(was_training)
    return data.decode(tokenizer, ids)


def word_share(model: DecoderOnly, tokenizer: Tokenizer, vocabulary: set[str]) -> float:
    """The share of the words the model writes after :data:`PROMPT` (seeds 0 to
    ``WORD_SAMPLES - 1``, the prompt left out) that are words of ``vocabulary``."""
    words = [word for seed in range(WORD_SAMPLES)
             for word in WORD.findall(write(model, tokenizer, seed).removeprefix(PROMPT).lower())]
    return sum(word in vocabulary for word in words) / max(len(words), 1)


def model_config(vocab_size: int, recipe: Recipe) -> TransformerConfig:
    """The decoder-only model of ``recipe`` (the encoder fields are unused)."""
    return TransformerConfig(vocab_size, vocab_size, d_model=recipe.d_model,
                             num_heads=recipe.heads, num_encoder_layers=1,
                             num_decoder_layers=recipe.layers, d_ff=4 * recipe.d_model,
                             dropout=0.0, max_len=512, norm_first=True)


def train_writer(sets: dict[str, list[Verse]], recipe: Recipe = PAGE, seed: int = 0, *,
                 progress: bool = False, report: Callable[[str], Any] | None = print) -> Run:
    """Learn the vocabulary on the training books' English, then train a small writer on it,
    with a check (:class:`Check`) before the first step and ``recipe.checks`` after, each
    passed to ``report`` as a line. ``progress``: a progress bar over the steps."""
    check_instance("sets", sets, dict)
    if not {"train", "validation"} <= sets.keys():
        raise ValueError(f"sets must hold 'train' and 'validation' verses (data.split_by_book); "
                         f"got the keys {sorted(sets)}")
    check_instance("recipe", recipe, Recipe)
    check_int("seed", seed, low=0)
    texts = {name: [v.english for v in sets[name]] for name in ("train", "validation")}
    tokenizer = data.train_bpe(texts["train"], recipe.vocab_size)
    kept = [(ids, len(text) + 1) for ids, text in zip(
        data.encode(tokenizer, texts["train"]), texts["train"], strict=True)
        if len(ids) <= recipe.max_pieces]
    validation = data.encode(tokenizer, texts["validation"])
    validation_chars = characters(texts["validation"])
    vocabulary = {w for text in texts["train"] for w in WORD.findall(text.lower())}
    torch.manual_seed(seed)
    model = DecoderOnly(model_config(tokenizer.get_vocab_size(), recipe))

    def make(rows: list[int], device: str) -> tuple[torch.Tensor, int]:
        # BOS, the verse, EOS, padding; counted in characters read
        return (wrap_sources(pad_sequences([kept[r][0] for r in rows])),
                sum(kept[r][1] for r in rows))

    lengths = [len(ids) + 2 for ids, _ in kept]
    stream = data.Counted(make, data.token_batches(lengths, recipe.batch_tokens,
                                                   torch.Generator().manual_seed(seed)))
    shown = Progress(recipe.steps, progress, report)
    checks: list[Check] = []

    def check(m: nn.Module) -> Any:
        point = Check(len(stream.history), stream.tokens,
                      bits_per_character(m, validation, validation_chars), write(m, tokenizer))
        checks.append(point)
        shown.say(f"step {point.step}: {point.characters / 1e3:,.0f}k characters read, "
                  f"{point.bits_per_character:.2f} bits per character\n"
                  + textwrap.fill(point.sample, 76, initial_indent="  ",
                                  subsequent_indent="  "))
        return NoTarget()

    first_share = word_share(model, tokenizer, vocabulary)
    check(model)
    training = TrainConfig(steps=recipe.steps, warmup=recipe.warmup, peak_lr=recipe.peak_lr,
                           decay="linear", label_smoothing=0.0, seed=seed,
                           eval_every=recipe.steps // recipe.checks, target_accuracy=None)
    result = train(model, shown.over(stream), training, loss_fn=next_piece_loss, check=check)
    shown.close()
    model.eval()
    return Run(tokenizer, model, checks, result.losses, result.seconds,
               (first_share, word_share(model, tokenizer, vocabulary)))


def stored_writer_points(curve: Sequence[dict[str, Any]], tokenizer: Tokenizer,
                         validation: Sequence[str]) -> list[tuple[float, float]]:
    """The stored writer's checks (``curve``: its record's, pieces of ``tokenizer``) as
    (characters read, validation bits per character). Its validation perplexity is per piece
    of the same validation verses; its training pieces are read as characters at the
    validation verses' rate (characters a piece, both counted with each verse's end)."""
    rate = characters_per_piece(tokenizer, validation)
    return [(point["tokens"] * rate, math.log2(point["validation_perplexity"]) / rate)
            for point in curve]


def stored() -> dict[str, Any]:
    """Study ch8-small-writer: :data:`LONGER`'s run, its checks as :class:`Check` fields."""
    return STUDY.load()


def data_claims() -> list[DataClaim]:
    """What chapter 8 says about study ch8-small-writer, checked on its data (and on the stored
    writer's curve, study ch8-stored-models, which the figure sets beside it)."""
    from .analysis import stored as stored_models

    longer = stored()
    bits = [check["bits_per_character"] for check in longer["checks"]]
    writer = stored_models()["writer"]
    validation = [v.english for v in data.split_by_book(data.load_verses())["validation"]]
    points = stored_writer_points(writer["curve"], data.load_bpe(), validation)
    kept = points[writer["kept_check"]][1]
    return [
        # the paragraph after the page's run, and the figure
        data_claim("the same recipe for ten times the steps: its loss falls at every check",
                   all(a > b for a, b in zip(bits[:-1], bits[1:], strict=True)), bits=bits),
        data_claim("the longer run ends below the page's run's budget (its check at step 300)",
                   bits[-1] < bits[1] - 0.4, at_300=bits[1], end=bits[-1]),
        data_claim("the stored writer's kept check is lower than the longer run's end",
                   kept < bits[-1], stored_writer=kept, longer=bits[-1]),
    ]


def main(path: Path = STUDY.path) -> None:
    """Train :data:`LONGER` on one thread and store its checks, then the environment record."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    run = train_writer(data.split_by_book(data.load_verses()), LONGER, progress=True)
    path.write_text(json.dumps({
        "recipe": asdict(LONGER), "seed": 0, "seconds": round(time.perf_counter() - start, 1),
        "training_seconds": round(run.seconds, 1), "word_share": list(run.word_share),
        "checks": [asdict(c) for c in run.checks],
        "losses": run.losses[::LONGER.steps // 100]}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8")
    record = record_environment(path)
    print(f"wrote {path} and {record.name}", file=sys.stderr)
    check_data_claims("ch8-small-writer")  # what the page says about it still holds


if __name__ == "__main__":
    main()
