"""The benchmark harness (benchmarks/run_all.py) and the `turneval perf` command, on tiny benchmarks.

The full ``python benchmarks/run_all.py --quick`` run is CI's separate smoke run; here every
benchmark is a few lines that run in a second.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO / "benchmarks"


def _load_run_all():
    spec = importlib.util.spec_from_file_location("run_all_under_test", BENCH_DIR / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run_all = _load_run_all()
import _harness  # noqa: E402  (run_all put benchmarks/ on the path)


TINY = '''
"""A tiny benchmark: allocates about 64 MiB and times a sum."""
import numpy as np
from _harness import figure, memory_of, timed

def run(quick: bool) -> list[dict]:
    size = 1000 if quick else 100000
    fast = timed(lambda: sum(range(size)))
    slow = timed(lambda: sum(range(4 * size)))
    use, _ = memory_of(lambda: np.ones(8 * 2**20).sum())
    return [
        figure("sum fast", 2.0, "s", reference="sum slow"),
        figure("sum slow", 8.0, "s", headline=True),
        figure("sum cpu", fast.cpu_s, "CPU s"),
        figure("added memory", use.added_mib, "MiB", reference="not measured here"),
        figure("quick flag", float(quick), ""),
    ]
'''


@pytest.fixture()
def tiny_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "tiny.py").write_text(textwrap.dedent(TINY), encoding="utf-8")
    (folder / "_helper.py").write_text("raise RuntimeError('helpers are never run')\n", encoding="utf-8")
    return folder


def _figures(report: dict, benchmark: str) -> dict[str, dict]:
    record = next(r for r in report["benchmarks"] if r["benchmark"] == benchmark)
    return {f["name"]: f for f in record["figures"]}


def test_run_all_collects_figures_ratios_and_memory(tiny_dir: Path, tmp_path: Path):
    report = run_all.run_all(tiny_dir, quick=True, progress=False)
    assert [r["benchmark"] for r in report["benchmarks"]] == ["tiny"]
    record = report["benchmarks"][0]
    assert record["error"] is None
    figs = _figures(report, "tiny")
    assert figs["sum fast"]["ratio"] == pytest.approx(0.25)
    assert "ratio" not in figs["added memory"] and "not measured" in figs["added memory"]["ratio_note"]
    assert figs["quick flag"]["value"] == 1.0
    # The 64 MiB array shows in the child's own peak RSS and in the measured section.
    assert figs["added memory"]["value"] > 50
    assert record["peak_rss_mib"] > figs["added memory"]["value"]
    assert report["machine"]["cores"] >= 1 and report["versions"]["numpy"]

    paths = run_all.write_report(report, tmp_path / "out", docs=tmp_path / "performance.md")
    saved = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert _figures(saved, "tiny")["sum fast"]["ratio"] == pytest.approx(0.25)
    markdown = paths["docs"].read_text(encoding="utf-8")
    assert markdown.startswith("# Performance")
    assert "## Headline figures" in markdown and "| sum slow | 8.00 | s |" in markdown
    assert "python benchmarks/run_all.py --quick --docs docs/performance.md" in markdown
    # The page reads on one screen: every figure and each benchmark's docstring go to the page beside it.
    assert "## All figures" not in markdown and "[performance_figures](performance_figures.md)" in markdown
    figures_page = paths["docs_figures"].read_text(encoding="utf-8")
    assert paths["docs_figures"] == tmp_path / "performance_figures.md" and "| tiny | sum fast | 2.00 | s | 0.250x sum slow |" in figures_page
    assert "### `tiny`" in figures_page and "allocates about 64 MiB" in figures_page  # the module docstring
    assert json.loads(paths["docs_json"].read_text(encoding="utf-8"))["benchmarks"][0]["benchmark"] == "tiny"

    # --render rewrites the markdown from the saved JSON without running anything.
    (tmp_path / "performance.md").unlink()
    assert run_all.main(["--render", str(paths["json"]), "--output-dir", str(tmp_path / "again"), "--docs", str(tmp_path / "performance.md")]) == 0
    assert (tmp_path / "performance.md").read_text(encoding="utf-8") == markdown
    # Blocks written by hand between the markers survive a regeneration; the rest is replaced.
    note = f"{run_all.KEEP_BEGIN}\n## Measured elsewhere\n\n| a | 1 |\n{run_all.KEEP_END}"
    (tmp_path / "performance.md").write_text(markdown.replace("## Headline figures", note + "\n\nstale words\n\n## Headline figures"), encoding="utf-8")
    run_all.main(["--render", str(paths["json"]), "--output-dir", str(tmp_path / "again"), "--docs", str(tmp_path / "performance.md")])
    kept = (tmp_path / "performance.md").read_text(encoding="utf-8")
    assert note in kept and "stale words" not in kept and kept.index(note) < kept.index("## Headline figures")
    assert kept.replace(note + "\n\n", "") == markdown
    (tmp_path / "open.md").write_text(run_all.KEEP_BEGIN + "\nnever closed", encoding="utf-8")
    with pytest.raises(run_all.BenchmarkError, match="never closed"):
        run_all.kept_blocks((tmp_path / "open.md").read_text(encoding="utf-8"))
    (tmp_path / "bad.json").write_text('{"date": 1,\n oops}', encoding="utf-8")
    with pytest.raises(run_all.BenchmarkError, match=r"bad.json:2: invalid JSON"):
        run_all.load_report(tmp_path / "bad.json")


def test_failing_and_malformed_benchmarks_are_reported_not_fatal(tiny_dir: Path):
    (tiny_dir / "broken.py").write_text("def run(quick):\n    raise ValueError('boom')\n", encoding="utf-8")
    (tiny_dir / "malformed.py").write_text("def run(quick):\n    return [{'name': 'x', 'value': 'fast', 'unit': 's'}]\n", encoding="utf-8")
    report = run_all.run_all(tiny_dir, quick=True, progress=False)
    errors = {r["benchmark"]: r["error"] for r in report["benchmarks"]}
    assert errors["tiny"] is None
    assert "ValueError: boom" in errors["broken"]
    assert "malformed.py: figure 0 ('x') needs a numeric 'value'" in errors["malformed"]
    assert "## Failed benchmarks" in run_all.render_markdown(report)
    assert "--only" not in report["command"]
    # A subset says so in the command that reproduces it.
    subset = run_all.run_all(tiny_dir, quick=True, only=["tiny", "broken"], progress=False)
    assert subset["command"] == "python benchmarks/run_all.py --quick --only tiny,broken --docs docs/performance.md"



def test_two_jobs_give_the_same_records_in_the_same_order(tiny_dir: Path):
    (tiny_dir / "broken.py").write_text("def run(quick):\n    raise ValueError('boom')\n", encoding="utf-8")
    one = run_all.run_all(tiny_dir, quick=True, progress=False)
    two = run_all.run_all(tiny_dir, quick=True, progress=False, jobs=2)
    assert [r["benchmark"] for r in two["benchmarks"]] == [r["benchmark"] for r in one["benchmarks"]] == ["broken", "tiny"]
    assert two["jobs"] == 2 and "ValueError: boom" in two["benchmarks"][0]["error"]
    assert [f["name"] for f in two["benchmarks"][1]["figures"]] == [f["name"] for f in one["benchmarks"][1]["figures"]]


def test_the_page_of_record_is_not_written_from_a_shared_machine(tmp_path: Path):
    with pytest.raises(run_all.BenchmarkError, match="--jobs 1"):
        run_all.main(["--quick", "--jobs", "2", "--docs", str(tmp_path / "performance.md")])


def test_timeout_stops_one_benchmark(tiny_dir: Path):
    (tiny_dir / "hangs.py").write_text("import time\ndef run(quick):\n    time.sleep(60)\n    return []\n", encoding="utf-8")
    record = run_all.run_benchmark(tiny_dir / "hangs.py", quick=True, timeout_s=3)
    assert record["error"] == "timed out after 3 s" and record["figures"] == []


def test_discover_skips_helpers_and_names_unknown_benchmarks(tiny_dir: Path):
    assert [p.stem for p in run_all.discover(tiny_dir)] == ["tiny"]
    with pytest.raises(run_all.BenchmarkError, match="no benchmark named nope .*have: tiny"):
        run_all.discover(tiny_dir, only=["nope"])
    shipped = {p.stem: p.parent.name for p in run_all.discover(BENCH_DIR)}
    assert shipped["cindex_speed"] == shipped["vad_speed"] == "speed" and shipped["real_speech"] == "validation"
    assert set(shipped.values()) == set(run_all.SUITES) and "run_all" not in shipped


def test_two_benchmarks_with_one_name_are_refused(tiny_dir: Path):
    for suite in run_all.SUITES:
        (tiny_dir / suite).mkdir()
        (tiny_dir / suite / "same.py").write_text('"""Same."""\ndef run(quick):\n    return []\n', encoding="utf-8")
    with pytest.raises(run_all.BenchmarkError, match="share the name same"):
        run_all.discover(tiny_dir)


def test_loglog_exponent_and_formatting():
    minutes = [1, 2, 5, 10, 60]
    assert _harness.loglog_exponent(minutes, [3 * m for m in minutes]) == pytest.approx(1.0)
    assert _harness.loglog_exponent(minutes, [m**2 for m in minutes]) == pytest.approx(2.0)
    assert _harness.loglog_exponent(minutes, [7.0] * 5) == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(_harness.loglog_exponent([5], [1.0]))
    assert run_all.format_value(1234.5) == "1,234" or run_all.format_value(1234.5) == "1,235"
    assert run_all.format_value(0.0123) == "0.0123"
    assert run_all.format_value(float("nan")) == "n/a"


def test_turneval_perf_command_runs_a_real_benchmark(tmp_path: Path, capsys):
    from turneval.cli import main

    out = tmp_path / "out"
    assert main(["perf", "--quick", "--only", "cindex_speed", "--output-dir", str(out)]) == 0
    report = json.loads((out / "latest.json").read_text(encoding="utf-8"))
    figs = _figures(report, "cindex_speed")
    ours = figs["C-index 10^5 x 10^5: turneval"]
    assert ours["value"] > 0 and ours["ratio"] > 0
    assert "C-index 10^5 x 10^5: turneval" in capsys.readouterr().out
    assert main(["bench", "--only", "nope", "--output-dir", str(out)]) == 1  # the earlier name, an alias
    assert "turneval bench is now called turneval perf" in capsys.readouterr().err


# --------------------------------------------------------------------------- smart-turn peer (turneval.smart_turn: tests/test_smart_turn.py)
def test_metric_a_decisions_follow_the_users_ipu_ends():
    sys.path.insert(0, str(BENCH_DIR / "validation"))
    import turn_end_peers

    from turneval.dataset_scripts.synthetic import generate_dialogue

    dialogue = generate_dialogue(7, duration_s=40.0, style="human")
    roles = {round(ipu["end"], 4): ipu["role"] for ipu in dialogue.metadata["ipus"]}
    decisions, _ = turn_end_peers.metric_a_decisions(dialogue, system_speaker=1)
    assert decisions and {d.decision for d in decisions} <= {"T", "C"}
    for d in decisions:
        assert d.pauser == 0 and d.metric == "a" and any(abs(e - d.speech_end) < 1e-9 for _, e in dialogue.segments[0])
        assert d.speech_end - 0.04 <= d.horizon <= d.speech_end + 0.25  # 200 ms VAD stop, on the 40 ms grid
        assert d.turn_start <= d.speech_end and d.until_pauser_resumes_s > 0 and d.silence_elapsed_s > 0
        # The generator's plan: a shift follows a turn-final IPU, a continuation a turn-internal one.
        assert roles[round(d.speech_end, 4)] == ("turn_final" if d.decision == "T" else "turn_internal")


def test_every_shipped_benchmark_exposes_run_quick():
    import ast

    for path in run_all.discover(BENCH_DIR):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        runs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
        assert runs, f"{path.name} has no run(quick) for benchmarks/run_all.py"
        assert [a.arg for a in runs[0].args.args] == ["quick"], f"{path.name}: run must take (quick)"
        assert ast.get_docstring(tree), f"{path.name} needs a module docstring (shown by --list)"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux /proc")
def test_the_process_table_sees_a_child_and_its_child():
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time; time.sleep(30)'])"],
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not _harness.living_grandchildren(os.getpid()) and time.monotonic() < deadline:
            time.sleep(0.05)
        (grandchild,) = _harness.living_grandchildren(os.getpid())
        table = _harness.process_table()
        assert table[grandchild].parent == child.pid and table[child.pid].alive and table[os.getpid()].cpu_s > 0
        assert {os.getpid(), child.pid, grandchild} <= _harness.process_tree(os.getpid(), table)
        assert _harness.living_in_group(child.pid) == sorted([child.pid, grandchild])
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 10
    while _harness.living_in_group(child.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _harness.living_in_group(child.pid) == []
