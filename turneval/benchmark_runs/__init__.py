"""Runs of the benchmarks people already use, evaluated in their own layout.

* :mod:`turneval.benchmark_runs.full_duplex_bench`: a Full-Duplex-Bench run folder (v1.0 tasks, v1.5
  overlap scenarios), ``turneval full-duplex-bench``.
* :mod:`turneval.benchmark_runs.fd_bench`: FD-Bench run logs with their scripted rounds,
  ``turneval fd-bench``.

Each reads the benchmark's files (readers in ``turneval.dataset_scripts.readers``), applies
the benchmark's rules (``turneval.metrics``) and lays out the results: JSON (with a schema
under ``turneval/data/``) and markdown tables in the paper's shape.
"""
