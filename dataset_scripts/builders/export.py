"""Parquet export of built datasets, readable with ``load_dataset("parquet", ...)``."""
from __future__ import annotations

from pathlib import Path

import datasets

from ..files import atomic_path


def export_parquet(dataset: datasets.Dataset | datasets.DatasetDict, out_dir: str | Path) -> dict[str, Path]:
    """Write each split to ``<out_dir>/<split>.parquet`` (atomically); returns split -> path.

    The feature types (class labels included) travel in the Parquet metadata, so
    ``load_dataset("parquet", data_files={...})`` restores them.
    """
    out_dir = Path(out_dir)
    splits = dataset if isinstance(dataset, datasets.DatasetDict) else {"train": dataset}
    written = {}
    for name, split in splits.items():
        target = out_dir / f"{name}.parquet"
        with atomic_path(target) as tmp:
            split.to_parquet(str(tmp))
        written[name] = target
    return written


def load_parquet(out_dir: str | Path, cache_dir: str | Path | None = None) -> datasets.DatasetDict:
    """Read back what :func:`export_parquet` wrote."""
    files = {p.stem: str(p) for p in sorted(Path(out_dir).glob("*.parquet"))}
    if not files:
        raise FileNotFoundError(f"no .parquet files in {out_dir}")
    return datasets.load_dataset("parquet", data_files=files, cache_dir=None if cache_dir is None else str(cache_dir))
