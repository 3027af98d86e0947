"""The paper's window mode with a frozen encoder, measured beside the cached causal modes.

Window mode (Talking Turns A.3) runs the bidirectional encoder over a window that ends at the
end of chunk t and reads its last frame: one encoder pass per prediction, so training it on a
CPU means a sample of examples. This script encodes class-balanced training examples and a
class-balanced sample of validation chunks (weighted back to the natural distribution) once, trains the layer weights and
the linear head on the cached last-frame states, and reports the validation ROC-AUC, so the
modes compare on the same footing as ``train_judge_cached`` (same backbone, same data).

    python benchmarks/experiments/judge_window_mode.py --train /work/cache/revoice/train:train \
        --validation /work/cache/revoice/val:validation --context_s 10 --per_class 300 --n_val 1500
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from turneval.training.evaluate_judge import _split_source, conversation_audio


@torch.no_grad()
def last_frame_states(judge, rows: Sequence[dict[str, Any]], picks: Sequence[tuple[int, int]], batch_size: int = 8) -> np.ndarray:
    """All hidden states ``[N, L+1, d]`` at the last frame of the window ending at chunk t."""
    spc = judge.config.samples_per_chunk
    width = judge.config.context_chunks * spc
    audio = {}
    out = []
    for i in range(0, len(picks), batch_size):
        windows = []
        for conv, t in picks[i : i + batch_size]:
            if conv not in audio:
                audio[conv] = np.pad(conversation_audio(rows[conv]), (width, 0))
            end = (t + 1) * spc + width
            windows.append(torch.from_numpy(np.ascontiguousarray(audio[conv][end - width : end], dtype=np.float32)))
        batch = torch.stack(windows)
        features = judge.log_mel(batch, causal=False)
        states = judge.encoder(features, causal=False)
        out.append(torch.stack([s[:, -1] for s in states], dim=1).numpy())
    return np.concatenate(out)


def pick_examples(rows: Sequence[dict[str, Any]], rng: np.random.Generator, per_class: int) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Class-balanced (conversation, t) pairs, the label of chunk t + 1, and per-example weights
    (natural count / sampled count of its class) that make weighted metrics estimate the
    natural-distribution ones with far fewer encoder passes."""
    pairs, labels = [], []
    for c, row in enumerate(rows):
        lab = np.asarray(row["labels"], dtype=np.int64)
        for t in range(len(lab) - 1):
            if lab[t + 1] >= 0:
                pairs.append((c, t))
                labels.append(lab[t + 1])
    pairs_arr, labels_arr = np.asarray(pairs), np.asarray(labels)
    chosen = np.sort(np.concatenate([rng.choice(np.flatnonzero(labels_arr == k), size=min(per_class, int((labels_arr == k).sum())), replace=False)
                                     for k in range(5) if (labels_arr == k).any()]))
    natural = np.bincount(labels_arr, minlength=5).astype(float)
    sampled = np.bincount(labels_arr[chosen], minlength=5).astype(float)
    weights = natural[labels_arr[chosen]] / sampled[labels_arr[chosen]]
    return [tuple(map(int, p)) for p in pairs_arr[chosen]], labels_arr[chosen], weights


def weighted_roc_auc(labels: np.ndarray, probs: np.ndarray, weights: np.ndarray, label_names: Sequence[str]) -> dict[str, float]:
    """One-vs-rest ROC-AUC per class with sample weights, and the macro mean."""
    from sklearn.metrics import roc_auc_score

    table = {name: float(roc_auc_score(labels == k, probs[:, k], sample_weight=weights)) for k, name in enumerate(label_names)}
    table["overall"] = float(np.mean(list(table.values())))
    return table


def train_head(states: np.ndarray, labels: np.ndarray, steps: int = 300, lr: float = 0.01, seed: int = 0) -> tuple[torch.Tensor, torch.nn.Linear]:
    """Layer weights and a linear head on fixed states (full batch, AdamW)."""
    torch.manual_seed(seed)
    x = torch.from_numpy(states).float()
    y = torch.from_numpy(labels).long()
    weights = torch.zeros(x.shape[1], requires_grad=True)
    head = torch.nn.Linear(x.shape[2], 5)
    optimizer = torch.optim.AdamW([weights, *head.parameters()], lr=lr, weight_decay=0.0)
    for _ in range(steps):
        pooled = torch.einsum("l,bld->bd", torch.softmax(weights, 0), x)
        loss = F.cross_entropy(head(pooled), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return weights.detach(), head


def causal_at_picks(judge, rows: Sequence[dict[str, Any]], picks: Sequence[tuple[int, int]]) -> np.ndarray:
    """A judge's ``score`` rows at the picked (conversation, t): the same examples, scored the
    way ``turneval report`` scores them."""
    by_conv: dict[int, np.ndarray] = {}
    out = []
    for conv, t in picks:
        if conv not in by_conv:
            by_conv[conv] = judge.score(conversation_audio(rows[conv])).probabilities
        probs = by_conv[conv]
        out.append(probs[min(t, len(probs) - 1)])
    return np.asarray(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Frozen window mode (the paper's mode) on a sample of examples.")
    parser.add_argument("--train", required=True, help="SOURCE:SPLIT")
    parser.add_argument("--validation", required=True, help="SOURCE:SPLIT")
    parser.add_argument("--backbone", default="tiny.en")
    parser.add_argument("--context_s", type=float, default=10.0)
    parser.add_argument("--per_class", type=int, default=300)
    parser.add_argument("--val_per_class", type=int, default=200)
    parser.add_argument("--cache_dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="JSON file for the result")
    parser.add_argument("--judges", nargs="*", default=[], help="judge checkpoints to score on the same validation picks")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    from turneval.modeling.whisper_conversion import judge_from_whisper
    from turneval.training.judge_data import load_chunk_rows

    judge = judge_from_whisper(args.backbone, context_mode="window", context_s=args.context_s).eval()
    rng = np.random.default_rng(args.seed)
    train_rows = load_chunk_rows(*_split_source(args.train), cache_dir=args.cache_dir)
    val_rows = load_chunk_rows(*_split_source(args.validation), cache_dir=args.cache_dir)
    cpu = time.process_time()
    train_picks, train_labels, _ = pick_examples(train_rows, rng, args.per_class)
    val_picks, val_labels, val_weights = pick_examples(val_rows, rng, args.val_per_class)
    train_states = last_frame_states(judge, train_rows, train_picks)
    val_states = last_frame_states(judge, val_rows, val_picks)
    encode_cpu = time.process_time() - cpu
    weights, head = train_head(train_states, train_labels, seed=args.seed)
    with torch.no_grad():
        pooled = torch.einsum("l,bld->bd", torch.softmax(weights, 0), torch.from_numpy(val_states).float())
        probs = torch.softmax(head(pooled), -1).numpy()
    result = {"mode": "window (frozen, bidirectional, last frame)", "context_s": args.context_s, "train_examples": len(train_picks),
              "val_chunks": len(val_picks), "val_pairs": val_picks, "val_labels": val_labels.tolist(), "val_weights": val_weights.tolist(),
              "encode_cpu_s": round(encode_cpu, 1), "roc_auc": weighted_roc_auc(val_labels, probs, val_weights, judge.config.label_names)}
    for path in args.judges:
        from turneval.modeling.judge_loading import load_judge

        other = load_judge(path)
        result.setdefault("judges", {})[path] = weighted_roc_auc(val_labels, causal_at_picks(other, val_rows, val_picks), val_weights, other.config.label_names)
    if args.out:
        from pathlib import Path

        Path(args.out).write_text(json.dumps(result), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if not k.startswith("val_")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
