"""No module of the project is named like a standard-library module: run from inside its folder
(``python`` puts the script's folder first on ``sys.path``), such a file hides the standard
library's module (``metrics/statistics.py`` once broke ``from statistics import NormalDist``)."""
from __future__ import annotations

import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("turneval", "modeling", "dataset_scripts", "metrics", "training", "checkpoints", "space")
"""The folders setup.py installs (and the Space's), evaluate module folders included."""


def stdlib_clashes(root: Path) -> list[str]:
    """Module files and package folders under ``root`` named like a standard-library module."""
    clashes = []
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        name = path.stem if path.suffix == ".py" else path.name if (path / "__init__.py").is_file() else None
        if name in sys.stdlib_module_names:
            clashes.append(str(path.relative_to(root.parent)))
    return clashes


def test_no_module_is_named_like_the_standard_library() -> None:
    clashes = [c for folder in PACKAGE_FOLDERS for c in stdlib_clashes(REPO / folder)]
    assert clashes == [], f"rename these (they hide the standard library's modules): {clashes}"


def test_the_check_finds_a_clash(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "email").mkdir(parents=True)
    (tmp_path / "pkg" / "email" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "statistics.py").write_text("")
    (tmp_path / "pkg" / "turn_statistics.py").write_text("")
    assert stdlib_clashes(tmp_path / "pkg") == ["pkg/email", "pkg/statistics.py"]
