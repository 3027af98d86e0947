"""A batch on a Ray cluster (``turneval batch ... --ray auto``; ``pip install turneval[ray]``).

Each Ray worker is an actor that loads the models once (:class:`~turneval.batch.calls.CallEvaluator`,
one CPU and one thread each, as a local worker on a machine with as many cores as workers) and
reports calls handed to it one after another; the documents come back to this process, which
writes them under ``OUT/calls/``, so only the inputs need to be readable by the same path on
every node (a shared file system or object store mount). Calls go out as workers free up, at
most two queued per worker, so a killed run has not handed out the rest.
"""
from __future__ import annotations

from typing import Callable, Sequence

from turneval.reporting.build import ReportOptions

from .calls import CallEvaluator, CallOutcome
from .discover import Call


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


def _ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'turneval[ray]'") from None
    return ray


def connect(address: str) -> int:
    """Join the Ray cluster at ``address`` (``auto``: the one this machine belongs to), unless this
    process already joined one; returns the cluster's CPUs."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise RayUnavailable(f"--ray {address}: cannot reach a Ray cluster ({' '.join(str(err).split())[:300]}); "
                                 "start one with `ray start --head`, or give its address (host:6379)") from None
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class _Worker:
    """The body of a Ray actor: a CallEvaluator that returns the documents instead of writing them."""

    def __init__(self, options: ReportOptions, html: bool) -> None:
        self.evaluator = CallEvaluator(options, html=html, threads=1)

    def run(self, call: Call) -> CallOutcome:
        return self.evaluator.run(call, None)


def run_on_ray(calls: Sequence[Call], options: ReportOptions, html: bool, workers: int | None, address: str,
               on_outcome: Callable[[CallOutcome], None]) -> None:
    """Evaluate ``calls`` on Ray actors (``workers`` of them, default: one per CPU of the cluster)."""
    ray = _ray()
    cpus = connect(address)
    n = max(1, min(workers or cpus, len(calls)))
    actor = ray.remote(num_cpus=1)(_Worker)
    pool = [actor.remote(options, html) for _ in range(n)]
    pending = iter(calls)
    running: dict = {}
    for slot, worker in enumerate(pool):
        for _ in range(2):
            call = next(pending, None)
            if call is not None:
                running[worker.run.remote(call)] = (slot, worker, call)
    while running:
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            slot, worker, call = running.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as err:  # the worker died (out of memory, a lost node): this call fails, a new worker goes on
                outcome = CallOutcome(call.id, False, reason=f"internal error (Ray worker lost: {type(err).__name__}); rerun to retry")
                if pool[slot] is worker:
                    ray.kill(worker)
                    pool[slot] = actor.remote(options, html)
            on_outcome(outcome)
            nxt = next(pending, None)
            if nxt is not None:
                running[pool[slot].run.remote(nxt)] = (slot, pool[slot], nxt)
    for worker in pool:
        ray.kill(worker)
