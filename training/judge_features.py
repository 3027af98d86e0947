"""Cache the frozen part of the judge's encoder once, so training epochs are cheap on a CPU.

A causal judge's encoder frame j depends only on the audio of its window before 20 ms (j + 1),
so the hidden states of a fixed window never change while the lower layers stay frozen. This
module runs the frozen encoder once over fixed causal windows of every conversation and stores,
per conversation (one folder each, so an interrupted run resumes where it stopped):

* ``pred_states.npy`` ``[n_windows, n_layers + 1, n_chunks, d]`` float16: every hidden state
  (embeddings, then each layer; the last one layer-normed) at the prediction frames, one per
  40 ms chunk (what the weighted layer sum of a frozen judge reads);
* ``full_<k>.npy`` ``[n_windows, n_frames, d]`` float16 for each split ``k`` asked for: the
  output of layer k (0 = the convolutional embeddings) at every encoder frame: the input of
  trainable top layers k+1..L, which attend to every earlier frame;
* ``labels.npy`` ``[n_windows, n_chunks]`` int64: the target of prediction j of the window
  (the label of the chunk after it), -100 where there is none;
* ``next_speaker.npy`` ``[n_windows, n_chunks]`` int64: for predictions about a silent chunk
  of a pause, whether the turn changes hands when speech resumes (1) or not (0), else -100
  (:func:`~turneval.dataset_scripts.labels.next_speaker_targets`; caches of format 1 lack it);
* ``meta.json``: the conversation id, window starts (chunks) and the cache settings.

Windows of ``context_s`` start every ``context_s`` from each offset in ``offsets_s`` (a second
offset gives predictions a different amount of context); a last, partial window is dropped.
:class:`CachedFeatures` serves the windows of a split to a trainer
(``training/train_judge_cached.py``).

    python -m turneval.training.judge_features --data /work/cache/revoice/train \
        --split train --out /work/cache/judgemodel/features/train --splits 0 2
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from turneval.dataset_scripts.labels import next_speaker_targets
from turneval.training.evaluate_judge import conversation_audio


FORMAT_VERSION = 2


def window_starts(n_chunks: int, window_chunks: int, offsets: Sequence[int]) -> list[int]:
    """Start chunks of the whole windows of ``window_chunks`` that fit in ``n_chunks``.

    >>> window_starts(600, 250, [0, 125])
    [0, 250, 125]
    """
    starts: list[int] = []
    for offset in offsets:
        starts += list(range(int(offset), n_chunks - window_chunks + 1, window_chunks))
    return starts


def window_targets(labels: np.ndarray, start: int, window_chunks: int) -> np.ndarray:
    """Targets of a causal window's predictions: prediction j (made at the end of chunk
    ``start + j``) is about chunk ``start + j + 1``; -100 past the last labelled chunk or where
    the label is negative (ignored)."""
    ends = np.arange(start, start + window_chunks)
    out = np.full(window_chunks, -100, dtype=np.int64)
    valid = ends + 1 < len(labels)
    out[valid] = np.asarray(labels, dtype=np.int64)[ends[valid] + 1]
    out[out < 0] = -100
    return out


@torch.no_grad()
def encode_window_states(judge, windows: torch.Tensor) -> list[torch.Tensor]:
    """All hidden states ``[B, n_frames, d]`` of causal passes over ``windows`` ``[B, n]``."""
    features = judge.log_mel(windows, causal=True).to(judge.classifier.weight.dtype)
    return judge.encoder(features, causal=True)


def cache_conversation(judge, row: dict[str, Any], folder: Path, *, window_chunks: int, offsets: Sequence[int], splits: Sequence[int], batch_size: int = 4) -> int:
    """Encode one conversation's windows into ``folder``; return the number of windows."""
    spc = judge.config.samples_per_chunk
    frames_per_chunk = spc // 320
    audio = torch.from_numpy(np.ascontiguousarray(conversation_audio(row), dtype=np.float32))
    labels = np.asarray(row["labels"], dtype=np.int64)
    n_chunks = min(len(labels), audio.shape[0] // spc)
    starts = window_starts(n_chunks, window_chunks, offsets)
    pred, full = [], {k: [] for k in splits}
    for i in range(0, len(starts), batch_size):
        group = starts[i : i + batch_size]
        windows = torch.stack([audio[s * spc : (s + window_chunks) * spc] for s in group])
        states = encode_window_states(judge, windows)
        pred.append(torch.stack([s[:, frames_per_chunk - 1 :: frames_per_chunk] for s in states], dim=1).half().numpy())
        for k in splits:
            full[k].append(states[k].half().numpy())
    folder.mkdir(parents=True, exist_ok=True)
    d = judge.whisper_config.d_model
    n_states = judge.whisper_config.encoder_layers + 1
    frames = window_chunks * frames_per_chunk
    np.save(folder / "pred_states.npy", np.concatenate(pred) if pred else np.zeros((0, n_states, window_chunks, d), np.float16))
    for k in splits:
        np.save(folder / f"full_{k}.npy", np.concatenate(full[k]) if full[k] else np.zeros((0, frames, d), np.float16))
    targets = np.stack([window_targets(labels, s, window_chunks) for s in starts]) if starts else np.zeros((0, window_chunks), np.int64)
    following = next_speaker_targets(labels)
    next_speaker = np.stack([window_targets(following, s, window_chunks) for s in starts]) if starts else np.zeros((0, window_chunks), np.int64)
    np.save(folder / "labels.npy", targets)
    np.save(folder / "next_speaker.npy", next_speaker)
    meta = {"conversation_id": str(row["conversation_id"]), "window_starts": starts, "n_chunks": int(n_chunks),
            "chunk_labels_counts": np.bincount(labels[labels >= 0], minlength=5).tolist()}
    # meta.json last: its presence marks a complete entry (an interrupted one is redone)
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return len(starts)


def base_judge(backbone: str = "tiny.en", context_s: float = 10.0, cache: str | None = None):
    """The causal judge whose frozen encoder the cache holds: a TurnTakingJudge checkpoint
    folder (its weights, in causal mode) or a Whisper backbone (``judge_from_whisper``)."""
    config_file = Path(backbone) / "config.json"
    overrides = {"context_mode": "causal", "context_s": context_s, "stream_hop_s": context_s / 2}
    if config_file.is_file() and json.loads(config_file.read_text(encoding="utf-8")).get("model_type") == "turn_taking_judge":
        from turneval.modeling.judge_loading import load_judge

        return load_judge(backbone, **overrides)
    from turneval.modeling.whisper_conversion import judge_from_whisper

    return judge_from_whisper(backbone, cache=cache, **overrides)


@dataclass(frozen=True)
class CacheLayout:
    """What a cache holds: windows of ``context_s`` from each of ``offsets_s``, the full-frame
    outputs of the encoder layers ``splits``, of the encoder of ``backbone`` (its name, for
    the settings file)."""

    context_s: float = 10.0
    offsets_s: Sequence[float] = (0.0,)
    splits: Sequence[int] = (0,)
    backbone: str | None = None


def cache_settings(judge, layout: CacheLayout) -> dict[str, Any]:
    """The settings a cache records, so that a resumed run refuses a different layout or judge."""
    return {
        "format_version": FORMAT_VERSION,
        "backbone": layout.backbone,
        "context_s": float(layout.context_s),
        "offsets_s": [float(o) for o in layout.offsets_s],
        "splits": sorted(int(k) for k in layout.splits),
        "backbone_source": judge.config.backbone_source,
        "encoder_config": judge.config.encoder_config,
        "log_mel_dynamic_range": judge.config.log_mel_dynamic_range,
    }


def build_cache(
    judge, rows: Sequence[dict[str, Any]], out: str | Path, *, layout: CacheLayout = CacheLayout(), batch_size: int = 4, log=print
) -> Path:
    """Cache every conversation of ``rows`` under ``out`` (resumable: done ones are skipped)."""
    out = Path(out)
    chunk_s = judge.config.chunk_s
    window_chunks = int(round(layout.context_s / chunk_s))
    offsets = [int(round(o / chunk_s)) for o in layout.offsets_s]
    splits = layout.splits
    n_layers = judge.whisper_config.encoder_layers
    bad = [k for k in splits if not 0 <= k <= n_layers]
    if bad:
        raise ValueError(f"splits {bad} out of range 0..{n_layers} (layer outputs of a {n_layers}-layer encoder)")
    settings = cache_settings(judge, layout)
    out.mkdir(parents=True, exist_ok=True)
    settings_file = out / "cache_settings.json"
    if settings_file.is_file():
        old = json.loads(settings_file.read_text(encoding="utf-8"))
        if old != json.loads(json.dumps(settings)):
            raise ValueError(f"{settings_file}: the cache was made with other settings ({old}); use another --out or delete it")
    else:
        settings_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    judge.eval()
    started, done = time.time(), 0
    for i, row in enumerate(rows):
        folder = out / _safe_name(str(row["conversation_id"]))
        if (folder / "meta.json").is_file():
            continue
        done += cache_conversation(judge, row, folder, window_chunks=window_chunks, offsets=offsets, splits=splits, batch_size=batch_size)
        if log and (i + 1) % 10 == 0:
            log(f"cached {i + 1}/{len(rows)} conversations ({done} new windows, {time.time() - started:.0f} s)")
    return out


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


class CachedFeatures(torch.utils.data.Dataset):
    """The cached windows of one split: ``pred_states``, ``full_states`` (when a split layer is
    given), ``labels`` and ``next_speaker`` per window.

    ``folder`` may be several caches of the same backbone and window length (e.g. a corpus
    cached in parts, with different offsets); their windows are served together. Arrays are
    memory-mapped, so a corpus larger than memory trains fine.
    """

    def __init__(self, folder: str | Path | Sequence[str | Path], split_layer: int | None = None) -> None:
        folders = [Path(f) for f in ([folder] if isinstance(folder, (str, Path)) else folder)]
        self.folder = folders[0]
        self.settings = {}
        for one in folders:
            settings_file = one / "cache_settings.json"
            if not settings_file.is_file():
                raise FileNotFoundError(f"{settings_file} is missing: not a judge feature cache (build one with judge_features)")
            settings = json.loads(settings_file.read_text(encoding="utf-8"))
            if self.settings and any(settings[k] != self.settings[k] for k in ("context_s", "encoder_config", "backbone_source")):
                raise ValueError(f"{one}: cached with another backbone or window than {self.folder}; train on caches of one kind")
            n_layers = settings["encoder_config"]["encoder_layers"]
            if split_layer is not None and split_layer < n_layers and split_layer not in settings["splits"]:
                raise ValueError(f"{one}: no full-frame states of layer {split_layer} cached (have {settings['splits']})")
            self.settings = self.settings or settings
        self.split_layer = split_layer
        self.n_layers = n_layers
        self.entries: list[tuple[dict, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]] = []
        for meta_file in sorted(m for one in folders for m in one.glob("*/meta.json")):
            conv = meta_file.parent
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            if not meta["window_starts"]:
                continue
            pred = np.load(conv / "pred_states.npy", mmap_mode="r")
            full = np.load(conv / f"full_{split_layer}.npy", mmap_mode="r") if split_layer is not None and split_layer < n_layers else None
            labels = np.load(conv / "labels.npy")
            following = np.load(conv / "next_speaker.npy") if (conv / "next_speaker.npy").is_file() else np.full_like(labels, -100)
            self.entries.append((meta, pred, full, labels, following))
        self.index = [(c, w) for c, entry in enumerate(self.entries) for w in range(len(entry[0]["window_starts"]))]
        if not self.index:
            raise ValueError(f"{', '.join(map(str, folders))}: the cache holds no windows")

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        c, w = self.index[i]
        _meta, pred, full, labels, following = self.entries[c]
        item = {"pred_states": torch.from_numpy(np.asarray(pred[w], dtype=np.float32)), "labels": torch.from_numpy(labels[w]),
                "next_speaker": torch.from_numpy(following[w])}
        if full is not None:
            item["full_states"] = torch.from_numpy(np.asarray(full[w], dtype=np.float32))
        return item

    def label_counts(self, n_classes: int = 5) -> np.ndarray:
        """Counts of every chunk label of the cached conversations (the natural class prior)."""
        counts = np.zeros(n_classes)
        for meta, *_ in self.entries:
            counts += np.asarray(meta["chunk_labels_counts"][:n_classes], dtype=np.float64)
        return counts

    def target_counts(self, n_classes: int = 5) -> np.ndarray:
        """Counts of the cached window targets (what training sees)."""
        counts = np.zeros(n_classes)
        for _meta, _pred, _full, labels, _following in self.entries:
            valid = labels[labels >= 0]
            counts += np.bincount(valid, minlength=n_classes)[:n_classes]
        return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Cache the frozen judge encoder's hidden states of a corpus split.")
    parser.add_argument("--data", required=True, help="turn_taking_chunks parquet folder or dialogue manifest")
    parser.add_argument("--split", default="train")
    parser.add_argument("--out", required=True)
    parser.add_argument("--backbone", default="tiny.en", help="'tiny.en', a CTranslate2 model.bin, an HF Whisper folder or a judge checkpoint")
    parser.add_argument("--context_s", type=float, default=10.0)
    parser.add_argument("--offsets_s", type=float, nargs="+", default=[0.0])
    parser.add_argument("--splits", type=int, nargs="*", default=[0, 2], help="layers whose full-frame output is kept")
    parser.add_argument("--max_conversations", type=int)
    parser.add_argument("--cache_dir", help="datasets cache for manifest input")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from turneval.training.judge_data import load_chunk_rows

    judge = base_judge(args.backbone, args.context_s)
    rows = load_chunk_rows(args.data, args.split, args.cache_dir)
    if args.max_conversations:
        rows = rows[: args.max_conversations]
    started = time.process_time()
    layout = CacheLayout(context_s=args.context_s, offsets_s=args.offsets_s, splits=args.splits, backbone=args.backbone)
    build_cache(judge, rows, args.out, layout=layout)
    print(json.dumps({"out": args.out, "conversations": len(rows), "cpu_s": round(time.process_time() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CachedFeatures", "base_judge", "build_cache", "cache_conversation", "encode_window_states", "window_starts", "window_targets"]
