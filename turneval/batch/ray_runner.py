"""A batch on a Ray cluster (``turneval batch ... --ray auto``; ``pip install turneval[ray]``).

Each Ray worker is an actor that loads the models once (:class:`~turneval.batch.calls.CallEvaluator`,
one CPU and one thread each, as a local worker on a machine with as many cores as workers) and
reports calls handed to it one after another; the documents come back to this process, which
writes them under ``OUT/calls/``, so only the inputs need to be readable by the same path on
every node (a shared file system or object store mount). Calls go out one per actor as actors
free up, so a killed run has not handed out the rest. An actor that dies costs its call a second
try (on a new actor), a call past ``--call-timeout`` fails, and Ctrl-C or SIGTERM kills the
actors, which cancels their tasks.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Callable, Sequence

from turneval.reporting.build import ReportOptions

from .calls import CallEvaluator, CallOutcome, audio_seconds
from .discover import Call
from .pool import ATTEMPTS, WorkerDied, call_limit, timed_out_reason


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
        from turneval.interrupts import keep_sigterm

        try:  # ray.init sets a SIGTERM handler that exits without cleaning up: ours stays
            keep_sigterm(lambda: ray.init(address=address, log_to_driver=False))
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise RayUnavailable(f"--ray {address}: cannot reach a Ray cluster ({' '.join(str(err).split())[:300]}); "
                                 "start one with `ray start --head`, or give its address (host:6379)") from None
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class _Worker:
    """The body of a Ray actor: a CallEvaluator that returns the documents instead of writing them."""

    def __init__(self, options: ReportOptions, html: bool, verbose: bool = False) -> None:
        if not verbose:
            from turneval.console import silence_worker

            silence_worker()
        self.evaluator = CallEvaluator(options, html=html, threads=1)

    def run(self, call: Call) -> CallOutcome:
        return self.evaluator.run(call, None)

    def ready(self) -> bool:
        """Answers once the models are loaded (a call's time limit starts when it can run)."""
        return True


class _Actors:
    """The actors of a run: the one task each holds, (slot, actor, call, attempt, deadline) by task,
    and the actors still loading their models (readiness task -> slot)."""

    def __init__(self, ray, n: int, options: ReportOptions, html: bool, verbose: bool) -> None:
        self.ray = ray
        self.make = lambda: ray.remote(num_cpus=1)(_Worker).remote(options, html, verbose)
        self.pool: list = [None] * n
        self.running: dict = {}
        self.starting: dict = {}
        self.load_failures = 0
        for slot in range(n):
            self.start(slot)

    def start(self, slot: int) -> None:
        self.pool[slot] = self.make()
        self.starting[self.pool[slot].ready.remote()] = slot

    def started(self, ref) -> None:  # noqa: ANN001
        """An actor answered its readiness task (or died loading the models: started again, a few times)."""
        slot = self.starting.pop(ref)
        try:
            self.ray.get(ref)
            self.load_failures = 0
        except Exception as err:
            self.load_failures += 1
            if self.load_failures > len(self.pool) + 2:
                raise WorkerDied(f"the Ray workers die while loading the models ({type(err).__name__}): out of memory? "
                                 "try fewer --workers") from None
            self.start(slot)

    def idle(self) -> list[int]:
        busy = set(self.starting.values()) | {task[0] for task in self.running.values()}
        return [slot for slot in range(len(self.pool)) if slot not in busy]

    def submit(self, slot: int, call: Call, attempt: int, limit_s: float) -> None:
        ref = self.pool[slot].run.remote(call)
        self.running[ref] = (slot, self.pool[slot], call, attempt, time.monotonic() + limit_s)

    def replace(self, slot: int) -> None:
        self.ray.kill(self.pool[slot])
        self.start(slot)

    def kill_all(self) -> None:
        """End every actor: their tasks are cancelled with them (Ray cannot force-cancel an actor's task)."""
        for actor in self.pool:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone, or the cluster is: nothing left to stop
                pass


def _finish(ray, actors: _Actors, ref, queue: deque) -> CallOutcome | None:  # noqa: ANN001
    """The outcome of a finished task; a dead actor is replaced and its call requeued (None) or failed."""
    slot, _, call, attempt, _ = actors.running.pop(ref)
    try:
        return ray.get(ref)
    except Exception as err:  # the actor died (out of memory, a lost node): a new one tries again
        actors.replace(slot)
        if attempt < ATTEMPTS:
            queue.appendleft((call, attempt + 1))
            return None
        return CallOutcome(call.id, False, audio_seconds(call),
                           reason=f"the worker died while reporting this call (Ray: {type(err).__name__}): out of memory? "
                                  f"tried {ATTEMPTS} times")


def _overdue(actors: _Actors, call_timeout: float | None) -> list[CallOutcome]:
    """The calls past their time limit: failed, their actors replaced."""
    outcomes = []
    for ref, (slot, _, call, _, deadline) in list(actors.running.items()):
        if time.monotonic() > deadline:
            del actors.running[ref]
            actors.replace(slot)
            outcomes.append(CallOutcome(call.id, False, audio_seconds(call),
                                        reason=timed_out_reason(call_limit(call, call_timeout))))
    return outcomes


def run_on_ray(calls: Sequence[Call], options: ReportOptions, html: bool, workers: int | None, address: str,
               on_outcome: Callable[[CallOutcome], None], *, call_timeout: float | None = None, verbose: bool = False) -> None:
    """Evaluate ``calls`` on Ray actors (``workers`` of them, default: one per CPU of the cluster).

    An actor holds one call at a time, so that a dead actor's call is known: it is tried once more
    on a new actor, then fails; a call past its time limit fails and its actor is replaced. On
    Ctrl-C or SIGTERM every actor is killed, which cancels its task."""
    ray = _ray()
    cpus = connect(address)
    n = max(1, min(workers or cpus, len(calls)))
    actors = _Actors(ray, n, options, html, verbose)
    queue = deque((call, 1) for call in calls)

    def feed() -> None:  # a call for every ready actor without one
        for slot in actors.idle():
            if queue:
                call, attempt = queue.popleft()
                actors.submit(slot, call, attempt, call_limit(call, call_timeout))

    try:
        while queue or actors.running:
            deadlines = [task[4] for task in actors.running.values()]
            wait_s = max(0.05, min(min(deadlines, default=float("inf")) - time.monotonic(), 1.0))
            done, _ = ray.wait(list(actors.running) + list(actors.starting), num_returns=1, timeout=wait_s)
            for ref in [ref for ref in done if ref in actors.starting]:
                actors.started(ref)
            done = [ref for ref in done if ref in actors.running]
            outcomes = [_finish(ray, actors, ref, queue) for ref in done] + _overdue(actors, call_timeout)
            for outcome in outcomes:
                if outcome is not None:
                    on_outcome(outcome)
            feed()
    except KeyboardInterrupt:
        from turneval.interrupts import stop_at_once_on_next_signal

        stop_at_once_on_next_signal()
        actors.kill_all()
        raise
    actors.kill_all()
