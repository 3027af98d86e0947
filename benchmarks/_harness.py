"""Shared helpers of the benchmarks: figures, timing, memory, scaling fits, machine facts.

A benchmark is a module ``benchmarks/speed/<name>.py`` or ``benchmarks/validation/<name>.py`` with ``run(quick: bool) -> list[dict]``.
Each dict is one *figure*::

    {"name": "judge causal chunk predictions per second", "value": 412.0, "unit": "1/s",
     "reference": "judge window chunk predictions per second"}

``reference`` names another figure of the same run (of any benchmark); ``run_all.py`` then
adds ``ratio = value / reference value``. A benchmark may set ``ratio`` itself, and ``note``
for anything a reader must know to read the number (sizes, what was extrapolated).
Names starting with ``_`` are helpers, never run as benchmarks.
"""
from __future__ import annotations

import math
import os
import platform
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np


THREADS_ENV = "TURNEVAL_BENCH_THREADS"


def figure(
    name: str,
    value: float,
    unit: str,
    *,
    reference: str | None = None,
    ratio: float | None = None,
    note: str | None = None,
    headline: bool = False,
) -> dict[str, Any]:
    """One benchmark figure (see the module docstring); NaN stays NaN, never a made-up number.

    ``headline`` figures also go to the short table at the top of the report (the README's).
    """
    out: dict[str, Any] = {"name": name, "value": float(value), "unit": unit}
    if reference is not None:
        out["reference"] = reference
    if ratio is not None:
        out["ratio"] = float(ratio)
    if note:
        out["note"] = note
    if headline:
        out["headline"] = True
    return out


def emit_result(result: dict[str, Any], json_path: str | os.PathLike | None, markdown: Callable[[dict[str, Any]], str]) -> int:
    """How a standalone benchmark ends: ``result`` as JSON at ``json_path`` (when given) and its
    markdown table on stdout; returns the exit code, 0."""
    import json

    from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

    if json_path:
        atomic_write_text(json_path, json.dumps(to_jsonable(result), indent=1))
    print(markdown(result))
    return 0


def print_figures(figures: list[dict[str, Any]], json_path: str | os.PathLike | None = None) -> int:
    """How a standalone benchmark that returns figures ends: one line a figure on stdout (name,
    value, unit, note), and the figures as JSON at ``json_path`` when given; returns 0."""
    import json
    import math

    for f in figures:
        value = "n/a" if not math.isfinite(f["value"]) else f"{f['value']:.3f}"
        print(f"{f['name']}: {value} {f['unit']}".rstrip() + (f"  ({f['note']})" if f.get("note") else ""))
    if json_path:
        Path(json_path).write_text(json.dumps(figures, indent=1, allow_nan=True), encoding="utf-8")
    return 0


def bench_threads() -> int:
    """Threads a benchmark may use (``$TURNEVAL_BENCH_THREADS``, default 1: the numbers then
    compare across machines and do not depend on what else runs)."""
    return max(1, int(os.environ.get(THREADS_ENV, "1")))


def repo_relative(path: str | os.PathLike) -> str:
    """``path`` relative to the repository when it lies inside it (so results name a bundled
    checkpoint as the repository does, not by this machine's path), else as it is."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path(__file__).resolve().parents[1]))
    except ValueError:
        return str(path)


def limit_threads() -> int:
    """Make torch use ``bench_threads()`` threads; return that number."""
    threads = bench_threads()
    import torch

    torch.set_num_threads(threads)
    return threads


@dataclass
class Timing:
    """CPU and wall seconds of one call, and what it returned."""

    cpu_s: float
    wall_s: float
    result: Any = None


def timed(fn: Callable[[], Any]) -> Timing:
    """Run ``fn()`` once; CPU time counts all threads of this process (the figure a shared,
    busy machine reproduces best), wall time is what a user waits."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return Timing(time.process_time() - cpu, time.perf_counter() - wall, result)


def best_of(fn: Callable[[], Any], repeats: int) -> Timing:
    """The fastest of ``repeats`` runs by CPU time (the least disturbed by other processes)."""
    runs = [timed(fn) for _ in range(max(1, repeats))]
    return min(runs, key=lambda t: t.cpu_s)


# --------------------------------------------------------------------------- memory
def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def current_rss_mib() -> float:
    """Resident memory of this process now (MiB); the peak so far where /proc is missing."""
    kib = _status_kib("VmRSS")
    return kib / 1024 if kib is not None else peak_rss_mib()


def peak_rss_mib() -> float:
    """Peak resident memory of this process (MiB) since it started or since :func:`reset_peak_rss`."""
    kib = _status_kib("VmHWM")
    if kib is None:
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 1024


def reset_peak_rss() -> bool:
    """Reset the peak-RSS counter of this process to the current RSS (Linux >= 4.0).

    Returns False where that is not possible; the peak then counts from the process start,
    which is still an upper bound.
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


@dataclass
class MemoryUse:
    """Memory of one call: the RSS before it, the peak during it, and their difference."""

    before_mib: float
    peak_mib: float
    exact: bool  # False: the peak counts from the process start (no reset possible)

    @property
    def added_mib(self) -> float:
        return max(0.0, self.peak_mib - self.before_mib)


def memory_of(fn: Callable[[], Any]) -> tuple[MemoryUse, Any]:
    """Peak resident memory while ``fn()`` runs, and its result."""
    exact = reset_peak_rss()
    before = current_rss_mib()
    result = fn()
    return MemoryUse(before, peak_rss_mib(), exact), result


# --------------------------------------------------------------------------- processes
@dataclass(frozen=True)
class ProcessEntry:
    """One process as ``/proc/<pid>/stat`` lists it: its state letter, parent, process group
    and CPU seconds so far (user + system)."""

    state: str
    parent: int
    group: int
    cpu_s: float

    @property
    def alive(self) -> bool:
        """Still running: a zombie (Z) or a dead process (X) has ended, only its entry is left."""
        return self.state not in "ZX"


def process_table() -> dict[int, ProcessEntry]:
    """Every process in /proc (Linux; empty elsewhere). Read one by one: a process that ends
    while the table is read is left out."""
    if not Path("/proc/self/stat").exists():
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the command name in parentheses may hold spaces: the fields follow its last ")"
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry.name)] = ProcessEntry(fields[0], int(fields[1]), int(fields[2]), (int(fields[11]) + int(fields[12])) / tick)
    return table


def process_tree(root: int, table: dict[int, ProcessEntry]) -> set[int]:
    """``root`` and every process below it in ``table``."""
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, entry in table.items() if entry.parent == pid and child not in tree]
    return tree


def living_grandchildren(pid: int) -> list[int]:
    """The running children of the running children of ``pid``: the workers of a `turneval
    batch` command, which are the children of its fork server."""
    living = {child: entry.parent for child, entry in process_table().items() if entry.alive}
    children = {child for child, parent in living.items() if parent == pid}
    return sorted(child for child, parent in living.items() if parent in children)


def living_in_group(group: int) -> list[int]:
    """The running processes of a process group."""
    return sorted(pid for pid, entry in process_table().items() if entry.group == group and entry.alive)


# --------------------------------------------------------------------------- scaling
def loglog_exponent(sizes: Sequence[float], costs: Sequence[float]) -> float:
    """Slope of log(cost) against log(size): 1 means linear, 2 quadratic, 0 constant."""
    x, y = np.log(np.asarray(sizes, dtype=float)), np.log(np.maximum(np.asarray(costs, dtype=float), 1e-12))
    if len(x) < 2 or np.ptp(x) == 0:
        return float("nan")
    return float(np.polyfit(x, y, 1)[0])


def scaling_minutes(quick: bool) -> list[float]:
    """Audio lengths (minutes) of the scaling runs: 1 to 60 minutes; quick: 0.5 to 2 (from one
    30 s window up, where the models' windowing has settled)."""
    return [0.5, 1.0, 2.0] if quick else [1.0, 2.0, 5.0, 10.0, 30.0, 60.0]


def scaling_figures(stage: str, minutes: Sequence[float], costs: Sequence[float], unit_cost: str = "CPU s") -> list[dict[str, Any]]:
    """The log-log exponent of one stage and its cost at the longest length."""
    span = f"{_fmt_minutes(minutes[0])}-{_fmt_minutes(minutes[-1])} min"
    return [
        figure(f"{stage}: scaling exponent ({span})", loglog_exponent(minutes, costs), "",
               note="slope of log cost vs log audio length; 1 = linear"),
        figure(f"{stage}: cost at {_fmt_minutes(minutes[-1])} min", costs[-1], unit_cost),
    ]


def _fmt_minutes(m: float) -> str:
    return f"{m:g}"


# --------------------------------------------------------------------------- inputs
def noise_audio(seconds: float, channels: int = 1, seed: int = 0, sample_rate: int | None = None) -> np.ndarray:
    """Speech-like test audio: noise bursts (0.2 Hz on/off) over a low noise floor.

    The cost of every stage measured here depends on the length only, not on the content.
    Returns ``[n]`` for one channel, ``[channels, n]`` otherwise (float32).
    """
    from turneval.dataset_scripts.grids import SAMPLE_RATE

    rate = sample_rate or SAMPLE_RATE
    n = int(round(seconds * rate))
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    out = np.empty((channels, n), dtype=np.float32)
    for c in range(channels):
        on = (np.sin(2 * np.pi * 0.2 * t + c * np.pi) > 0).astype(np.float32)
        out[c] = 0.1 * rng.standard_normal(n).astype(np.float32) * on + 1e-3 * rng.standard_normal(n).astype(np.float32)
    return out[0] if channels == 1 else out


def machine_info() -> dict[str, Any]:
    """CPU model, cores, RAM, OS and Python: the facts a reader needs to compare numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram_gib = float("nan")
    try:
        ram_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "ram_gib": round(ram_gib, 1) if math.isfinite(ram_gib) else None,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def package_versions(names: Sequence[str] = ("turneval", "torch", "transformers", "numpy", "onnxruntime", "silero-vad", "pipecat-ai")) -> dict[str, str | None]:
    """Installed versions of the packages the figures depend on (None: not installed)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def synthetic_conversation(seconds: float, seed: int = 0, style: str = "human", piece_s: float = 300.0):
    """A two-speaker Dialogue of ``seconds`` with audio, segments and words.

    One synthetic conversation of at most ``piece_s`` is generated and repeated (timeline
    shifted) up to the length: per-minute costs are those of real synthetic speech, and an
    hour of audio does not cost an hour of synthesis.
    """
    from turneval.dataset_scripts.dialogue import Dialogue, Word
    from turneval.dataset_scripts.grids import SAMPLE_RATE
    from turneval.dataset_scripts.synthetic import generate_dialogue

    piece = generate_dialogue(seed, duration_s=max(5.0, min(seconds, piece_s)), style=style)
    if seconds <= piece.duration:
        return piece if seconds == piece.duration else piece.crop(0.0, seconds, new_id=piece.id)
    repeats = int(math.ceil(seconds / piece.duration))
    n = int(round(seconds * SAMPLE_RATE))
    audio = np.tile(piece.audio, (1, repeats))[:, :n]
    segments: list[list[tuple[float, float]]] = [[], []]
    words: list[list[Word]] = [[], []]
    for k in range(repeats):
        shift = k * piece.duration
        for spk in range(2):
            segments[spk] += [(s + shift, e + shift) for s, e in piece.segments[spk] if e + shift <= seconds]
            words[spk] += [Word(w.start + shift, w.end + shift, w.text) for w in (piece.words or [[], []])[spk] if w.end + shift <= seconds]
    return Dialogue(id=f"{piece.id}_x{repeats}", segments=segments, words=words, audio=audio,
                    system_speaker=piece.system_speaker, duration=seconds, metadata={"tiled_from": piece.id})
