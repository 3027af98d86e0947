"""turneval batch --ray: the same per-call figures as local workers, and a dead actor's call retried,
on a local Ray instance on loopback."""
from __future__ import annotations

import json

import pytest

from tests.test_batch import crop
from turneval.batch.discover import Call
from turneval.cli import main
from turneval.reporting.build import ReportOptions


ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'turneval[ray]')")


@pytest.fixture()
def local_ray(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a loopback instance for this test: no token written to ~/.ray
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1"}})
    yield
    ray.shutdown()


def test_ray_gives_the_same_figures_as_local_workers(tmp_path, local_ray):
    inputs = tmp_path / "calls"
    for i, name in enumerate(("cascaded_like", "eager_duplex_like", "human_like", "human_like")):
        crop(name, 12, inputs / f"call{i}.wav", 6 * i)
    args = ["batch", str(inputs), "--no-html", "--quiet", "--workers", "2"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--out", str(tmp_path / "ray"), "--ray", "auto"]) == 0
    for call in ("call0", "call1", "call2", "call3"):
        local = json.loads((tmp_path / "local" / "calls" / call / "call.json").read_text())
        remote = json.loads((tmp_path / "ray" / "calls" / call / "call.json").read_text())
        assert remote["figures"] == local["figures"]
        assert remote["figures"]["naturalness_m"] is not None  # the models ran on the Ray workers
        report_local = (tmp_path / "local" / "calls" / call / "report.json").read_text()
        assert (tmp_path / "ray" / "calls" / call / "report.json").read_text() == report_local
    assert (tmp_path / "ray" / "calls.csv").read_text() == (tmp_path / "local" / "calls.csv").read_text()


def test_ray_retries_a_dead_actors_call_once_and_stops_a_stuck_one(tmp_path, local_ray, monkeypatch):
    import ray.cloudpickle

    import tests.batch_faults as faults
    from turneval.batch import ray_runner

    ray.cloudpickle.register_pickle_by_value(faults)  # the actors need not import the tests
    monkeypatch.setattr(ray_runner, "_Worker", faults.FaultyRayWorker)
    calls = [Call(id=name, audio=str(tmp_path / f"{name}.wav")) for name in ("a", "crash", "b", "crash_once", "hang", "c")]
    outcomes = []
    ray_runner.run_on_ray(calls, ReportOptions(judge=False, predictor=False), False, 2, "auto", outcomes.append, call_timeout=3)
    by_id = {o.id: o for o in outcomes}
    assert len(outcomes) == 6 and sorted(by_id) == sorted(c.id for c in calls)  # each call once
    assert all(by_id[name].ok for name in ("a", "b", "c", "crash_once")), outcomes
    assert by_id["crash"].reason.startswith("the worker died while reporting this call (Ray: ") and "tried 2 times" in by_id["crash"].reason
    assert "--call-timeout" in by_id["hang"].reason


def test_sigterm_kills_the_ray_actors_and_exits_143(tmp_path, local_ray, monkeypatch):
    import os
    import signal
    import threading

    import ray.cloudpickle

    import tests.batch_faults as faults
    from turneval.batch import ray_runner
    from turneval.interrupts import exit_code, handling_signals

    ray.cloudpickle.register_pickle_by_value(faults)
    monkeypatch.setattr(ray_runner, "_Worker", faults.FaultyRayWorker)
    made = []

    class Recorded(ray_runner._Actors):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(ray_runner, "_Actors", Recorded)
    calls = [Call(id=f"hang{i}", audio=str(tmp_path / f"hang{i}.wav")) for i in range(2)]
    timer = threading.Timer(6.0, os.kill, (os.getpid(), signal.SIGTERM))  # as a process manager stops the batch
    with handling_signals():
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt) as stopped:
                ray_runner.run_on_ray(calls, ReportOptions(judge=False, predictor=False), False, 2, "auto", lambda o: None,
                                      call_timeout=0)
        finally:
            timer.cancel()
    assert exit_code(stopped.value) == 143
    for actor in made[0].pool:  # killed, and their hanging tasks with them
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(actor.ready.remote(), timeout=30)
