"""Every worked example in a docstring runs: one runner for the library modules and one for the
`evaluate` module files (whose examples load ``metrics/<name>`` from the repository root)."""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from tests.test_metric_modules import METRICS_DIR, REPO_ROOT, run_module_doctests


FOLDER_TO_PACKAGE = {"metrics": "turneval.metrics", "dataset_scripts": "turneval.dataset_scripts"}
"""The library folders whose docstring examples are cheap (no model loads), as setup.py maps them."""


def _library_modules() -> list[str]:
    names = []
    for folder, package in FOLDER_TO_PACKAGE.items():
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT / folder)
            if len(relative.parts) > 1 and (path.parent / f"{path.parent.name}.py").is_file():
                continue  # an evaluate module folder: its module runs below, its turneval_*.py copy modules run here
            if ">>> " in path.read_text(encoding="utf-8"):
                dotted = ".".join(relative.with_suffix("").parts)
                names.append(f"{package}.{dotted}".removesuffix(".__init__"))
    return names


def _evaluate_module_files() -> list[Path]:
    return sorted(p for p in METRICS_DIR.glob("*/*.py") if p.stem == p.parent.name)


def test_there_are_examples_to_run() -> None:
    assert len(_library_modules()) >= 8 and len(_evaluate_module_files()) >= 6


@pytest.mark.parametrize("name", _library_modules())
def test_library_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("path", _evaluate_module_files(), ids=lambda p: p.stem)
def test_evaluate_module_docstring_examples(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_module_doctests(path, monkeypatch)
    assert result.attempted >= 2, f"{path} should carry worked examples"
    assert result.failed == 0
