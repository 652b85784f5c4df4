"""Decoding: turning a trained encoder-decoder into output sequences, greedily or by beam search.

Both decoders work on a whole batch at once and accept either a model with the package's
``encode``/``decode``/``project`` API or a *step function*::

    step(prefix, source_index) -> log_probs
    # prefix (N, t) long, each row starting with BOS; source_index (N,) long, the row of ``src``
    # each prefix belongs to; log_probs (N, V): log-probabilities of the next token.

Outputs are (B, L) long: BOS, the chosen tokens, EOS, then the padding id (never chosen as a
token); ``max_len`` counts every position, BOS included.

Greedy decoding takes the most probable token at every step. Beam search keeps the ``beam_size``
best prefixes (by summed log-probability); a hypothesis ends when EOS is among the ``beam_size``
best extensions of the step (so width 1 is greedy decoding). Finished hypotheses are ranked by
log p(y) / lp(n), n the generated tokens (EOS included), lp the length penalty of Wu et al.
(2016) the paper used with alpha = 0.6 (section 6.1); the default alpha = 0 ranks by plain
probability.

The cost of a step. Given a model, both decoders keep the decoder's keys and values of the
positions so far (``use_cache=True``, a :class:`~.kv_cache.DecoderCache`), so step t runs the
decoder over its new position only: O(d^2) per layer for the projections and the feed-forward,
O(t d) for attention, which sums to O(L d^2 + L^2 d) for an output of L tokens.
``use_cache=False`` re-runs the decoder over the whole prefix at every step, as a step function
from :func:`model_step_function` does: step t costs O(t d^2) and, as every one of the t
positions attends to up to t, O(t^2 d) in self-attention, which sums to O(L^2 d^2 + L^3 d).
Both give the same outputs, up to float rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .batching import PAD_ID
from .checks import Shapes, check_ids, check_instance, check_int, check_number, check_token_ids
from .kv_cache import DecoderCache, decode_with_cache
from .masks import padding_mask_from_tokens
from .model import Transformer

StepFunction = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _is_model(model: Any) -> bool:
    return all(callable(getattr(model, name, None)) for name in ("encode", "decode", "project"))


def model_step_function(model: Any, src: torch.Tensor,
                        src_mask: torch.Tensor | None = None) -> StepFunction:
    """A step function for a model with ``encode``, ``decode`` and ``project`` (a
    ``Transformer``): encodes ``src`` (B, S) once, with ``src_mask`` (B, 1, S) or None."""
    memory = model.encode(src, src_mask)  # (B, S, d_model)

    def step(prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """prefixes (N, t) of sources ``rows`` (N,) -> log p(next) (N, V)."""
        mask = None if src_mask is None else src_mask[rows]  # (N, 1, S)
        # the whole prefix again: causal, so position t sees positions <= t
        hidden = model.decode(prefix, memory[rows], mask)  # (N, t, d_model)
        logits = model.project(hidden[:, -1:])[:, 0]  # (N, V): last position
        dtype = torch.promote_types(logits.dtype, torch.float32)
        return torch.log_softmax(logits, dim=-1, dtype=dtype)

    return step


def cached_step_function(model: Transformer, src: torch.Tensor,
                         src_mask: torch.Tensor | None = None) -> tuple[StepFunction, DecoderCache]:
    """:func:`model_step_function` with the decoder's keys and values kept between calls: each
    call runs the decoder over the prefix's last position only. Each call must pass the rows of
    the call before, each extended by one token; the cache's ``reorder`` lets beam search
    re-select rows between calls. Returns the step function and its cache."""
    memory = model.encode(src, src_mask)  # (B, S, d_model)
    cache = DecoderCache()

    def step(prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """prefixes (N, t) of sources ``rows`` (N,) -> log p(next) (N, V)."""
        mask = None if src_mask is None else src_mask[rows]  # (N, 1, S)
        hidden = decode_with_cache(model, prefix, memory[rows], mask,
                                   cache=cache)  # (N, 1, d_model): new
        logits = model.project(hidden[:, -1:])[:, 0]  # (N, V)
        dtype = torch.promote_types(logits.dtype, torch.float32)
        return torch.log_softmax(logits, dim=-1, dtype=dtype)

    return step, cache


def _prepare(model: Any, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int,
             src_mask: torch.Tensor | None, pad_id: int | None, use_cache: bool = False,
             ) -> tuple[StepFunction, DecoderCache | None, int]:
    """Check the decoders' shared arguments; return the step function, its cache (None when
    there is none to keep) and the padding id."""
    Shapes().tensor("src", src, "B S", dtype="int")
    check_int("max_len", max_len, low=2)  # BOS and one token
    config = getattr(model, "config", None)
    pad_id = getattr(config, "pad_id", PAD_ID) if pad_id is None else pad_id
    vocab = getattr(config, "tgt_vocab_size", None)
    check_ids(high=None if vocab is None else vocab - 1, bos_id=bos_id, eos_id=eos_id,
              pad_id=pad_id)
    check_instance("use_cache", use_cache, bool)
    if _is_model(model):
        check_int("max_len", max_len, low=2, high=getattr(config, "max_len", None))
        if src_mask is None:
            src_mask = padding_mask_from_tokens(src, pad_id)  # (B, 1, S)
        if use_cache and isinstance(model, Transformer):
            return (*cached_step_function(model, src, src_mask), pad_id)
        return model_step_function(model, src, src_mask), None, pad_id
    if callable(model):
        if src_mask is not None:
            raise ValueError(f"src_mask must be None when model is a step function (it has no "
                             f"encoder to mask); got {type(src_mask).__name__}")
        return model, None, pad_id
    raise TypeError(f"model must have encode, decode and project methods or be a step function; "
                    f"got {type(model).__name__}")


def _next_log_probs(step: StepFunction, prefix: torch.Tensor, source_index: torch.Tensor,
                    pad_id: int) -> torch.Tensor:
    """The step's (N, V) log-probabilities, checked, with padding made impossible to choose."""
    log_probs = step(prefix, source_index)
    name = "model (the step function's output)"
    Shapes(N=prefix.shape[0]).tensor(name, log_probs, "N V")
    if log_probs.shape[1] <= pad_id or bool(log_probs.isnan().any()):  # NaN would win argmax
        raise ValueError(f"{name} must have more than pad_id={pad_id} columns and no NaN; "
                         f"got shape {tuple(log_probs.shape)}, "
                         f"{int(log_probs.isnan().sum())} NaN")
    return log_probs.index_fill(1, torch.tensor([pad_id], device=log_probs.device),
                                float("-inf"))


@torch.no_grad()
def greedy_decode(model: Any, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int, *,
                  src_mask: torch.Tensor | None = None, pad_id: int | None = None,
                  use_cache: bool = True) -> torch.Tensor:
    """Greedy decoding of a batch: the most probable next token, one step at a time.

    Args:
        model: a Transformer (put it in ``eval()`` mode first) or a step function.
        src: (B, S) source ids (padding = ``pad_id``). max_len: longest output, BOS included.
        bos_id: the token every output starts with. eos_id: the token that ends a sequence.
        src_mask: (B, 1, S) bool; defaults to the padding mask of ``src``.
        pad_id: fill after EOS; defaults to ``model.config.pad_id`` (else 0).
        use_cache: keep a Transformer's keys and values between steps (see the module's
            docstring); False, or another model with ``encode``/``decode``/``project``, re-runs
            the decoder over the whole prefix. A step function is called as is.

    Returns:
        (B, L) long, L <= max_len: BOS, tokens, EOS, then padding. A row that has ended is
        not run again (padding needs no model), and decoding stops once all rows ended.
    """
    step, cache, pad_id = _prepare(model, src, max_len, bos_id, eos_id, src_mask, pad_id,
                                   use_cache)
    B = src.shape[0]
    out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    rows = torch.arange(B, device=src.device)  # (N,) the rows still going, N <= B
    for _ in range(max_len - 1):
        if len(rows) == 0:
            break
        next_token = _next_log_probs(step, out[rows], rows, pad_id).argmax(dim=-1)  # (N,)
        column = torch.full((B,), pad_id, dtype=torch.long, device=src.device)
        column[rows] = next_token
        out = torch.cat([out, column[:, None]], dim=1)  # (B, t + 1)
        going = next_token != eos_id
        if not bool(going.all()):
            rows = rows[going]
            if cache is not None:
                cache.reorder(going.nonzero()[:, 0])
    return out


def length_penalty(n: int | torch.Tensor, alpha: float) -> float | torch.Tensor:
    """lp(n) = ((5 + n) / 6) ** alpha (Wu et al., 2016) for n generated tokens (an int or a
    tensor); 1 for alpha = 0."""
    return ((5 + n) / 6) ** alpha


@torch.no_grad()
def beam_search(model: Any, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int, *,
                beam_size: int = 4, alpha: float = 0.0, src_mask: torch.Tensor | None = None,
                pad_id: int | None = None, return_scores: bool = False, use_cache: bool = True,
                ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Batched beam search; the best hypothesis per source row.

    Args:
        model, src, max_len, bos_id, eos_id, src_mask, pad_id, use_cache: as for
            :func:`greedy_decode`; the cache follows the beams as they are re-selected.
        beam_size: live hypotheses kept per source row (1 gives greedy decoding when alpha = 0).
        alpha: length-penalty exponent; 0 ranks by the plain sum of log-probabilities.
        return_scores: also return each chosen sequence's summed log-probability (B,).

    Returns:
        (B, L) long in the format of :func:`greedy_decode`, and optionally the (B,) scores.
    """
    step, cache, pad_id = _prepare(model, src, max_len, bos_id, eos_id, src_mask, pad_id,
                                   use_cache)
    check_int("beam_size", beam_size)
    check_number("alpha", alpha, low=0)
    check_instance("return_scores", return_scores, bool)
    B, k, device = src.shape[0], beam_size, src.device
    source_index = torch.arange(B, device=device).repeat_interleave(k)  # (B*k,)
    tokens = torch.full((B * k, 1), bos_id, dtype=torch.long, device=device)  # (B*k, t)
    scores = torch.full((B, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # one live hypothesis at the start, so no beam is a duplicate
    best = torch.full((B,), float("-inf"), device=device)  # best finished, length-normalised
    best_raw = torch.full((B,), float("-inf"), device=device)
    best_tokens = torch.full((B, max_len), pad_id, dtype=torch.long, device=device)
    best_tokens[:, 0] = bos_id
    done = torch.zeros(B, dtype=torch.bool, device=device)
    rows = torch.arange(B, device=device)
    longest_penalty = length_penalty(max_len - 1, alpha)
    for t in range(1, max_len):  # choose the token at position t
        log_probs = _next_log_probs(step, tokens, source_index, pad_id)
        V = log_probs.shape[1]
        candidates = (scores[:, :, None] + log_probs.view(B, k, V)).view(B, k * V)
        top, index = candidates.topk(min(2 * k, k * V), dim=1)  # (B, 2k): k can still live
        beam, token = index // V, index % V  # (B, 2k)
        prefixes = tokens.view(B, k, t)
        # Hypotheses that end here (EOS among the k best extensions): keep the best per row.
        rank = torch.arange(top.shape[1], device=device)[None, :]  # (1, 2k)
        ended = (token == eos_id) & (rank < k) & ~done[:, None]
        normalised = (top / length_penalty(t, alpha)).masked_fill(~ended, float("-inf"))
        cand_best, j = normalised.max(dim=1)  # (B,)
        better = cand_best > best
        if bool(better.any()):
            ended_seq = torch.cat([prefixes[rows, beam[rows, j]],
                                   torch.full((B, 1), eos_id, device=device)], dim=1)  # (B, t+1)
            best_tokens[better] = pad_id
            best_tokens[better, : t + 1] = ended_seq[better]
            best = torch.where(better, cand_best, best)
            best_raw = torch.where(better, top[rows, j], best_raw)
        # The k best that go on.
        live, live_j = top.masked_fill(token == eos_id, float("-inf")).topk(k, dim=1)  # (B, k)
        chosen = beam.gather(1, live_j)  # (B, k)
        tokens = torch.cat([prefixes.gather(1, chosen[..., None].expand(B, k, t)),
                            token.gather(1, live_j)[..., None]], dim=2).view(B * k, t + 1)
        if cache is not None:  # the keys and values follow their prefixes
            cache.reorder((rows[:, None] * k + chosen).view(B * k))
        scores = live
        # A live prefix can only lose probability; its best normalised future is bounded.
        done |= best >= scores.max(dim=1).values / longest_penalty
        if bool(done.all()):
            break
    else:  # reached max_len: unfinished rows may keep their best truncated hypothesis
        normalised = scores.max(dim=1)
        truncated = ~done & (normalised.values / length_penalty(max_len - 1, alpha) > best)
        if bool(truncated.any()):
            last = tokens.view(B, k, max_len)[rows, normalised.indices]  # (B, max_len)
            best_tokens[truncated] = last[truncated]
            best_raw = torch.where(truncated, normalised.values, best_raw)
    used = int((best_tokens != pad_id).any(dim=0).nonzero().max()) + 1
    out = best_tokens[:, :used]
    return (out, best_raw) if return_scores else out


@torch.no_grad()
def sequence_log_prob(model: Any, src: torch.Tensor, tokens: torch.Tensor, eos_id: int, *,
                      src_mask: torch.Tensor | None = None,
                      pad_id: int | None = None) -> torch.Tensor:
    """Summed log-probability the model gives each output sequence (up to its first EOS).

    Args:
        model, src, src_mask, pad_id: as for :func:`greedy_decode`.
        tokens: (B, L) outputs in the decoders' format (BOS first).

    Returns:
        (B,) float log p(tokens[b, 1:] | src[b]), counting positions up to and including EOS.
    """
    shapes, config = Shapes(), getattr(model, "config", None)
    shapes.tensor("src", src, "B S", dtype="int")
    if check_token_ids("tokens", tokens, getattr(config, "tgt_vocab_size", None), "B L", shapes,
                       max_len=getattr(config, "max_len", None))["L"] < 2:
        raise ValueError(f"tokens must have BOS and at least one token, shape (B, L >= 2); "
                         f"got {tuple(tokens.shape)}")
    if bool((tokens[:, 0] != tokens[0, 0]).any()):
        raise ValueError(f"tokens must start every row with the same BOS id; got first column "
                         f"{tokens[:, 0].tolist()}")
    step, _, pad_id = _prepare(model, src, tokens.shape[1], int(tokens[0, 0]), eos_id, src_mask,
                               pad_id)
    B = tokens.shape[0]
    rows = torch.arange(B, device=tokens.device)
    total = torch.zeros(B, device=tokens.device)
    active = torch.ones(B, dtype=torch.bool, device=tokens.device)
    for t in range(1, tokens.shape[1]):
        active &= tokens[:, t] != pad_id
        if not bool(active.any()):
            break
        log_probs = _next_log_probs(step, tokens[:, :t], rows, pad_id)
        if t == 1:  # a step function's vocabulary is known only now
            check_token_ids("tokens", tokens, log_probs.shape[1], "B L")
        total += torch.where(active, log_probs[rows, tokens[:, t]], 0.0)
        active &= tokens[:, t] != eos_id
    return total


def smallest_lead(logits: torch.Tensor, tokens: torch.Tensor) -> float:
    """How far each token leads every other in its row of logits, at the row where it leads
    least: ``logits`` (T, V), ``tokens`` (T,). Above 0 exactly when every token is its row's most
    probable one, the token greedy decoding picks."""
    chosen = logits.gather(1, tokens[:, None])[:, 0]  # (T,)
    others = logits.scatter(1, tokens[:, None], float("-inf")).max(dim=1).values  # (T,)
    return float((chosen - others).min())
