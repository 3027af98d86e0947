"""turneval batch --ray: the same per-call figures as local workers, on a local Ray instance on loopback."""
from __future__ import annotations

import json

import pytest

from tests.test_batch import crop
from turneval.cli import main


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
