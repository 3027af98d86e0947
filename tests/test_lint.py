"""The tree stays clean under the lint rules of transformers (ruff.toml at the repository root)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest


def _ruff() -> list[str]:
    if shutil.which("ruff"):
        return ["ruff"]
    try:
        import ruff  # noqa: F401
    except ImportError:
        pytest.fail("ruff is not installed: it is in the test extras (pip install -e '.[test]')")
    return [sys.executable, "-m", "ruff"]


def test_tree_is_clean_under_ruff(repo_root):
    result = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=repo_root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_ruff_finds_a_problem(tmp_path, repo_root):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys\n\nx = 1\n", encoding="utf-8")  # unused imports
    result = subprocess.run([*_ruff(), "check", "--no-cache", "--config", str(repo_root / "ruff.toml"), str(bad)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "F401" in result.stdout
