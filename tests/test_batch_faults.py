"""turneval batch under faults, with real signals and real kills: Ctrl-C to the process group,
SIGTERM to the main process, kill -9 of a worker, a call that never ends, a second Ctrl-C. Each
run is a few short calls without the models (tests/test_interrupts.py: the other commands)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from benchmarks._harness import living_grandchildren, living_in_group
from tests.batch_faults import FaultyPool
from tests.test_batch import crop
from turneval.batch.discover import Call
from turneval.reporting.build import ReportOptions


CHEAP = ["--no-judge", "--no-predictor", "--no-html"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def workers_of(pid: int) -> list[int]:
    """The batch's worker processes: the children of its fork server (a child of ``pid``)."""
    return living_grandchildren(pid)


def corpus(folder: Path, n: int, seconds: float = 6.0) -> Path:
    names = ("cascaded_like", "eager_duplex_like", "human_like")
    for i in range(n):
        crop(names[i % 3], seconds, folder / f"call{i:02d}.wav", 3 * (i // 3))
    return folder


def start_batch(inputs: Path, out: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "turneval.cli", "batch", str(inputs), "--out", str(out), "--workers", "2", *CHEAP, *extra]
    return subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for(predicate, proc: subprocess.Popen, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        assert proc.poll() is None, f"the command ended first: {proc.communicate()}"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def finished(out: Path) -> int:
    return len(list((out / "calls").glob("*/report.json")))


def interrupt(inputs: Path, out: Path, sig: int, group: bool) -> str:
    """Start the batch, stop it with ``sig`` to the process group (as Ctrl-C in a terminal does) or
    to the main process alone (as a process manager or `timeout -s INT` does) once a call more is
    finished and both workers hold a call; check how it stopped; returns its stderr."""
    before = finished(out)
    proc = start_batch(inputs, out)
    wait_for(lambda: finished(out) > before and len(workers_of(proc.pid)) == 2, proc)
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    took = time.monotonic() - sent
    stderr = proc.stderr.read()
    assert proc.returncode == 128 + sig, stderr
    assert took < 5, f"stopped after {took:.1f} s"
    time.sleep(0.3)
    assert living_in_group(proc.pid) == []  # workers, fork server, resource tracker: all gone
    assert "Traceback" not in stderr and "leaked" not in stderr, stderr
    (last,) = [line for line in stderr.splitlines() if line.startswith("turneval batch: interrupted")]
    assert "run the same command again to resume" in last and f"calls are finished in {out}" in last
    assert not list((out / "calls").glob(".*"))  # the calls in progress left nothing half-written
    assert not (out / "batch.json").exists()
    return stderr


def test_an_interrupted_batch_stops_within_seconds_and_resumes_to_the_same_table(tmp_path):
    inputs = corpus(tmp_path / "calls", 12, seconds=4)
    out = tmp_path / "fleet"
    interrupt(inputs, out, signal.SIGINT, group=True)
    interrupt(inputs, out, signal.SIGTERM, group=False)
    interrupt(inputs, out, signal.SIGINT, group=False)
    assert finished(out) < 12
    resumed = subprocess.run([sys.executable, "-m", "turneval.cli", "batch", str(inputs), "--out", str(out), "--workers", "2",
                              *CHEAP], env=ENV, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    whole = tmp_path / "whole"
    assert subprocess.run([sys.executable, "-m", "turneval.cli", "batch", str(inputs), "--out", str(whole), "--workers", "2",
                           *CHEAP, "--quiet"], env=ENV, capture_output=True, timeout=300).returncode == 0
    assert (out / "calls.csv").read_text() == (whole / "calls.csv").read_text()
    assert (out / "batch.json").read_text() == (whole / "batch.json").read_text()


def test_a_worker_killed_mid_run_costs_nothing_and_the_logs_stay_quiet(tmp_path):
    inputs = corpus(tmp_path / "calls", 10)
    out = tmp_path / "fleet"
    proc = start_batch(inputs, out)
    wait_for(lambda: finished(out) >= 1 and len(workers_of(proc.pid)) == 2, proc)
    os.kill(workers_of(proc.pid)[0], signal.SIGKILL)  # what the out-of-memory killer does
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr  # the killed call was reported on its second try
    assert finished(out) == 10 and (out / "errors.jsonl").read_text() == ""
    assert "leaked" not in stderr and "Traceback" not in stderr
    assert "Loading weights" not in stderr and "it/s]" not in stderr  # no third-party progress bars
    assert "calls 10/10" in stderr  # turneval's own progress line stays


def _calls(*ids: str) -> list[Call]:
    return [Call(id=name, audio=f"/nowhere/{name}.wav") for name in ids]


def test_a_call_that_kills_its_worker_twice_fails_alone_and_a_stuck_call_times_out(tmp_path):
    outcomes = []
    pool = FaultyPool(2, ReportOptions(judge=False, predictor=False), html=False, threads=1, call_timeout=1.5)
    pool.run(_calls("a", "crash", "b", "crash_once", "hang", "c", "d"), tmp_path, outcomes.append)
    by_id = {o.id: o for o in outcomes}
    assert sorted(by_id) == ["a", "b", "c", "crash", "crash_once", "d", "hang"] and len(outcomes) == 7  # each once
    assert all(by_id[name].ok for name in ("a", "b", "c", "d", "crash_once"))
    assert not by_id["crash"].ok and by_id["crash"].reason.startswith("the worker died while reporting this call (killed by signal 9)")
    assert "tried 2 times" in by_id["crash"].reason
    assert not by_id["hang"].ok and "--call-timeout" in by_id["hang"].reason
    assert pool.slots == []


def test_the_batch_records_dead_and_stuck_calls_in_errors_jsonl_and_exits_4(tmp_path, monkeypatch, capsys):
    import turneval.batch.runner as runner
    from turneval.cli import main

    monkeypatch.setattr(runner, "LocalPool", FaultyPool)
    inputs = corpus(tmp_path / "calls", 2, seconds=2)
    (inputs / "call00.wav").rename(inputs / "crash.wav")
    (inputs / "call01.wav").rename(inputs / "hang.wav")
    crop("human_like", 2, inputs / "fine.wav")
    code = main(["batch", str(inputs), "--out", str(tmp_path / "fleet"), "--workers", "2", "--call-timeout", "1", *CHEAP, "--quiet"])
    assert code == 4
    errors = pd.read_json(tmp_path / "fleet" / "errors.jsonl", lines=True)
    assert list(errors["id"]) == ["crash", "hang"]
    assert "the worker died while reporting this call" in errors["reason"][0] and "--call-timeout" in errors["reason"][1]
    assert "2 of 3 calls failed" in capsys.readouterr().err


SECOND_SIGNAL = """
import sys
from tests.batch_faults import FaultyPool
from turneval.batch.discover import Call
from turneval.interrupts import exit_code, handling_signals
from turneval.reporting.build import ReportOptions

pool = FaultyPool(2, ReportOptions(judge=False, predictor=False), html=False, threads=1, call_timeout=0)
try:
    with handling_signals():
        pool.run([Call(id=f"stubborn_hang{i}", audio="x.wav") for i in range(2)], sys.argv[1], lambda o: print(o.id, flush=True))
except KeyboardInterrupt as err:
    sys.exit(exit_code(err))
"""


def test_a_second_signal_ends_at_once_and_kills_the_workers(tmp_path):
    """Workers that ignore SIGTERM hold the first stop for GRACE_S; a second Ctrl-C does not wait."""
    proc = subprocess.Popen([sys.executable, "-c", SECOND_SIGNAL, str(tmp_path)], env=ENV, cwd=Path(__file__).parents[1],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: len(workers_of(proc.pid)) == 2, proc)
    time.sleep(0.5)  # both workers hold their call and ignore SIGTERM
    os.kill(proc.pid, signal.SIGTERM)
    time.sleep(0.3)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=30)
    assert proc.returncode == 130 and time.monotonic() - sent < 1.0
    time.sleep(0.3)
    assert living_in_group(proc.pid) == []
