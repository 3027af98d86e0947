"""Write a whole release folder: every repo of the plan, then ``release.json``.

The folder is written beside its target and renamed into place at the end, so a failed
release leaves nothing half-written; an existing folder is replaced only when it holds a
``release.json`` (a release written before).
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from .manifest import MANIFEST, repo_entry
from .plan import ReleaseError, RepoPlan


def _writers(plans: list[RepoPlan], real_root: str | Path | None, questions_per_class: int, scratch: Path) -> dict[str, Callable[[RepoPlan, Path], Path]]:
    from .cards import ReleaseLinks
    from .dataset_repo import read_sources, write_dataset_repo
    from .model_repo import write_model_repo
    from .space_repos import write_demo_space, write_metric_space

    conversations: dict[tuple[str, ...], dict[str, list]] = {}
    links = ReleaseLinks.of(plans)  # a card's relative links point at the repos of this release

    def model(plan: RepoPlan, out: Path) -> Path:
        return write_model_repo(plan, out, links)

    def dataset(plan: RepoPlan, out: Path) -> Path:
        if plan.sources not in conversations:  # read once for the three data sets
            conversations[plan.sources] = read_sources(plan.sources, real_root, scratch)
        return write_dataset_repo(plan, out, conversations[plan.sources], questions_per_class=questions_per_class, links=links)

    return {"model": model, "dataset": dataset, "metric": write_metric_space, "demo": write_demo_space}


def write_release(
    plans: list[RepoPlan],
    out: str | Path,
    *,
    real_root: str | Path | None = None,
    questions_per_class: int | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Write every repo of ``plans`` under ``out`` and ``out/release.json``; returns the manifest."""
    from .dataset_repo import QUESTIONS_PER_CLASS

    out = Path(out).resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).is_file())):
        raise ReleaseError(f"{out}: exists and holds no {MANIFEST}; choose an empty or new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    scratch = tempfile.TemporaryDirectory(prefix="turneval-release-sources-")
    writers = _writers(plans, real_root, questions_per_class or QUESTIONS_PER_CLASS, Path(scratch.name))
    try:
        repos = []
        for plan in plans:
            progress(f"writing {plan.repo_type} {plan.repo_id}")
            folder = writers[plan.kind](plan, work / plan.folder)
            repos.append(repo_entry(plan, folder))
        org = plans[0].repo_id.split("/")[0] if plans else ""
        manifest = {"org": org, "repos": repos}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        scratch.cleanup()
    return manifest
