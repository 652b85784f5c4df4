"""The experiments of Chapter 5, the full model."""
