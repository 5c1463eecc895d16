"""Benchmarks of cef: scripts (``python bench/bench_X.py``), their harnesses and the ``bench/cli.py`` commands."""
