"""The Switchboard benchmarks (benchmarks/turn_end_baselines.py, benchmarks/switchboard_tables.py)
end to end on the one-call fixture, and their skip when the data is absent."""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SWB = Path(__file__).parent / "data" / "readers" / "switchboard"


def _load(name: str):
    if str(REPO / "benchmarks") not in sys.path:
        sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location(f"swb_bench_{name}", REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """The fixture call sw0001 in the archive's folder layout, in every split."""
    call = tmp_path / "ms98" / "00" / "0001"
    call.mkdir(parents=True)
    for f in SWB.glob("*.text"):
        shutil.copy(f, call / f.name)
    splits = tmp_path / "splits"
    splits.mkdir()
    for name in ("train", "val", "test"):
        (splits / f"{name}.txt").write_text("0001\n", encoding="utf-8")
    return tmp_path / "ms98", splits


def test_turn_end_baselines_cli(corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture):
    bench = _load("turn_end_baselines")
    out = tmp_path / "result.json"
    saved = tmp_path / "decisions"
    argv = ["--swb-root", str(corpus[0]), "--splits", str(corpus[1]), "--train-calls", "1", "--test-calls", "1",
            "--json", str(out), "--save-decisions", str(saved)]
    assert bench.main(argv) == 0
    printed = capsys.readouterr().out
    assert "| all IPUs | timing |" in printed and "0.667" in printed
    result = json.loads(out.read_text(encoding="utf-8"))
    timing = result["views"]["all IPUs"]["baselines"]["timing"]
    assert timing["n_train"] == timing["n_test"] == 4 and timing["shift_rate_test"] == 0.75
    assert 0.0 <= timing["roc_auc"] <= 1.0 and timing["anchor"] == 0.667
    lines = (saved / "all_IPUs_test1.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["label"] for line in lines] == ["shift", "hold", "shift", "shift"]


def test_benchmarks_skip_without_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture):
    helper = _load("_switchboard")
    monkeypatch.setenv(helper.ROOT_ENV, str(tmp_path / "missing"))
    assert helper.locate() is None
    assert "Switchboard ms98 word alignments not found" in capsys.readouterr().err
    bench = _load("turn_end_baselines")
    monkeypatch.setattr(bench, "locate", lambda *a: None)
    assert bench.run(quick=True) == []
