"""The experiments of Chapter 4, positional encoding (the names the chapter imports)."""

from .order import permutation_gap
from .position_extrapolation import CopyBackModel, CopyTaskConfig, train_copy_task
from .relative_position import (
    fit_shift_map,
    offset_similarity,
    position_similarity,
    relative_position_map,
)
from .rotary import rotate

__all__ = ["CopyBackModel", "CopyTaskConfig", "fit_shift_map", "offset_similarity",
           "permutation_gap", "position_similarity", "relative_position_map", "rotate",
           "train_copy_task"]
