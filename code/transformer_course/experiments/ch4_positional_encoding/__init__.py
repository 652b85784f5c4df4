"""The experiments of Chapter 4, positional encoding."""
