"""Train the TurnTakingJudge (Talking Turns §4.1, A.4; docs/judge.md, "Training") on the shared skeleton.

This recipe holds the judge's model, data and loss; arguments, optimizer, schedule, loop,
checkpoints and logs are :mod:`turneval.training.common`'s. Class-balanced examples come from
the turn_taking_chunks rows through ``BalancedChunkSampler`` (every class at about the count
of T, redrawn each epoch). The backbone is frozen (the paper), adapted with LoRA (peft; merged
into the weights before saving) or fully fine-tuned. Validation: loss and one-vs-rest ROC-AUC.

Runs unchanged on one CPU process, several CPU ranks and several GPUs::

    python -m turneval.training.train_judge --config training/configs/judge_synthetic.yaml
    accelerate launch --multi_gpu --num_processes 2 -m turneval.training.train_judge \
        --config training/configs/judge_synthetic.yaml --cpu
    accelerate launch -m turneval.training.train_judge --config training/configs/judge_switchboard.yaml

The output folder gets ``metrics.jsonl``, ``checkpoints/step_N/`` (resume with
``--resume_from_checkpoint latest``; ``--stop_after_steps N`` ends a time-limited session after
N steps so that the next one resumes) and the final model in ``final/`` (safetensors, loadable
with ``AutoModel.from_pretrained(path, trust_remote_code=True)``).
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader

from turneval.dataset_scripts.sampler import BalancedChunkSampler, ClassBalance
from turneval.metrics.classification import roc_auc_table
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training.common import Recipe, TrainingArguments, parse_arguments, read_options_file
from turneval.training.common import train as run_training
from turneval.training.judge_data import EpochExamples, class_weights, load_chunk_rows


TRAINING_DEFAULTS: dict[str, Any] = {"output_dir": "runs/judge", "learning_rate": 1e-3, "lr_scheduler_type": "linear"}
"""The judge's departures from the shared defaults (the paper's rate and linear decay)."""


@dataclass
class JudgeArguments:
    """The judge's own options: its data, backbone and context."""

    data: str | None = field(default=None, metadata={"help": "turn_taking_chunks parquet folder or a dialogue manifest.jsonl"})
    train_split: str = field(default="train", metadata={"help": "split to train on"})
    validation_split: str = field(default="validation", metadata={"help": "split to validate on ('none': no validation)"})
    cache_dir: str | None = field(default=None, metadata={"help": "where the builder prepares its Arrow files / converted Whisper weights"})
    backbone: str = field(default="tiny.en", metadata={"help": "tiny.en (bundled conversion), a local HF Whisper folder, or 'random'"})
    context_mode: str = field(default="window", metadata={"help": "window (the paper) or causal", "choices": ["window", "causal"]})
    context_s: float = field(default=30.0, metadata={"help": "seconds of audio each prediction sees"})
    stream_hop_s: float | None = field(default=None, metadata={"help": "causal streaming hop (default: half the context)"})
    backbone_mode: str = field(default="frozen", metadata={"help": "frozen, lora or full", "choices": ["frozen", "lora", "full"]})
    lora_r: int = field(default=8, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=16, metadata={"help": "LoRA scaling"})
    lora_dropout: float = field(default=0.0, metadata={"help": "LoRA dropout"})
    label_smoothing: float = field(default=0.0, metadata={"help": "cross-entropy label smoothing"})
    classifier_dropout: float = field(default=0.0, metadata={"help": "dropout before the linear head"})
    window_labels: str = field(default="last", metadata={"help": "last: the chunk after the window; all: every chunk (causal)", "choices": ["last", "all"]})
    oversample: bool = field(default=False, metadata={"help": "draw rare classes up to the count of T instead of subsampling"})
    max_eval_examples: int = field(default=512, metadata={"help": "balanced validation examples per evaluation (all ranks)"})


def parse_args(argv: Sequence[str] | None = None) -> tuple[JudgeArguments, TrainingArguments]:
    """The judge's and the skeleton's options (defaults < ``--config`` file < flags), checked."""
    args, training = parse_arguments(JudgeArguments, argv, prog="train_judge", defaults=TRAINING_DEFAULTS)
    if not args.data:
        raise SystemExit("train_judge: give --data (a turn_taking_chunks parquet folder or a dialogue manifest)")
    if args.window_labels == "all" and args.context_mode != "causal":
        raise SystemExit("train_judge: --window_labels all needs --context_mode causal (one pass scores every chunk)")
    return args, training


# ---------------------------------------------------------------------------- model
def build_model(args: JudgeArguments, model_config: dict[str, Any] | None = None, init_from: str | None = None) -> TurnTakingJudge:
    """A judge from a checkpoint (``init_from``), random init (``backbone: random``) or Whisper.

    ``model_config`` holds TurnTakingJudgeConfig fields (``--model_config``); the recipe's
    context and regularisation options override them.
    """
    model_config = dict(model_config or {})
    encoder_config = model_config.pop("encoder_config", None)
    overrides = {
        **model_config,
        "context_mode": args.context_mode,
        "context_s": args.context_s,
        "stream_hop_s": args.stream_hop_s,
        "backbone_mode": args.backbone_mode,
        "label_smoothing": args.label_smoothing,
        "classifier_dropout": args.classifier_dropout,
    }
    if init_from:
        return TurnTakingJudge.from_pretrained(init_from, **overrides)
    if args.backbone == "random":
        return TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=encoder_config, backbone_source="random init", **overrides))
    from turneval.modeling.whisper_conversion import judge_from_whisper

    return judge_from_whisper(args.backbone, cache=args.cache_dir, encoder_config=encoder_config or {}, **overrides)


def apply_backbone_mode(model: TurnTakingJudge, args: JudgeArguments) -> torch.nn.Module:
    """Frozen encoder, LoRA adapters on the attention projections, or everything trainable."""
    if args.backbone_mode == "lora":
        from peft import LoraConfig, get_peft_model

        model.freeze_backbone(True)
        lora = LoraConfig(
            r=args.lora_r,
            lora_alpha=args.lora_alpha,
            lora_dropout=args.lora_dropout,
            target_modules=r".*encoder\.layers\.\d+\.self_attn\.(q_proj|v_proj)",
        )
        peft_model = get_peft_model(model, lora)
        base = peft_model.get_base_model()
        for param in (base.layer_weights, *base.classifier.parameters()):
            param.requires_grad_(True)
        return peft_model
    model.freeze_backbone(args.backbone_mode == "frozen")
    return model


def final_model(model: torch.nn.Module) -> TurnTakingJudge:
    """The plain judge to save: LoRA adapters merged into the encoder weights."""
    if hasattr(model, "merge_and_unload"):
        return model.merge_and_unload()
    return model


# ---------------------------------------------------------------------------- loop
def step_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], weights: torch.Tensor | None, label_smoothing: float = 0.0) -> torch.Tensor:
    """Cross-entropy of one batch: the last chunk's label, or every chunk's (weighted)."""
    if "window_labels" in batch:
        out = model(input_values=batch["input_values"], attention_mask=batch["attention_mask"])
        logits = out.logits.float()
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            batch["window_labels"].reshape(-1),
            weight=weights,
            ignore_index=-100,
            label_smoothing=label_smoothing,
        )
    return model(input_values=batch["input_values"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss


@torch.no_grad()
def predict_examples(model: torch.nn.Module, sampler: BalancedChunkSampler, limit: int, batch_size: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Last-chunk probabilities and labels of the first ``limit`` validation examples of this rank."""
    data = EpochExamples(sampler, epoch=0)
    data.indices = data.indices[:limit]
    probs, labels = [], []
    for batch in DataLoader(data, batch_size=batch_size):
        out = model(input_values=batch["input_values"].to(device), attention_mask=batch["attention_mask"].to(device))
        probs.append(out.probabilities[:, -1].float())
        labels.append(batch["labels"].to(device))
    if not probs:
        return torch.zeros((0, len(sampler.label_names)), device=device), torch.zeros(0, dtype=torch.long, device=device)
    return torch.cat(probs), torch.cat(labels)


class JudgeRecipe(Recipe):
    """The judge's model, class-balanced data and loss for :func:`turneval.training.common.train`."""

    name = "judge"

    def __init__(self, args: JudgeArguments, training: TrainingArguments) -> None:
        self.args, self.training = args, training
        self.model_config = read_options_file(training.model_config) if training.model_config else {}

    def build_model(self) -> torch.nn.Module:
        return apply_backbone_mode(build_model(self.args, self.model_config, self.training.init_from), self.args)

    def setup(self, model: torch.nn.Module, accelerator: Any) -> None:
        config = _judge_config(model)
        self.label_names = list(config.label_names)
        self.chunk_samples = config.samples_per_chunk
        self.label_smoothing = config.label_smoothing
        rows = load_chunk_rows(self.args.data, self.args.train_split, self.args.cache_dir)
        self.sampler = BalancedChunkSampler(
            rows, context_s=config.context_s, seed=self.training.seed, rank=accelerator.process_index,
            world_size=accelerator.num_processes, balance=ClassBalance(oversample=self.args.oversample), label_names=self.label_names,
        )
        self.per_update = self.training.per_device_train_batch_size * self.training.gradient_accumulation_steps
        if len(self.sampler) < self.per_update:
            raise SystemExit(
                f"train_judge: {len(self.sampler)} balanced examples per rank are fewer than one update "
                f"({self.per_update} = per_device_train_batch_size x gradient_accumulation_steps); lower them or add data"
            )
        self.weights = class_weights(rows, len(self.label_names)).to(accelerator.device) if self.args.window_labels == "all" else None
        self.val_sampler = None
        if self.args.validation_split and self.args.validation_split != "none":
            try:
                val_rows = load_chunk_rows(self.args.data, self.args.validation_split, self.args.cache_dir)
            except KeyError:
                accelerator.print(f"train_judge: no {self.args.validation_split!r} split; validation is skipped")
            else:
                self.val_sampler = BalancedChunkSampler(
                    val_rows, context_s=config.context_s, seed=self.training.seed, rank=accelerator.process_index,
                    world_size=accelerator.num_processes, label_names=self.label_names,
                )

    def steps_per_epoch(self) -> int:
        return len(self.sampler) // self.per_update

    def micro_batches(self, start_step: int, accelerator: Any) -> Iterator[dict[str, torch.Tensor]]:
        # whole updates only, so that accumulation never spans epochs; the draw of epoch e depends
        # only on (seed, e): step k is always the same examples
        epoch, update = divmod(start_step, self.steps_per_epoch())
        batch_size = self.training.per_device_train_batch_size
        while True:
            data = EpochExamples(self.sampler, epoch, window_labels=self.args.window_labels == "all", chunk_samples=self.chunk_samples)
            data.indices = data.indices[update * self.per_update : self.steps_per_epoch() * self.per_update]
            loader = DataLoader(data, batch_size=batch_size, num_workers=self.training.num_workers, shuffle=False, drop_last=True)
            for batch in loader:
                yield {k: v for k, v in batch.items() if isinstance(v, torch.Tensor)}
            epoch, update = epoch + 1, 0

    def loss(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return step_loss(model, batch, self.weights, self.label_smoothing)

    def evaluate(self, model: torch.nn.Module, accelerator: Any, step: int) -> dict[str, Any] | None:
        """Validation loss and per-class ROC-AUC on a fixed balanced draw (gathered over ranks)."""
        if self.val_sampler is None:
            return None
        limit = max(1, self.args.max_eval_examples // accelerator.num_processes)
        probs, labels = predict_examples(model, self.val_sampler, limit, self.training.per_device_train_batch_size, accelerator.device)
        probs, labels = accelerator.gather(probs).cpu().numpy(), accelerator.gather(labels).cpu().numpy()
        loss = float(-np.mean(np.log(np.clip(probs[np.arange(len(labels)), labels], 1e-12, None)))) if len(labels) else math.nan
        return {"eval_loss": loss, "eval_examples": int(len(labels)), "eval_roc_auc": roc_auc_table(labels, probs, self.label_names)}

    def save_final(self, model: torch.nn.Module, folder: Path) -> None:
        judge = final_model(model)
        judge.config.backbone_mode = self.args.backbone_mode
        judge.save_pretrained(folder, safe_serialization=True)


def _judge_config(model: torch.nn.Module) -> TurnTakingJudgeConfig:
    return (model.get_base_model() if hasattr(model, "get_base_model") else model).config


def train(args: JudgeArguments, training: TrainingArguments) -> dict[str, Any]:
    """Run (or continue) training; return the skeleton's summary (step, losses, validation, compute)."""
    return run_training(JudgeRecipe(args, training), training, args)


def main(argv: Sequence[str] | None = None) -> int:
    args, training = parse_args(argv)
    summary = train(args, training)
    if summary["losses"]:
        print(json.dumps({"step": summary["step"], "last_loss": summary["losses"][-1], "validation": summary.get("validation")}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
