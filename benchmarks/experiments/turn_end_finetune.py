"""Fine-tune the judge's turn-end head end to end: its last encoder layer, layer norm and classifier.

:mod:`turneval.training.fit_turn_end_head` fits the head as a linear read of pooled states of the
*pretrained* encoder (ROC-AUC 0.784 on the Flite test split, 0.793 on val). This recipe keeps
that head's architecture and trains its top: the last of its own encoder layers (whose queries
are the last 0.5 s, attending over the whole 4 s window), the layer norm and the classifier,
with the installed head as the starting point. The layers below it (the judge's shared lower
layers and the head's first own layer) stay frozen, so their output is computed once per
decision and cached (``[frames, d_model]`` in float16, ~150 kB a decision).

    python benchmarks/experiments/turn_end_finetune.py --judge checkpoints/turn_taking_judge_swb_revoiced \
        --train REVOICE/train_part_1 REVOICE/train_part_2 --val REVOICE/val --eval test=REVOICE/test \
        --cache runs/turn_end_states --output_dir runs/turn_end_ft [--install]

Every epoch is scored on ``--val``; the epoch with the best validation ROC-AUC is kept (and with
``--install`` written into the judge, in place). The decisions, windows and timing features are
exactly the head fit's (:func:`~turneval.training.fit_turn_end_head.manifest_timing`), so the head
runs unchanged in the report.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.turn_end_decisions import DEFAULT_MIN_SILENCE_S as DECISION_DELAY_S
from turneval.metrics.intervals import roc_auc
from turneval.modeling.modeling_turn_taking_judge import (
    HOP_LENGTH,
    TurnEndHead,
    pause_states,
    pause_window,
    views_from_states,
)
from turneval.training.fit_turn_end_head import manifest_timing


def frozen_states(judge, windows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the trainable top of the head reads, for pause windows ``[B, n]``: the hidden states
    after the head's first own layer ``[B, frames, d]`` and the shared layers' output pooled over
    the last ``pool_frames[0]`` frames ``[B, d]`` (the head's third view;
    :func:`~turneval.modeling.modeling_turn_taking_judge.pause_states`)."""
    head = judge.turn_end_head
    features = judge.log_mel(windows, causal=False).to(judge.classifier.weight.dtype)
    return pause_states(judge.encoder, head.layers, features, head.shared_layers, head.pool_frames[0])


def top_logits(head: TurnEndHead, hidden: torch.Tensor, lower: torch.Tensor, timing: torch.Tensor | None) -> torch.Tensor:
    """The head's logits from :func:`frozen_states`: the rest of its forward pass."""
    return head.classify(views_from_states(head.layers[-1], head.layer_norm, hidden, lower, head.pool_frames), timing)


def _decision_windows(manifest: str | Path):
    """Each dialogue with its turn-end decisions as (speaker, window end, shift), in the head fit's order."""
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions

    for _, dialogue in read_dialogue_manifest(resolve_manifest(manifest)):
        yield dialogue, [(d.speaker, d.ipu_end + DECISION_DELAY_S, int(d.shift)) for d in turn_end_decisions(dialogue, DECISION_DELAY_S)]


@torch.no_grad()
def cache_states(judge, manifest: str | Path, folder: Path, batch_size: int = 16) -> Path:
    """Write :func:`frozen_states` of every decision of ``manifest`` (with its timing features and
    labels) to ``folder/<digest>/``; reuse it when it is there. The folder name holds a digest of
    the manifest path and the head's window, so parallel runs on different manifests can share
    ``folder``; the files appear only once complete."""
    from turneval.dataset_scripts.audio import load_stereo

    window_s = float(judge.config.turn_end_head["window_s"])
    key = json.dumps({"manifest": str(Path(manifest).resolve()), "window_s": window_s, "delay_s": DECISION_DELAY_S,
                      "shared_layers": judge.turn_end_head.shared_layers})
    out = folder / hashlib.sha1(key.encode()).hexdigest()[:10]
    if (out / "key.json").exists() and (out / "key.json").read_text() == key:
        return out
    timing, labels = manifest_timing(manifest)
    n = len(labels)
    frames = int(round(window_s * SAMPLE_RATE)) // (2 * HOP_LENGTH)  # mel frames, then the encoder's stride 2
    d_model = judge.whisper_config.d_model
    partial = folder / (out.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    states = np.lib.format.open_memmap(partial / "states.npy", mode="w+", dtype=np.float16, shape=(n, frames, d_model))
    lower = np.zeros((n, d_model), np.float32)
    row, pending = 0, []

    def flush() -> None:
        nonlocal row
        hidden, pooled = frozen_states(judge, torch.from_numpy(np.stack(pending)))
        states[row : row + len(pending)] = hidden.numpy().astype(np.float16)
        lower[row : row + len(pending)] = pooled.float().numpy()
        row += len(pending)
        pending.clear()

    seen = []
    for dialogue, decisions in _decision_windows(manifest):
        stereo = load_stereo(dialogue.audio_path) if decisions else None
        for speaker, end_s, shift in decisions:
            pending.append(pause_window(stereo[speaker], end_s, window_s, SAMPLE_RATE))
            seen.append(shift)
            if len(pending) == batch_size:
                flush()
    if pending:
        flush()
    if not np.array_equal(np.asarray(seen), labels):
        raise ValueError(f"{manifest}: the decisions read with audio differ from those of the timing features")
    states.flush()
    np.save(partial / "lower.npy", lower)
    np.save(partial / "timing.npy", timing.astype(np.float32))
    np.save(partial / "labels.npy", labels)
    (partial / "key.json").write_text(key)
    if out.exists():  # made for another manifest or window (digest collision) or left by an old run
        import shutil

        shutil.rmtree(out)
    partial.replace(out)
    return out


class CachedDecisions:
    """The cached frozen states of one or more manifests, as one indexable set."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.parts = [
            (np.load(f / "states.npy", mmap_mode="r"), np.load(f / "lower.npy"), np.load(f / "timing.npy"), np.load(f / "labels.npy"))
            for f in folders
        ]
        self.offsets = np.cumsum([0] + [len(p[3]) for p in self.parts])
        self.labels = np.concatenate([p[3] for p in self.parts])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def batch(self, index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden, lower, timing, labels = [], [], [], []
        for i in np.sort(index):
            part = int(np.searchsorted(self.offsets, i, side="right") - 1)
            j = int(i - self.offsets[part])
            states, low, tim, lab = self.parts[part]
            hidden.append(np.asarray(states[j], dtype=np.float32))
            lower.append(low[j])
            timing.append(tim[j])
            labels.append(lab[j])
        return (torch.from_numpy(np.stack(hidden)), torch.from_numpy(np.stack(lower)), torch.from_numpy(np.stack(timing)),
                torch.tensor(labels, dtype=torch.float32))


@torch.no_grad()
def predict(head: TurnEndHead, data: CachedDecisions, batch_size: int = 256) -> np.ndarray:
    head.eval()
    out = []
    for start in range(0, len(data), batch_size):
        hidden, lower, timing, _ = data.batch(np.arange(start, min(start + batch_size, len(data))))
        out.append(top_logits(head, hidden, lower, timing).float().numpy())
    return np.concatenate(out)


def finetune(
    head: TurnEndHead, train: CachedDecisions, val: CachedDecisions, *, epochs: int, lr: float, batch_size: int, weight_decay: float, seed: int,
    log=print,
) -> tuple[TurnEndHead, list[dict[str, Any]]]:
    """Train the last layer, layer norm and classifier of ``head`` (the rest frozen); return the
    epoch with the best validation ROC-AUC (epoch 0: the head as given) and the log."""
    trainable = [*head.layers[-1].parameters(), *head.layer_norm.parameters(), *head.classifier.parameters()]
    for p in head.parameters():
        p.requires_grad_(False)
    for p in trainable:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=weight_decay)
    steps_per_epoch = len(train) // batch_size
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=epochs * steps_per_epoch, pct_start=0.1)
    rng = np.random.default_rng(seed)
    best = {"epoch": 0, "val_roc_auc": roc_auc(val.labels, predict(head, val))}
    history = [dict(best)]
    log(json.dumps(best))
    best_head = copy.deepcopy(head)
    for epoch in range(1, epochs + 1):
        start, losses = time.perf_counter(), []
        head.train()
        order = rng.permutation(len(train))
        for step in range(steps_per_epoch):
            hidden, lower, timing, labels = train.batch(order[step * batch_size : (step + 1) * batch_size])
            loss = F.binary_cross_entropy_with_logits(top_logits(head, hidden, lower, timing), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(float(loss.detach()))
        entry = {"epoch": epoch, "train_loss": float(np.mean(losses)), "val_roc_auc": roc_auc(val.labels, predict(head, val)),
                 "seconds": round(time.perf_counter() - start, 1)}
        history.append(entry)
        log(json.dumps(entry))
        if entry["val_roc_auc"] > best["val_roc_auc"]:
            best, best_head = entry, copy.deepcopy(head)
    for p in best_head.parameters():
        p.requires_grad_(False)
    return best_head.eval(), history


def main(argv: Sequence[str] | None = None) -> int:
    from turneval.modeling.judge_loading import load_judge

    parser = argparse.ArgumentParser(description="Fine-tune the top of the judge's turn-end head on re-voiced turn-end decisions.")
    parser.add_argument("--judge", required=True, type=Path, help="judge checkpoint with an installed turn-end head (the starting point)")
    parser.add_argument("--train", required=True, nargs="+", help="manifests (or folders) of two-channel dialogues with audio; pooled")
    parser.add_argument("--val", required=True, help="manifest the epoch is chosen on")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=MANIFEST", help="further sets to score (repeatable)")
    parser.add_argument("--cache", required=True, type=Path, help="folder for the frozen states (reused when they match)")
    parser.add_argument("--output_dir", type=Path, help="write the log (finetune_log.jsonl) and result.json here")
    parser.add_argument("--states_only", action="store_true", help="only compute (and cache) the states of --train, --val and --eval")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--install", action="store_true", help="write the chosen head into --judge (in place)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    judge = load_judge(args.judge).eval()
    if judge.turn_end_head is None:
        raise SystemExit(f"{args.judge}: this judge has no turn-end head to start from; fit one first (python -m turneval.training.fit_turn_end_head --install_into)")
    evals = [spec.partition("=")[::2] for spec in args.eval]
    folders = {"train": [cache_states(judge, m, args.cache) for m in args.train], "val": [cache_states(judge, args.val, args.cache)]}
    for name, manifest in evals:
        folders[name] = [cache_states(judge, manifest, args.cache)]
    if args.states_only:
        return 0
    sets = {name: CachedDecisions(f) for name, f in folders.items()}
    log_file = None
    if args.output_dir:
        args.output_dir.mkdir(parents=True, exist_ok=True)
        log_file = (args.output_dir / "finetune_log.jsonl").open("w")

    def log(line: str) -> None:
        print(line, flush=True)
        if log_file:
            log_file.write(line + "\n")
            log_file.flush()

    before = {name: roc_auc(s.labels, predict(judge.turn_end_head, s)) for name, s in sets.items() if name != "train"}
    head, history = finetune(copy.deepcopy(judge.turn_end_head).float(), sets["train"], sets["val"], epochs=args.epochs, lr=args.lr,
                             batch_size=args.batch_size, weight_decay=args.weight_decay, seed=args.seed, log=log)
    after = {name: roc_auc(s.labels, predict(head, s)) for name, s in sets.items() if name != "train"}
    result = {"train_decisions": len(sets["train"]), "chosen_epoch": max(history, key=lambda h: h["val_roc_auc"])["epoch"],
              "roc_auc_before": before, "roc_auc_after": after, "history": history,
              "options": {k: v for k, v in vars(args).items() if k in ("epochs", "lr", "weight_decay", "batch_size", "seed")}}
    print(json.dumps({k: result[k] for k in ("chosen_epoch", "roc_auc_before", "roc_auc_after")}))
    if args.output_dir:
        (args.output_dir / "result.json").write_text(json.dumps(result, indent=1))
    if args.install:
        judge.turn_end_head = head.to(judge.classifier.weight.dtype)
        judge.config.turn_end_head = {**judge.config.turn_end_head, "finetuned": {k: result[k] for k in ("train_decisions", "chosen_epoch", "options")},
                                      "measured": {name: {"decisions": int(len(sets[name])), "roc_auc": round(v, 4)} for name, v in after.items()}}
        judge.save_pretrained(args.judge)
        print(f"installed the fine-tuned turn-end head into {args.judge} (retune its (a)/(d) thresholds: training/tune_judge_thresholds.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CachedDecisions", "cache_states", "finetune", "frozen_states", "top_logits"]
