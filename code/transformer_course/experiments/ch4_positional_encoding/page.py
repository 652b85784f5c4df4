"""What the page of Chapter 4 (positional encoding) glues and checks.

Each function backs one figure, table or paragraph of the chapter: it glues the numbers the prose
quotes (with :mod:`transformer_course.notebook`'s glue helpers) and checks the claims the prose
makes (with :mod:`transformer_course.claims`). The chapter calls them from its hidden cells, each
where the old cell stood; the code a reader is meant to read stays in the chapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from transformer_course import LearnedPositionalEmbedding, calibration
from transformer_course.claims import claim, claim_float, claim_trained
from transformer_course.experiments.ch4_positional_encoding.position_extrapolation import (
    CopyTaskConfig,
    CopyTaskResult,
)
from transformer_course.experiments.ch4_positional_encoding.relative_position import ShiftFit
from transformer_course.figures import ch4_positional_encoding as plots
from transformer_course.figures.architecture import plot_architecture
from transformer_course.notebook import glue_figure, glue_number, glue_table, glue_text
from transformer_course.stored import study

NAMES = {"none": "none", "sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE"}


def architecture_map() -> None:
    """Figure 4.1 (``ch4-map``): the Transformer with the embedding blocks highlighted."""
    here = "positional encoding, added to the token embeddings"
    glue_figure("ch4-map", plot_architecture(highlight=["embedding"], here=here))


def equivariance(gap: float) -> None:
    """The paragraph "The gap is ...": reordering the input only reorders the output."""
    glue_number("ch4-equivariance-gap", gap)


def same_dog(gap: float, dog_gap: float) -> None:
    """The paragraph "The representation of "dog" differs by ..."."""
    glue_number("ch4-dog-gap", dog_gap)
    # The prose: reordering the input only reorders the output, and "dog" is the same vector in
    # both sentences. Float64 rounding: each output entry is a softmax-weighted sum of six value
    # vectors behind two 16-wide projections, a few dozen roundings of 2^-53 on entries of order
    # 1, so the gaps stay near 1e-15; 1e-12 leaves a factor of about 100.
    claim_float("self-attention without positions only reorders a reordered input",
                gap < 1e-12 and dog_gap < 1e-12, gap=gap, dog_gap=dog_gap)


def with_positions(gap_pe: float, dog_gap_pe: float) -> None:
    """The paragraph "With positions added, ...": the encoding breaks the symmetry."""
    glue_number("ch4-equivariance-gap-pe", gap_pe)
    glue_number("ch4-dog-gap-pe", dog_gap_pe)
    # The prose: with positions added, both gaps are far above the rounding level (1e-12) of the
    # position-free layer (a one-ulp change of the weights moves them by about 1e-7 of
    # themselves).
    claim_float("adding the encoding breaks the symmetry", min(gap_pe, dog_gap_pe) > 1e-6,
                gap_pe=gap_pe, dog_gap_pe=dog_gap_pe)


def embedding_plus_encoding(sentence: Sequence[str], embedded: np.ndarray, encoded: np.ndarray,
                            same_word: float, same_word_input: float) -> None:
    """Figure ``fig-ch4-sum`` and the paragraph after it: the two "the"s of the sentence.

    Args:
        embedded, encoded: (T, d_model), the token embeddings and the positional encodings.
    """
    glue_number("ch4-same-word-input-gap", same_word_input)
    # The prose: the two "the"s share their embedding row exactly (one row, looked up twice) ...
    claim('the two "the"s share their embedding exactly', same_word == 0, same_word=same_word)
    # ... and differ through the encoding alone: their inputs differ by max |PE(0) - PE(4)|
    # (1 - cos 4 = 1.65 in the first cosine), up to float64 rounding of the sums (1e-15).
    encoding_gap = np.abs(encoded[0] - encoded[4]).max()
    claim_float('the two "the"s differ only through the encoding',
                abs(same_word_input - encoding_gap) < 1e-12 and same_word_input > 0.1,
                same_word_input=same_word_input, encoding_gap=encoding_gap)
    glue_figure("ch4-sum", plots.plot_embedding_plus_encoding(sentence, embedded, encoded))


def loops_agree(hand_gap: float) -> None:
    """The sentence "The two agree to ...": the double loop against the package's encoding."""
    glue_number("ch4-hand-gap", hand_gap)
    # The prose: the loops and the package agree (to rounding). The two compute the angle
    # pos / 10000^(2i/d) and pos * 10000^(-2i/d), a few ulps apart for angles up to 99
    # (99 x 2^-52 ~ 2e-14 each); sin and cos pass that on. 1e-12 leaves a factor of about 50.
    claim_float("the loops agree with the package's encoding to rounding", hand_gap < 1e-12,
                hand_gap=hand_gap)


def similarity(offsets: np.ndarray, similarities: np.ndarray, starts: Sequence[int],
               spread: float, closed_gap: float, near: float, far: float) -> None:
    """Figure ``fig-ch4-similarity`` and the paragraph after it: the similarity depends on the
    offset alone.

    Args:
        offsets: (K,). similarities: (starts, K), the cosine similarity of PE(s) and PE(s + k).
    """
    glue_number("ch4-similarity-spread", spread)
    glue_number("ch4-similarity-closed-gap", closed_gap)
    glue_number("ch4-similarity-offset-1", near)
    glue_number("ch4-similarity-offset-200", far)
    # The prose: the three curves coincide and match the closed form. Angles reach 4200 radians,
    # so each entry of the table carries up to 4200 x 2^-53 ~ 5e-13 from rounding its angle; a
    # cosine similarity averages 128 such products, so the curves agree to about that. 1e-10
    # leaves a factor of about 200.
    claim_float("the similarity depends on the offset alone and matches the closed form",
                spread < 1e-10 and closed_gap < 1e-10, spread=spread, closed_gap=closed_gap)
    glue_figure("ch4-similarity", plots.plot_similarity_vs_offset(
        offsets, similarities, starts, "cosine similarity"))


def rotation(rotation_residual: float) -> None:
    """The sentence "The largest miss is ...": R_k moves every encoding k positions on."""
    glue_number("ch4-rotation-residual", rotation_residual)
    # The prose: R_k moves every encoding on to rounding in sin of arguments up to 10 000: an
    # angle of 10 000 radians is rounded by up to 10 000 x 2^-53 ~ 1e-12 (the observed miss is
    # of that size). 1e-9 leaves a factor of about 1000.
    claim_float("R_k moves every encoding k positions on, to rounding", rotation_residual < 1e-9,
                rotation_residual=rotation_residual)


def rope(rotation_gap: float, offset_gap: float) -> None:
    """The paragraph "`rotate` differs from R_t by ...": rotated scores depend on the offset."""
    glue_number("ch4-rope-rotation-gap", rotation_gap)
    glue_number("ch4-rope-offset-gap", offset_gap)
    # The prose: rotate is R_t, and a rotated score depends on the offset alone. Float64: torch's
    # and NumPy's sin and cos of angles up to 63 radians differ by an ulp or so (1e-16 x the
    # entries' size); a score sums 16 products of entries of order 1 (about 1e-15). 1e-12 leaves
    # a factor of at least 100.
    claim_float("rotate applies R_t, and rotated scores depend on the offset alone",
                rotation_gap < 1e-12 and offset_gap < 1e-12, rotation_gap=rotation_gap,
                offset_gap=offset_gap)


def learned_table(learned: LearnedPositionalEmbedding, rows_with_grad: torch.Tensor) -> None:
    """The paragraph "The table has ... parameters": every row is reached by a backward pass.

    Args:
        rows_with_grad: (), how many rows of the table received a gradient.
    """
    glue_number("ch4-learned-params",
                sum(p.numel() for p in learned.parameters()))
    glue_number("ch4-learned-grad-rows", rows_with_grad)
    # The prose: the backward pass reaches all 16 rows (the gradient of row t is 2 x row t,
    # nonzero).
    claim("a backward pass through a 16-token input reaches every row of the table",
          rows_with_grad == learned.embedding.weight.shape[0], rows_with_grad=rows_with_grad)


def spread(values: list[float]) -> str:
    """Median and range over the seeds, as text for the table."""
    low, mid, high = min(values), float(np.median(values)), max(values)
    return f"{mid:.3f} ({low:.3f}–{high:.3f})"


@dataclass(frozen=True)
class Extrapolation:
    """The scores of the extrapolation experiment that later cells of the page use."""

    accuracy: dict[tuple[str, int], np.ndarray]  # (kind, seed) -> accuracy at each t, (T,)
    seen: dict[str, list[float]]  # kind -> accuracy on the trained positions, per seed
    unseen: dict[str, list[float]]  # kind -> accuracy past the training length, per seed
    seen_min: float  # the lowest seen accuracy with positions, any kind
    rope_lead: float  # RoPE's worst seed minus the best other run, unseen positions
    rope_near: list[float]  # RoPE's accuracy on positions 16-31, per seed
    none_lead: float  # the worst position-free seed minus the best sinusoidal or learned run
    sin_16: list[float]  # the sinusoids' accuracy at position 16, per seed
    sin_18: list[float]  # the sinusoids' accuracy at position 18, per seed


def extrapolation(config: CopyTaskConfig, kinds: Sequence[str], seeds: Sequence[int],
                  results: dict[tuple[str, int], CopyTaskResult],
                  train_seconds: float) -> Extrapolation:
    """Table ``tbl-ch4-extrapolation`` and the paragraphs after Figure ``fig-ch4-extrapolation``
    ("On the positions seen in training, ...", "Past the training length the four part ways"),
    from ``results``: (kind, seed) -> scores."""
    L, chance = config.train_len, 1 / config.vocab_size
    accuracy = {key: r.accuracy_by_position for key, r in results.items()}  # (T,) each
    columns = {"t < 16 (trained)": (1, L), "16 ≤ t < 32": (L, 2 * L),
               "32 ≤ t < 64": (2 * L, config.test_len)}
    table = pd.DataFrame([
        {"positions": NAMES[kind], **{name: spread([np.nanmean(accuracy[kind, s][lo:hi])
                                                    for s in seeds])
                                      for name, (lo, hi) in columns.items()}}
        for kind in kinds])
    glue_table("ch4-extrapolation-table", table)
    glue_number("ch4-train-seconds-timed", train_seconds)
    glue_number("ch4-chance", chance)
    glue_number("ch4-eval-rows", config.eval_rows)
    glue_number("ch4-models", len(results))
    seen = {kind: [results[kind, s].seen_accuracy for s in seeds] for kind in kinds}
    unseen = {kind: [results[kind, s].unseen_accuracy for s in seeds] for kind in kinds}
    for name, values in seen.items():
        glue_number(f"ch4-seen-min-{name}", min(values))
    glue_number("ch4-seen-max-none", max(seen["none"]))
    for name, values in unseen.items():
        glue_number(f"ch4-unseen-max-{name}", max(values))
    for name in ("none", "rope"):
        glue_number(f"ch4-unseen-min-{name}", min(unseen[name]))
    rope_near = [np.nanmean(accuracy["rope", s][L:2 * L]) for s in seeds]
    glue_number("ch4-rope-near-min", min(rope_near))
    glue_number("ch4-sinusoidal-t16-min", min(accuracy["sinusoidal", s][16] for s in seeds))
    for t in (16, 18):
        glue_number(f"ch4-sinusoidal-t{t}-max",
                    max(accuracy["sinusoidal", s][t] for s in seeds))
    # The prose below, for every seed. Trained numbers: each claim states bounds that every run
    # of the stored study `calibration` (this page on the machine that made it and under
    # simulated other CPUs) meets with room to spare; one statistic per sentence.
    seen_min = min(min(seen[k]) for k in ("sinusoidal", "learned", "rope"))
    claim_trained("ch4-seen-min-positions",
                  "all three kinds of positions solve the trained positions for every seed",
                  seen_min, low=0.95)
    claim_trained("ch4-seen-max-none", "without positions the model does not solve them",
                  max(seen["none"]), high=0.5)
    # "RoPE is the best of the four for every seed": the smallest lead of RoPE's worst seed over
    # the best other run, whatever its kind and seed.
    others_max = max(max(unseen[k]) for k in kinds if k != "rope")
    rope_lead = min(unseen["rope"]) - others_max
    claim_trained("ch4-rope-lead",
                  "RoPE is the best of the four past the training length, for every seed",
                  rope_lead, low=0.0, rope_min=min(unseen["rope"]), others_max=others_max)
    claim_trained("ch4-rope-near-min",
                  "RoPE is close to perfect up to about twice the training length",
                  min(rope_near), low=0.9)
    # "the model without positions does better than both": its worst seed's lead over the best
    # seed of the sinusoids and the learned table.
    none_lead = min(unseen["none"]) - max(max(unseen["sinusoidal"]), max(unseen["learned"]))
    claim_trained("ch4-none-lead",
                  "the model without positions does better than sinusoids and the learned table "
                  "there", none_lead, low=0.0)
    # "falls to chance" / "ends at chance as well": below twice chance (0.125) for every seed.
    claim_trained("ch4-unseen-max-learned",
                  "the learned table is at chance past the training length",
                  max(unseen["learned"]), high=2 * chance)
    claim_trained("ch4-unseen-max-sinusoidal",
                  "the sinusoids end at chance past the training length",
                  max(unseen["sinusoidal"]), high=2 * chance)
    sin_16 = [accuracy["sinusoidal", s][16] for s in seeds]
    sin_18 = [accuracy["sinusoidal", s][18] for s in seeds]
    claim_trained("ch4-sinusoidal-t16-min", "the sinusoidal model is mostly right at position 16",
                  min(sin_16), low=0.5)
    claim_trained("ch4-sinusoidal-t18-max", "the sinusoidal model is mostly wrong by position 18",
                  max(sin_18), high=0.5)
    return Extrapolation(accuracy, seen, unseen, seen_min, rope_lead, rope_near, none_lead,
                         sin_16, sin_18)


def attention_drain(config: CopyTaskConfig, kinds: Sequence[str], shown: dict[str, int],
                    weights: dict[str, np.ndarray]) -> float:
    """Figure ``fig-ch4-extrapolation``'s caption (the seed shown per kind) and the sentences on
    where the attention goes past the training length.

    Args:
        weights: kind -> (T,), the mean attention weight on the previous token at each t.

    Returns the sinusoidal model's weight from position 24 on as a share of that on the trained
    positions.
    """
    L = config.train_len
    for kind in kinds:
        glue_number(f"ch4-shown-seed-{kind}", shown[kind])
    weight_seen = np.nanmean(weights["sinusoidal"][:L])  # inside the training range
    weight_far = np.mean(weights["sinusoidal"][L + 8:])  # from position 24 on
    glue_number("ch4-weight-seen-sinusoidal", weight_seen)
    glue_number("ch4-weight-far-sinusoidal", weight_far)
    glue_number("ch4-weight-unseen-learned", np.max(weights["learned"][L:]))
    # The prose: the sinusoidal model's attention on the previous token "drains away" from
    # position 24 on: there it keeps less than a tenth of its weight inside the training range.
    weight_kept = weight_far / weight_seen
    claim_trained("ch4-weight-drain-sinusoidal",
                  "the sinusoidal model's attention on the previous token drains away by "
                  "position 24", weight_kept, high=0.1, weight_seen=weight_seen,
                  weight_far=weight_far)
    return weight_kept


def untrained_rows(moved: torch.Tensor, unmoved: torch.Tensor) -> None:
    """The paragraph "Rows 0-15 moved by up to ...": the learned table's unreached rows."""
    glue_number("ch4-trained-rows-change", moved)
    glue_number("ch4-untrained-rows-change", unmoved)
    # exact on any CPU: Adam leaves a parameter whose gradient is always zero where it started
    claim("the rows no training example reached are exactly their initialisation", unmoved == 0,
          unmoved=unmoved, moved=moved)


def odd_width(per_column: np.ndarray) -> None:
    """Exercise ch4-ex-odd's solution: the fit's residual per column, (9,)."""
    glue_number("ch4-odd-last-residual", per_column[-1])
    glue_number("ch4-odd-other-residual", per_column[:-1].max())


def wavelengths(shortest: float, longest: float, ratio: float, torch_gap: float) -> None:
    """The lab note "The longest wavelength, and the torch encoding"."""
    glue_number("ch4-shortest-wavelength", shortest)
    glue_number("ch4-longest-wavelength", longest)
    glue_number("ch4-longest-over-2pi", ratio)
    # The prose: the longest wavelength is 2 pi x 10000^(510/512). Float64: a power, a division
    # by it, a product with 2 pi and a division by 2 pi, each rounded to 2^-53 of its result: a
    # relative error of at most about 5e-16. 1e-12 leaves a factor of about 2000.
    claim_float("the longest wavelength is 2 pi x 10000^(510/512)",
                abs(ratio - 10000 ** (510 / 512)) < 1e-12 * ratio, ratio=ratio)
    # The prose: torch's encoding matches NumPy's to rounding. Both float64, angles up to 99
    # radians (99 x 2^-53 ~ 1e-14 each), and their sin and cos may differ by an ulp: 1e-12
    # leaves a factor of about 100.
    claim_float("the torch encoding agrees with the NumPy one to rounding", torch_gap < 1e-12,
                torch_gap=torch_gap)


def shift_fit(gaps: dict[int, float], fit: ShiftFit, short_residual: float,
              slowest: float) -> None:
    """The lab note "Finding the shift map from data", from ``gaps``: positions fitted -> the
    largest entry of |M - R_5|, and ``fit``, the fit over 1 000 positions."""
    for positions, gap in gaps.items():
        glue_number(f"ch4-fit-{positions}-gap", gap)
    glue_number("ch4-fit-1000-residual", short_residual)
    glue_number("ch4-slowest-wavelength-32", slowest)
    # The prose: the long fit is R_5 to rounding. Float64 least squares: the table's entries
    # carry up to 1e4 x 2^-53 ~ 1e-12 from rounding their angles, and the inputs' condition
    # number is about 6e3, so the fitted entries may move by about 1e-12 x 6e3 ~ 1e-8 at worst
    # (the miss seen is of order 1e-12). 1e-6 leaves a factor of about 100 over that worst case.
    claim_float("over 10 000 positions the fit is R_5 to rounding", gaps[10_000] < 1e-6,
                gap=gaps[10_000])
    # The prose: the short fit reproduces every shift yet is another matrix. Rounding moves a
    # singular value by about 2^-52 times the largest (about 1e-14 of the cutoff here); while
    # every singular value stays a factor of 2 or more from the SVD's cutoff, every numeric path
    # keeps the same directions and so finds the same matrix to rounding: its residual far below
    # 1e-6 (rounding at 1e-12 times what the kept directions amplify) and its gap to R_5 far
    # above 0.01.
    claim_float("over 1 000 positions the fit reproduces every shift yet differs from R_5",
                fit.cutoff_margin > 2 and short_residual < 1e-6 and gaps[1_000] > 0.01,
                residual=short_residual, gap=gaps[1_000], cutoff_margin=fit.cutoff_margin)


def rope_offsets(config: CopyTaskConfig, seeds: Sequence[int], stolen: dict[int, int]) -> float:
    """The lab note "Where RoPE's misplaced attention goes", from ``stolen``: seed -> the offset
    with the most misplaced attention. Returns the largest distance of such an offset minus 1
    from a whole number of turns of the fastest pair."""
    L = config.train_len
    turns = {seed: (k - 1) / (2 * np.pi) for seed, k in stolen.items()}
    for seed in seeds:
        glue_number(f"ch4-rope-stolen-{seed}", stolen[seed])
        glue_number(f"ch4-rope-turns-{seed}", turns[seed])
    # The prose: every such offset is longer than any in training (at least L = 16) and lies
    # close to 1 plus a whole number of turns of the fastest pair (1 radian per position): within
    # 0.15 of a turn. Argmaxes of trained attention, so trained claims: the shortest offset over
    # the seeds, and the largest distance from a whole number of turns.
    turns_off = max(abs(x - round(x)) for x in turns.values())  # from the nearest whole turn
    claim_trained("ch4-rope-stolen-min",
                  "every offset with the most misplaced attention is longer than any in training",
                  min(stolen.values()), low=L, stolen=stolen)
    claim_trained("ch4-rope-turns-off-max",
                  "each lies close to 1 plus a whole number of turns of the fastest pair",
                  turns_off, high=0.15, turns=turns)
    return turns_off


def shown_number(value: float) -> str:
    """A whole number as it is (an offset, a bound of 0), anything else to three decimals."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


def bounds(stat: calibration.Statistic) -> str:
    """The claim's bounds as "at least a", "at most b" or "a to b"."""
    if stat.high is None:
        return f"at least {shown_number(stat.low)}"
    if stat.low is None:
        return f"at most {shown_number(stat.high)}"
    return f"{shown_number(stat.low)} to {shown_number(stat.high)}"


def calibration_table(scores: Extrapolation, weight_kept: float, stolen: dict[int, int],
                      turns_off: float) -> None:
    """Table ``tbl-ch4-calibration`` and the lab note "How far the trained numbers move on other
    CPUs": each trained claim's number in this run beside its calibrated runs."""
    seen, unseen, rope_near = scores.seen, scores.unseen, scores.rope_near
    live = {  # key: (the number the claim rests on, its value in this run)
        "ch4-seen-min-positions": ("lowest accuracy on positions 1-15 with positions, any kind",
                                   scores.seen_min),
        "ch4-seen-max-none": ("highest accuracy on positions 1-15 without positions",
                              max(seen["none"])),
        "ch4-rope-lead": ("RoPE's worst seed minus the best other run, positions 16-63",
                          scores.rope_lead),
        "ch4-rope-near-min": ("RoPE's lowest accuracy on positions 16-31", min(rope_near)),
        "ch4-none-lead": ("the worst position-free seed minus the best sinusoidal or learned "
                          "run, positions 16-63", scores.none_lead),
        "ch4-unseen-max-learned": ("the learned table's highest accuracy on positions 16-63",
                                   max(unseen["learned"])),
        "ch4-unseen-max-sinusoidal": ("the sinusoids' highest accuracy on positions 16-63",
                                      max(unseen["sinusoidal"])),
        "ch4-sinusoidal-t16-min": ("the sinusoids' lowest accuracy at position 16",
                                   min(scores.sin_16)),
        "ch4-sinusoidal-t18-max": ("the sinusoids' highest accuracy at position 18",
                                   max(scores.sin_18)),
        "ch4-weight-drain-sinusoidal": ("attention on the previous token from position 24 on, "
                                        "as a share of that on positions 1-15 (sinusoids, "
                                        "median seed)", weight_kept),
        "ch4-rope-stolen-min": ("the shortest offset with the most misplaced attention (RoPE)",
                                min(stolen.values())),
        "ch4-rope-turns-off-max": ("the largest distance of such an offset minus 1 from a whole "
                                   "number of turns", turns_off),
    }
    rows = []
    for key, (number, value) in live.items():
        stat = calibration.statistic(key)
        span = ("not calibrated" if stat is None else
                f"{shown_number(stat.span()[0])} to {shown_number(stat.span()[1])}")
        rows.append({"the sentence": stat.text if stat else key, "the number": number,
                     "this run": shown_number(value), "calibrated runs": span,
                     "claimed": bounds(stat) if stat else ""})
    glue_table("ch4-calibration-table", pd.DataFrame(rows))
    glue_number("ch4-calibrated-runs", len(calibration.runs()))
    glue_number("ch4-calibrated-draws", len(calibration.draws()))
    glue_text("ch4-calibration-made-on", study("calibration").made_on())
