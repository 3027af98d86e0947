"""One checkpoint resolver (turneval.checkpoints): bundled, environment, folder, Hub id; a wheel finds them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests._nested_env import nested_venv
from tests.test_switchboard_benchmarks import _load
from turneval import checkpoints
from turneval.checkpoints import (
    BUNDLED,
    CheckpointNotFoundError,
    bundled_checkpoint,
    bundled_root,
    default_checkpoint,
    resolve_checkpoint,
)


def test_both_models_are_bundled():
    for kind in BUNDLED:
        folder = bundled_checkpoint(kind)
        assert folder is not None and (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()


def test_order_explicit_then_environment_then_bundled(tmp_path, monkeypatch):
    monkeypatch.delenv("TURNEVAL_JUDGE", raising=False)
    assert default_checkpoint("judge") == bundled_checkpoint("judge")
    monkeypatch.setenv("TURNEVAL_JUDGE", str(tmp_path))
    assert default_checkpoint("judge") == tmp_path
    assert resolve_checkpoint("judge") == tmp_path
    explicit = tmp_path / "mine"
    explicit.mkdir()
    assert resolve_checkpoint("judge", explicit) == explicit


def test_missing_folder_and_unknown_kind_say_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(CheckpointNotFoundError, match=r"predictor checkpoint .*nope: no such folder; use another"):
        resolve_checkpoint("predictor", tmp_path / "nope", hint="use another")
    monkeypatch.setenv("TURNEVAL_PREDICTOR", str(tmp_path / "gone"))
    with pytest.raises(CheckpointNotFoundError, match=r"\$TURNEVAL_PREDICTOR .*gone: no such folder; unset it"):
        default_checkpoint("predictor")
    with pytest.raises(ValueError, match="unknown model kind 'vad'"):
        resolve_checkpoint("vad")


def test_a_bundled_checkpoint_is_found_by_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no such folder here: the name means the bundled one
    folder = resolve_checkpoint("predictor", "future_activity_predictor_words")
    assert folder == bundled_root() / "future_activity_predictor_words" and (folder / "config.json").is_file()
    with pytest.raises(CheckpointNotFoundError, match="future_activity_predictor_demo: no such folder"):
        resolve_checkpoint("predictor", "future_activity_predictor_demo")  # an earlier generation: not shipped


def test_hub_id_offline_uses_only_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert checkpoints.is_hub_id("someone/judge-xl") and not checkpoints.is_hub_id(str(tmp_path))
    with pytest.raises(CheckpointNotFoundError, match="someone/judge-xl: no such folder, and as a Hugging Face Hub id"):
        resolve_checkpoint("judge", "someone/judge-xl")


def test_hub_ids_are_never_downloaded_even_online(monkeypatch):
    import huggingface_hub

    calls = []

    def fake_snapshot_download(repo_id, **kwargs):
        calls.append(kwargs)
        raise FileNotFoundError("not in the cache")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    with pytest.raises(CheckpointNotFoundError, match="hf download someone/judge-xl"):
        resolve_checkpoint("judge", "someone/judge-xl")
    assert calls == [{"local_files_only": True}]


def test_sync_code_copies_rewrites_a_stale_copy(tmp_path):
    """tools/sync_checkpoints.py (make sync-checkpoints), the developer tool beside the resolver."""
    sync = _load("sync_checkpoints", folder="tools")
    assert sync.sync_code_copies() == []  # the bundled copies match modeling/ (tests/test_package.py too)
    kind = "predictor"
    stale = tmp_path / BUNDLED[kind]
    shutil.copytree(bundled_checkpoint(kind), stale, ignore=shutil.ignore_patterns("*.safetensors"))
    code = sorted(stale.glob("*.py"))[0]
    code.write_text("# stale\n")
    assert sync.sync_code_copies([tmp_path]) == [code]
    assert code.read_text() != "# stale\n"


def test_wheel_install_finds_bundled_checkpoints_and_runs_the_report(repo_root, tmp_path):
    """A non-editable install (a wheel in a fresh virtual environment) runs `turneval report` offline."""
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(repo_root)],
        capture_output=True, text=True, timeout=600,
    )
    if build.returncode != 0 and "bdist_wheel" in build.stderr:  # no `wheel` package here: build isolated
        build = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(repo_root)],
            capture_output=True, text=True, timeout=600,
        )
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next(dist.glob("turneval-*.whl"))
    env_dir = tmp_path / "venv"
    python = nested_venv(env_dir)  # dependencies come from the interpreter running this test
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import turneval, turneval.checkpoints as c; print(turneval.__file__); print(c.bundled_checkpoint('judge')); print(c.bundled_checkpoint('predictor'))"],
        capture_output=True, text=True, timeout=120, cwd=outside,
    )
    assert where.returncode == 0, where.stderr[-3000:]
    for line in where.stdout.split():
        assert line.startswith(str(env_dir)), f"not from the wheel: {line}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("TURNEVAL_JUDGE", None), env.pop("TURNEVAL_PREDICTOR", None)
    shutil.copy(repo_root / "examples" / "cascaded_like.wav", outside)
    run = subprocess.run(
        [str(env_dir / "bin" / "turneval"), "report", "cascaded_like.wav", "--system-channel", "1", "--out", "out", "--quiet"],
        capture_output=True, text=True, timeout=900, cwd=outside, env=env,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    report = (outside / "out" / "report.json").read_text()
    assert '"naturalness_score"' in report and '"agreement"' in report
