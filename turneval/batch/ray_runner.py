"""A batch on a Ray cluster (``turneval batch ... --ray auto``; ``pip install turneval[ray]``).

Each Ray worker is an actor that loads the models once (:class:`~turneval.batch.calls.CallEvaluator`,
one CPU and one thread each, as a local worker on a machine with as many cores as workers) and
reports calls handed to it one after another; the documents come back to this process, which
writes them under ``OUT/calls/``, so only the inputs need to be readable by the same path on
every node (a shared file system or object store mount). Calls go out as workers free up, at
most two queued per worker, so a killed run has not handed out the rest. An actor that dies costs
its call a second try (on a new actor), a call past ``--call-timeout`` fails, and Ctrl-C or SIGTERM
kills the actors, which cancels their tasks.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Callable, Sequence

from turneval.reporting.build import ReportOptions

from .calls import CallEvaluator, CallOutcome, audio_seconds
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

    def __init__(self, options: ReportOptions, html: bool, verbose: bool = False) -> None:
        if not verbose:
            import warnings

            from turneval.console import silence_libraries

            silence_libraries()
            warnings.simplefilter("ignore")
        self.evaluator = CallEvaluator(options, html=html, threads=1)

    def run(self, call: Call) -> CallOutcome:
        return self.evaluator.run(call, None)


class _Actors:
    """The actors of a run, each slot with the calls it holds: (call, attempt, deadline) by task."""

    def __init__(self, ray, n: int, options: ReportOptions, html: bool, verbose: bool) -> None:
        self.ray = ray
        self.make = lambda: ray.remote(num_cpus=1)(_Worker).remote(options, html, verbose)
        self.pool = [self.make() for _ in range(n)]
        self.running: dict = {}  # task ref -> (slot, actor, call, attempt, deadline)

    def submit(self, slot: int, call: Call, attempt: int, limit_s: float) -> None:
        ref = self.pool[slot].run.remote(call)
        self.running[ref] = (slot, self.pool[slot], call, attempt, time.monotonic() + limit_s)

    def replace(self, slot: int, actor) -> None:  # noqa: ANN001
        """A new actor for ``slot`` (its calls still queued on the old one fail with it, and are retried)."""
        if self.pool[slot] is actor:
            self.ray.kill(actor)
            self.pool[slot] = self.make()

    def kill_all(self) -> None:
        """End every actor: their tasks are cancelled with them (Ray cannot force-cancel an actor's task)."""
        for actor in self.pool:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone, or the cluster is: nothing left to stop
                pass


def _limit(call: Call, call_timeout: float | None) -> float:
    from .pool import default_call_timeout

    if call_timeout is None:
        return default_call_timeout(audio_seconds(call))
    return call_timeout if call_timeout > 0 else float("inf")


def run_on_ray(calls: Sequence[Call], options: ReportOptions, html: bool, workers: int | None, address: str,
               on_outcome: Callable[[CallOutcome], None], *, call_timeout: float | None = None, verbose: bool = False) -> None:
    """Evaluate ``calls`` on Ray actors (``workers`` of them, default: one per CPU of the cluster).

    A call whose actor dies (out of memory, a lost node) is tried once more on a new actor, then
    fails; a call past its time limit fails and its actor is replaced. On Ctrl-C or SIGTERM every
    actor is killed, which cancels its tasks."""
    from .pool import ATTEMPTS

    ray = _ray()
    cpus = connect(address)
    n = max(1, min(workers or cpus, len(calls)))
    actors = _Actors(ray, n, options, html, verbose)
    queue = deque((call, 1) for call in calls)
    try:
        for slot in range(n):
            for _ in range(2):  # two per actor: the next call is there when one ends
                if queue:
                    call, attempt = queue.popleft()
                    actors.submit(slot, call, attempt, _limit(call, call_timeout))
        while actors.running:
            now = time.monotonic()
            wait_s = max(0.05, min(min(r[4] for r in actors.running.values()) - now, 1.0))
            done, _ = ray.wait(list(actors.running), num_returns=1, timeout=wait_s)
            for ref in done:
                slot, actor, call, attempt = actors.running.pop(ref)[:4]
                try:
                    outcome = ray.get(ref)
                except Exception as err:  # the actor died (out of memory, a lost node): a new one tries again
                    actors.replace(slot, actor)
                    if attempt < ATTEMPTS:
                        queue.appendleft((call, attempt + 1))
                        outcome = None
                    else:
                        outcome = CallOutcome(call.id, False, audio_seconds(call),
                                              reason=f"the worker died while reporting this call (Ray: {type(err).__name__}): "
                                                     f"out of memory? tried {ATTEMPTS} times")
                if outcome is not None:
                    on_outcome(outcome)
                if queue:
                    call, attempt = queue.popleft()
                    actors.submit(slot, call, attempt, _limit(call, call_timeout))
            for ref, (slot, actor, call, attempt, deadline) in list(actors.running.items()):
                if ref in actors.running and time.monotonic() > deadline:
                    del actors.running[ref]
                    actors.replace(slot, actor)  # the actor's other queued call fails with it and is retried
                    on_outcome(CallOutcome(call.id, False, audio_seconds(call), reason=(
                        f"stopped after {_limit(call, call_timeout):.0f} s (--call-timeout): the call did not finish; "
                        "give a larger --call-timeout if it is long")))
                    if queue:
                        nxt, nxt_attempt = queue.popleft()
                        actors.submit(slot, nxt, nxt_attempt, _limit(nxt, call_timeout))
    except KeyboardInterrupt:
        from turneval.interrupts import stop_at_once_on_next_signal

        stop_at_once_on_next_signal()
        actors.kill_all()
        raise
    actors.kill_all()
