"""The worker processes of a batch on this machine: one call at a time each, replaced when one dies.

A worker is forked from a fork server that has imported :data:`PRELOAD`, loads the models once,
says it is ready, and then reports the calls handed to it over its pipe, one at a time. The
parent waits on every worker's pipe and process sentinel together, so it knows which call a
worker held when it died (killed, out of memory, a crash in a native library): that call is
tried once more on a fresh worker, then recorded as failed, and the run goes on. A call that
runs past its time limit is stopped by killing its worker. Pipes hold no semaphores (the queues
of a ``ProcessPoolExecutor`` do, and leak them when a worker is killed).

On Ctrl-C or SIGTERM (a ``KeyboardInterrupt`` here, see :mod:`turneval.interrupts`) the parent
ends every worker (SIGTERM, then SIGKILL after :data:`GRACE_S`) and the fork server; a worker
ignores SIGINT, so a Ctrl-C to the whole process group stops its call only through the parent,
and exits by itself when the parent is gone (SIGKILL of the parent leaves nothing running).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_any
from pathlib import Path
from typing import Any, Callable, Sequence

from turneval.reporting.build import ReportOptions

from .calls import CallOutcome, audio_seconds
from .discover import Call


PRELOAD = ["turneval.batch.pool", "turneval.modeling", "turneval.naturalness_inference", "turneval.dataset_scripts.vad"]
"""What the fork server imports once for every worker: torch and transformers take ~5 CPU s to
import, more than a minute of audio takes to evaluate, and a forked worker gets them for free."""
GRACE_S = 2.0
"""How long an interrupted worker has to end on SIGTERM before it is killed."""
ATTEMPTS = 2
"""A call whose worker died is tried this many times in all."""
TRACE_ENV = "TURNEVAL_BATCH_TRACE"
"""A file each worker appends one JSON line to after every call: its pid, the call, the worker's
resident memory then (benchmarks/speed/batch_soak.py reads it to see whether a worker grows)."""


class WorkerDied(RuntimeError):
    """Workers cannot start (they die or fail while loading the models); the message says what to do."""


def default_call_timeout(audio_s: float) -> float:
    """The time limit of a call without ``--call-timeout``: generous, so that only a stuck call
    reaches it (5 minutes plus 3 s per audio second: a report runs many times faster than real time)."""
    return 300.0 + 3.0 * audio_s


def call_limit(call: Call, call_timeout: float | None) -> float:
    """The seconds ``call`` may take under ``--call-timeout`` (None: :func:`default_call_timeout`
    of its length; 0: no limit)."""
    if call_timeout is None:
        return default_call_timeout(audio_seconds(call))
    return call_timeout if call_timeout > 0 else float("inf")


def timed_out_reason(limit_s: float) -> str:
    """The failure reason of a call stopped at its time limit (local workers and Ray alike)."""
    return (f"stopped after {limit_s:.0f} s (--call-timeout): the call did not finish; give a larger "
            "--call-timeout if it is long")


# --------------------------------------------------------------------------- in the worker
def resident_mib() -> float | None:
    """This process's resident memory now (Linux; None elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _trace(path: str, call_id: str, ok: bool) -> None:
    import json

    line = json.dumps({"pid": os.getpid(), "call": call_id, "ok": ok, "rss_mib": resident_mib(), "time": time.time()})
    with open(path, "a", encoding="utf-8") as handle:  # one short append per line: lines of workers do not mix
        handle.write(line + "\n")


def _exit_with_parent(parent_pid: int) -> None:
    """End this worker when the batch's process is gone (killed with SIGKILL, which it cannot
    handle): the worker's own parent is the fork server, which ends with the batch (this worker is
    then adopted), and the batch's pid is polled too."""
    server = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != server:
                os._exit(1)
            try:
                os.kill(parent_pid, 0)
            except (ProcessLookupError, PermissionError):  # gone (PermissionError: its pid is someone else's now)
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _no_semaphores() -> None:
    """tqdm guards its bars (even disabled ones) with a multiprocessing lock, a named semaphore
    that a killed worker cannot unlink (Python warns of "leaked semaphore objects" at exit); a
    worker writes no bar another process shares, so a thread lock does."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def worker_main(conn: Any, options: ReportOptions, html: bool, threads: int, parent_pid: int, verbose: bool) -> None:
    """A worker's life: load the models, say ``ready``, then one ``outcome`` per call received."""
    from .calls import CallEvaluator, failure_reason

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the batch decides what an interrupt stops
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _exit_with_parent(parent_pid)
    _no_semaphores()
    if not verbose:
        from turneval.console import silence_worker

        silence_worker()
    try:
        evaluator = CallEvaluator(options, html=html, threads=threads)
    except Exception as err:  # every worker would fail the same way: the parent stops the run
        conn.send(("failed", failure_reason(err)))
        return
    conn.send(("ready", None))
    trace = os.environ.get(TRACE_ENV)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        call, out_dir = message
        outcome = evaluator.run(call, out_dir)
        conn.send(("outcome", outcome))
        if trace:
            _trace(trace, call.id, outcome.ok)


# --------------------------------------------------------------------------- in the batch's process
def _context():
    """Workers forked from a fork server that has imported :data:`PRELOAD` (one import for all
    workers; the server holds no threads or open handles, unlike this process); spawn where the
    platform has no fork server (Windows)."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def _stop_helpers() -> None:
    """End (and reap) the fork server and the resource tracker, which would end with this process:
    after an interrupt, now. Either starts again when needed."""
    from multiprocessing import forkserver, resource_tracker

    for helper in (forkserver._forkserver, resource_tracker._resource_tracker):  # noqa: SLF001 (no public way)
        try:
            helper._stop()  # noqa: SLF001
        except Exception:  # not started, or another Python's internals: it ends with this process
            pass


@dataclass(eq=False)  # compared by identity: a slot is one worker
class _Slot:
    """A worker process, its pipe, and the call it holds (with its attempt number and deadline)."""

    process: Any
    conn: Any
    ready: bool = False
    call: Call | None = None
    attempt: int = 0
    deadline: float = float("inf")
    limit_s: float = 0.0


def _how_it_ended(exitcode: int | None) -> str:
    return f"killed by signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit status {exitcode}"


def _died_reason(exitcode: int | None) -> str:
    return f"the worker died while reporting this call ({_how_it_ended(exitcode)}): out of memory? tried {ATTEMPTS} times"


class LocalPool:
    """``workers`` processes evaluating calls with the same report options.

    Args:
        workers: how many processes.
        options, html: what every call gets (:class:`~turneval.batch.calls.CallEvaluator`).
        threads: the threads each worker may use.
        call_timeout: seconds a call may take, or None for :func:`default_call_timeout` of its
            length; 0: no limit.
        verbose: let the libraries' progress bars and warnings through in the workers.
    """

    worker_target: Callable[..., None] = staticmethod(worker_main)
    """What a worker process runs (tests give one that misbehaves on cue)."""

    def __init__(self, workers: int, options: ReportOptions, html: bool, threads: int,
                 call_timeout: float | None = None, verbose: bool = False) -> None:
        self.workers, self.options, self.html, self.threads = workers, options, html, threads
        self.call_timeout, self.verbose = call_timeout, verbose
        self.context = _context()
        self.slots: list[_Slot] = []
        self.load_failures = 0

    # ------------------------------------------------------------------ workers
    def _start(self) -> _Slot:
        parent_conn, child_conn = self.context.Pipe()
        # not a daemon: a daemonic process may not start processes of its own, and a library in the
        # report might; shutdown() ends every worker, after a run, an error or an interrupt
        process = self.context.Process(target=self.worker_target, name="turneval-batch-worker", daemon=False,
                                       args=(child_conn, self.options, self.html, self.threads, os.getpid(), self.verbose))
        process.start()
        child_conn.close()
        return _Slot(process, parent_conn)

    def _end(self, slot: _Slot, sig: int = signal.SIGKILL) -> None:
        if slot.process.is_alive():
            try:
                os.kill(slot.process.pid, sig)
            except ProcessLookupError:
                pass
        slot.process.join(5.0)
        slot.conn.close()

    def kill_now(self) -> None:
        """SIGKILL to every worker and the fork server, without waiting (a second Ctrl-C)."""
        from multiprocessing import forkserver

        pids = [slot.process.pid for slot in self.slots] + [getattr(forkserver._forkserver, "_forkserver_pid", None)]  # noqa: SLF001
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, TypeError):  # gone already, or never started
                pass

    def shutdown(self, interrupted: bool) -> None:
        """End the workers: asked to (``None`` on the pipe) after a run, SIGTERM then SIGKILL after an interrupt."""
        if interrupted:
            for slot in self.slots:
                if slot.process.is_alive():
                    slot.process.terminate()
            deadline = time.monotonic() + GRACE_S
            for slot in self.slots:
                slot.process.join(max(0.0, deadline - time.monotonic()))
        else:
            for slot in self.slots:
                try:
                    slot.conn.send(None)
                except OSError:
                    pass
            for slot in self.slots:
                slot.process.join(10.0)
        for slot in self.slots:
            self._end(slot)
        self.slots = []
        if interrupted:
            _stop_helpers()

    # ------------------------------------------------------------------ calls
    def _hand_out(self, queue: deque) -> None:
        for slot in self.slots:
            if slot.ready and slot.call is None and queue:
                call, attempt = queue.popleft()
                try:
                    slot.conn.send((call, self.out_dir))
                except OSError:  # the worker died idle: the call goes to another; its death is seen next
                    queue.appendleft((call, attempt))
                    slot.ready = False
                    continue
                slot.call, slot.attempt = call, attempt
                slot.limit_s = call_limit(call, self.call_timeout)
                slot.deadline = time.monotonic() + slot.limit_s

    def _replace(self, slot: _Slot, queue: deque, outcome_of: Callable[[Call, int], CallOutcome | None]) -> CallOutcome | None:
        """``slot``'s worker is gone: its call is requeued (None from ``outcome_of``) or fails; another
        worker takes the slot while calls are left."""
        outcome = None
        if slot.call is not None:
            outcome = outcome_of(slot.call, slot.attempt)
            if outcome is None:
                queue.appendleft((slot.call, slot.attempt + 1))
        elif not slot.ready:  # died loading the models: once may be chance (a kill), every time is not
            self.load_failures += 1
            if self.load_failures > self.workers + 2:
                raise WorkerDied(f"the workers die while loading the models ({_how_it_ended(slot.process.exitcode)}): "
                                 "out of memory? try fewer --workers")
        self._end(slot)
        index = self.slots.index(slot)
        if queue:
            self.slots[index] = self._start()
        else:
            del self.slots[index]
        return outcome

    def _died(self, call: Call, attempt: int, exitcode: int | None) -> CallOutcome | None:
        if attempt < ATTEMPTS:
            return None
        return CallOutcome(call.id, False, audio_seconds(call), reason=_died_reason(exitcode))

    def _receive(self, slot: _Slot, queue: deque) -> CallOutcome | None:
        try:
            kind, body = slot.conn.recv()
        except (EOFError, OSError):  # the worker died; its sentinel may not be ready yet
            slot.process.join(5.0)
            return self._replace(slot, queue, lambda call, attempt: self._died(call, attempt, slot.process.exitcode))
        if kind == "ready":
            slot.ready = True
            self.load_failures = 0  # counted in a row
            return None
        if kind == "failed":
            raise WorkerDied(f"a worker could not load the models: {body}")
        slot.call = None
        return body

    def _check(self, slot: _Slot, queue: deque) -> CallOutcome | None:
        """A worker that died without its pipe saying so, or whose call ran past its limit."""
        if not slot.process.is_alive() and not slot.conn.poll():
            return self._replace(slot, queue, lambda call, attempt: self._died(call, attempt, slot.process.exitcode))
        if slot.call is not None and time.monotonic() > slot.deadline:
            call, limit = slot.call, slot.limit_s
            return self._replace(slot, queue, lambda c, a: CallOutcome(
                call.id, False, audio_seconds(call), wall_s=limit, reason=timed_out_reason(limit)))
        return None

    def run(self, calls: Sequence[Call], out_dir: str | Path, on_outcome: Callable[[CallOutcome], None]) -> None:
        """Evaluate ``calls``, each outcome to ``on_outcome`` as it arrives (in this process)."""
        self.out_dir = str(out_dir)
        queue: deque = deque((call, 1) for call in calls)
        interrupted = True
        try:
            self.slots = [self._start() for _ in range(min(self.workers, len(calls)))]
            while queue or any(slot.call is not None for slot in self.slots):
                self._hand_out(queue)
                now = time.monotonic()
                timeout = max(0.05, min([s.deadline for s in self.slots] + [now + 1.0]) - now)
                ready = set(wait_any([s.conn for s in self.slots] + [s.process.sentinel for s in self.slots], timeout))
                for slot in list(self.slots):
                    outcome = self._receive(slot, queue) if slot.conn in ready else None
                    if outcome is None and slot in self.slots:
                        outcome = self._check(slot, queue)
                    if outcome is not None:
                        on_outcome(outcome)
            interrupted = False
        except KeyboardInterrupt:
            from turneval.interrupts import stop_at_once_on_next_signal

            stop_at_once_on_next_signal(self.kill_now)
            raise
        finally:
            self.shutdown(interrupted)
