"""Run every benchmark of this folder and report speed, memory and quality side by side.

    python benchmarks/run_all.py --quick                     # CI-sized inputs, a few minutes
    python benchmarks/run_all.py                             # the full sizes (1-60 min of audio)
    python benchmarks/run_all.py --only judge,cindex_speed
    python benchmarks/run_all.py --docs docs/performance.md  # also regenerate the docs page
    python benchmarks/run_all.py --render docs/performance.json --docs docs/performance.md  # re-render it, run nothing

Every ``benchmarks/speed/<name>.py`` (how fast, how much memory) and
``benchmarks/validation/<name>.py`` (how right, on real and held-out data) exposes
``run(quick: bool) -> list[dict]``; names starting with ``_`` are helpers, and the helpers both
suites share (``_harness.py``, the data readers) sit in ``benchmarks/`` itself. Each benchmark
runs in its own Python process, so its peak resident memory is its own and a crash or a hang
costs only that benchmark. The figures of all of them go to one JSON file and a markdown table
(machine, package versions, date), and every figure that names a reference measured in the same
run is also stated as a ratio to it. ``--docs``
rewrites a short page (the headline tables, one per suite) and, beside it, every figure
(``performance_figures.md``) and the report (``performance.json``); it keeps the blocks written
by hand between the markers :data:`KEEP_BEGIN` and :data:`KEEP_END` (the summary a reader sees
first), placing them above the headline tables.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from turneval.dataset_scripts.files import read_json


HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import _harness  # noqa: E402  (a sibling helper module, importable once HERE is on the path)


REPRODUCE = "python benchmarks/run_all.py{quick}{only} --docs docs/performance.md"
DEFAULT_TIMEOUT_S = 1800.0  # the full judge and predictor runs take ~10 min each on a busy 2-core machine


class BenchmarkError(RuntimeError):
    """A benchmark module is malformed or returned malformed figures."""


# --------------------------------------------------------------------------- discovery
SUITES = ("speed", "validation")
"""The subfolders of the benchmarks folder that hold benchmarks, in the order they run."""


def discover(bench_dir: str | os.PathLike = HERE, only: Sequence[str] | None = None) -> list[Path]:
    """The benchmark files of ``bench_dir``: its :data:`SUITES` subfolders' (and its own), each
    in name order (``only``: just these stems)."""
    folder = Path(bench_dir)
    found = []
    for suite in (folder, *(folder / name for name in SUITES)):
        found += sorted(p for p in suite.glob("*.py") if not p.name.startswith("_") and p.name != Path(__file__).name)
    clashes = sorted({p.stem for p in found if sum(q.stem == p.stem for q in found) > 1})
    if clashes:
        raise BenchmarkError(f"two benchmarks share the name {', '.join(clashes)} in {folder}; rename one (a benchmark is known by its file stem)")
    if only:
        wanted = list(dict.fromkeys(only))
        known = {p.stem: p for p in found}
        missing = [name for name in wanted if name not in known]
        if missing:
            raise BenchmarkError(f"no benchmark named {', '.join(missing)} in {folder} (have: {', '.join(sorted(known)) or 'none'})")
        found = [known[name] for name in wanted]
    return found


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"turneval_benchmark_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise BenchmarkError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up here
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise BenchmarkError(f"{path}: defines no run(quick: bool) -> list[dict]")
    return module


def check_figures(figures: Any, source: str) -> list[dict[str, Any]]:
    """Raise BenchmarkError unless ``figures`` is a list of figure dicts (see _harness.figure)."""
    if not isinstance(figures, list):
        raise BenchmarkError(f"{source}: run() must return a list of figure dicts, got {type(figures).__name__}")
    out = []
    for i, fig in enumerate(figures):
        where = f"{source}: figure {i}"
        if not isinstance(fig, dict):
            raise BenchmarkError(f"{where} is a {type(fig).__name__}, not a dict")
        for key, kind in (("name", str), ("unit", str)):
            if not isinstance(fig.get(key), kind):
                raise BenchmarkError(f"{where} needs a string {key!r}")
        value = fig.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BenchmarkError(f"{where} ({fig['name']!r}) needs a numeric 'value', got {value!r}")
        out.append({**fig, "value": float(value)})
    return out


# --------------------------------------------------------------------------- one benchmark
def _worker(path: str, quick: bool, result_path: str) -> int:
    """Child process: run one benchmark and write its figures and its peak RSS as JSON."""
    start = time.perf_counter()
    if str(Path(path).parent) not in sys.path:
        sys.path.insert(0, str(Path(path).parent))  # the scripts of its own suite, as when run directly
    module = _load(Path(path))
    figures = check_figures(module.run(quick), path)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    payload = {
        "figures": figures,
        "peak_rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux
        "cpu_seconds": usage.ru_utime + usage.ru_stime,  # imports included: what the run costs
        "seconds": time.perf_counter() - start,
    }
    Path(result_path).write_text(json.dumps(payload), encoding="utf-8")
    return 0


def run_benchmark(path: Path, quick: bool, timeout_s: float = DEFAULT_TIMEOUT_S, threads: int = 1) -> dict[str, Any]:
    """Run one benchmark file in a fresh Python process.

    Returns ``{"benchmark", "figures", "seconds", "peak_rss_mib", "error"}``; ``error`` is None
    on success, else what went wrong (the tail of the child's stderr, or the time-out).
    """
    env = dict(os.environ)
    env[_harness.THREADS_ENV] = str(threads)
    # Numeric libraries read these when they start: one place sets the thread count for all.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env.setdefault("HF_HUB_OFFLINE", "1")
    record: dict[str, Any] = {
        "benchmark": path.stem,
        "suite": path.parent.name if path.parent.name in SUITES else None,
        "description": module_docstring(path),
        "figures": [],
        "seconds": float("nan"),
        "cpu_seconds": float("nan"),
        "peak_rss_mib": float("nan"),
        "error": None,
    }
    with tempfile.TemporaryDirectory(prefix="turneval-bench-") as tmp:
        result_path = Path(tmp) / "result.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path), "--result", str(result_path)]
        if quick:
            command.append("--quick")
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            record["error"] = f"timed out after {timeout_s:g} s"
            record["seconds"] = time.perf_counter() - start
            return record
        record["seconds"] = time.perf_counter() - start
        if proc.returncode != 0 or not result_path.is_file():
            tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-15:]
            # The exception line first (it goes into the one-line summaries), then the traceback.
            last = tail[-1] if tail else "no output"
            record["error"] = f"exit status {proc.returncode}: {last}\n" + "\n".join(tail)
            return record
        payload = json.loads(result_path.read_text(encoding="utf-8"))
    record["figures"] = payload["figures"]
    record["peak_rss_mib"] = payload["peak_rss_mib"]
    record["cpu_seconds"] = payload["cpu_seconds"]
    return record


# --------------------------------------------------------------------------- the report
def resolve_ratios(records: list[dict[str, Any]]) -> None:
    """Fill ``ratio = value / reference value`` where a figure names a reference of this run.

    A reference that is missing or zero leaves the ratio out and says why in ``ratio_note``.
    """
    values = {fig["name"]: fig["value"] for rec in records for fig in rec["figures"]}
    for rec in records:
        for fig in rec["figures"]:
            ref = fig.get("reference")
            if ref is None or "ratio" in fig:
                continue
            if ref not in values:
                fig["ratio_note"] = f"reference {ref!r} was not measured in this run"
            elif values[ref] == 0 or not math.isfinite(values[ref]):
                fig["ratio_note"] = f"reference {ref!r} is {values[ref]:g}"
            else:
                fig["ratio"] = fig["value"] / values[ref]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def run_all(
    bench_dir: str | os.PathLike = HERE,
    quick: bool = False,
    only: Sequence[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    threads: int = 1,
    progress: bool = True,
    jobs: int = 1,
) -> dict[str, Any]:
    """Run the benchmarks and return the report (machine, versions, date, per-benchmark figures).

    ``jobs`` > 1 runs that many benchmark processes at once (the CI smoke run: each measures its
    own CPU time and peak memory, but wall times and speed figures then share the machine, so
    the report records ``jobs`` and a docs page is written from ``jobs`` = 1 runs)."""
    paths = discover(bench_dir, only)
    if not paths:
        raise BenchmarkError(f"no benchmarks (*.py with run(quick)) in {bench_dir}")
    started = _dt.datetime.now(_dt.timezone.utc)
    commit = _git_commit()  # the code measured: commits made while a long run goes on do not count
    from concurrent.futures import ThreadPoolExecutor

    def one(path: Path) -> dict[str, Any]:
        if progress:
            print(f"[perf] {path.stem} ...", file=sys.stderr, flush=True)
        record = run_benchmark(path, quick, timeout_s, threads)
        if progress:
            status = "FAILED: " + record["error"].splitlines()[0] if record["error"] else f"{len(record['figures'])} figures"
            print(f"[perf] {path.stem}: {record['seconds']:.1f} s ({record['cpu_seconds']:.1f} CPU s), peak {record['peak_rss_mib']:.0f} MiB, {status}", file=sys.stderr, flush=True)
        return record

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # each benchmark is its own process; threads only wait
        records = list(pool.map(one, paths))
    resolve_ratios(records)
    return {
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "quick": quick,
        "threads": threads,
        "jobs": jobs,
        "command": REPRODUCE.format(quick=" --quick" if quick else "", only=f" --only {','.join(p.stem for p in paths)}" if only else ""),
        "machine": _harness.machine_info(),
        "versions": _harness.package_versions(),
        "git_commit": commit,
        "total_seconds": sum(r["seconds"] for r in records if math.isfinite(r["seconds"])),
        "total_cpu_seconds": sum(r["cpu_seconds"] for r in records if math.isfinite(r["cpu_seconds"])),
        "benchmarks": records,
    }


def format_value(value: float) -> str:
    """Three significant digits, plain notation where that stays short."""
    if not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        digits = max(0, 2 - int(math.floor(math.log10(magnitude))))
        return f"{value:,.{digits}f}"
    return f"{value:.2e}"


def _ratio_cell(fig: dict[str, Any]) -> str:
    if "ratio" in fig:
        ref = fig.get("reference")
        return f"{format_value(fig['ratio'])}x {ref}" if ref else f"{format_value(fig['ratio'])}x"
    return ""


NOTE_IN_CELL_MAX = 100
"""A note longer than this goes under the table as a numbered note (docs/ keeps cells short)."""


def _escape(cell: Any) -> str:
    return str(cell).replace("|", "\\|").replace("\n", " ")


def _rows(figures: list[tuple[str, dict[str, Any]]], with_benchmark: bool) -> list[str]:
    """A figure table; notes longer than :data:`NOTE_IN_CELL_MAX` are numbered and listed
    under it, so that every cell stays short."""
    head = ("| Benchmark " if with_benchmark else "") + "| Figure | Value | Unit | Ratio to reference | Note |"
    rule = ("|---" if with_benchmark else "") + "|---|---:|---|---|---|"
    lines, notes = [head, rule], []
    for bench, fig in figures:
        note = fig.get("note", "")
        if fig.get("ratio_note"):
            note = "; ".join(filter(None, [note, fig["ratio_note"]]))
        if len(note) > NOTE_IN_CELL_MAX:
            notes.append(note)
            note = f"note {len(notes)}"
        cells = ([bench] if with_benchmark else []) + [fig["name"], format_value(fig["value"]), fig["unit"], _ratio_cell(fig), note]
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    if notes:
        lines += ["", "Notes:", ""] + [f"{n}. {_escape(text)}" for n, text in enumerate(notes, start=1)]
    return lines


KEEP_BEGIN = "<!-- written by hand: run_all --docs keeps this block -->"
KEEP_END = "<!-- end of the block written by hand -->"


def kept_blocks(text: str) -> list[str]:
    """The blocks of a generated page written by hand between :data:`KEEP_BEGIN` and
    :data:`KEEP_END` (markers included), in order. Figures measured outside the full run live
    there, so regenerating the page does not erase them."""
    blocks, rest = [], text
    while KEEP_BEGIN in rest:
        start = rest.index(KEEP_BEGIN)
        end = rest.find(KEEP_END, start)
        if end < 0:
            raise BenchmarkError(f"a block opened with {KEEP_BEGIN!r} is never closed with {KEEP_END!r}; close it or remove the marker")
        blocks.append(rest[start:end + len(KEEP_END)])
        rest = rest[end + len(KEEP_END):]
    return blocks


def suite_of(record: dict[str, Any], bench_dir: str | os.PathLike = HERE) -> str | None:
    """The suite (``speed``, ``validation``) a benchmark record belongs to: its own ``suite``
    key, else where a file of that name sits now (reports written before the split)."""
    if record.get("suite"):
        return record["suite"]
    return next((s for s in SUITES if (Path(bench_dir) / s / f"{record['benchmark']}.py").is_file()), None)


def _provenance(report: dict[str, Any]) -> list[str]:
    m = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v)
    mode = "quick (CI-sized inputs)" if report["quick"] else "full"
    return [
        f"Measured {report['date']} ({mode} run, {report['threads']} thread(s) per benchmark, "
        f"{format_value(report['total_seconds'])} s wall and {format_value(report.get('total_cpu_seconds', float('nan')))} CPU s in all){', commit ' + report['git_commit'] if report.get('git_commit') else ''}.",
        f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['ram_gib']} GiB RAM; {m['os']}; Python {m['python']}.",
        f"Versions: {versions}.",
    ] + ([report["note"]] if report.get("note") else []) + _measured_code(report)


def _measured_code(report: dict[str, Any]) -> list[str]:
    """Which commit's code the figures describe: a page re-rendered with ``--render`` keeps the
    run's commit, and code changed after it is not measured here."""
    commit = report.get("git_commit")
    if not commit:
        return ["The run did not record its commit: which code it measured is unknown."]
    rendered_at = _git_commit()
    if rendered_at and not rendered_at.startswith(commit.rstrip("+")) and not commit.startswith(rendered_at):
        return [f"**The code measured is commit {commit}, not the current code**: this page was re-rendered "
                f"(`--render`) at commit {rendered_at} without a new run. `git log {commit}..HEAD` lists what "
                "changed since; a full run replaces these figures."]
    return [f"The code measured is commit {commit}."]


def _headline_sections(report: dict[str, Any]) -> list[str]:
    """One headline table per suite (speed first), or one table when no benchmark has a suite."""
    groups: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}
    for rec in report["benchmarks"]:
        rows = [(rec["benchmark"], f) for f in rec["figures"] if f.get("headline")]
        if rows:
            groups.setdefault(suite_of(rec), []).extend(rows)
    if list(groups) in ([], [None]):
        return ["## Headline figures", ""] + _rows(groups.get(None, []), with_benchmark=False) + [""] if groups else []
    lines = []
    for suite in (*SUITES, None):
        if suite in groups:
            heading = f"## Headline figures: {suite}" if suite else "## Headline figures: other"
            lines += [heading, ""] + _rows(groups[suite], with_benchmark=False) + [""]
    return lines


def render_figures(report: dict[str, Any]) -> list[str]:
    """Every figure of the run, what each benchmark measures, and the benchmarks that failed."""
    lines = ["## All figures", ""]
    everything = []
    for rec in report["benchmarks"]:
        everything += [(rec["benchmark"], f) for f in rec["figures"]]
        everything.append((rec["benchmark"], {"name": "benchmark process peak RSS", "value": rec["peak_rss_mib"], "unit": "MiB"}))
        everything.append((rec["benchmark"], {"name": "benchmark wall time", "value": rec["seconds"], "unit": "s"}))
        everything.append((rec["benchmark"], {"name": "benchmark CPU time", "value": rec.get("cpu_seconds", float("nan")), "unit": "CPU s",
                                              "note": "whole process, imports and set-up included"}))
    lines += _rows(everything, with_benchmark=True) + [""]
    described = [(r["benchmark"], r.get("description")) for r in report["benchmarks"] if r.get("description")]
    if described:
        lines += ["## What each benchmark measures", ""]
        for name, text in described:
            lines += [f"### `{name}`", "", text, ""]
    failed = [r for r in report["benchmarks"] if r["error"]]
    if failed:
        lines += ["## Failed benchmarks", ""]
        lines += [f"- `{r['benchmark']}`: {r['error'].splitlines()[0]}" for r in failed]
        lines.append("")
    return lines


def render_markdown(report: dict[str, Any], title: str = "Benchmark results", kept: Sequence[str] = (),
                    figures_page: str | None = None) -> str:
    """The report as markdown: where and how it was measured, the ``kept`` blocks written by hand
    (see :func:`kept_blocks`), the headline tables, then every figure (:func:`render_figures`).
    With ``figures_page`` (a relative link) every figure goes to that page instead and this one
    ends with a link to it: a docs page that reads on one screen."""
    lines = [f"# {title}", "", *_provenance(report), "",
             "Reproduce with:", "", "```bash", report["command"], "```", "",
             "(`turneval perf` takes the same options; `--quick` uses CI-sized inputs. The smart-turn "
             "comparison needs the model file of pipecat-ai: `make perf-deps` (pip install --no-deps pipecat-ai).)",
             "",
             "CPU seconds count every thread of the benchmark's process; a real-time factor (RTF) is "
             "processing time divided by audio time (below 1 is faster than real time). A ratio is the "
             "figure divided by the reference figure named beside it, both measured in this run.",
             ""]
    for block in kept:
        lines += [block, ""]
    lines += _headline_sections(report)
    if figures_page is None:
        lines += render_figures(report)
    else:
        failed = [r["benchmark"] for r in report["benchmarks"] if r["error"]]
        lines += [f"Every figure of this run, its memory and time per benchmark, and what each benchmark measures: "
                  f"[{Path(figures_page).stem}]({figures_page}) (generated with this page)."
                  + (f" Failed: {', '.join(failed)}." if failed else ""), ""]
    return "\n".join(lines)


def render_figures_page(report: dict[str, Any], title: str) -> str:
    """The companion of a short docs page: provenance, then :func:`render_figures`."""
    return "\n".join([f"# {title}", "", "Generated by `benchmarks/run_all.py --docs`; do not edit by hand.", "",
                      *_provenance(report), "", *render_figures(report)])


def figures_page_path(docs: str | os.PathLike) -> Path:
    """Where ``--docs PAGE.md`` puts every figure: ``PAGE_figures.md`` beside it."""
    docs = Path(docs)
    return docs.with_name(f"{docs.stem}_figures.md")


def report_json_path(docs: str | os.PathLike) -> Path:
    """Where ``--docs PAGE.md`` keeps the report it was rendered from: ``PAGE.json`` beside it,
    so ``--render PAGE.json --docs PAGE.md`` rewrites the page after a change of this script."""
    return Path(docs).with_suffix(".json")


def load_report(path: str | os.PathLike) -> dict[str, Any]:
    """A report written by :func:`write_report` (``latest.json``), checked for the keys the
    markdown needs."""
    path = Path(path)
    if not path.is_file():
        raise BenchmarkError(f"{path} does not exist; run the benchmarks first (it is their latest.json)")
    report = read_json(path, error=BenchmarkError)
    missing = [k for k in ("date", "quick", "threads", "command", "machine", "versions", "benchmarks") if k not in report]
    if missing:
        raise BenchmarkError(f"{path} is not a benchmark report (missing {', '.join(missing)})")
    return report


def write_report(report: dict[str, Any], output_dir: str | os.PathLike, docs: str | os.PathLike | None = None) -> dict[str, Path]:
    """Write ``latest.json`` / ``latest.md`` (and a dated JSON copy) to ``output_dir``. With
    ``docs``: the short page there (provenance, the blocks written by hand it replaces
    (:func:`kept_blocks`), the headline tables), every figure in :func:`figures_page_path` and
    the report itself in :func:`report_json_path`. Every file is written atomically."""
    from turneval.dataset_scripts.files import atomic_write_text

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=1, allow_nan=True)
    stamp = report["date"].replace(" ", "_").replace(":", "")
    paths = {"json": out / "latest.json", "markdown": out / "latest.md", "dated": out / f"bench_{stamp}.json"}
    atomic_write_text(paths["json"], text)
    atomic_write_text(paths["dated"], text)
    atomic_write_text(paths["markdown"], render_markdown(report))
    if docs is not None:
        paths["docs"] = Path(docs)
        paths["docs_figures"] = figures_page_path(docs)
        paths["docs_json"] = report_json_path(docs)
        kept = kept_blocks(paths["docs"].read_text(encoding="utf-8")) if paths["docs"].is_file() else []
        atomic_write_text(paths["docs"], render_markdown(report, title="Performance", kept=kept, figures_page=paths["docs_figures"].name))
        atomic_write_text(paths["docs_figures"], render_figures_page(report, title="Performance: every figure"))
        atomic_write_text(paths["docs_json"], text)
    return paths


# --------------------------------------------------------------------------- command line
def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of run_all.py (also used by ``turneval perf``)."""
    parser = parser or argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized inputs (the whole run takes a few minutes)")
    parser.add_argument("--only", default=None, help="comma-separated benchmark names (file stems) to run")
    parser.add_argument("--benchmarks-dir", default=str(HERE), help="folder of benchmark files (default: this one)")
    parser.add_argument("--output-dir", default="runs/bench", help="where latest.json and latest.md go (default: runs/bench)")
    parser.add_argument("--docs", default=None, help="also write the markdown here (e.g. docs/performance.md)")
    parser.add_argument("--threads", type=int, default=1, help="threads per benchmark (default 1)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds before one benchmark is stopped")
    parser.add_argument("--jobs", type=int, default=1, help="benchmarks run at once (default 1; CI's smoke run uses 2: speed figures then share the machine)")
    parser.add_argument("--spokenwoz-root", default=None,
                        help="SpokenWOZ calls for the real-speech naturalness benchmarks (default: $TURNEVAL_SPOKENWOZ_ROOT or ../shared/real/spokenwoz)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--render", metavar="JSON", default=None,
                        help="run nothing: rewrite the markdown (and --docs) from a saved report JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        return _worker(args.worker, args.quick, args.result)
    return run_from_args(args)


def run_from_args(args: argparse.Namespace) -> int:
    """Run what ``args`` asks for; exit status 1 if any benchmark failed."""
    only = [name.strip() for name in args.only.split(",") if name.strip()] if args.only else None
    if args.threads < 1:
        raise BenchmarkError(f"--threads must be at least 1, got {args.threads}")
    if args.jobs < 1:
        raise BenchmarkError(f"--jobs must be at least 1, got {args.jobs}")
    if args.docs and args.jobs > 1:
        raise BenchmarkError("--docs writes the page of record: run it with --jobs 1, so that no two benchmarks share the machine")
    if getattr(args, "spokenwoz_root", None):
        os.environ["TURNEVAL_SPOKENWOZ_ROOT"] = str(Path(args.spokenwoz_root).resolve())  # each benchmark process inherits it
    if args.render:
        report = load_report(args.render)
        paths = write_report(report, args.output_dir, args.docs)
        print(f"[perf] wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
        return 0
    if args.list:
        for path in discover(args.benchmarks_dir, only):
            doc = (_first_doc_line(path) or "").strip()
            print(f"{path.stem:24s} {doc}")
        return 0
    report = run_all(args.benchmarks_dir, quick=args.quick, only=only, timeout_s=args.timeout, threads=args.threads, jobs=args.jobs)
    paths = write_report(report, args.output_dir, args.docs)
    print(render_markdown(report))
    print(f"[perf] wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    return 1 if any(r["error"] for r in report["benchmarks"]) else 0


def module_docstring(path: Path) -> str | None:
    """A benchmark file's docstring, read without importing it (None if it has none)."""
    import ast

    try:
        return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except (SyntaxError, OSError, UnicodeDecodeError):
        return None


def _first_doc_line(path: Path) -> str | None:
    doc = module_docstring(path)
    return doc.splitlines()[0] if doc else None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkError as err:
        print(f"run_all.py: error: {err}", file=sys.stderr)
        sys.exit(1)
