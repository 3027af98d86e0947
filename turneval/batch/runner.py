"""Run a batch's calls: worker processes on this machine, or Ray workers on a cluster.

Both ways run :class:`~turneval.batch.calls.CallEvaluator` (models loaded once per worker,
threads bounded), so a call's figures do not depend on where it ran. Finished calls are
skipped; each outcome is folded into the progress line and, for a failure, appended to
``errors.jsonl`` at once, so a killed run keeps what it learned.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from turneval.reporting.build import ReportOptions

from .calls import CALLS_DIR, CallOutcome, audio_seconds, is_finished, write_call
from .discover import Call
from .pool import LocalPool, WorkerDied


__all__ = ["RunSummary", "WorkerDied", "finished_ids", "read_errors", "remove_half_written", "run_calls"]


ERRORS_FILE = "errors.jsonl"


def default_workers() -> int:
    """The cores this process may use (the CPU affinity where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@dataclass
class RunSummary:
    """What one run did: calls skipped as finished, reported, failed (id -> reason), the audio
    seconds it evaluated and its wall seconds."""

    skipped: int
    reported: int
    failed: dict[str, str]
    audio_s: float
    wall_s: float


class Progress:
    """One line on stderr: calls done of all, failures, audio hours, elapsed and ETA (by audio seconds,
    since calls differ in length). On a terminal it rewrites itself; in a log it prints every 10 %."""

    def __init__(self, total_calls: int, total_audio_s: float, quiet: bool, stream: Any = None) -> None:
        self.total_calls, self.total_audio_s = total_calls, max(total_audio_s, 1e-9)
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.failed = 0
        self.audio_done = 0.0
        self.start = time.perf_counter()
        self._last_print = 0.0
        self._last_decile = -1

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        share = min(self.audio_done / self.total_audio_s, 1.0)
        eta = "?" if share <= 0 else _clock(elapsed * (1 - share) / share)
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"calls {self.done}/{self.total_calls}{failed} | audio {self.audio_done / 3600:.2f}/"
                f"{self.total_audio_s / 3600:.2f} h | {_clock(elapsed)} elapsed, ETA {eta}")

    def update(self, outcome: CallOutcome) -> None:
        self.done += 1
        self.failed += not outcome.ok
        self.audio_done += outcome.audio_s
        if self.quiet:
            return
        now = time.perf_counter()
        decile = int(10 * self.done / max(self.total_calls, 1))
        if self.tty and (now - self._last_print > 0.5 or self.done == self.total_calls):
            print("\r" + self.line(), end="", file=self.stream, flush=True)
            self._last_print = now
        elif not self.tty and decile != self._last_decile:
            print(self.line(), file=self.stream, flush=True)
            self._last_decile = decile

    def close(self) -> None:
        if self.tty and not self.quiet and self.done:
            print(file=self.stream)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


# --------------------------------------------------------------------------- local workers
@contextmanager
def _thread_env(threads: int) -> Iterator[None]:
    """The thread limits in the environment the workers (and the fork server) start with, so that
    numerical libraries size their pools for ``threads`` when first imported there."""
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    before = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(threads) for name in names})
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_local(calls: Sequence[Call], out_dir: Path, options: ReportOptions, html: bool, workers: int,
               on_outcome: Callable[[CallOutcome], None], call_timeout: float | None, verbose: bool) -> None:
    """Worker processes on this machine (one even for ``--workers 1``: a call that crashes or hangs
    costs that call, not the run)."""
    threads = max(1, default_workers() // workers)
    with _thread_env(threads):
        LocalPool(workers, options, html, threads, call_timeout=call_timeout, verbose=verbose).run(calls, out_dir, on_outcome)


# --------------------------------------------------------------------------- the run
@dataclass(frozen=True)
class WorkerSettings:
    """Where the calls of a batch run and how long each may take.

    Attributes:
        workers: worker processes (default: the cores; with Ray: the cluster's CPUs).
        ray_address: run on Ray (``auto``, ``ray://host:10001`` or ``host:6379``); None: local workers.
        call_timeout: seconds a call may take before it is stopped and fails (None: generous, by
            the call's length, :func:`~turneval.batch.pool.default_call_timeout`; 0: no limit).
        verbose: let the libraries' progress bars and warnings through in the workers.
    """

    workers: int | None = None
    ray_address: str | None = None
    call_timeout: float | None = None
    verbose: bool = False


def run_calls(calls: Sequence[Call], out_dir: str | Path, options: ReportOptions, *,
              settings: WorkerSettings = WorkerSettings(), html: bool = True, quiet: bool = False) -> RunSummary:
    """Evaluate every call not yet finished under ``out_dir``; failures go to ``errors.jsonl``.

    Args:
        calls: the batch (:func:`~turneval.batch.discover.discover_calls`).
        out_dir: the batch folder; each call goes to ``calls/<id>/``.
        options: the report options of every call.
        settings: workers, Ray, the per-call time limit (:class:`WorkerSettings`).
        html: write each call's report.html too.
        quiet: no progress line.

    A worker that dies costs its call a second try, then the call fails ("the worker died ...").
    On Ctrl-C or SIGTERM (``KeyboardInterrupt``) the workers end, the call in progress is
    discarded, and the interrupt goes on up: the finished calls are kept for a rerun.
    """
    out = Path(out_dir)
    start = time.perf_counter()
    remove_half_written(out)
    todo = [c for c in calls if not is_finished(out, c.id)]
    errors_file = out / ERRORS_FILE
    out.mkdir(parents=True, exist_ok=True)
    errors_file.write_text("", encoding="utf-8")  # this run's failures; the finished calls stay finished
    progress = Progress(len(todo), sum(audio_seconds(c) for c in todo), quiet)
    summary = RunSummary(skipped=len(calls) - len(todo), reported=0, failed={}, audio_s=0.0, wall_s=0.0)
    by_id = {c.id: c for c in todo}

    def on_outcome(outcome: CallOutcome) -> None:
        if outcome.ok and outcome.documents:  # a remote worker: written here
            write_call(out, outcome.id, outcome.documents)
        if outcome.ok:
            summary.reported += 1
        else:
            summary.failed[outcome.id] = outcome.reason or "unknown"
            with errors_file.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"id": outcome.id, "input": by_id[outcome.id].source, "reason": outcome.reason}) + "\n")
        summary.audio_s += outcome.audio_s
        progress.update(outcome)

    if not quiet and summary.skipped:
        print(f"{summary.skipped} of {len(calls)} calls already finished in {out}; evaluating the other {len(todo)}", file=sys.stderr)
    workers, call_timeout, verbose = settings.workers, settings.call_timeout, settings.verbose
    try:
        if todo and settings.ray_address is not None:
            from .ray_runner import run_on_ray

            run_on_ray(todo, options, html, workers, settings.ray_address, on_outcome, call_timeout=call_timeout,
                       verbose=verbose)
        elif todo:
            _run_local(todo, out, options, html, max(1, min(workers or default_workers(), len(todo))), on_outcome,
                       call_timeout, verbose)
    finally:  # after an interrupt too: the workers are gone, so what they left half-written goes
        progress.close()
        remove_half_written(out)
        _sort_errors(errors_file)
    summary.wall_s = time.perf_counter() - start
    return summary


def remove_half_written(out_dir: str | Path) -> None:
    """The hidden folders of calls whose worker was stopped while writing them."""
    for stale in (Path(out_dir) / CALLS_DIR).glob(".*.tmp"):
        shutil.rmtree(stale, ignore_errors=True)


def _sort_errors(path: Path) -> None:
    """errors.jsonl in call-id order, so two runs of one batch give the same file."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines.sort(key=lambda line: json.loads(line)["id"])
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def read_errors(out_dir: str | Path) -> list[dict[str, Any]]:
    """The lines of ``errors.jsonl`` (none when the file is absent)."""
    path = Path(out_dir) / ERRORS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def finished_ids(calls: Iterable[Call], out_dir: str | Path) -> list[str]:
    return [c.id for c in calls if is_finished(out_dir, c.id)]
