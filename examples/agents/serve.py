"""Start an example bot in a process of its own on a free loopback port, and stop it: for the tests and benchmarks.

    from serve import BOTS, serve_bot
    with serve_bot("twilio", events="events.jsonl") as (url, transport):
        ...  # turneval probe url --transport transport

``BOTS`` names every wire an example bot speaks: ``pipecat`` (websocket_bot.py, protobuf frames,
single-client server), the telephone providers (phone_bot.py --provider NAME) and ``webrtc``
(webrtc_bot.py). The bot is ready when it accepts a TCP connection; its log (stdout and stderr)
goes to ``log`` or is dropped.
"""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator


HERE = Path(__file__).resolve().parent
PROVIDERS = ("twilio", "telnyx", "plivo", "exotel", "vonage", "genesys")
BOTS = ("pipecat", *PROVIDERS, "webrtc")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bot_command(kind: str, port: int, events: str | Path | None = None, *options: str) -> tuple[list[str], str]:
    """The command line of the bot for ``kind`` and the URL a caller reaches it at."""
    if kind == "pipecat":
        script, url, extra = "websocket_bot.py", f"ws://127.0.0.1:{port}", []
    elif kind in PROVIDERS:
        script, url, extra = "phone_bot.py", f"ws://127.0.0.1:{port}/ws", ["--provider", kind]
    elif kind == "webrtc":
        script, url, extra = "webrtc_bot.py", f"http://127.0.0.1:{port}/api/offer", []
    else:
        raise ValueError(f"no example bot speaks {kind!r}; choose one of {', '.join(BOTS)}")
    command = [sys.executable, str(HERE / script), "--host", "127.0.0.1", "--port", str(port), *extra, *options]
    if events is not None:
        command += ["--events", str(events)]
    return command, url


@contextlib.contextmanager
def serve_bot(kind: str, events: str | Path | None = None, *options: str, log: str | Path | None = None,
              timeout_s: float = 60.0) -> Iterator[tuple[str, str]]:
    """Serve the example bot for ``kind``; yields (url, the probe's --transport)."""
    port = free_port()
    command, url = bot_command(kind, port, events, *options)
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[1]} exited with code {process.returncode} before serving"
                                   + (f" (its log: {log})" if log else ""))
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{command[1]} did not listen on 127.0.0.1:{port} within {timeout_s:g} s") from None
                time.sleep(0.2)
        yield url, kind
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            out.close()
