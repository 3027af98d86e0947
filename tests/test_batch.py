"""turneval batch: discovery, failures, resume after a kill, the fleet report and its gates."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from turneval.batch.discover import DiscoveryError, discover_calls
from turneval.batch.fleet import badness, quantiles_with_intervals
from turneval.batch.fleet_gates import parse_fleet_requirement
from turneval.cli import main
from turneval.gates import GateError
from turneval.headline_figures import FIGURES


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CHEAP = ["--no-judge", "--no-predictor", "--no-html", "--quiet"]


def crop(name: str, seconds: float, target: Path, start_s: float = 0.0) -> Path:
    """A short stereo copy of an example conversation."""
    audio, sr = sf.read(EXAMPLES / f"{name}.wav")
    target.parent.mkdir(parents=True, exist_ok=True)
    sf.write(target, audio[int(start_s * sr): int((start_s + seconds) * sr)], sr)
    return target


# --------------------------------------------------------------------------- discovery
def test_discovery_reads_folders_pairs_manifests_and_parquet(tmp_path):
    folder = tmp_path / "calls"
    crop("cascaded_like", 2, folder / "a.wav")
    crop("human_like", 2, folder / "sub" / "a.wav")  # the same stem in another folder: ids stay unique
    audio, sr = sf.read(EXAMPLES / "human_like.wav", frames=2 * 16000)
    sf.write(folder / "p1_user.wav", audio[:, 0], sr)
    sf.write(folder / "p1_system.wav", audio[:, 1], sr)
    sf.write(folder / "alone_user.wav", audio[:, 0], sr)
    calls = {c.id: c for c in discover_calls([str(folder)])}
    assert set(calls) == {"calls__a", "sub__a", "p1", "alone"}
    assert calls["p1"].user_audio.endswith("p1_user.wav") and calls["p1"].system_audio.endswith("p1_system.wav")
    assert "without its system partner" in calls["alone"].problem and calls["calls__a"].problem is None

    manifest = tmp_path / "manifest.csv"
    manifest.write_text("path,system_channel,agent_version,date\ncalls/a.wav,0,v1,2026-11-01\n"
                        "calls/sub/a.wav,,v2,2026-11-02\n", encoding="utf-8")
    rows = discover_calls([str(manifest)], system_channel=1)
    assert sorted((c.system_channel, c.metadata["agent_version"]) for c in rows) == [(0, "v1"), (1, "v2")]
    assert {Path(c.audio) for c in rows} == {folder / "a.wav", folder / "sub" / "a.wav"}
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(json.dumps({"id": "x", "user": "calls/p1_user.wav", "system": "calls/p1_system.wav", "site": 3}) + "\n")
    (call,) = discover_calls([str(jsonl)])
    assert call.id == "x" and call.user_audio and call.metadata == {"site": 3}

    parquet = tmp_path / "set.parquet"
    wav = (folder / "a.wav").read_bytes()
    pd.DataFrame({"conversation_id": ["c1"], "audio": [{"bytes": wav, "path": "c1.wav"}], "agent_version": ["v3"]}).to_parquet(parquet)
    (from_bytes,) = discover_calls([str(parquet)], spool=tmp_path / "out" / "inputs")
    assert from_bytes.id == "c1" and Path(from_bytes.audio).read_bytes() == wav and from_bytes.metadata == {"agent_version": "v3"}

    assert [c.id for c in discover_calls([str(folder / "*.wav")])] == ["a", "alone", "p1"]
    with pytest.raises(DiscoveryError, match="matches no file"):
        discover_calls([str(tmp_path / "nothing*.wav")])
    with pytest.raises(DiscoveryError, match="needs a 'path'"):
        bad = tmp_path / "bad.csv"
        bad.write_text("agent_version\nv1\n")
        discover_calls([str(bad)])


# --------------------------------------------------------------------------- fleet arithmetic
def test_fleet_requirements_and_statistics():
    assert str(parse_fleet_requirement("p90(response_latency_s)<=1.2")) == "p90(response_latency_s)<=1.2"
    assert parse_fleet_requirement("share_outside(talk_over_rate) <= 0.1").threshold == 0.1
    for text, message in (("p99(response_latency_s)<1", "unknown statistic"), ("median(latency)<1", "unknown figure"),
                          ("response_latency_s<=1", "STAT\\(NAME\\)")):
        with pytest.raises(GateError, match=message):
            parse_fleet_requirement(text)
    stats = quantiles_with_intervals(list(range(101)))
    assert stats["median"] == 50 and stats["p10"] == 10 and stats["p90"] == 90
    low, high = stats["median_ci95"]
    assert low < 50 < high and high - low < 30
    assert quantiles_with_intervals([3.0])["median_ci95"] is None
    assert badness(FIGURES["response_latency_s"], 2.0, None) > badness(FIGURES["response_latency_s"], 1.0, None)
    assert badness(FIGURES["backchannels_per_min"], 3.0, [1, 5]) == 0 < badness(FIGURES["backchannels_per_min"], 9.0, [1, 5])


# --------------------------------------------------------------------------- failures
def test_call_timeout_parses_as_a_time_limit_that_0_turns_off(capsys):
    import argparse

    from turneval.commands.batch import add_parser
    from turneval.input_checks import seconds_limit, seconds_limit_or_zero

    parser = add_parser(argparse.ArgumentParser().add_subparsers())
    assert parser.parse_args(["calls", "--out", "o", "--call-timeout", "0"]).call_timeout == 0
    assert parser.parse_args(["calls", "--out", "o", "--call-timeout", "2.5"]).call_timeout == 2.5
    for bad in ("-1", "inf", "nan", "x"):
        with pytest.raises(SystemExit):
            parser.parse_args(["calls", "--out", "o", "--call-timeout", bad])
        assert "--call-timeout" in capsys.readouterr().err
        with pytest.raises(argparse.ArgumentTypeError, match="number of seconds"):
            seconds_limit_or_zero(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="above 0"):
        seconds_limit("0")


def test_forty_calls_with_a_corrupt_a_mono_and_an_empty_file(tmp_path, capsys):
    calls = tmp_path / "calls"
    crops = [crop(name, 6, tmp_path / "crops" / f"{name}.wav", 10) for name in ("cascaded_like", "eager_duplex_like", "human_like")]
    for i in range(37):
        (calls / f"call{i:02d}.wav").parent.mkdir(parents=True, exist_ok=True)
        (calls / f"call{i:02d}.wav").write_bytes(crops[i % 3].read_bytes())
    (calls / "corrupt.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEfmt " + os.urandom(200))
    sf.write(calls / "mono.wav", sf.read(crops[0])[0][:, 0], 16000)
    (calls / "empty.wav").write_bytes(b"")
    out = tmp_path / "fleet"
    code = main(["batch", str(calls), "--out", str(out), "--workers", "2", *CHEAP])
    assert code == 4  # some calls failed; the rest are reported
    assert "3 of 40 calls failed" in capsys.readouterr().err
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert [e["id"] for e in errors] == ["corrupt", "empty", "mono"]
    assert len(list((out / "calls").glob("*/report.json"))) == 37
    assert "expected 2 channel(s), found 1" in errors[2]["reason"]
    # the reason is the one line the single report prints for the same file
    for e in errors:
        assert main(["report", e["input"], "--out", str(tmp_path / "single"), *CHEAP]) == 1
        assert capsys.readouterr().err.strip() == f"turneval report: error: {e['reason']}"
    table = pd.read_parquet(out / "calls.parquet")
    assert len(table) == 40 and (table["status"] == "reported").sum() == 37
    assert set(FIGURES) <= set(table.columns)
    fleet = json.loads((out / "batch.json").read_text())
    assert fleet["n_failed"] == 3 and fleet["n_reported"] == 37
    assert "errors.jsonl" in (out / "batch.html").read_text()


def test_fleet_gates_exit_3_and_slices_by_a_manifest_column(tmp_path, capsys):
    rows = ["path,agent_version"]
    for i, name in enumerate(("cascaded_like", "eager_duplex_like", "human_like", "cascaded_like")):
        crop(name, 8, tmp_path / f"c{i}.wav", 5)
        rows.append(f"c{i}.wav,{'old' if name == 'cascaded_like' else 'new'}")
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "fleet"
    args = ["batch", str(tmp_path / "m.csv"), "--out", str(out), "--workers", "1", "--by", "agent_version", *CHEAP]
    assert main([*args, "--require", "median(response_latency_s)<=100", "--require", "share_outside(talk_over_rate)<=1"]) == 0
    fleet = json.loads((out / "batch.json").read_text())
    (by_version,) = fleet["slices"]
    assert [lv["value"] for lv in by_version["levels"]] == ["new", "old"] and by_version["reference"] == "new"
    overlap = next(d for d in by_version["differences"] if d["figure"] == "overlap_share")
    old = [r for r in pd.read_csv(out / "calls.csv").to_dict("records") if r["agent_version"] == "old"]
    new = [r for r in pd.read_csv(out / "calls.csv").to_dict("records") if r["agent_version"] == "new"]
    diff = np.mean([r["overlap_share"] for r in old]) - np.mean([r["overlap_share"] for r in new])
    assert overlap["mean"] == pytest.approx(diff, abs=1e-5) and overlap["ci95_low"] < overlap["mean"] < overlap["ci95_high"]
    capsys.readouterr()
    assert main([*args, "--require", "p90(response_latency_s)<=0.0001"]) == 3
    assert "FAIL" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*args, "--require", "p90(latency)<=1"])


# --------------------------------------------------------------------------- resume, models on
def _batch_command(inputs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "turneval.cli", "batch", str(inputs), "--out", str(out), "--workers", "1"]


def test_a_killed_run_resumes_without_recomputing_and_ends_with_the_same_table(tmp_path):
    inputs = tmp_path / "calls"
    for i, name in enumerate(("cascaded_like", "eager_duplex_like", "human_like", "cascaded_like", "human_like")):
        crop(name, 8, inputs / f"call{i}.wav", 4 * i)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_batch_command(inputs, killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    while len(list((killed / "calls").glob("*/report.json"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.parent.name: p.stat().st_mtime_ns for p in (killed / "calls").glob("*/report.json")}
    assert 2 <= len(finished) < 5, f"the run was not killed half-way ({len(finished)} of 5 finished)"
    assert not (killed / "batch.json").exists()

    resumed = subprocess.run(_batch_command(inputs, killed), env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({5 - len(finished)} calls reported this run, {len(finished)} already finished)" in resumed.stdout
    assert {name: (killed / "calls" / name / "report.json").stat().st_mtime_ns for name in finished} == finished
    assert not list((killed / "calls").glob(".*"))  # no half-written call left behind

    whole = tmp_path / "whole"
    assert subprocess.run(_batch_command(inputs, whole), env=env, capture_output=True, timeout=600).returncode == 0
    assert (killed / "calls.csv").read_text() == (whole / "calls.csv").read_text()
    assert (killed / "batch.json").read_text() == (whole / "batch.json").read_text()
    table = pd.read_csv(whole / "calls.csv")
    assert table["judge_agreement_a"].notna().any() and table["naturalness_m"].notna().all()  # the models ran
