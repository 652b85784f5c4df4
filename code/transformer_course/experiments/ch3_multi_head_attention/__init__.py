"""The experiments of Chapter 3, multi-head attention."""
