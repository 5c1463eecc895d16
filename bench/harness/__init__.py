"""Benchmark harnesses (not part of the retrieval library: nothing in ``cef`` imports them)."""
