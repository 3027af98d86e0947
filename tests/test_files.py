"""Atomic writes: all or nothing, with ordinary file permissions."""
import os
import stat

import pytest

from turneval.dataset_scripts.files import atomic_path, atomic_write_text


def test_atomic_write_creates_readable_file(tmp_path):
    target = tmp_path / "out" / "report.json"
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_failed_write_leaves_nothing_behind(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash while writing")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
