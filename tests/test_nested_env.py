"""tests/_nested_env.py: a nested virtual environment sees the packages of the interpreter running
pytest (system-wide or a virtual environment), not those of the base interpreter."""
from __future__ import annotations

import subprocess

import pytest

from tests._nested_env import nested_venv, running_site_dirs


def test_nested_environment_imports_what_this_interpreter_imports(tmp_path):
    python = nested_venv(tmp_path / "venv", with_pip=False)
    # pytest is installed where this run's packages are; from a virtual environment the base
    # interpreter may lack it or hold another copy, which system_site_packages would have given
    script = "import pytest, sys; print(pytest.__file__); print(sys.prefix)"
    found = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr[-2000:]
    module_file, prefix = found.stdout.split()
    assert module_file == pytest.__file__
    assert prefix == str(tmp_path / "venv"), "the nested interpreter must be the new environment's own"


def test_site_directories_come_without_repeats():
    dirs = running_site_dirs()
    assert dirs and len(dirs) == len(set(dirs))
    assert any(pytest.__file__.startswith(d) for d in dirs)
