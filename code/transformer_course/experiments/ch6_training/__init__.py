"""The experiments of Chapter 6, training."""
