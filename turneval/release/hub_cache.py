"""A release laid out as a Hugging Face home folder, so that each repo loads by its id offline.

``write_cache(release, home)`` writes what the libraries would hold after a first online load:

- ``home/hub/``: the hub cache of huggingface_hub 2.x (``<type>s--ORG--NAME/blobs/<sha256>``,
  ``snapshots/<revision>/<path>`` linked to its blob, ``refs/main`` naming the revision), which
  ``from_pretrained`` and ``snapshot_download`` read under ``HF_HUB_OFFLINE=1``;
- ``home/datasets/``: each data set prepared by datasets' own Parquet builder from its snapshot
  (the card's YAML configs decide the files and splits). datasets 5 never reads the hub cache
  for a repo id when offline: ``load_dataset("ORG/NAME")`` falls back to this prepared copy;
- ``home/modules/evaluate_modules/``: each metric module as ``evaluate.load("ORG/NAME")``
  copies it after a download. evaluate 0.4.6 ignores ``HF_HUB_OFFLINE``: set
  ``HF_EVALUATE_OFFLINE=1`` and it falls back to this copy.

Use it with ``HF_HOME=home HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1``.
The revision of a repo is a hash of its file list (40 hex digits, like a commit id).
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from .manifest import check_files, read_manifest
from .plan import ReleaseError


OFFLINE_ENV: dict[str, str] = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
"""What a process sets, beside ``HF_HOME``, to load the cache written here without a network."""


def cache_env(home: str | Path) -> dict[str, str]:
    """The environment that points the Hugging Face libraries at ``home`` and keeps them offline."""
    home = Path(home).resolve()
    return {"HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"), **OFFLINE_ENV}


def revision_of(repo: dict[str, Any]) -> str:
    """A repo's revision: sha1 of its sorted (path, sha256) list."""
    listing = "\n".join(f"{path} {meta['sha256']}" for path, meta in sorted(repo["files"].items()))
    return hashlib.sha1(listing.encode("utf-8")).hexdigest()


def write_snapshot(release: Path, repo: dict[str, Any], hub: Path) -> Path:
    """One repo in the hub cache layout; returns its snapshot folder."""
    org, name = repo["repo_id"].split("/")
    root = hub / f"{repo['repo_type']}s--{org}--{name}"
    if root.exists():
        shutil.rmtree(root)
    revision = revision_of(repo)
    snapshot = root / "snapshots" / revision
    (root / "blobs").mkdir(parents=True)
    for path, meta in repo["files"].items():
        blob = root / "blobs" / meta["sha256"]
        if not blob.exists():
            shutil.copyfile(release / repo["folder"] / path, blob)
        link = snapshot / path
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot


def prepare_dataset(repo_id: str, snapshot: Path, cache_dir: Path) -> None:
    """The data set of ``snapshot`` prepared in datasets' cache as ``load_dataset(repo_id)`` leaves it:
    ``<cache_dir>/<org>___<name>/<config>/<version>/<revision>/``."""
    import tempfile

    from datasets.load import dataset_module_factory, get_dataset_builder_class

    org, name = repo_id.split("/")
    target = cache_dir / f"{org}___{name}"
    module = dataset_module_factory(str(snapshot))
    kwargs = dict(module.builder_kwargs)
    kwargs["dataset_name"] = name
    config_name = kwargs.pop("config_name", module.builder_configs_parameters.default_config_name)
    builder_cls = get_dataset_builder_class(module, dataset_name=name)
    info = module.dataset_infos.get(config_name) if module.dataset_infos else None
    cache_dir.mkdir(parents=True, exist_ok=True)
    # datasets accepts a repo_id only with hf:// data files, so the copy is prepared under the bare
    # name and moved to the folder the repo id selects
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".prepare-") as work:
        builder = builder_cls(cache_dir=work, config_name=config_name, hash=snapshot.name, info=info, **kwargs)
        builder.download_and_prepare()
        if target.exists():
            shutil.rmtree(target)
        (Path(work) / name).rename(target)


def install_metric(repo_id: str, snapshot: Path, modules_cache: Path) -> None:
    """The metric module of ``snapshot``, with the files it imports, in evaluate's modules cache as a
    download leaves it."""
    from turneval.evaluate_modules import install_module

    script = snapshot / f"{repo_id.split('/')[1]}.py"
    if not script.is_file():
        raise ReleaseError(f"{script}: the metric Space has no module named like the repo; evaluate.load({repo_id!r}) would not find it")
    install_module(script, repo_id, modules_cache)


def write_cache(release: str | Path, home: str | Path) -> list[str]:
    """Lay out every repo of the release folder ``release`` under the Hugging Face home ``home``.

    Returns the repo ids written. Files are checked against ``release.json`` first.
    """
    release, home = Path(release), Path(home).resolve()
    manifest = read_manifest(release)
    check_files(release, manifest)
    written = []
    for repo in manifest["repos"]:
        snapshot = write_snapshot(release, repo, home / "hub")
        if repo["kind"] == "dataset":
            prepare_dataset(repo["repo_id"], snapshot, home / "datasets")
        elif repo["kind"] == "metric":
            install_metric(repo["repo_id"], snapshot, home / "modules")
        written.append(repo["repo_id"])
    return written
