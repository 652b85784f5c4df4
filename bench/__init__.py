"""Benchmarks behind `make bench`: build times, training against the seed recipe, attention against
the hardware's matmul rate, and page weights. Every figure is a median of repeats measured in one
run, printed as a table and written as JSON under `_build/bench/`."""
