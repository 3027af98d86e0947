"""``turneval batch``: the whole report over a corpus, on every core or a Ray cluster, into one fleet report.

    turneval batch calls/ --out fleet/ --workers 8
    turneval batch manifest.csv --out fleet/ --by agent_version --require "p90(response_latency_s)<=1.2"
    turneval batch 'calls/*.wav' --out fleet/ --ray auto

==================  ==========================================================================
``discover``        the inputs (folders, globs, audio, annotation JSONs, manifests, parquet)
                    -> one :class:`~turneval.batch.discover.Call` each
``calls``           one call evaluated with models loaded once per worker, written atomically
                    under ``OUT/calls/<id>/``; the one-line reason of a failure
``runner``          resume, ``errors.jsonl``, the progress line; local workers or Ray
``pool``            the local worker processes: a dead worker replaced and its call retried once,
                    ``--call-timeout``, every worker ended on Ctrl-C or SIGTERM
``ray_runner``      the same work as Ray actors (``pip install turneval[ray]``)
``fleet``           ``calls.parquet`` / ``calls.csv``, ``batch.json`` / ``batch.html``: the
                    distribution of each headline figure, slices ``--by`` a column
``fleet_gates``     ``--require "p90(response_latency_s)<=1.2"`` and the like
==================  ==========================================================================

docs/batch.md has the commands for a laptop, a big machine and a Ray cluster.
"""
from __future__ import annotations

from .discover import Call, DiscoveryError, discover_calls


__all__ = ["Call", "DiscoveryError", "discover_calls"]
