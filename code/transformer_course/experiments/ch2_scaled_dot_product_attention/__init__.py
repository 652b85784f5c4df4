"""The experiments of Chapter 2, scaled dot-product attention."""
