"""Relative position in the sinusoidal encoding: shifts are rotations, similarity is offset-only.

For every pair i, (sin(pos w_i), cos(pos w_i)) moved k positions on is a rotation by the angle
k w_i, whatever pos is. So PE(pos + k) = R_k PE(pos) with R_k block diagonal, one 2 x 2 rotation
per pair (Vaswani et al., 2017, section 3.5: "PE_{pos+k} can be represented as a linear function
of PE_pos"). It follows that PE(p) . PE(p + k) = sum_i cos(k w_i), a function of k alone.
Both facts need an even d_model: an unpaired last sine has no cosine to rotate with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from transformer_course.core.positional import BASE, sinusoidal_frequencies


def relative_position_map(k: int, d_model: int, base: float = BASE) -> np.ndarray:
    """The fixed matrix R_k with PE(pos + k) = R_k @ PE(pos) for every pos.

    Args:
        k: the offset (any int; negative moves back, R_{-k} is the inverse of R_k).
        d_model: model width, even. base: the formula's constant.

    Returns:
        (d_model, d_model) float64, block diagonal with blocks [[cos, sin], [-sin, cos]] of k w_i.
    """
    angles = k * sinusoidal_frequencies(d_model, base)  # (d_model / 2,)
    cos, sin = np.cos(angles), np.sin(angles)
    rotation = np.zeros((d_model, d_model))
    even = np.arange(0, d_model, 2)
    rotation[even, even] = cos  # new sin = sin * cos(k w) + cos * sin(k w)
    rotation[even, even + 1] = sin
    rotation[even + 1, even] = -sin  # new cos = cos * cos(k w) - sin * sin(k w)
    rotation[even + 1, even + 1] = cos
    return rotation


@dataclass(frozen=True)
class ShiftFit:
    """A least-squares fit of the map taking PE(pos) to PE(pos + k) over a table of positions."""

    matrix: np.ndarray  # (d_model, d_model) M minimising sum_pos |M PE(pos) - PE(pos + k)|^2
    max_residual: float  # largest |M PE(pos) - PE(pos + k)| entry over the fitted positions
    condition: float  # condition number of the inputs; huge = many maps fit equally well
    # The factor between the SVD's cutoff and the singular value nearest it (above or below).
    # Rounding moves a singular value by about 2^-52 times the largest; while that is far less
    # than the cutoff's distance, every numeric path keeps the same directions, and the fit.
    cutoff_margin: float


def fit_shift_map(encoding: np.ndarray, k: int) -> ShiftFit:
    """Fit one linear map for PE(pos) -> PE(pos + k) across all positions of ``encoding``.

    Args:
        encoding: (P, d_model) rows PE(0) .. PE(P - 1). k: offset, 1 <= k < P.

    Returns:
        the fitted matrix, its largest residual, the condition number of PE(0 .. P - k - 1)
        and how far its singular values stay from the cutoff that drops directions.
    """
    inputs, targets = encoding[:-k], encoding[k:]  # (P - k, d_model) each
    # Minimum-norm least squares through one SVD, which also gives the condition number.
    left, singular, right_t = np.linalg.svd(inputs, full_matrices=False)  # (N, d), (d,), (d, d)
    cutoff = np.finfo(np.float64).eps * max(inputs.shape) * singular[0]  # as numpy's lstsq
    inverse = np.divide(1.0, singular, out=np.zeros_like(singular), where=singular > cutoff)
    solution = right_t.T @ (inverse[:, None] * (left.T @ targets))  # (d_model, d_model) = M^T
    residual = np.abs(inputs @ solution - targets).max()
    with np.errstate(divide="ignore"):
        condition = singular[0] / singular[-1]
        margin = np.exp(np.abs(np.log(singular / cutoff)).min())  # inf where a value is 0
    return ShiftFit(matrix=solution.T, max_residual=float(residual), condition=float(condition),
                    cutoff_margin=float(margin))


def position_similarity(encoding: np.ndarray, starts: Sequence[int], offsets: Sequence[int],
                        *, cosine: bool = False) -> np.ndarray:
    """Dot products (or cosine similarities) PE(s) . PE(s + o) for each start s and offset o.

    Args:
        encoding: (P, d_model). starts, offsets: ints with 0 <= s + o < P for every pair.
        cosine: divide by the two norms.

    Returns:
        (len(starts), len(offsets)) float64.
    """
    starts_arr = np.asarray(starts)
    targets = starts_arr[:, None] + np.asarray(offsets)[None, :]  # (S, O)
    anchors = encoding[starts_arr]  # (S, d_model)
    others = encoding[targets]  # (S, O, d_model)
    dots = np.einsum("sd,sod->so", anchors, others)
    if cosine:
        dots = dots / (np.linalg.norm(anchors, axis=-1)[:, None] * np.linalg.norm(others, axis=-1))
    return dots


def offset_similarity(offsets: Sequence[int], d_model: int, base: float = BASE) -> np.ndarray:
    """The closed form PE(p) . PE(p + o) = sum_i cos(o w_i), the same for every p (even d_model).

    Args:
        offsets: ints. d_model: model width, even. base: the formula's constant.

    Returns:
        (len(offsets),) float64.
    """
    if d_model % 2:  # the sum below would silently leave out the unpaired last sine
        raise ValueError(f"d_model must be even for the closed form; got {d_model}")
    frequencies = sinusoidal_frequencies(d_model, base)  # (d_model / 2,)
    angles = np.asarray(offsets)[:, None] * frequencies[None, :]  # (O, d_model / 2)
    return np.cos(angles).sum(axis=-1)

