"""The experiments of Chapter 3, multi-head attention (the NumPy steps the chapter imports)."""

from .numpy_heads import (
    merge_heads_numpy,
    mha_parameters_numpy,
    multi_head_attention_numpy,
    split_heads_numpy,
)

__all__ = ["merge_heads_numpy", "mha_parameters_numpy", "multi_head_attention_numpy",
           "split_heads_numpy"]
