"""The command that starts two real CPU ranks with accelerate (SPEC: `--multi_gpu --num_processes 2`)."""
from __future__ import annotations

import socket
import sys


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accelerate_two_ranks() -> list[str]:
    """``accelerate launch`` for two CPU ranks, run by this interpreter (so the turneval under test
    is the one launched, also from a virtual environment) on a free port (tests may run side by side)."""
    return [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
    ]
