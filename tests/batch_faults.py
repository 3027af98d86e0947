"""Workers that misbehave on cue, for tests/test_batch_faults.py (a module the fork server can import).

A call whose id starts with ``crash`` kills its worker (SIGKILL, as the out-of-memory killer
does); ``crash_once`` only on its first try (a marker file says it was tried); ``hang`` never
ends; ``stubborn_hang`` also ignores SIGTERM; any other call is reported as a real worker does
when its audio exists, else at once, without models.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from turneval.batch.calls import CallOutcome
from turneval.batch.pool import LocalPool


def misbehave(call, tried: Path) -> None:  # noqa: ANN001
    """Do to this worker what the call's id says (``tried``: the marker of a first try)."""
    if call.id.startswith("crash_once") and not tried.exists():
        tried.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    if call.id.startswith("crash") and not call.id.startswith("crash_once"):
        os.kill(os.getpid(), signal.SIGKILL)
    if call.id.startswith("stubborn_hang"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "hang" in call.id:
        time.sleep(3600)


def faulty_worker(conn, options, html, threads, parent_pid, verbose) -> None:  # noqa: ANN001 (worker_main's signature)
    from turneval.batch.calls import CallEvaluator

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    evaluator = None
    conn.send(("ready", None))
    while True:
        message = conn.recv()
        if message is None:
            return
        call, out_dir = message
        misbehave(call, Path(out_dir) / f"{call.id}.tried")
        if Path(call.audio).exists():
            evaluator = evaluator or CallEvaluator(options, html=html, threads=threads)
            conn.send(("outcome", evaluator.run(call, out_dir)))
        else:
            conn.send(("outcome", CallOutcome(call.id, True, 1.0, 0.0)))


class FaultyPool(LocalPool):
    """A :class:`LocalPool` whose workers are :func:`faulty_worker`."""

    worker_target = staticmethod(faulty_worker)


class FaultyRayWorker:
    """The body of a Ray actor (as :class:`turneval.batch.ray_runner._Worker`) that misbehaves on cue;
    a call's marker of a first try sits beside its (absent) audio file."""

    def __init__(self, options, html, verbose=False) -> None:  # noqa: ANN001
        pass

    def run(self, call) -> CallOutcome:  # noqa: ANN001
        misbehave(call, Path(call.audio).parent / f"{call.id}.tried")
        return CallOutcome(call.id, True, 1.0, 0.0)

    def ready(self) -> bool:
        return True
