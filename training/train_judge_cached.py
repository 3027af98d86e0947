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

``--next_speaker_weight w`` adds ``w`` times a second loss inside pauses: at every silent chunk
after speech, the binary cross-entropy of ``p_T / (p_T + p_C)`` against who speaks when the
pause ends (:func:`next_speaker_loss`). The 5-class target says who resumes only at the one
chunk where speech starts; metric (a) reads ``p_T - p_C`` 200 ms into the pause, where the
next chunk is silence. The labels, the classes and the metric stay the paper's; the extra loss
only teaches the ratio of two of its probabilities where the metric reads them.

The loop, optimizer, schedule, checkpoints (``--checkpointing_steps N`` -> ``checkpoints/step_N``,
``--resume_from_checkpoint latest`` continues exactly), log and compute record are the shared
skeleton's (:mod:`turneval.training.common`); this recipe holds the cached model top, the data
and the loss. The head (layer weights + classifier) trains at ``--head_learning_rate``.

    python -m turneval.training.train_judge_cached --train /work/cache/judgemodel/features/train \
        --validation /work/cache/judgemodel/features/val --mode partial --split_layer 2 \
        --output_dir runs/judge_partial
"""
from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from turneval.training.common import Recipe, TrainingArguments, parse_arguments
from turneval.training.common import train as run_training
from turneval.training.evaluate_judge import roc_auc_table
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


def turn_change_logit(logits: torch.Tensor, label_names: Sequence[str]) -> torch.Tensor:
    """``logit_T - logit_C``: the log odds of "the turn changes hands" against "the speaker
    goes on", whatever the chance that anyone starts at all (p_NA cancels)."""
    return logits[..., list(label_names).index("T")] - logits[..., list(label_names).index("C")]


def next_speaker_loss(logits: torch.Tensor, next_speaker: torch.Tensor, label_names: Sequence[str]) -> torch.Tensor:
    """Binary cross-entropy of ``p_T / (p_T + p_C)`` against who speaks after the pause.

    The 5-class loss sees who resumes only at the single chunk where speech starts; this one
    asks it at every silent chunk of the pause (``labels.next_speaker_targets``), the moment
    metric (a) reads ``p_T - p_C``. Shifts and holds count equally (each class's mean), as
    the 5-class loss is class-balanced. Zero when the batch holds no pause.
    """
    valid = next_speaker >= 0
    if not bool(valid.any()):
        return logits.sum() * 0.0
    margin, target = turn_change_logit(logits, label_names)[valid], next_speaker[valid].float()
    per_item = F.binary_cross_entropy_with_logits(margin, target, reduction="none")
    parts = [per_item[target == k].mean() for k in (0.0, 1.0) if bool((target == k).any())]
    return torch.stack(parts).mean()


def next_speaker_auc(logits: np.ndarray, next_speaker: np.ndarray, label_names: Sequence[str]) -> float | None:
    """ROC-AUC of ``logit_T - logit_C`` for "the turn changes hands" over the pause predictions."""
    from sklearn.metrics import roc_auc_score

    valid = next_speaker >= 0
    y = next_speaker[valid]
    if not 0 < y.sum() < len(y):
        return None
    margin = turn_change_logit(torch.from_numpy(logits[valid]), label_names).numpy()
    return round(float(roc_auc_score(y, margin)), 4)


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
def predict(model: nn.Module, data: CachedFeatures, batch_size: int = 8, max_windows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logits, targets and next-speaker targets of every valid prediction of the cached windows."""
    model.eval()
    logits, targets, following = [], [], []
    n = len(data) if max_windows is None else min(len(data), max_windows)
    for i in range(0, n, batch_size):
        items = [data[j] for j in range(i, min(n, i + batch_size))]
        batch = {k: torch.stack([it[k] for it in items]) for k in items[0]}
        out = model(batch["pred_states"], batch.get("full_states"))
        valid = batch["labels"] >= 0
        logits.append(out[valid].float().numpy())
        targets.append(batch["labels"][valid].numpy())
        following.append(batch["next_speaker"][valid].numpy())
    return np.concatenate(logits), np.concatenate(targets), np.concatenate(following)


def evaluate_cached(model, data: CachedFeatures, label_names: Sequence[str], adjustment: Sequence[float] | None, max_windows: int | None = None) -> dict[str, Any]:
    """ROC-AUC per class on every cached prediction, raw and with the logit adjustment, and
    the next-speaker ROC-AUC of ``logit_T - logit_C`` inside pauses."""
    logits, targets, following = predict(model, data, max_windows=max_windows)
    probs = torch.softmax(torch.from_numpy(logits), -1).numpy()
    result = {"n_predictions": int(len(targets)), "roc_auc": roc_auc_table(targets, probs, label_names),
              "next_speaker_roc_auc": next_speaker_auc(logits, following, label_names)}
    if adjustment is not None:
        adjusted = torch.softmax(torch.from_numpy(logits) + torch.tensor(adjustment, dtype=torch.float32), -1).numpy()
        result["roc_auc_adjusted"] = roc_auc_table(targets, adjusted, label_names)
    return result


TRAINING_DEFAULTS: dict[str, Any] = {
    "output_dir": "runs/judge_cached",
    "learning_rate": 3e-4,
    "lr_scheduler_type": "cosine",
    "num_warmup_steps": 20,
    "per_device_train_batch_size": 8,
}
"""This recipe's departures from the shared defaults."""


@dataclass
class CachedJudgeArguments:
    """What the cached-state judge recipe needs beyond the shared options."""

    train: list[str] = field(default_factory=list, metadata={"help": "feature cache folder(s) of the training split"})
    validation: str | None = field(default=None, metadata={"help": "feature cache folder of the validation split"})
    backbone: str | None = field(default=None, metadata={"help": "the backbone the caches were made with (default: the one they record)"})
    mode: str = field(default="partial", metadata={"help": "what trains", "choices": list(MODES)})
    split_layer: int | None = field(default=None, metadata={"help": "frozen layers (default: all for frozen, 2 otherwise)"})
    lora_r: int = field(default=8, metadata={"help": "LoRA rank (mode lora)"})
    lora_alpha: int = field(default=16, metadata={"help": "LoRA scaling (mode lora)"})
    head_learning_rate: float = field(default=3e-3, metadata={"help": "learning rate of the layer weights and the classifier"})
    threads: int = field(default=1, metadata={"help": "torch CPU threads"})
    max_eval_windows: int | None = field(default=None, metadata={"help": "validation windows per evaluation (default: all)"})
    next_speaker_weight: float = field(default=0.0, metadata={"help": "weight of the next-speaker loss inside pauses (0: the paper's loss alone)"})


def parse_args(argv: Sequence[str] | None = None) -> tuple[CachedJudgeArguments, TrainingArguments]:
    args, training = parse_arguments(CachedJudgeArguments, argv, prog="train_judge_cached", defaults=TRAINING_DEFAULTS)
    if not args.train:
        raise SystemExit("train_judge_cached: give --train (feature cache folders from turneval.training.judge_features)")
    return args, training


class CachedJudgeRecipe(Recipe):
    """The judge's top above the cached frozen layers, every cached prediction as a target."""

    name = "judge_cached"

    def __init__(self, args: CachedJudgeArguments, training: TrainingArguments) -> None:
        from turneval.training.judge_features import base_judge

        self.args, self.training = args, training
        torch.set_num_threads(args.threads)
        first = CachedFeatures(args.train, None)
        self.split = first.n_layers if args.mode == "frozen" else (args.split_layer if args.split_layer is not None else 2)
        self.settings = first.settings
        self.judge = base_judge(args.backbone or self.settings.get("backbone") or "tiny.en", self.settings["context_s"])
        self.label_names = list(self.judge.config.label_names)

    def build_model(self) -> nn.Module:
        return apply_mode(CachedTop(self.judge, self.split), self.args.mode, self.args.lora_r, self.args.lora_alpha)

    def parameter_groups(self, model: nn.Module) -> list[dict[str, Any]]:
        head_names = ("layer_weights", "classifier")
        head = [p for n, p in model.named_parameters() if p.requires_grad and any(h in n for h in head_names)]
        body = [p for n, p in model.named_parameters() if p.requires_grad and not any(h in n for h in head_names)]
        groups = [{"params": head, "lr": self.args.head_learning_rate, "weight_decay": 0.0}]
        if body:
            groups.append({"params": body, "lr": self.training.learning_rate, "weight_decay": self.training.weight_decay})
        return groups

    def setup(self, model: nn.Module, accelerator: Any) -> None:
        self.train_data = CachedFeatures(self.args.train, self.split)
        self.val_data = CachedFeatures(self.args.validation, self.split) if self.args.validation else None
        weights = inverse_frequency_weights(self.train_data.target_counts(len(self.label_names)))
        self.class_weights = weights
        self.adjustment = logit_adjustment_from_weights(weights)
        self.weight_tensor = torch.tensor(weights, dtype=torch.float32, device=accelerator.device)
        self.rank, self.world = accelerator.process_index, accelerator.num_processes
        batch = self.training.per_device_train_batch_size
        self.per_update = batch * self.training.gradient_accumulation_steps * self.world
        if len(self.train_data) < self.per_update:
            raise SystemExit(f"{self.args.train}: {len(self.train_data)} windows are fewer than one update of {self.per_update}")

    def steps_per_epoch(self) -> int:
        return len(self.train_data) // self.per_update

    def micro_batches(self, start_step: int, accelerator: Any) -> Iterator[dict[str, torch.Tensor]]:
        batch, accum = self.training.per_device_train_batch_size, self.training.gradient_accumulation_steps
        epoch, position = divmod(start_step, self.steps_per_epoch())
        while True:
            # the order of epoch e depends only on (seed, e): step k always sees the same windows
            order = torch.randperm(len(self.train_data), generator=torch.Generator().manual_seed(self.training.seed + epoch)).tolist()
            for step in range(position, self.steps_per_epoch()):
                for micro in range(accum):
                    first = ((step * accum + micro) * self.world + self.rank) * batch
                    items = [self.train_data[j] for j in order[first : first + batch]]
                    yield {k: torch.stack([it[k] for it in items]) for k in items[0]}
            epoch, position = epoch + 1, 0

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = model(batch["pred_states"], batch.get("full_states"))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1), weight=self.weight_tensor, ignore_index=-100)
        if self.args.next_speaker_weight > 0:
            loss = loss + self.args.next_speaker_weight * next_speaker_loss(logits, batch["next_speaker"], self.label_names)
        return loss

    def evaluate(self, model: nn.Module, accelerator: Any, step: int) -> dict[str, Any] | None:
        if self.val_data is None:
            return None
        return {"validation": evaluate_cached(accelerator.unwrap_model(model), self.val_data, self.label_names, self.adjustment, self.args.max_eval_windows)}

    def save_final(self, model: nn.Module, folder: Path) -> None:
        final = export_judge(self.judge, model, self.args.mode, self.adjustment)
        final.config.training_summary = {
            "train_cache": [str(t) for t in self.args.train],
            "train_windows": len(self.train_data),
            "class_weights": [round(float(w), 6) for w in self.class_weights],
            "next_speaker_weight": self.args.next_speaker_weight,
        }
        final.save_pretrained(folder, safe_serialization=True)


def train(args: CachedJudgeArguments, training: TrainingArguments) -> dict[str, Any]:
    """Run (or continue) training; return the skeleton's summary (step, losses, validation, compute)."""
    return run_training(CachedJudgeRecipe(args, training), training, args)


def main(argv: Sequence[str] | None = None) -> int:
    summary = train(*parse_args(argv))
    print(json.dumps({k: v for k, v in summary.items() if k != "losses"}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CachedTop", "MODES", "apply_mode", "evaluate_cached", "export_judge", "inverse_frequency_weights", "logit_adjustment_from_weights",
           "next_speaker_auc", "next_speaker_loss", "turn_change_logit", "train", "CachedJudgeArguments", "CachedJudgeRecipe", "parse_args"]
