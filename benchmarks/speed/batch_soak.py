"""turneval batch under fire: a few hundred short calls, workers killed at random, every model on.

    python benchmarks/speed/batch_soak.py            # 300 calls of 5 s, a worker killed every 10-30 calls
    python benchmarks/speed/batch_soak.py --quick    # 60 calls of 3 s, the VAD only, every 3-8 calls (CI, < 1 min)

Two runs of the `turneval batch` command a user types, in fresh processes, 2 workers, on calls cut
from examples/*.wav: an undisturbed one, then one in which a thread of this script sends SIGKILL
(what the out-of-memory killer sends) to a random worker each time another 10-30 calls (3-8 with
``--quick``) are reported. It checks what issue 54 asks of a long run:

- every call ends up reported (``calls/ID/report.json``) or in ``errors.jsonl``, exactly once,
  and the exit code is 0 or 4;
- the fleet table (``calls.csv``) of the disturbed run equals the undisturbed run's, row for row,
  for the calls both reported;
- a worker does not grow: in the undisturbed run every worker appends its resident memory after
  each call to a trace (``TURNEVAL_BATCH_TRACE``), and the growth from its tenth call to its last
  is reported (target < 10 %).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling batch_throughput's corpus

from _harness import figure, living_grandchildren  # noqa: E402
from batch_throughput import make_corpus  # noqa: E402


TRACE_ENV = "TURNEVAL_BATCH_TRACE"  # turneval.batch.pool.TRACE_ENV, not imported: this script only runs the command


def workers_of(pid: int) -> list[int]:
    """The batch's workers: the children of its fork server, itself a child of the command."""
    return living_grandchildren(pid)


class Killer(threading.Thread):
    """SIGKILL to a random worker of ``pid`` each time another ``low``-``high`` calls (at random)
    have been reported under ``out``, so that the kills spread over the run however fast it goes."""

    def __init__(self, pid: int, out: Path, low: int, high: int, seed: int = 0) -> None:
        super().__init__(daemon=True)
        self.pid, self.out, self.low, self.high = pid, out, low, high
        self.random = random.Random(seed)
        self.kills = 0
        self.stopped = threading.Event()

    def reported(self) -> int:
        return len(list((self.out / "calls").glob("*/report.json")))

    def run(self) -> None:
        target = self.random.randint(self.low, self.high)
        while not self.stopped.wait(0.05):
            if self.reported() < target:
                continue
            workers = workers_of(self.pid)
            if not workers:
                continue
            time.sleep(self.random.uniform(0.0, 0.3))  # anywhere in a call, not just as one ends
            try:
                os.kill(self.random.choice(workers), signal.SIGKILL)
                self.kills += 1
            except ProcessLookupError:
                continue
            target = self.reported() + self.random.randint(self.low, self.high)


def batch(corpus: Path, out: Path, extra: list[str], kill_every: tuple[int, int] | None = None,
          trace: Path | None = None) -> tuple[int, float, int]:
    """One `turneval batch` run: its exit code, wall seconds and the workers killed."""
    command = [sys.executable, "-m", "turneval.cli", "batch", str(corpus), "--out", str(out), "--workers", "2",
               "--quiet", "--no-html", *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if trace is not None:
        env[TRACE_ENV] = str(trace)
    start = time.perf_counter()
    with subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        killer = Killer(proc.pid, out, *kill_every) if kill_every else None
        if killer:
            killer.start()
        stderr = proc.stderr.read()
        proc.wait()
        if killer:
            killer.stopped.set()
            killer.join()
    if proc.returncode not in (0, 4):
        raise RuntimeError(f"turneval batch exited with {proc.returncode}: {stderr[-2000:]}")
    return proc.returncode, time.perf_counter() - start, killer.kills if killer else 0


def accounting(corpus: Path, out: Path) -> dict[str, int]:
    """Calls reported, failed, and the calls not accounted for exactly once (missing, both, twice)."""
    ids = {p.stem for p in corpus.glob("*.wav")}
    reported = {p.parent.name for p in (out / "calls").glob("*/report.json")}
    errors = [json.loads(line)["id"] for line in (out / "errors.jsonl").read_text().splitlines() if line.strip()]
    twice = len(errors) - len(set(errors)) + len(reported & set(errors))
    missing = len(ids - reported - set(errors))
    stray = len((reported | set(errors)) - ids)
    return {"reported": len(reported), "failed": len(set(errors)), "not_once": twice + missing + stray}


def differing_rows(reference: Path, disturbed: Path) -> tuple[int, int, list[str]]:
    """Rows of calls.csv that differ between the runs, among the calls both reported; how many
    those are; and the columns in which they differ."""
    import pandas as pd

    a = pd.read_csv(reference / "calls.csv").set_index("id")
    b = pd.read_csv(disturbed / "calls.csv").set_index("id")
    both = sorted(set(a.index[a["status"] == "reported"]) & set(b.index[b["status"] == "reported"]))
    left, right = a.loc[both].drop(columns=["report"], errors="ignore"), b.loc[both].drop(columns=["report"], errors="ignore")
    differs = (left != right) & ~(left.isna() & right.isna())
    return int(differs.any(axis=1).sum()), len(both), sorted(differs.columns[differs.any(axis=0)])


def memory_growth(trace: Path, nth: int = 10) -> tuple[float, int, int]:
    """The largest growth of a worker's resident memory from its ``nth`` call to its last (%), over
    the workers with at least 2 x ``nth`` calls; how many workers that was, and their fewest calls."""
    by_worker: dict[int, list[float]] = {}
    for line in trace.read_text().splitlines():
        row = json.loads(line)
        if row["rss_mib"] is not None:
            by_worker.setdefault(row["pid"], []).append(row["rss_mib"])
    long_lived = [rss for rss in by_worker.values() if len(rss) >= 2 * nth]
    if not long_lived:
        return float("nan"), 0, 0
    growth = max(100.0 * (rss[-1] / rss[nth - 1] - 1.0) for rss in long_lived)
    return growth, len(long_lived), min(len(rss) for rss in long_lived)


def run(quick: bool) -> list[dict]:
    n_calls, seconds = (60, 3.0) if quick else (300, 5.0)
    extra = ["--no-judge", "--no-predictor"] if quick else []
    kill_every = (3, 8) if quick else (10, 30)  # calls reported between two kills
    models = "the VAD only" if quick else "every model on"
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        make_corpus(corpus, n_calls, seconds)
        trace = Path(tmp) / "trace.jsonl"
        _, calm_wall, _ = batch(corpus, Path(tmp) / "calm", extra, trace=trace)
        code, wall, kills = batch(corpus, Path(tmp) / "killed", extra, kill_every=kill_every)
        counts = accounting(corpus, Path(tmp) / "killed")
        differing, compared, columns = differing_rows(Path(tmp) / "calm", Path(tmp) / "killed")
        growth, n_workers, fewest = memory_growth(trace)
    setup = f"{n_calls} calls of {seconds:g} s, 2 workers, {models}"
    return [
        figure("batch soak: calls not accounted for exactly once", counts["not_once"], "calls",
               note=f"{setup}; {kills} workers killed (SIGKILL after every {kill_every[0]}-{kill_every[1]} calls reported); "
                    f"{counts['reported']} reported, {counts['failed']} in errors.jsonl, exit {code}; target 0", headline=True),
        figure("batch soak: workers killed", kills, "workers", note=f"{setup}; the run went on after each"),
        figure("batch soak: calls failed (their worker killed twice)", counts["failed"], "calls",
               note="a call whose worker dies is tried once more, then recorded in errors.jsonl"),
        figure("batch soak: fleet rows differing from the undisturbed run", differing, "rows",
               note=f"calls.csv, the {compared} calls both runs reported; target 0"
                    + (f"; differing in {', '.join(columns)}" if columns else "")),
        figure("batch soak: worker memory growth, 10th call to last", growth, "%",
               note=f"undisturbed run, the worse of {n_workers} worker(s) with >= 20 calls (>= {fewest} calls each); target < 10 %", headline=True),
        figure("batch soak: wall time with workers killed", wall, "s", reference="batch soak: wall time undisturbed",
               ratio=wall / calm_wall, note="each killed worker loads the models again"),
        figure("batch soak: wall time undisturbed", calm_wall, "s", note=setup),
    ]


def main() -> None:
    from _harness import print_figures

    print_figures(run("--quick" in sys.argv[1:]))


if __name__ == "__main__":
    main()
