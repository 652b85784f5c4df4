"""Checks for the chapters' coding exercises: call one on your function and read what fails.

Every ``check_*`` runs the reader's function on a handful of cases, compares it with the package's
own (tested) implementation, and either raises ``AssertionError`` naming the first case that
disagrees or returns a :class:`Passed`, which shows how many cases agreed and how closely.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .core.attention import scaled_dot_product_attention_numpy, softmax
from .core.batching import shift_targets
from .core.loss import loss_floor
from .core.masks import padding_mask_from_lengths
from .core.model import DecoderLayer, EncoderLayer, count_parameters
from .core.positional import sinusoidal_encoding_numpy
from .core.schedule import noam_lr
from .experiments.ch1_why_attention.paths import counted_path_length
from .experiments.ch3_multi_head_attention.numpy_heads import multi_head_attention_numpy
from .experiments.ch4_positional_encoding.relative_position import relative_position_map
from .experiments.ch4_positional_encoding.rotary import rotate
from .experiments.ch8_real_sentences.models import next_token_probabilities


@dataclass(frozen=True)
class Passed:
    """What a check found when every case agreed with the reference."""

    cases: int  # how many cases were checked
    largest_difference: float  # largest absolute difference from the reference (0: exact)

    def __repr__(self) -> str:
        return f"passed {self.cases} cases; largest difference {self.largest_difference:.2g}"


def _check_callable(fn: object) -> None:
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")


def _compare(case: str, got: Any, want: np.ndarray, atol: float) -> float:
    """The largest absolute difference of ``got`` from ``want``; AssertionError above ``atol``."""
    if isinstance(got, torch.Tensor):
        got = got.detach().cpu().double().numpy()
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"case '{case}': expected an array of shape {want.shape}; "
                             f"got {type(got).__name__}")
    if got.shape != want.shape:
        raise AssertionError(f"case '{case}': expected shape {want.shape}; got {got.shape}")
    if not np.all(np.isfinite(got)):
        raise AssertionError(f"case '{case}': the result holds NaN or inf: {got}")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    if err > atol:
        raise AssertionError(f"case '{case}': largest difference from the reference is {err:.3g} "
                             f"(allowed {atol:g});\nexpected\n{want}\ngot\n{got}")
    return err


# --- Chapter 1 ---------------------------------------------------------------------------------


def check_path_length_formula(fn: Callable[[int, int], int]) -> Passed:
    """Check ``fn(n, kernel_size)`` against breadth-first search over stacked convolutions."""
    _check_callable(fn)
    cases = [(n, kernel_size) for kernel_size in (3, 5, 7) for n in range(1, 41)]
    for n, kernel_size in cases:
        counted = counted_path_length("convolutional", n, kernel_size=kernel_size)
        got = fn(n, kernel_size)
        if got != counted:
            raise AssertionError(f"fn(n={n}, kernel_size={kernel_size}) returned {got!r}; "
                                 f"breadth-first search counts {counted} layers")
    return Passed(len(cases), 0.0)


# --- Chapter 2 ---------------------------------------------------------------------------------


def check_softmax(fn: Callable[[np.ndarray], np.ndarray]) -> Passed:
    """Check a softmax over the last axis: values, large logits, -inf entries, all -inf rows.

    Args:
        fn: takes x (..., n) float64 and returns softmax(x) over the last axis, same shape.
    """
    _check_callable(fn)
    rng = np.random.default_rng(2)
    cases = {
        "random logits": rng.standard_normal((3, 5)),
        "large logits (1000)": np.array([[1000.0, 999.0, 998.0]]),
        "very negative logits (-1000)": np.array([[-1000.0, -1001.0, -1002.0]]),
        "some -inf entries": np.array([[0.5, -np.inf, 1.5, -np.inf]]),
        "a row of only -inf (must give zeros)": np.array([[-np.inf, -np.inf], [0.0, 0.0]]),
        "extra batch dimensions": rng.standard_normal((2, 3, 4)),
    }
    worst = 0.0
    for case, x in cases.items():
        with np.errstate(all="ignore"):
            got = fn(x.copy())
        worst = max(worst, _compare(case, got, softmax(x), atol=1e-12))
    return Passed(len(cases), worst)


def check_attention(fn: Callable[..., np.ndarray]) -> Passed:
    """Check a NumPy scaled dot-product attention against the package's.

    Args:
        fn: ``fn(q, k, v, mask=None)`` with q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v)
            float64 and mask boolean broadcastable to (..., T_q, T_k), True = may attend; returns
            the output (..., T_q, d_v). A query allowed to attend to nothing must output zeros.
    """
    _check_callable(fn)
    rng = np.random.default_rng(3)

    def qkv(batch: tuple[int, ...], T_q: int, T_k: int, d_k: int, d_v: int, size: float = 1.0):
        return (size * rng.standard_normal((*batch, T_q, d_k)),
                size * rng.standard_normal((*batch, T_k, d_k)),
                rng.standard_normal((*batch, T_k, d_v)))

    padding = np.array([True, True, True, False, False])[None, None, :]  # (1, 1, T_k)
    causal = np.tril(np.ones((4, 4), dtype=bool))  # (T, T)
    empty_row = np.ones((3, 5), dtype=bool)
    empty_row[1] = False  # query 1 may attend to nothing
    cases = {
        "no mask, one sequence": (qkv((), 3, 3, 4, 4), None),
        "T_q != T_k and d_v != d_k": (qkv((2,), 3, 5, 4, 6), None),
        "extra batch dimensions": (qkv((2, 3), 4, 4, 8, 2), None),
        "padding mask": (qkv((2,), 3, 5, 4, 4), padding),
        "causal mask": (qkv((2,), 4, 4, 4, 4), causal),
        "large scores (needs a stable softmax)": (qkv((1,), 3, 5, 4, 4, size=40.0), None),
        "a fully masked query row (must output zeros)": (qkv((1,), 3, 5, 4, 4), empty_row),
    }
    worst = 0.0
    for case, ((q, k, v), mask) in cases.items():
        want, _ = scaled_dot_product_attention_numpy(q, k, v, mask)
        with np.errstate(all="ignore"):
            got = fn(q.copy(), k.copy(), v.copy(), None if mask is None else mask.copy())
        worst = max(worst, _compare(case, got, want, atol=1e-10))
    return Passed(len(cases), worst)


def check_local_causal_mask(fn: Callable[[int, int], torch.Tensor]) -> Passed:
    """Check a causal mask restricted to a window: query i may attend to keys i - window + 1 .. i.

    Args:
        fn: ``fn(T, window)`` returning a (T, T) boolean torch tensor, True = may attend.
    """
    _check_callable(fn)
    cases = [(1, 1), (5, 1), (5, 2), (6, 3), (4, 4), (4, 10)]
    for T, window in cases:
        want = np.array([[i - window < j <= i for j in range(T)] for i in range(T)])
        got = fn(T, window)
        case = f"case T={T}, window={window}"
        if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
            raise AssertionError(f"{case}: expected a boolean torch tensor; "
                                 f"got {type(got).__name__} {getattr(got, 'dtype', '')}")
        if tuple(got.shape) != (T, T):
            raise AssertionError(f"{case}: expected shape {(T, T)}; got {tuple(got.shape)}")
        if not np.array_equal(got.cpu().numpy(), want):
            raise AssertionError(f"{case}: expected\n{want.astype(int)}\n"
                                 f"got\n{got.cpu().numpy().astype(int)}")
    return Passed(len(cases), 0.0)


def check_attention_weights_memory(fn: Callable[[int, int, int, int, int], int]) -> Passed:
    """Check ``fn(batch, seq_len, num_heads, num_layers, bytes_per_number)`` -> the bytes the
    attention weights of ``num_layers`` attention layers take when all are kept for the backward
    pass: each layer's weights are a (batch, num_heads, seq_len, seq_len) tensor (what
    ``MultiHeadAttention`` returns with ``need_weights=True``) of ``bytes_per_number``-byte
    numbers (4 for float32)."""
    _check_callable(fn)
    cases = [(1, 1, 1, 1, 4), (2, 10, 3, 1, 4), (3, 7, 5, 6, 8), (5, 3, 1, 2, 2),
             (1, 2048, 16, 24, 2), (64, 512, 8, 18, 4)]
    for batch, seq_len, num_heads, num_layers, size in cases:
        want = num_layers * torch.Size((batch, num_heads, seq_len, seq_len)).numel() * size
        got = fn(batch, seq_len, num_heads, num_layers, size)
        if isinstance(got, bool) or not isinstance(got, int | float | np.integer | np.floating):
            raise AssertionError(f"fn must return a number of bytes; got {type(got).__name__}")
        if got != want:
            raise AssertionError(f"fn(batch={batch}, seq_len={seq_len}, num_heads={num_heads}, "
                                 f"num_layers={num_layers}, bytes_per_number={size}) returned "
                                 f"{got!r}; the weights take {want} bytes")
    return Passed(len(cases), 0.0)


# --- Chapter 3 ---------------------------------------------------------------------------------


def check_multi_head_attention(fn: Callable[..., np.ndarray], *, seed: int = 0) -> Passed:
    """Check ``fn(x_q, x_kv, w_q, w_k, w_v, w_o, num_heads, mask)`` -> output (B, T_q, d_model)
    against :func:`multi_head_attention_numpy` on random self- and cross-attention cases."""
    _check_callable(fn)
    rng = np.random.default_rng(seed)
    cases = [(2, 5, 5, 8, 2, False), (3, 4, 6, 12, 3, True), (1, 7, 3, 16, 4, True),
             (2, 6, 6, 8, 1, False)]
    worst = 0.0
    for B, T_q, T_k, d_model, h, masked in cases:
        x_q = rng.standard_normal((B, T_q, d_model))
        x_kv = x_q if T_q == T_k else rng.standard_normal((B, T_k, d_model))
        ws = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        mask = None
        if masked:
            mask = rng.random((B, T_q, T_k)) < 0.7
            mask[..., 0] = True  # every query may attend somewhere
        want, _ = multi_head_attention_numpy(x_q, x_kv, *ws, h, mask)
        got = np.asarray(fn(x_q, x_kv, *ws, h, mask))
        case = f"B={B}, T_q={T_q}, T_k={T_k}, d_model={d_model}, num_heads={h}, mask={masked}"
        worst = max(worst, _compare(case, got, want, atol=1e-8))
    return Passed(len(cases), worst)


# --- Chapter 4 ---------------------------------------------------------------------------------


def check_sinusoidal_encoding(fn: Callable[[int, int], Any], atol: float = 1e-5) -> Passed:
    """Check ``fn(num_positions, d_model)`` -> (num_positions, d_model) against the package's
    encoding; the error names the first wrong entry and whether it is a sine or a cosine."""
    _check_callable(fn)
    cases = ((1, 2), (7, 4), (50, 16), (128, 64))
    worst = 0.0
    for num_positions, d_model in cases:
        got = fn(num_positions, d_model)
        got = got.detach().cpu().double().numpy() if isinstance(got, torch.Tensor) else got
        got = np.asarray(got, dtype=np.float64)
        if got.shape != (num_positions, d_model):
            raise AssertionError(f"fn({num_positions}, {d_model}) must have shape "
                                 f"({num_positions}, {d_model}); got {got.shape}")
        want = sinusoidal_encoding_numpy(num_positions, d_model)
        wrong = np.argwhere(~(np.abs(got - want) <= atol))
        if len(wrong):
            pos, dim = (int(i) for i in wrong[0])
            raise AssertionError(f"fn({num_positions}, {d_model})[{pos}, {dim}] = "
                                 f"{got[pos, dim]:.6g}, expected {want[pos, dim]:.6g} "
                                 f"({'sin' if dim % 2 == 0 else 'cos'} of pair i={dim // 2})")
        worst = max(worst, float(np.abs(got - want).max()))
    return Passed(len(cases), worst)


def check_relative_position_map(fn: Callable[[int, int], Any], atol: float = 1e-9) -> Passed:
    """Check ``fn(k, d_model)`` -> R_k (d_model, d_model) with PE(pos + k) = R_k PE(pos), against
    the encoding itself and the package's block rotation."""
    _check_callable(fn)
    cases = ((1, 2), (3, 8), (-5, 16), (40, 64))
    worst = 0.0
    for k, d_model in cases:
        got = np.asarray(fn(k, d_model), dtype=np.float64)
        if got.shape != (d_model, d_model):
            raise AssertionError(f"fn({k}, {d_model}) must have shape ({d_model}, {d_model}); "
                                 f"got {got.shape}")
        table = sinusoidal_encoding_numpy(200, d_model)
        lo = max(0, -k)
        shifted = table[lo:lo + 100] @ got.T  # (100, d_model): R_k PE(pos) for each row
        error = float(np.abs(shifted - table[lo + k:lo + k + 100]).max())
        if not error <= atol:
            raise AssertionError(f"fn({k}, {d_model}) applied to PE(pos) misses PE(pos + {k}) "
                                 f"by up to {error:.3g} (allowed {atol:g})")
        if not np.allclose(got, relative_position_map(k, d_model), atol=atol, rtol=0):
            raise AssertionError(f"fn({k}, {d_model}) maps the encoding correctly but differs "
                                 "from the block rotation elsewhere")
        worst = max(worst, error)
    return Passed(len(cases), worst)


def check_rotary(fn: Callable[[torch.Tensor], torch.Tensor], atol: float = 1e-10) -> Passed:
    """Check ``fn(x)`` -> x with row t of (..., T, d) rotated by R_t (rotary embeddings), against
    the package's ``rotate``, and that scores of rotated queries and keys depend on offsets only."""
    _check_callable(fn)
    generator = torch.Generator().manual_seed(0)
    cases = ((1, 1, 2), (2, 5, 4), (1, 12, 8), (3, 40, 16))  # (B, T, d)
    worst = 0.0
    for B, T, d in cases:
        x = torch.randn(B, T, d, dtype=torch.float64, generator=generator)
        got = fn(x.clone())
        worst = max(worst, _compare(f"x of shape {(B, T, d)}", got, rotate(x).numpy(), atol))
    q, k = torch.randn(2, 1, 1, 8, dtype=torch.float64, generator=generator)
    scores = fn(q.expand(1, 30, 8).clone())[0] @ fn(k.expand(1, 30, 8).clone())[0].T  # (T, T)
    for offset in range(-29, 30):
        diagonal = scores.diagonal(offset)
        if float(diagonal.max() - diagonal.min()) > 1e3 * atol:
            raise AssertionError(f"the score of the same query and key vectors, rotated, must "
                                 f"depend only on the offset; at offset {offset} it ranges over "
                                 f"{float(diagonal.min()):.6g} .. {float(diagonal.max()):.6g}")
    return Passed(len(cases) + 1, worst)


# --- Chapter 5 ---------------------------------------------------------------------------------

EncoderLayerForward = Callable[[EncoderLayer, torch.Tensor, torch.Tensor], torch.Tensor]


def check_encoder_layer_forward(fn: EncoderLayerForward, norm_first: bool = False,
                                atol: float = 1e-10) -> Passed:
    """Check ``fn(layer, x, mask)`` against ``EncoderLayer.forward`` (eval mode, float64).

    Args:
        fn: the reader's forward pass; gets an :class:`EncoderLayer`, x (B, S, d_model) and a
            padding mask (B, 1, S), and must return (B, S, d_model).
        norm_first: check the pre-norm variant instead of the paper's post-norm.
        atol: the largest absolute difference accepted.
    """
    _check_callable(fn)
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be a bool; got {norm_first!r}")
    generator = torch.Generator().manual_seed(5)
    with torch.random.fork_rng(devices=[]):  # leaves the caller's random stream untouched
        torch.manual_seed(5)
        layer = EncoderLayer(16, 4, 32, dropout=0.1, norm_first=norm_first).double().eval()
    with torch.no_grad():  # non-trivial LayerNorm parameters, so forgetting them is caught
        for sublayer in layer.sublayers:
            sublayer.norm.weight.uniform_(0.5, 1.5, generator=generator)
            sublayer.norm.bias.uniform_(-0.5, 0.5, generator=generator)
    x = torch.randn(3, 7, 16, dtype=torch.float64, generator=generator)  # (B, S, d_model)
    mask = padding_mask_from_lengths(torch.tensor([7, 4, 1]), 7)  # (B, 1, S)
    with torch.no_grad():
        expected = layer(x, mask)
        got = fn(layer, x, mask)
    case = f"EncoderLayer.forward with norm_first={norm_first}"
    return Passed(1, _compare(case, got, expected.numpy(), atol))


def check_decoder_layer_parameters(fn: Callable[[int, int], int]) -> Passed:
    """Check ``fn(d_model, d_ff)`` -> the number of parameters of one :class:`DecoderLayer`
    (every linear layer with a bias, each LayerNorm with a weight and a bias), against
    ``count_parameters`` of the package's layer at several sizes, the paper's base size among
    them. The number of heads does not change the count."""
    _check_callable(fn)
    cases = [(512, 2048), (2, 1), (8, 32), (16, 16), (6, 10), (64, 256)]
    with torch.random.fork_rng(devices=[]):  # building a layer draws its initial weights
        for d_model, d_ff in cases:
            want = count_parameters(DecoderLayer(d_model, 2 if d_model % 2 == 0 else 1, d_ff))
            got = fn(d_model, d_ff)
            if got != want:
                raise AssertionError(f"fn(d_model={d_model}, d_ff={d_ff}) returned {got!r}; "
                                     f"the layer has {want} parameters")
    return Passed(len(cases), 0.0)


# --- Chapter 6 ---------------------------------------------------------------------------------


def check_loss_floor(fn: Callable[[int, float], float], atol: float = 1e-9) -> Passed:
    """Check ``fn(vocab_size, epsilon)`` -> the smallest label-smoothed loss a model can reach
    (the loss of a model whose output is the smoothed target q itself), against the package's
    :func:`~transformer_course.core.loss.loss_floor`; ``epsilon`` 0 is plain cross-entropy."""
    _check_callable(fn)
    cases = [(13, 0.1), (2, 0.1), (5, 0.5), (37, 0.25), (8000, 0.1), (10, 0.0), (1000, 1e-3)]
    worst = 0.0
    for vocab_size, epsilon in cases:
        want = loss_floor(vocab_size, epsilon)
        got = fn(vocab_size, epsilon)
        if isinstance(got, torch.Tensor | np.ndarray) and np.size(got) == 1:
            got = float(got)
        if isinstance(got, bool) or not isinstance(got, int | float | np.floating):
            raise AssertionError(f"fn must return a number; got {type(got).__name__}")
        if not abs(float(got) - want) <= atol:
            raise AssertionError(f"fn(vocab_size={vocab_size}, epsilon={epsilon}) returned "
                                 f"{got!r}; the smallest loss is {want:.10g}")
        worst = max(worst, abs(float(got) - want))
    return Passed(len(cases), worst)


def check_shift_targets(fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
                        ) -> Passed:
    """Check ``fn(tgt) -> (tgt_in, tgt_out)`` against :func:`shift_targets`.

    ``tgt`` is (B, L) with padding id 0 after each row's tokens; BOS is 1 and EOS is 2.
    """
    _check_callable(fn)
    g = torch.Generator().manual_seed(0)
    cases = [torch.tensor([[5, 6, 7]]), torch.tensor([[5, 0, 0], [6, 7, 0]])]
    lengths = torch.randint(1, 7, (8,), generator=g)
    random = torch.randint(3, 12, (8, 6), generator=g)
    cases.append(random.masked_fill(torch.arange(6)[None, :] >= lengths[:, None], 0))
    for i, tgt in enumerate(cases):
        want_in, want_out = shift_targets(tgt)
        got = fn(tgt.clone())
        if not (isinstance(got, tuple) and len(got) == 2):
            raise AssertionError(f"case {i}: fn must return a pair (tgt_in, tgt_out); got {got!r}")
        for name, have, want in (("tgt_in", got[0], want_in), ("tgt_out", got[1], want_out)):
            if not isinstance(have, torch.Tensor) or have.shape != want.shape:
                shape = tuple(have.shape) if isinstance(have, torch.Tensor) else type(have)
                raise AssertionError(f"case {i}: {name} must have shape {tuple(want.shape)}; "
                                     f"got {shape}")
            if not torch.equal(have.long(), want):
                raise AssertionError(f"case {i}: for tgt={tgt.tolist()}, {name} should be "
                                     f"{want.tolist()}; got {have.tolist()}")
    return Passed(len(cases), 0.0)


def check_noam_lr(fn: Callable[[int, int, int], float]) -> Passed:
    """Check ``fn(step, d_model, warmup)`` against the paper's schedule at several steps."""
    _check_callable(fn)
    worst, cases = 0.0, 0
    for d_model, warmup in ((512, 4000), (64, 30), (1024, 1)):
        for step in (1, 2, warmup // 2 + 1, warmup, warmup + 1, 3 * warmup, 100_000):
            want, got = noam_lr(step, d_model, warmup), fn(step, d_model, warmup)
            if not abs(float(got) - want) <= 1e-9 + 1e-6 * want:
                raise AssertionError(f"at step={step}, d_model={d_model}, warmup={warmup} the "
                                     f"rate should be {want:.6g}; got {got!r}")
            worst, cases = max(worst, abs(float(got) - want)), cases + 1
    return Passed(cases, worst)


# --- Chapter 7 ---------------------------------------------------------------------------------

Tokens = Sequence[str]
GERMAN_MORPHEMES = {  # number -> its German words cut into morphemes, as chapter 7 cuts them
    7: "sieben", 12: "zwölf", 21: "ein und zwanzig", 23: "drei und zwanzig",
    32: "zwei und drei ßig", 52: "zwei und fünf zig", 53: "drei und fünf zig",
    34_234: "vier und drei ßig tausend zwei hundert vier und drei ßig",
    34_235: "vier und drei ßig tausend zwei hundert fünf und drei ßig",
    63_001: "drei und sech zig tausend eins", 63_010: "drei und sech zig tausend zehn",
    120_000: "ein hundert zwanzig tausend",
    234_234: "zwei hundert vier und drei ßig tausend zwei hundert vier und drei ßig",
    234_235: "zwei hundert vier und drei ßig tausend zwei hundert fünf und drei ßig",
    303_303: "drei hundert drei tausend drei hundert drei",
    400_017: "vier hundert tausend sieb zehn", 400_070: "vier hundert tausend sieb zig",
    888_888: "acht hundert acht und acht zig tausend acht hundert acht und acht zig",
    919_191: "neun hundert neun zehn tausend ein hundert ein und neun zig",
    999_998: "neun hundert neun und neun zig tausend neun hundert acht und neun zig",
    999_999: "neun hundert neun und neun zig tausend neun hundert neun und neun zig",
}


def _reference_bleu(hypotheses: Sequence[Tokens], references: Sequence[Tokens]) -> float:
    """Corpus BLEU by sacreBLEU on the given tokens (``tokenize='none'``), without smoothing."""
    import sacrebleu

    return float(sacrebleu.corpus_bleu([" ".join(h) for h in hypotheses],
                                       [[" ".join(r) for r in references]],
                                       tokenize="none", smooth_method="none").score)


def check_bleu(fn: Callable[[list[list[str]], list[list[str]]], float],
               atol: float = 1e-6) -> Passed:
    """Check a corpus BLEU on token lists, ``fn(hypotheses, references)`` -> 0 to 100, against
    sacreBLEU on German numbers cut into morphemes.

    Args:
        fn: gets the hypotheses and their references (one per hypothesis), each a list of
            tokens. BLEU is 100 times the brevity penalty times the geometric mean of the
            modified n-gram precisions, n = 1 to 4. Each precision is summed over the whole
            corpus, a hypothesis's n-gram counted at most as often as its reference holds it.
            The brevity penalty is exp(1 - r / c) when the hypotheses' total length c is
            shorter than the references' r, and 1 otherwise. No smoothing: a precision of 0
            makes BLEU 0.
        atol: the largest absolute difference accepted.
    """
    _check_callable(fn)

    def german(*numbers: int) -> list[list[str]]:
        return [GERMAN_MORPHEMES[n].split() for n in numbers]

    corpus = (34_234, 7, 919_191, 120_000, 52, 400_017, 888_888, 63_001)
    wrong = german(34_235, 7, 919_191, 120_000, 53, 400_070, 888_888, 63_010)
    cases = {  # each usual mistake shows first in the case named after it
        "the chapter's example, one wrong morpheme": (german(234_235), german(234_234)),
        "a repeated morpheme counts only as often as the reference has it": (
            [["drei", "hundert", "drei", "tausend", "drei", "drei", "drei"]], german(303_303)),
        "corpus BLEU, not the mean of sentence BLEUs": (
            german(23, 999_999), german(21, 999_998)),
        "outputs too short (brevity penalty)": (
            [t[:-2] if len(t) > 4 else t for t in german(*corpus)], german(*corpus)),
        "outputs too long (no bonus)": (
            [tokens + ["und"] for tokens in german(*corpus)], german(*corpus)),
        "every output right": (german(*corpus), german(*corpus)),
        "a corpus with some wrong outputs": (wrong, german(*corpus)),
        "no 4-gram in common (BLEU 0)": (german(21, 32), german(12, 23)),
    }
    worst = 0.0
    for case, (hypotheses, references) in cases.items():
        want = _reference_bleu(hypotheses, references)
        got = fn([list(h) for h in hypotheses], [list(r) for r in references])
        if isinstance(got, torch.Tensor | np.ndarray) and np.size(got) == 1:
            got = float(got)
        if not isinstance(got, int | float | np.floating) or isinstance(got, bool):
            raise AssertionError(f"case '{case}': expected a number from 0 to 100; "
                                 f"got {type(got).__name__}")
        if not abs(float(got) - want) <= atol:
            raise AssertionError(f"case '{case}': BLEU should be {want:.6f}; got {float(got)!r}"
                                 f"\nhypotheses: {hypotheses}\nreferences: {references}")
        worst = max(worst, abs(float(got) - want))
    return Passed(len(cases), worst)


# --- Chapter 8 ---------------------------------------------------------------------------------


def check_top_k_probabilities(fn: Callable[[torch.Tensor, float, int | None], Any],
                              atol: float = 1e-6) -> Passed:
    """Check ``fn(logits, temperature, top_k)``: the distribution the writer samples from,
    softmax(logits / temperature) over the ``top_k`` largest logits (ties with the k-th kept),
    0 elsewhere; ``top_k`` None keeps every logit. ``logits`` is a float (V,) tensor; the result
    a (V,) tensor or array of probabilities."""
    _check_callable(fn)
    generator = torch.Generator().manual_seed(0)
    logits = 3 * torch.randn(12, generator=generator)
    tied = torch.tensor([2.0, 1.0, 2.0, 0.5, 2.0, -1.0])
    cases = [(f"temperature {t}, top_k {k}", logits, t, k)
             for t in (1.0, 0.5, 2.0) for k in (None, 1, 3, 12)]
    cases += [("a tie at the k-th largest, top_k 2", tied, 1.0, 2),
              ("large logits, temperature 0.1", torch.tensor([800.0, 790.0, 0.0]), 0.1, 2)]
    worst = 0.0
    for case, x, temperature, top_k in cases:
        want = next_token_probabilities(x, temperature, top_k).double().numpy()
        got = fn(x.clone(), temperature, top_k)
        worst = max(worst, _compare(case, got, want, atol))
    return Passed(len(cases), worst)
