"""`make space` (space/assemble.py): the assembled Space folder installs into a fresh virtual
environment from its own requirements.txt (turneval from the bundled wheel) and serves the page."""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests._nested_env import nested_venv


REPO_ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 300

pytest.importorskip("gradio", reason="the space extra (gradio) is not installed")


def _assemble_module():
    spec = importlib.util.spec_from_file_location("turneval_space_assemble", REPO_ROOT / "space" / "assemble.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_requirements_name_the_bundled_wheel():
    text = _assemble_module().space_requirements("turneval-0.1.0-py3-none-any.whl")
    assert "./wheels/turneval-0.1.0-py3-none-any.whl" in text.splitlines()
    assert "turneval" not in [line.strip() for line in text.splitlines()]
    assert "gradio==" in text


def test_refuses_to_replace_a_folder_it_did_not_make(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    module = _assemble_module()
    with pytest.raises(module.AssembleError, match="not made by this script"):
        module.assemble(tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_assembled_space_installs_into_a_fresh_venv_and_serves_the_page(tmp_path):
    space = _assemble_module().assemble(tmp_path / "space")
    for name in ("app.py", "README.md", "requirements.txt", "examples/cascaded_like.wav", "examples/cascaded_like.json"):
        assert (space / name).is_file(), name
    wheel = next((space / "wheels").glob("turneval-*.whl"))
    assert f"./wheels/{wheel.name}" in (space / "requirements.txt").read_text()

    env_dir = tmp_path / "venv"
    python = nested_venv(env_dir)  # the pinned packages come from the interpreter running this test
    # --no-index: nothing is downloaded; every pin must be satisfied here and turneval come from the wheel
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "-r", "requirements.txt"],
                             capture_output=True, text=True, timeout=900, cwd=space)
    assert install.returncode == 0, install.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import turneval; print(turneval.__file__)"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert where.returncode == 0 and where.stdout.strip().startswith(str(env_dir)), where.stdout + where.stderr

    port = _free_port()
    work = tmp_path / "work"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "TURNEVAL_SPACE_DB": str(work / "answers.sqlite3"), "TURNEVAL_SPACE_CACHE": str(work / "cache"), "TURNEVAL_SPACE_WORK": str(work / "w")}
    env.pop("PYTHONPATH", None)
    env.pop("TURNEVAL_SPACE_EXAMPLES", None)
    server = subprocess.Popen([str(python), "app.py", "--host", "127.0.0.1", "--port", str(port)], cwd=space, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + START_TIMEOUT_S
        page = None
        while time.time() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    page = response.read().decode("utf-8", "replace")
                    break
            except OSError:
                time.sleep(1)
        assert page is not None, f"the assembled Space did not serve its page:\n{server.stdout.read()[-3000:] if server.poll() is not None else '(still starting)'}"
        assert "turneval: turn-taking evaluation" in page and "cascaded_like.wav" in page
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
