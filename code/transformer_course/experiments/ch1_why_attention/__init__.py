"""The experiments of Chapter 1, why attention."""
