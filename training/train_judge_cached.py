"""Train a causal TurnTakingJudge on cached frozen hidden states (``judge_features``).

The encoder's lower layers stay frozen and are read from the cache; what trains is

* ``frozen`` (the paper's recipe, causal): the layer weights and the linear head only;
* ``partial``: the top encoder layers above ``--split_layer`` (all their weights), the final
  layer norm, the layer weights and the head;
* ``lora``: peft LoRA adapters on the top layers' attention (q/v) and feed-forward
  projections, plus the final layer norm, layer weights and head; merged before saving.

Every prediction of every cached causal window is a target (one pass scores them all), with
inverse-frequency class weights, which trains class-balanced as the paper's sampler does. The
probabilities are then corrected to the natural class priors by logit adjustment
(``config.logit_adjustment = -log(class weight)``, applied by ``forward``/``score``), so the
agreement metrics' thresholds compare real posteriors.

Resumable: ``--save_steps N`` writes ``checkpoints/step_N/`` (trainable weights, optimizer,
scheduler, RNG, position in the epoch); ``--resume_from_checkpoint latest`` continues exactly.

    python -m turneval.training.train_judge_cached --train /work/cache/judgemodel/features/train \
        --validation /work/cache/judgemodel/features/val --mode partial --split_layer 2 \
        --output_dir runs/judge_partial
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from turneval.training.judge_features import CachedFeatures

MODES = ("frozen", "partial", "lora")


class CachedTop(nn.Module):
    """The trainable top of a causal judge, fed cached states.

    ``split_layer`` = k: layers k+1..L run on the cached output of layer k (every frame,
    causal mask); the weighted layer sum reads the cached states 0..k at the prediction
    frames and the new ones above. ``k = L`` (frozen) trains only the layer weights and head.
    """

    def __init__(self, judge, split_layer: int) -> None:
        super().__init__()
        n_layers = judge.whisper_config.encoder_layers
        if not 0 <= split_layer <= n_layers:
            raise ValueError(f"split_layer must lie in 0..{n_layers}, got {split_layer}")
        self.split_layer = split_layer
        self.n_layers = n_layers
        self.frames_per_chunk = judge.config.samples_per_chunk // 320
        self.layers = nn.ModuleList([copy.deepcopy(judge.encoder.layers[i]) for i in range(split_layer, n_layers)])
        self.layer_norm = copy.deepcopy(judge.encoder.layer_norm)
        self.layer_weights = nn.Parameter(judge.layer_weights.detach().clone())
        self.classifier = copy.deepcopy(judge.classifier)
        self.use_weighted_layer_sum = judge.config.use_weighted_layer_sum

    def forward(self, pred_states: torch.Tensor, full_states: torch.Tensor | None = None) -> torch.Tensor:
        """``pred_states`` ``[B, L+1, P, d]``, ``full_states`` ``[B, F, d]`` -> logits ``[B, P, C]``."""
        k, fpc = self.split_layer, self.frames_per_chunk
        states = [pred_states[:, i] for i in range(k + 1)]
        if k < self.n_layers:
            if full_states is None:
                raise ValueError("partial/lora training needs the full-frame states of the split layer")
            hidden = full_states
            n = hidden.shape[1]
            future = torch.ones(n, n, dtype=torch.bool, device=hidden.device).triu(1)
            mask = torch.zeros(n, n, dtype=hidden.dtype, device=hidden.device).masked_fill(future, torch.finfo(hidden.dtype).min)[None, None]
            for i, layer in enumerate(self.layers):
                hidden = layer(hidden, mask)
                out = self.layer_norm(hidden) if i == len(self.layers) - 1 else hidden
                states.append(out[:, fpc - 1 :: fpc])
        if self.use_weighted_layer_sum:
            weights = torch.softmax(self.layer_weights, dim=0)
            pooled = torch.einsum("l,lbtd->btd", weights, torch.stack(states))
        else:
            pooled = states[-1]
        return self.classifier(pooled)


def apply_mode(top: CachedTop, mode: str, lora_r: int = 8, lora_alpha: int = 16) -> nn.Module:
    """Set what trains; LoRA wraps the top layers' projections with peft adapters."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "lora":
        from peft import LoraConfig, get_peft_model

        for p in top.parameters():
            p.requires_grad_(False)
        config = LoraConfig(r=lora_r, lora_alpha=lora_alpha, target_modules=r"layers\.\d+\.(self_attn\.(q_proj|v_proj)|fc1|fc2)")
        model = get_peft_model(top, config)
        base = model.get_base_model()
        for p in (base.layer_weights, *base.classifier.parameters(), *base.layer_norm.parameters()):
            p.requires_grad_(True)
        return model
    for p in top.parameters():
        p.requires_grad_(True)
    if top.split_layer == top.n_layers:  # frozen: every state is cached, the final norm is unused
        top.layer_norm.requires_grad_(False)
    return top


def inverse_frequency_weights(counts: np.ndarray) -> np.ndarray:
    """Class weights proportional to 1 / count, mean 1 over present classes."""
    counts = np.asarray(counts, dtype=np.float64)
    weights = np.where(counts > 0, counts.sum() / np.maximum(counts, 1), 0.0)
    return weights / weights[weights > 0].mean()


def logit_adjustment_from_weights(weights: np.ndarray) -> list[float]:
    """Weighted cross-entropy learns q(y|x) ~ w_y p(y|x); adding -log w_y to the logits gives
    back p(y|x) under the natural priors. Centred (softmax ignores a constant)."""
    adj = -np.log(np.maximum(np.asarray(weights, dtype=np.float64), 1e-12))
    return (adj - adj.mean()).round(6).tolist()


def export_judge(judge, model: nn.Module, mode: str, logit_adjustment: Sequence[float] | None):
    """Copy the trained top into a deep copy of ``judge``; return the plain judge to save."""
    top = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
    out = copy.deepcopy(judge)
    k = top.split_layer
    for i, layer in enumerate(top.layers):
        out.encoder.layers[k + i].load_state_dict(layer.state_dict())
    if k < top.n_layers:
        out.encoder.layer_norm.load_state_dict(top.layer_norm.state_dict())
    with torch.no_grad():
        out.layer_weights.copy_(top.layer_weights)
    out.classifier.load_state_dict(top.classifier.state_dict())
    out.config.backbone_mode = {"frozen": "frozen", "partial": "partial", "lora": "lora"}[mode]
    out.config.trained_layers = list(range(k + 1, top.n_layers + 1)) if k < top.n_layers else []
    out.config.logit_adjustment = list(logit_adjustment) if logit_adjustment is not None else None
    return out.eval()


@torch.no_grad()
def predict(model: nn.Module, data: CachedFeatures, batch_size: int = 8, max_windows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Logits and targets of every valid prediction of the cached windows."""
    model.eval()
    logits, targets = [], []
    n = len(data) if max_windows is None else min(len(data), max_windows)
    for i in range(0, n, batch_size):
        items = [data[j] for j in range(i, min(n, i + batch_size))]
        batch = {k: torch.stack([it[k] for it in items]) for k in items[0]}
        out = model(batch["pred_states"], batch.get("full_states"))
        valid = batch["labels"] >= 0
        logits.append(out[valid].float().numpy())
        targets.append(batch["labels"][valid].numpy())
    return np.concatenate(logits), np.concatenate(targets)


def evaluate_cached(model, data: CachedFeatures, label_names: Sequence[str], adjustment: Sequence[float] | None, max_windows: int | None = None) -> dict[str, Any]:
    """ROC-AUC per class on every cached prediction, raw and with the logit adjustment."""
    from turneval.training.evaluate_judge import roc_auc_table

    logits, targets = predict(model, data, max_windows=max_windows)
    probs = torch.softmax(torch.from_numpy(logits), -1).numpy()
    result = {"n_predictions": int(len(targets)), "roc_auc": roc_auc_table(targets, probs, label_names)}
    if adjustment is not None:
        adjusted = torch.softmax(torch.from_numpy(logits) + torch.tensor(adjustment, dtype=torch.float32), -1).numpy()
        result["roc_auc_adjusted"] = roc_auc_table(targets, adjusted, label_names)
    return result


def _latest(folder: Path) -> Path | None:
    found = sorted(folder.glob("step_*"), key=lambda p: int(p.name.split("_")[1])) if folder.is_dir() else []
    return found[-1] if found else None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Train a causal judge on cached frozen encoder states.")
    p.add_argument("--train", required=True, nargs="+", help="feature cache folder(s) of the training split")
    p.add_argument("--validation", help="feature cache folder of the validation split")
    p.add_argument("--backbone", help="the backbone the caches were made with (default: the one they record)")
    p.add_argument("--mode", choices=MODES, default="partial")
    p.add_argument("--split_layer", type=int, help="frozen layers (default: all for frozen, 2 otherwise)")
    p.add_argument("--lora_r", type=int, default=8)
    p.add_argument("--lora_alpha", type=int, default=16)
    p.add_argument("--learning_rate", type=float, default=3e-4)
    p.add_argument("--head_learning_rate", type=float, default=3e-3)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--warmup_steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--save_steps", type=int, default=0)
    p.add_argument("--eval_steps", type=int, default=0)
    p.add_argument("--max_eval_windows", type=int)
    p.add_argument("--stop_after_steps", type=int)
    p.add_argument("--resume_from_checkpoint", help="a step_N folder or 'latest'")
    p.add_argument("--output_dir", required=True)
    return p


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Train; write ``metrics.jsonl``, checkpoints and ``final/`` (a plain judge checkpoint)."""
    from transformers import get_scheduler

    from turneval.training.judge_features import base_judge

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    train_data = CachedFeatures(args.train, None)
    n_layers = train_data.n_layers
    split = args.split_layer if args.split_layer is not None else (n_layers if args.mode == "frozen" else 2)
    if args.mode == "frozen":
        split = n_layers
    train_data = CachedFeatures(args.train, split)
    val_data = CachedFeatures(args.validation, split) if args.validation else None
    settings = train_data.settings
    backbone = args.backbone or settings.get("backbone") or "tiny.en"
    judge = base_judge(backbone, settings["context_s"])
    names = list(judge.config.label_names)
    model = apply_mode(CachedTop(judge, split), args.mode, args.lora_r, args.lora_alpha)
    counts = train_data.target_counts(len(names))
    weights = inverse_frequency_weights(counts)
    adjustment = logit_adjustment_from_weights(weights)
    weight_tensor = torch.tensor(weights, dtype=torch.float32)

    head_names = ("layer_weights", "classifier")
    head = [p for n, p in model.named_parameters() if p.requires_grad and any(h in n for h in head_names)]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not any(h in n for h in head_names)]
    groups = [{"params": head, "lr": args.head_learning_rate, "weight_decay": 0.0}]
    if body:
        groups.append({"params": body, "lr": args.learning_rate, "weight_decay": args.weight_decay})
    optimizer = torch.optim.AdamW(groups)
    steps_per_epoch = len(train_data) // args.batch_size
    if steps_per_epoch == 0:
        raise SystemExit(f"{args.train}: {len(train_data)} windows are fewer than one batch of {args.batch_size}")
    max_steps = max(1, int(round(args.epochs * steps_per_epoch)))
    scheduler = get_scheduler("cosine", optimizer, num_warmup_steps=min(args.warmup_steps, max_steps // 5), num_training_steps=max_steps)

    step, started_cpu = 0, 0.0
    checkpoints = out_dir / "checkpoints"
    if args.resume_from_checkpoint:
        resume = _latest(checkpoints) if args.resume_from_checkpoint == "latest" else Path(args.resume_from_checkpoint)
        if resume is None:
            raise SystemExit(f"--resume_from_checkpoint latest, but {checkpoints} holds no step_N folder")
        state = torch.load(resume / "state.pt", weights_only=False)
        model.load_state_dict(state["model"], strict=False)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        step, started_cpu = state["step"], state["cpu_s"]
        print(f"resumed from {resume} at step {step}")
    log_path = out_dir / "metrics.jsonl"
    if not args.resume_from_checkpoint and log_path.exists():
        log_path.unlink()

    def log(row: dict[str, Any]) -> None:
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    cpu0 = time.process_time() - started_cpu
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"mode {args.mode}, split layer {split}: {trainable} trainable parameters, {len(train_data)} windows, {max_steps} steps")
    summary: dict[str, Any] = {"mode": args.mode, "split_layer": split, "trainable_parameters": trainable, "max_steps": max_steps}
    model.train()
    while step < max_steps:
        epoch = step // steps_per_epoch
        order = torch.randperm(len(train_data), generator=torch.Generator().manual_seed(args.seed + epoch)).tolist()
        position = step % steps_per_epoch
        for b in range(position, steps_per_epoch):
            items = [train_data[j] for j in order[b * args.batch_size : (b + 1) * args.batch_size]]
            batch = {k: torch.stack([it[k] for it in items]) for k in items[0]}
            logits = model(batch["pred_states"], batch.get("full_states"))
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1), weight=weight_tensor, ignore_index=-100)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            log({"step": step, "epoch": epoch, "loss": float(loss.detach()), "lr": scheduler.get_last_lr()[-1], "cpu_s": round(time.process_time() - cpu0, 1)})
            if args.eval_steps and val_data is not None and step % args.eval_steps == 0:
                result = evaluate_cached(model, val_data, names, adjustment, args.max_eval_windows)
                log({"step": step, "validation": result})
                print(json.dumps({"step": step, "val_roc_auc": result["roc_auc"]}))
                model.train()
            if args.save_steps and step % args.save_steps == 0:
                target = checkpoints / f"step_{step}"
                target.mkdir(parents=True, exist_ok=True)
                trainable_state = {n: p for n, p in model.state_dict().items()}
                torch.save({"model": trainable_state, "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                            "rng": torch.get_rng_state(), "step": step, "cpu_s": time.process_time() - cpu0}, target / "state.pt")
            if step >= max_steps or (args.stop_after_steps and step >= args.stop_after_steps):
                break
        if args.stop_after_steps and step >= args.stop_after_steps and step < max_steps:
            print(f"stopped at step {step} of {max_steps}; continue with --resume_from_checkpoint latest")
            summary["step"] = step
            return summary
    summary["train_cpu_s"] = round(time.process_time() - cpu0, 1)
    if val_data is not None:
        summary["validation"] = evaluate_cached(model, val_data, names, adjustment, args.max_eval_windows)
        log({"step": step, "validation": summary["validation"]})
    final = export_judge(judge, model, args.mode, adjustment)
    final.config.training_summary = {"train_cache": [str(t) for t in args.train], "steps": step, "train_cpu_s": summary["train_cpu_s"],
                                     "train_windows": len(train_data), "class_weights": [round(float(w), 6) for w in weights]}
    final.save_pretrained(out_dir / "final", safe_serialization=True)
    (out_dir / "final" / "training_args.json").write_text(json.dumps(vars(args), indent=2), encoding="utf-8")
    summary["step"] = step
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    summary = train(build_parser().parse_args(argv))
    print(json.dumps(summary, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CachedTop", "MODES", "apply_mode", "evaluate_cached", "export_judge", "inverse_frequency_weights", "logit_adjustment_from_weights", "train"]
