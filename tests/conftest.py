import os
import shutil
from pathlib import Path

import pytest


# Nothing may reach a hub during tests (no network here, and none in CI).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture()
def swb_one_call(tmp_path: Path) -> tuple[Path, Path]:
    """(ms98 folder, splits folder): the fixture call sw0001 in the archive's folder layout, in every split."""
    call = tmp_path / "ms98" / "00" / "0001"
    call.mkdir(parents=True)
    for f in (REPO_ROOT / "tests" / "data" / "readers" / "switchboard").glob("*.text"):
        shutil.copy(f, call / f.name)
    splits = tmp_path / "splits"
    splits.mkdir()
    for name in ("train", "val", "test"):
        (splits / f"{name}.txt").write_text("0001\n", encoding="utf-8")
    return tmp_path / "ms98", splits
