"""Data plumbing shared by the judge's training and evaluation scripts.

The judge trains and evaluates on turn_taking_chunks rows (one per conversation: audio path
and 40 ms labels), given either as a parquet export (``builders.export.export_parquet``) or
as a dialogue manifest that the TurnTakingChunks builder turns into rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch.utils.data import Dataset

from turneval.dataset_scripts.sampler import BalancedChunkSampler


ROW_COLUMNS = ("conversation_id", "audio_path", "labels")


def load_chunk_rows(source: str | Path, split: str, cache_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """turn_taking_chunks rows of one split, from a parquet folder or a dialogue manifest.

    Args:
        source: a folder of ``<split>.parquet`` files, a ``manifest.jsonl``, or a folder with one.
        split: e.g. ``"train"``, ``"validation"``, ``"test"``.
        cache_dir: where the builder prepares its Arrow files (manifest input only).
    """
    from turneval.dataset_scripts.builders.export import load_parquet

    path = Path(source)
    if path.is_dir() and list(path.glob("*.parquet")):
        splits = load_parquet(path, cache_dir=cache_dir)
    elif path.suffix == ".jsonl" or (path / "manifest.jsonl").is_file():
        from turneval.dataset_scripts.builders.turn_taking_chunks import TurnTakingChunks

        manifest = path if path.suffix == ".jsonl" else path / "manifest.jsonl"
        if not manifest.is_file():
            raise FileNotFoundError(f"dialogue manifest {manifest} not found")
        stat = manifest.stat()  # a manifest that grows (corpora written excerpt by excerpt) is rebuilt
        builder = TurnTakingChunks(cache_dir=None if cache_dir is None else str(cache_dir), manifest=str(manifest.resolve()),
                                   manifest_version=f"{stat.st_size}-{stat.st_mtime_ns}")
        builder.download_and_prepare()
        splits = builder.as_dataset()
    else:
        raise FileNotFoundError(f"{path}: expected a folder of turn_taking_chunks parquet files or a dialogue manifest.jsonl")
    if split not in splits:
        raise KeyError(f"{path} has no split {split!r} (it has {sorted(splits)})")
    dataset = splits[split]
    missing = [c for c in ROW_COLUMNS if c not in dataset.column_names]
    if missing:
        raise KeyError(f"{path} split {split!r} lacks the columns {missing}; is it a turn_taking_chunks export?")
    return [dict(row) for row in dataset.select_columns([c for c in dataset.column_names if c in (*ROW_COLUMNS, "system_speaker", "floor", "duration")])]


class EpochExamples(Dataset):
    """One epoch of a BalancedChunkSampler's share as a map-style dataset, from ``start`` on.

    Map-style so that DataLoader workers can read windows in parallel and a resumed run can
    start exactly where the interrupted one stopped (the example list depends only on seed and
    epoch).
    """

    def __init__(self, sampler: BalancedChunkSampler, epoch: int, start: int = 0, window_labels: bool = False, chunk_samples: int = 640) -> None:
        self.sampler = sampler
        self.indices = sampler.rank_indices(epoch)[start:]
        self.window_labels = window_labels
        self.chunk_samples = chunk_samples

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> dict[str, Any]:
        conv, t = self.indices[i]
        item = self.sampler.example(conv, t)
        item.pop("conversation_id")
        if self.window_labels:
            item["window_labels"] = torch.from_numpy(window_labels(self.sampler.conversations[conv].labels, t, self.sampler.n_samples // self.chunk_samples))
        return item


def window_labels(labels: np.ndarray, chunk_index: int, n_chunks: int) -> np.ndarray:
    """Targets of every prediction of a causal window that ends at the end of chunk t.

    Prediction j of the window is made at the end of chunk ``t - n_chunks + 1 + j`` and is about
    the next chunk; predictions made before the conversation starts are -100 (ignored).
    """
    ends = np.arange(chunk_index - n_chunks + 1, chunk_index + 1)
    out = np.full(n_chunks, -100, dtype=np.int64)
    valid = (ends >= 0) & (ends + 1 < len(labels))
    out[valid] = np.asarray(labels)[ends[valid] + 1]
    return out


def class_weights(rows: Sequence[dict[str, Any]], n_classes: int) -> torch.Tensor:
    """Inverse-frequency class weights (mean 1) over all chunks, for all-chunk causal training."""
    counts = np.zeros(n_classes)
    for row in rows:
        counts += np.bincount(np.asarray(row["labels"], dtype=np.int64), minlength=n_classes)[:n_classes]
    weights = np.where(counts > 0, counts.sum() / np.maximum(counts, 1), 0.0)
    return torch.tensor(weights / weights[weights > 0].mean(), dtype=torch.float32)


__all__ = ["EpochExamples", "class_weights", "load_chunk_rows", "window_labels"]
