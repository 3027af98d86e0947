"""A package people can install: `python -m build` makes an sdist and a wheel that pass
`twine check`, and the wheel carries every file of the package folders (the bundled checkpoints,
the report's data, the evaluate modules with their copies). Installing the wheel into a clean
venv and reporting from it is `make wheel-check` (tools/wheel_check.sh: minutes, it installs torch)."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"turneval": "turneval", "modeling": "turneval/modeling", "dataset_scripts": "turneval/dataset_scripts",
           "metrics": "turneval/metrics", "training": "turneval/training", "checkpoints": "turneval/bundled"}
"""Repository folder -> where setup.py installs it."""


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # the wheel is built from the sdist (in a temporary folder), so a stale build/ cannot leak into it
    result = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return out


def test_sdist_and_wheel_pass_twine_check(dist: Path) -> None:
    files = sorted(dist.iterdir())
    assert [f.name for f in files] == ["turneval-0.1.0-py3-none-any.whl", "turneval-0.1.0.tar.gz"]
    result = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_wheel_carries_every_file_of_the_package_folders(dist: Path) -> None:
    names = set(zipfile.ZipFile(next(dist.glob("*.whl"))).namelist())
    tracked = subprocess.run(["git", "ls-files", *FOLDERS], capture_output=True, text=True, cwd=REPO, check=True).stdout.split()
    assert len(tracked) > 100
    missing = sorted(f for f in tracked if FOLDERS[f.split("/")[0]] + f[len(f.split("/")[0]):] not in names)
    assert missing == [], f"setup.py's package_data leaves out {missing[:10]}"
    assert {n.split("/")[0] for n in names} == {"turneval", "turneval-0.1.0.dist-info"}
    for needed in ("turneval/data/report.schema.json", "turneval/bundled/turn_taking_judge_swb_revoiced/model.safetensors",
                   "turneval/metrics/turn_naturalness/turneval_scorer_discrimination.py"):
        assert needed in names


def test_wheel_declares_the_command_and_the_readme(dist: Path) -> None:
    wheel = zipfile.ZipFile(next(dist.glob("*.whl")))
    assert "turneval = turneval.cli:main" in wheel.read("turneval-0.1.0.dist-info/entry_points.txt").decode()
    metadata = wheel.read("turneval-0.1.0.dist-info/METADATA").decode()
    assert "Description-Content-Type: text/markdown" in metadata and "Requires-Dist: evaluate>=0.4.6" in metadata
