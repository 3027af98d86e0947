"""Ctrl-C and SIGTERM on the command line: one way to stop, one exit code, no traceback.

``docker stop``, Kubernetes and systemd send SIGTERM, whose default ends Python at once, without
``finally`` blocks: worker processes are orphaned and a half-written file stays. Within
:func:`handling_signals` SIGTERM raises :class:`Terminated` instead, a ``KeyboardInterrupt``, so
that both signals unwind the same way: every ``except KeyboardInterrupt`` and ``finally`` that
cleans up after Ctrl-C cleans up after SIGTERM too. :func:`exit_code` gives the shell's code for
either (130, 143). While a command cleans up, :func:`stop_at_once_on_next_signal` makes a second
signal end the process at once (after its ``kill`` callback ends the children).
"""
from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar


T = TypeVar("T")


SIGINT_EXIT = 128 + signal.SIGINT  # 130, as a shell reports a process ended by Ctrl-C
SIGTERM_EXIT = 128 + signal.SIGTERM  # 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill``, ``docker stop``, a process manager): unwinds as Ctrl-C does."""


_terminated = False  # SIGTERM arrived within handling_signals (a library may re-raise it as a plain KeyboardInterrupt)


def exit_code(err: BaseException) -> int:
    """The exit code of a command stopped by ``err``: 143 for SIGTERM, else 130."""
    return SIGTERM_EXIT if isinstance(err, Terminated) or _terminated else SIGINT_EXIT


def _raise_terminated(signum, frame) -> None:  # noqa: ANN001 (a signal handler's fixed signature)
    global _terminated
    _terminated = True
    raise Terminated()


def keep_sigterm(start: Callable[[], T]) -> T:
    """``start()`` (e.g. ``ray.init``, which sets its own SIGTERM handler), then SIGTERM handled as
    before it."""
    if not _in_main_thread():
        return start()
    before = signal.getsignal(signal.SIGTERM)
    try:
        return start()
    finally:
        signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


_handling = False  # within handling_signals: a command of the CLI, not a library call


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class _LostInterrupts:
    """Sends the main thread again an interrupt that a finalizer swallowed.

    ``sys.unraisablehook`` only queues the signal (it must not block: a signal raised inside the
    hook is lost for good); a watcher thread sends it a moment later, once the finalizer and the
    hook have returned. Should it land in a finalizer again, it comes back through the hook."""

    def __init__(self, hook_before: Callable) -> None:  # noqa: ANN001 (sys.unraisablehook's type is private)
        self.hook_before = hook_before
        self.lost: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self.watcher = threading.Thread(target=self._send_again, daemon=True, name="turneval-lost-interrupts")
        self.watcher.start()

    def hook(self, unraisable) -> None:  # noqa: ANN001
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            self.lost.put(signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT)
        else:
            self.hook_before(unraisable)

    def _send_again(self) -> None:
        while (signum := self.lost.get()) is not None:
            time.sleep(0.05)
            signal.pthread_kill(threading.main_thread().ident, signum)  # a real signal: it wakes a blocking call

    def close(self) -> None:
        self.lost.put(None)


@contextmanager
def handling_signals() -> Iterator[None]:
    """Within the block SIGTERM raises :class:`Terminated` (SIGINT keeps Python's KeyboardInterrupt,
    which asyncio.run knows how to stop a loop with), and an interrupt lost in a finalizer is raised
    again; the handlers and ``sys.unraisablehook`` are restored afterwards, so a
    test that calls the CLI in-process leaves pytest's handlers as they were."""
    if not _in_main_thread():  # signal handlers can only be set from the main thread
        yield
        return
    global _handling, _terminated
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, _raise_terminated)
    lost = _LostInterrupts(sys.unraisablehook)
    sys.unraisablehook = lost.hook
    _handling, _terminated = True, False
    try:
        yield
    finally:
        _handling = False
        sys.unraisablehook = lost.hook_before
        lost.close()
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        _forget_interrupt_in_evaluated_string()  # last: a signal landing in it leaves the rest restored


def _forget_interrupt_in_evaluated_string() -> None:
    """Clear CPython's mark of an interrupt that ended an ``exec`` or ``eval`` of a string.

    A KeyboardInterrupt raised while a library evaluates a string (a dataclass's or namedtuple's
    generated methods, code a library writes and runs) marks it unhandled for good, even when a
    caller catches it; at exit the interpreter then kills itself with SIGINT (bpo-1054041's proper
    death after an uncaught Ctrl-C), not with the command's 130: 2 and 4 of 25 Ctrl-Cs 3 s into a
    report on a loaded machine. Evaluating any string resets the mark; an interrupt that then
    leaves the program uncaught sets it again."""
    exec("pass")


def stop_at_once_on_next_signal(kill: Callable[[], None] | None = None) -> None:
    """From now on (a command is cleaning up after the first signal) a second Ctrl-C or SIGTERM ends
    the process at once: ``kill`` (which must not block, e.g. SIGKILL to the workers) runs first.
    Only within :func:`handling_signals` (a library caller keeps its own handlers)."""
    if not _handling or not _in_main_thread():
        return

    def now(signum, frame) -> None:  # noqa: ANN001
        if kill is not None:
            try:
                kill()
            except Exception:  # exiting anyway: a child already gone must not keep this process alive
                pass
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, now)
    signal.signal(signal.SIGTERM, now)


__all__ = ["SIGINT_EXIT", "SIGTERM_EXIT", "Terminated", "exit_code", "handling_signals", "keep_sigterm",
           "stop_at_once_on_next_signal"]
