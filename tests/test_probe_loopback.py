"""turneval probe against mock agents on 127.0.0.1, in real time (short calls; every loop is bounded).

Timing is not asserted here (the machine may be busy); benchmarks/validation/probe_mocks.py checks the
measured latencies against the mocks' settings.
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from turneval import cli
from turneval.probe import runner
from turneval.probe.mock_agents import MockAgent, MockFaults
from turneval.probe.runner import ProbeSettings, play_sample, run_samples
from turneval.probe.scenarios import load_scenarios
from turneval.probe.session import probe
from turneval.probe.transports import AgentFormatError, AgentUnreachable


SETTLE = "0.2"
"""The wait for a quiet line before each call: the mocks fall silent at once (test_probe_wires tests the wait itself)."""


def _calls(tmp_path: Path, n: int = 1, tail_s: float = 1.5) -> Path:
    path = tmp_path / "calls.json"
    texts = ["hello there", "good morning", "thanks a lot"]
    path.write_text(json.dumps({"samples": [{"task": "candor_turn_taking", "user": [{"say": texts[i]}], "tail_s": tail_s}
                                            for i in range(n)]}))
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_probe_end_to_end_writes_runs_that_fdb_and_report_score(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["probe", "mock:duplex", "--scenarios", "smoke", "--out", str(out), "--no-judge", "--no-predictor", "--settle", SETTLE,
                     "--quiet", "--require", "fdb.candor_turn_taking.tor>=1", "--require", "failed_samples==0"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    sample = out / "v1.0" / "candor_turn_taking" / "1"
    for name in ("input.wav", "output.wav", "stereo.wav", "turn_taking.json", "input.json", "probe.json"):
        assert (sample / name).is_file(), name
    assert (out / "v1.0" / "synthetic_pause_handling" / "1" / "pause.json").is_file()
    log = json.loads((sample / "probe.json").read_text())
    assert log["status"] == "ok" and log["agent_chunks"] and log["timing"]["agent_speech"]
    run = json.loads((out / "probe.json").read_text())
    assert run["transport_delay"]["frames"] > 50 and [s["status"] for s in run["samples"]] == ["ok", "ok"]
    assert run["mock"]["name"] == "duplex" and run["figures"]["probe.response_latency_s"] is not None
    assert (out / "conversation.wav").is_file() and (out / "report" / "report.json").is_file()
    fdb = json.loads((out / "fdb" / "fdb.json").read_text())
    assert {t["name"] for t in fdb["tasks"]} == {"candor_turn_taking", "synthetic_pause_handling"}
    assert "transport delay" in printed.lower() and "requirements: all 2 passed" in printed
    # the folder is a Full-Duplex-Bench run that the fdb command scores on its own too
    assert cli.main(["full-duplex-bench", str(out), "--transcribe", "--quiet", "--no-samples"]) == 0


def test_an_earlier_run_is_refused_unless_overwritten(tmp_path):
    from turneval.probe.session import prepare_run_dir
    from turneval.probe.transports import ProbeError

    out = tmp_path / "run"
    (out / "v1.0" / "candor_turn_taking" / "9").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ProbeError, match="already holds a probe run.*--overwrite"):
        prepare_run_dir(out)
    prepare_run_dir(out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # only what a run writes is removed


def test_pipecat_wire_round_trip(tmp_path):
    (sample,) = load_scenarios(_calls(tmp_path))
    settings = ProbeSettings(agent="mock", transport="pipecat", settle_s=float(SETTLE))
    with MockAgent("eager", wire="pipecat") as url:
        outcome = play_sample(settings, url, sample)
    assert outcome.status == "ok"
    agent = outcome.recording.agent_track(outcome.caller.size)
    assert np.abs(agent).max() > 0.1  # the mock's answer came through Pipecat's frames


def test_refused_connection_names_the_url(tmp_path, capsys):
    url = f"ws://127.0.0.1:{_free_port()}/ws"
    code = cli.main(["probe", url, "--scenarios", str(_calls(tmp_path)), "--out", str(tmp_path / "run"), "--quiet", "--settle", SETTLE])
    err = capsys.readouterr().err
    assert code == 1 and f"cannot connect to the agent at {url}" in err and "connection refused" in err
    (sample,) = load_scenarios(_calls(tmp_path))
    with pytest.raises(AgentUnreachable, match="check that the agent is running"):
        play_sample(ProbeSettings(agent=url, settle_s=float(SETTLE)), url, sample)


@pytest.mark.parametrize("wire", ["raw", "pipecat"])
def test_wrong_sample_rate_stops_with_the_fix(tmp_path, wire):
    (sample,) = load_scenarios(_calls(tmp_path))
    with MockAgent("eager", wire=wire, faults=MockFaults(wire_rate=24000)) as url:
        with pytest.raises(AgentFormatError, match=r"24000 Hz.*--sample-rate 24000"):
            play_sample(ProbeSettings(agent=url, transport=wire, settle_s=float(SETTLE)), url, sample)


def test_silent_agent_times_out_per_sample_and_the_run_goes_on(tmp_path):
    samples = load_scenarios(_calls(tmp_path, n=2, tail_s=0.2))
    settings = ProbeSettings(agent="mock", timeout_s=0.5, settle_s=float(SETTLE))
    with MockAgent("duplex", faults=MockFaults(silent=True)) as url:
        outcomes = run_samples(samples, settings, tmp_path / "run", url)
    assert [o.status for o in outcomes] == ["timeout", "timeout"]
    assert "sent no audio" in outcomes[0].detail and url in outcomes[0].detail
    assert (tmp_path / "run" / "failed" / "v1.0" / "candor_turn_taking" / "2" / "probe.json").is_file()
    assert not (tmp_path / "run" / "v1.0").exists()  # nothing for the benchmark to score as a silent success


def test_disconnect_mid_sample_marks_it_and_the_run_goes_on(tmp_path):
    samples = load_scenarios(_calls(tmp_path, n=2))
    settings = ProbeSettings(agent="mock", settle_s=float(SETTLE))
    with MockAgent("eager", faults=MockFaults(disconnect_after_s=0.4, disconnect_sessions=1)) as url:
        outcomes = run_samples(samples, settings, tmp_path / "run", url)
    assert [o.status for o in outcomes] == ["disconnected", "ok"]
    assert "closed the connection" in outcomes[0].detail and "1011" in outcomes[0].detail
    failed = json.loads((tmp_path / "run" / "failed" / "v1.0" / "candor_turn_taking" / "1" / "probe.json").read_text())
    assert failed["status"] == "disconnected"
    assert (tmp_path / "run" / "v1.0" / "candor_turn_taking" / "2" / "output.wav").is_file()


def test_ctrl_c_leaves_complete_samples_only(tmp_path, monkeypatch):
    samples = load_scenarios(_calls(tmp_path, n=3, tail_s=0.5))
    real = runner.play_sample
    calls = []

    def interrupted_second(settings, url, sample, slot=None):
        calls.append(sample.sample_id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(settings, url, sample, slot)

    monkeypatch.setattr(runner, "play_sample", interrupted_second)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        probe(samples, ProbeSettings(agent="mock:eager", settle_s=float(SETTLE)), out, log=lambda _: None)
    task = out / "v1.0" / "candor_turn_taking"
    assert sorted(p.name for p in task.iterdir()) == ["1"]  # no partial second sample, no temp folder
    run = json.loads((out / "probe.json").read_text())
    assert [s["folder"] for s in run["samples"]] == ["v1.0/candor_turn_taking/1"]
