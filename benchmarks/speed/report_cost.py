"""What one `turneval report` costs on a 5-minute real telephone call: CPU seconds per audio
second and peak memory, every model on, with and without ``--transcribe``.

    python benchmarks/speed/report_cost.py               # a 300 s call, both commands, 3 runs each
    python benchmarks/speed/report_cost.py --quick       # a 60 s call, one run each (CI)
    python benchmarks/speed/report_cost.py --repeat 5

The call is the six Harper Valley Bank dev calls (CC BY 4.0; ``$TURNEVAL_REAL_ROOT`` or
../shared/real) one after another, cut to length, in a temporary folder; without them, the
example conversations (examples/*.wav) repeated. Each command is the one a user types,
``turneval report CALL --turn-end-judge smart-turn --no-html --quiet`` (judge with its pause
decision and Whisper's turn-completion cue at every (a)/(d) decision, naturalness predictor,
VAD, smart-turn beside the judge), then the same with ``--transcribe``, each in a fresh process:
CPU seconds (user + system, every thread, imports and model loading included) from the
process's own resource usage (``os.wait4``), peak resident memory (``ru_maxrss``), wall seconds,
and the pause decisions the report judged (from report.json). A process's peak moves by up to
100 MiB from one run of the same command to the next (when its threads free what they hold
decides what the C library can reuse), so each command runs ``--repeat`` times: the median and
the largest of the runs are printed. Targets (issue 50): the report
<= 0.10 CPU s per audio s and <= 1.2 GB peak; with ``--transcribe`` <= 0.25 and <= 1.5 GB.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness

from _harness import figure  # noqa: E402


REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("cascaded_like", "eager_duplex_like", "human_like")


def real_root() -> Path:
    env = os.environ.get("TURNEVAL_REAL_ROOT")
    return Path(env) if env else REPO.parent / "shared" / "real"


def make_call(path: Path, seconds: float) -> str:
    """A stereo 16 kHz call of ``seconds`` at ``path``; returns what it is made of."""
    import soundfile as sf

    from turneval.dataset_scripts.audio import load_audio  # mono files come back [1, n]

    calls = sorted((real_root() / "harper_valley" / "audio").glob("*.flac"))
    sources = calls or [REPO / "examples" / f"{name}.wav" for name in EXAMPLES]
    audio = np.concatenate([load_audio(p)[0].T for p in sources])
    n = int(seconds * 16000)
    sf.write(path, np.tile(audio, (int(np.ceil(n / len(audio))), 1))[:n], 16000)
    return "the Harper Valley Bank dev calls" if calls else "the example conversations (no real calls found)"


def timed_report(call: Path, out: Path, extra: list[str]) -> dict[str, float]:
    """CPU seconds, peak MiB and wall seconds of one `turneval report` process, and its (a)/(d) decisions."""
    command = [sys.executable, "-c", "import sys; from turneval.cli import main; sys.exit(main(sys.argv[1:]))",
               "report", str(call), "--turn-end-judge", "smart-turn", "--out", str(out), "--no-html", "--quiet", *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"turneval report failed: {stderr[-2000:]}")
    report = json.loads((out / "report.json").read_text())
    metrics = (report.get("agreement") or {}).get("metrics", {})
    decisions = sum(metrics.get(k, {}).get("n_instances", 0) for k in ("a", "d"))
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024, "wall_s": wall, "decisions": decisions}


def run(quick: bool) -> list[dict]:
    return measure(quick)


def measure(quick: bool, repeat: int | None = None) -> list[dict]:
    """The figures; each command runs ``repeat`` times (default 3, 1 with ``quick``)."""
    seconds = 60.0 if quick else 300.0
    repeat = repeat or (1 if quick else 3)
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        call = Path(tmp) / "call.wav"
        source = make_call(call, seconds)
        for label, extra, cpu_target, mem_target in (("report", [], 0.10, 1200), ("report --transcribe", ["--transcribe"], 0.25, 1500)):
            load = os.getloadavg()[0]
            runs = [timed_report(call, Path(tmp) / f"{label.replace(' ', '_')}_{k}", extra) for k in range(repeat)]
            cpu = np.array([r["cpu_s"] for r in runs]) / seconds
            peak = np.array([r["peak_mib"] for r in runs])
            note = (f"{seconds:g} s of {source}, {runs[0]['decisions']} (a)/(d) decisions; median of {repeat} run(s), "
                    f"{np.median([r['wall_s'] for r in runs]):.0f} s wall each; load average {load:.1f} on {os.cpu_count()} cores before the first")
            figures.append(figure(f"{label}: CPU s per audio s", float(np.median(cpu)), "CPU s per audio s", headline=True,
                                  note=f"{note}; runs {', '.join(f'{c:.3f}' for c in cpu)}; target <= {cpu_target}"))
            figures.append(figure(f"{label}: peak memory", float(np.median(peak)), "MiB", headline=True,
                                  note=f"median; largest {peak.max():.0f} MiB; runs {', '.join(f'{m:.0f}' for m in peak)}; target <= {mem_target} MB"))
    return figures


def main() -> int:
    import argparse

    from _harness import print_figures

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None, help="runs of each command (default 3, 1 with --quick)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    return print_figures(measure(args.quick, args.repeat), args.json)


if __name__ == "__main__":
    raise SystemExit(main())
