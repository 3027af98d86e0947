"""Train the FutureActivityPredictor (TurnNat §III) on the shared skeleton.

    accelerate launch -m turneval.training.train_future_activity \
        --train_dir corpus/train --val_dir corpus/val --output_dir runs/fap --max_train_steps 2000

This recipe holds the predictor's model, data and loss; arguments, optimizer, schedule, loop,
checkpoints (``OUTPUT_DIR/checkpoints/step_N``, exact resume with ``--resume_from_checkpoint
latest``) and logs are :mod:`turneval.training.common`'s. One CPU process, two CPU ranks
(``accelerate launch --multi_gpu --num_processes 2`` with ``--cpu``) and multi-GPU machines run
the same recipe. Loss: frame cross-entropy over the 256 VAP classes with weight ``alpha`` on
boundary-unit frames, plus the voice-activity BCE (TurnNat Eq. 5-6). Augmentation: channel
swap and masking a stretch of one channel. Every batch is a pure function of (seed, step,
rank), so resuming is exact.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch

from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.training.common import Recipe, TrainingArguments, export_latest, parse_arguments, read_options_file
from turneval.training.common import train as run_training
from turneval.training.corpus import load_corpus
from turneval.training.future_activity_data import FutureActivityWindows, WindowConfig

VAL_DRAWS = 64
"""Validation windows (fixed draws) per evaluation."""

TRAINING_DEFAULTS: dict[str, Any] = {
    "output_dir": "runs/fap",
    "learning_rate": 3e-4,
    "lr_scheduler_type": "cosine",
    "num_warmup_steps": 100,
    "max_train_steps": 2000,
    "checkpointing_steps": 500,
    "eval_steps": 500,
}
"""The predictor's departures from the shared defaults."""


@dataclass
class FutureActivityArguments:
    """The predictor's own options: its data, windows and boundary weight."""

    train_dir: str | None = field(default=None, metadata={"help": "folder (or manifest) of dialogues: audio + turneval JSON"})
    val_dir: str | None = field(default=None, metadata={"help": "validation dialogues (default: none)"})
    input_type: str = field(default="audio", metadata={"help": "model input when --model_config does not say", "choices": ["audio", "vad"]})
    window_s: float = field(default=20.0, metadata={"help": "seconds per training window"})
    alpha: float = field(default=2.0, metadata={"help": "loss weight of boundary-unit frames"})
    export_latest: bool = field(default=False, metadata={"help": "only write OUTPUT_DIR/final from the newest checkpoint, without training"})


def parse_args(argv: Sequence[str] | None = None) -> tuple[FutureActivityArguments, TrainingArguments]:
    args, training = parse_arguments(FutureActivityArguments, argv, prog="train_future_activity", defaults=TRAINING_DEFAULTS)
    if not args.train_dir and not args.export_latest:
        raise SystemExit("train_future_activity: give --train_dir (a folder or manifest of dialogues)")
    return args, training


def build_config(args: FutureActivityArguments, training: TrainingArguments) -> FutureActivityPredictorConfig:
    fields = read_options_file(training.model_config) if training.model_config else {}
    fields.setdefault("input_type", args.input_type)
    fields.setdefault("boundary_weight", args.alpha)
    return FutureActivityPredictorConfig(**fields)


def collate(examples: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {key: torch.stack([e[key] for e in examples]) for key in examples[0]}


class FutureActivityRecipe(Recipe):
    """The predictor's model, windows and loss for :func:`turneval.training.common.train`."""

    name = "future_activity"

    def __init__(self, args: FutureActivityArguments, training: TrainingArguments) -> None:
        self.args, self.training = args, training

    def build_model(self) -> torch.nn.Module:
        if self.training.init_from:
            return FutureActivityPredictorModel.from_pretrained(self.training.init_from)
        return FutureActivityPredictorModel(build_config(self.args, self.training))

    def setup(self, model: torch.nn.Module, accelerator: Any) -> None:
        config = model.config
        window = WindowConfig(window_s=self.args.window_s, alpha=config.boundary_weight)
        seed = self.training.seed
        self.train_set = FutureActivityWindows(load_corpus(self.args.train_dir), window, draws=10**9, seed=seed, input_type=config.input_type)
        self.val_set = None
        if self.args.val_dir:
            val_window = WindowConfig(window_s=self.args.window_s, alpha=config.boundary_weight, channel_swap_p=0.0, mask_p=0.0)
            self.val_set = FutureActivityWindows(
                load_corpus(self.args.val_dir), val_window, draws=VAL_DRAWS, seed=10_000 + seed, input_type=config.input_type
            )

    def micro_batches(self, start_step: int, accelerator: Any) -> Iterator[dict[str, torch.Tensor]]:
        step = start_step
        while True:
            for micro in range(self.training.gradient_accumulation_steps):
                yield self.batch_for(step, micro, accelerator.process_index, accelerator.num_processes)
            step += 1

    def batch_for(self, step: int, micro: int, rank: int, num_processes: int) -> dict[str, torch.Tensor]:
        """The micro-batch of (step, micro-step, rank): a pure function of them, so resuming is exact."""
        batch_size = self.training.per_device_train_batch_size
        per_step = batch_size * self.training.gradient_accumulation_steps * num_processes
        first = step * per_step + (micro * num_processes + rank) * batch_size
        return collate([self.train_set[(first + j) % len(self.train_set)] for j in range(batch_size)])

    def loss(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return model(**batch).loss

    def evaluate(self, model: torch.nn.Module, accelerator: Any, step: int) -> dict[str, Any] | None:
        """Mean weighted loss over the fixed validation windows, over all ranks."""
        if self.val_set is None:
            return None
        batch_size = self.training.per_device_train_batch_size
        losses = []
        for start in range(accelerator.process_index * batch_size, len(self.val_set), batch_size * accelerator.num_processes):
            batch = collate([self.val_set[i] for i in range(start, min(start + batch_size, len(self.val_set)))])
            losses.append(model(**{k: v.to(accelerator.device) for k, v in batch.items()}).loss.reshape(1))
        local = torch.cat(losses) if losses else torch.zeros(0, device=accelerator.device)
        gathered = accelerator.gather_for_metrics(local) if accelerator.num_processes > 1 else local
        return {"val_loss": float(gathered.mean()) if gathered.numel() else None}


def train(args: FutureActivityArguments, training: TrainingArguments) -> dict[str, Any]:
    """Run (or continue) training; return the skeleton's summary (step, losses, validation, compute)."""
    return run_training(FutureActivityRecipe(args, training), training, args)


def main(argv: Sequence[str] | None = None) -> int:
    args, training = parse_args(argv)
    if args.export_latest:
        print(f"wrote {export_latest(FutureActivityRecipe(args, training), Path(training.output_dir))}")
        return 0
    train(args, training)
    return 0


if __name__ == "__main__":
    sys.exit(main())
