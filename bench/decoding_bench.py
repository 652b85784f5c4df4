"""Greedy decoding with and without the KV cache: time per generated position against length.

The model has chapter 7's sizes (``recipe.model_config``: d_model 64, 2 + 2 layers, 4 heads,
d_ff 256) with vocabularies of 64 ids, untrained, with the EOS row of its tied output layer set
to zero so that its logit (0) never wins and every output runs to its full length. A batch of
16 sources of 12 tokens is decoded greedily on one thread, to each output length L in turn,
cached and uncached alternately; a repeat times every (L, cache) pair once, and the table shows
medians over the repeats of (time / L). Without the cache, step t re-runs the decoder over t
positions, so the time per position grows with L; with it, each step computes one position.
"""

from __future__ import annotations

import time

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID
from transformer_course.core.decoding import greedy_decode
from transformer_course.core.model import Transformer
from transformer_course.experiments.ch7_translation.recipe import model_config
from transformer_course.notebook import Timing, set_threads

from .stats import format_table

LENGTHS = (16, 32, 64, 128)  # generated positions (BOS not counted)
QUICK_LENGTHS = (4, 8)
VOCAB, BATCH, SOURCE_LENGTH = 64, 16, 12


def _model(max_len: int) -> Transformer:
    torch.manual_seed(0)
    model = Transformer(model_config(VOCAB, VOCAB, dropout=0.0, max_len=max_len)).eval()
    with torch.no_grad():
        model.output_projection.weight[EOS_ID] = 0.0  # EOS never chosen: full-length outputs
    return model


def _time(model: Transformer, src: torch.Tensor, length: int, use_cache: bool,
          ) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    out = greedy_decode(model, src, length + 1, BOS_ID, EOS_ID, use_cache=use_cache)
    return time.perf_counter() - start, out


def run_decoding_bench(*, quick: bool = False, repeats: int = 3) -> dict:
    """Seconds per generated position, cached and uncached, for each output length."""
    set_threads(1)
    lengths = QUICK_LENGTHS if quick else LENGTHS
    batch = 2 if quick else BATCH
    model = _model(max(max(lengths) + 1, SOURCE_LENGTH))
    src = torch.randint(3, VOCAB, (batch, SOURCE_LENGTH),
                        generator=torch.Generator().manual_seed(0))
    _time(model, src, lengths[0], True)  # warm-up
    _time(model, src, lengths[0], False)
    samples = {(L, cached): [] for L in lengths for cached in (True, False)}
    identical = True
    for _ in range(repeats):
        for L in lengths:
            outputs = []
            for cached in (True, False):
                seconds, out = _time(model, src, L, cached)
                if out.shape[1] != L + 1:
                    raise RuntimeError(f"decoding ended before {L} positions: {out.shape}")
                samples[L, cached].append(seconds / L)
                outputs.append(out)
            identical = identical and torch.equal(*outputs)
    rows = []
    for L in lengths:
        cached, uncached = Timing.of(samples[L, True]), Timing.of(samples[L, False])
        rows.append({"positions": L, "cached": cached.as_dict(), "uncached": uncached.as_dict(),
                     "uncached_over_cached": uncached.median / cached.median})
    return {"rows": rows, "threads": 1, "batch": batch, "source_length": SOURCE_LENGTH,
            "vocab": VOCAB, "repeats": repeats, "identical_outputs": identical}


def cached_over_uncached(results: dict) -> tuple[int, float]:
    """At the longest output measured: (its length, cached / uncached time per position)."""
    last = results["rows"][-1]
    return last["positions"], 1 / last["uncached_over_cached"]


def _ms(t: dict) -> str:
    return f"{t['median'] * 1e3:.3f} [{t['min'] * 1e3:.3f}, {t['max'] * 1e3:.3f}]"


def render_decoding(results: dict) -> str:
    rows = [[r["positions"], _ms(r["cached"]), _ms(r["uncached"]),
             f"{r['uncached_over_cached']:.2f}x"] for r in results["rows"]]
    same = "identical" if results["identical_outputs"] else "DIFFERENT"
    return (f"Greedy decoding, KV cache against re-running the prefix (chapter 7's model size, "
            f"batch {results['batch']}, sources of {results['source_length']} tokens, "
            f"{results['threads']} thread, n={results['repeats']}; outputs {same})\n"
            + format_table(["positions", "cached ms / position", "uncached ms / position",
                            "uncached / cached"], rows))
