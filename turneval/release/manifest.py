"""``release.json``: every repo of a release folder with its id, kind, licence and file hashes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .plan import ReleaseError, RepoPlan


MANIFEST = "release.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def repo_files(folder: Path) -> dict[str, dict[str, Any]]:
    """Relative path -> sha256 and size of every file of a repo folder, sorted."""
    return {
        path.relative_to(folder).as_posix(): {"sha256": sha256_of(path), "size": path.stat().st_size}
        for path in sorted(folder.rglob("*")) if path.is_file()
    }


def repo_entry(plan: RepoPlan, folder: Path) -> dict[str, Any]:
    """One repo of ``release.json``."""
    return {
        "repo_id": plan.repo_id,
        "repo_type": plan.repo_type,
        "kind": plan.kind,
        "licence": plan.licence,
        "folder": plan.folder,
        **({"sources": list(plan.sources)} if plan.sources else {}),
        "files": repo_files(folder),
    }


def read_manifest(release: Path) -> dict[str, Any]:
    """The ``release.json`` of a release folder; raises naming the file."""
    path = Path(release) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ReleaseError(f"{path}: not a release manifest ({err}); write the release with `turneval release --out`") from None


def check_files(release: Path, manifest: dict[str, Any]) -> None:
    """Raise ReleaseError when a repo folder's files differ from what ``release.json`` lists."""
    for repo in manifest["repos"]:
        found = repo_files(Path(release) / repo["folder"])
        if found != repo["files"]:
            changed = sorted(set(found) ^ set(repo["files"]) | {k for k in found if found[k] != repo["files"].get(k)})
            raise ReleaseError(f"{Path(release) / repo['folder']}: files differ from {MANIFEST} ({', '.join(changed[:5])}); write the release again")
