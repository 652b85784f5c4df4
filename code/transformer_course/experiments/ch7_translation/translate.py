"""Using a trained model: decode many sources at once, or one number with its alternatives.

:func:`decode` runs the core's greedy decoder or beam search over a set of pairs in chunks and
returns texts. :func:`n_best` is a beam search for one source that keeps every finished
hypothesis, so the reader sees the alternatives and their scores (the core's
``beam_search`` returns only the best; the best here is the same hypothesis).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from transformer_course.core.batching import BOS_ID, EOS_ID, PAD_ID, wrap_sources
from transformer_course.core.checks import check_choice
from transformer_course.core.decoding import (
    beam_search,
    greedy_decode,
    length_penalty,
    model_step_function,
    smallest_lead,
)
from transformer_course.core.masks import padding_mask_from_tokens
from transformer_course.core.model import Transformer
from transformer_course.paper import BEAM_SIZE, LENGTH_PENALTY_ALPHA

from .number_corpus import number_words
from .pipeline import EncodedPairs, Pipeline


@torch.no_grad()
def decode(model: Transformer, pipeline: Pipeline, pairs: EncodedPairs, *,
           method: str = "greedy", beam_size: int = BEAM_SIZE,
           alpha: float = LENGTH_PENALTY_ALPHA, chunk: int = 500, extra_len: int = 4,
           ) -> list[str]:
    """Translate the sources of ``pairs``; one text per pair. Their targets only bound the
    output length (the longest target plus ``extra_len`` tokens).

    Args:
        method: "greedy" or "beam". beam_size, alpha: beam-search settings (the paper's 4, 0.6).
        chunk: sources decoded together. extra_len: tokens allowed beyond the longest target.
    """
    check_choice("method", method, ("greedy", "beam"))  # any other name would run beam search
    max_len = min(pairs.tgt.shape[1] + 2 + extra_len, model.config.max_len)  # BOS .. EOS
    model.eval()
    texts: list[str] = []
    for start in range(0, len(pairs), chunk):
        src = wrap_sources(pairs.src[start:start + chunk])
        if method == "greedy":
            out = greedy_decode(model, src, max_len, BOS_ID, EOS_ID)
        else:
            out = beam_search(model, src, max_len, BOS_ID, EOS_ID, beam_size=beam_size,
                              alpha=alpha)
        texts += [pipeline.decode_target(row) for row in out]
    return texts


@dataclass(frozen=True)
class Hypothesis:
    """One finished beam hypothesis.

    Attributes:
        text: what it writes (:meth:`Pipeline.decode_target`, which drops the start symbol).
        tokens: every token the beam chose, from the first after the start symbol to the last
            before ``</s>``, as the vocabulary names them: a ``<s>`` the model wrote in the middle
            stays (the text leaves it out, so two hypotheses may print alike; their tokens never
            are alike).
        log_prob: summed log-probability, EOS included. score: log_prob / lp(length), what beam
            search ranks by.
    """

    text: str
    tokens: tuple[str, ...]
    log_prob: float
    score: float

    def pieces(self) -> str:
        """The tokens joined by " · " ("fünf · und · vier · zig"), for a table."""
        return " · ".join(self.tokens)


@torch.no_grad()
def n_best(model: Transformer, pipeline: Pipeline, source: str, *, beam_size: int = BEAM_SIZE,
           alpha: float = LENGTH_PENALTY_ALPHA, max_len: int = 40) -> list[Hypothesis]:
    """Beam search for one source text, returning every finished hypothesis, best first.

    The beam keeps ``beam_size`` live prefixes; a hypothesis finishes when EOS is among the
    ``beam_size`` best extensions of a step (the rule of ``core.beam_search``), and the search
    goes on until no live prefix can beat the worst of the ``beam_size`` best finished ones.
    No two hypotheses are the same token sequence: the live prefixes of a step are distinct
    (each extends a distinct prefix, or the same one by a distinct token), and hypotheses that
    finish at different steps differ in length. Their texts can coincide, where the model
    wrote a ``<s>`` inside one (see :class:`Hypothesis`).
    """
    model.eval()
    src = wrap_sources(pipeline.encode_source(source)[None])  # (1, S)
    step = model_step_function(model, src, padding_mask_from_tokens(src, PAD_ID))
    prefixes = torch.full((1, 1), BOS_ID, dtype=torch.long)  # (k, t)
    scores = torch.zeros(1)  # (k,)
    finished: list[tuple[float, float, torch.Tensor]] = []  # (score, log_prob, tokens)
    for t in range(1, max_len):
        log_probs = step(prefixes, torch.zeros(len(prefixes), dtype=torch.long))  # (k, V)
        log_probs[:, PAD_ID] = float("-inf")
        V = log_probs.shape[1]
        top, index = (scores[:, None] + log_probs).view(-1).topk(min(2 * beam_size,
                                                                      len(prefixes) * V))
        beam, token = index // V, index % V
        for rank in range(min(beam_size, len(top))):
            if token[rank] == EOS_ID:
                sequence = torch.cat([prefixes[beam[rank]], token[rank:rank + 1]])
                finished.append((float(top[rank] / length_penalty(t, alpha)), float(top[rank]),
                                 sequence))
        live = token != EOS_ID
        top, beam, token = top[live][:beam_size], beam[live][:beam_size], token[live][:beam_size]
        prefixes = torch.cat([prefixes[beam], token[:, None]], dim=1)
        scores = top
        finished.sort(key=lambda f: -f[0])
        bound = float(scores.max()) / float(length_penalty(max_len - 1, alpha)) \
            if alpha else float(scores.max())
        if len(finished) >= beam_size and finished[beam_size - 1][0] >= bound:
            break
    return [hypothesis(pipeline, tokens, log_prob, score) for score, log_prob, tokens in finished]


def hypothesis(pipeline: Pipeline, ids: torch.Tensor, log_prob: float, score: float,
               ) -> Hypothesis:
    """A finished hypothesis from its ids (BOS, the tokens chosen, EOS): its text, and its
    tokens as the vocabulary names them, a ``<s>`` chosen inside it included."""
    names = pipeline.target_vocab.tokens
    return Hypothesis(pipeline.decode_target(ids), tuple(names[i] for i in ids[1:-1].tolist()),
                      log_prob, score)


@dataclass(frozen=True)
class Translation:
    """A translation with everything the chapter shows about it.

    Attributes:
        source: the English text. source_tokens: its tokens (BOS/EOS not included).
        greedy: the greedy output. hypotheses: beam search's finished hypotheses, best first.
        target_tokens: the tokens of the best hypothesis.
        cross: per decoder layer, (h, T, S) cross-attention weights of the best hypothesis,
            teacher-forced: row t is the query that predicts target token t (the last row
            predicts EOS); column s is source position s (0: BOS, then the tokens, then EOS).
        reference: what num2words writes, when the source is a number's words.
    """

    source: str
    source_tokens: tuple[str, ...]
    greedy: str
    hypotheses: tuple[Hypothesis, ...]
    target_tokens: tuple[str, ...]
    cross: tuple[torch.Tensor, ...]
    reference: str | None = None


def translate(model: Transformer, pipeline: Pipeline, source: int | str, *,
              beam_size: int = BEAM_SIZE, alpha: float = LENGTH_PENALTY_ALPHA) -> Translation:
    """Translate a number (written out in English first) or an English text.

    Returns the greedy output, the beam's alternatives with their scores, and the
    cross-attention of the best one.
    """
    reference = None
    if isinstance(source, int):
        reference = number_words(source, pipeline.target_lang)
        source = number_words(source, pipeline.source_lang)
    tokens = tuple(pipeline.source.split(source))
    src = wrap_sources(pipeline.source_vocab.encode(list(tokens))[None])  # (1, S)
    model.eval()
    greedy = pipeline.decode_target(greedy_decode(model, src, 40, BOS_ID, EOS_ID)[0])
    hypotheses = tuple(n_best(model, pipeline, source, beam_size=beam_size, alpha=alpha))
    best = hypotheses[0].tokens if hypotheses else ()
    tgt_in = torch.tensor([[BOS_ID, *pipeline.target_vocab.encode(list(best)).tolist()]]
                          if best else [[BOS_ID]])
    maps = model.attention_maps(src, tgt_in, padding_mask_from_tokens(src, PAD_ID))["cross"]
    return Translation(source, tokens, greedy, hypotheses, best,
                       tuple(m[0] for m in maps), reference)


@torch.no_grad()
def reference_lead(model: Transformer, pipeline: Pipeline, number: int) -> float:
    """How far the reference's next token leads every other token, in logits, at the step where
    it leads least, with the reference itself as the prefix (teacher forcing; ``</s>`` included).

    Above 0 exactly when greedy decoding writes the reference: each step's most probable token
    is then the reference's, so the greedy prefix never leaves it. Unlike right or wrong, the lead
    moves a little from one training draw to the next, so a claim on it can keep room.
    """
    source = pipeline.source.split(number_words(number, pipeline.source_lang))
    target = pipeline.target.split(number_words(number, pipeline.target_lang))
    src = wrap_sources(pipeline.source_vocab.encode(list(source))[None])  # (1, S)
    ids = pipeline.target_vocab.encode(list(target)).tolist()
    tgt_in, tgt_out = torch.tensor([[BOS_ID, *ids]]), torch.tensor([*ids, EOS_ID])  # (1, T), (T,)
    model.eval()
    return smallest_lead(model(src, tgt_in, padding_mask_from_tokens(src, PAD_ID))[0], tgt_out)
