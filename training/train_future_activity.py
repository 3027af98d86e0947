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

Voice-activity-only models can train on voice activity alone: ``--train_va`` / ``--val_va``
take the ``.npz`` caches of :mod:`turneval.training.switchboard_va` (Switchboard's word times)
instead of ``--train_dir`` / ``--val_dir``; ``--vad_like_p`` and ``--clean_labels`` prepare
the model for the VAD output a report gives it (see :mod:`turneval.training.future_activity_data`).
Word-reading models (``vad_features="timing+words"`` or ``"timing+words+ends"``) take ``--train_words`` / ``--val_words``, the
caches of :mod:`turneval.training.switchboard_words` (activity and words), and
``--word_dropout_p``.
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
from turneval.training.switchboard_va import load_voice_activity


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

    train_dir: str | None = field(default=None, metadata={"help": "folder (or manifest) of dialogues: audio + turneval JSON; several, comma-separated, are pooled"})
    val_dir: str | None = field(default=None, metadata={"help": "validation dialogues (default: none)"})
    train_va: str | None = field(default=None, metadata={"help": "instead of --train_dir (vad models): a voice-activity cache (.npz, turneval.training.switchboard_va)"})
    val_va: str | None = field(default=None, metadata={"help": "instead of --val_dir: a voice-activity cache"})
    train_words: str | None = field(default=None, metadata={"help": "word-reading models: a word cache (.npz, turneval.training.switchboard_words) instead of --train_va"})
    val_words: str | None = field(default=None, metadata={"help": "word-reading models: a word cache for validation"})
    word_dropout_p: float = field(default=0.25, metadata={"help": "word-reading models: chance that a training crop has no words"})
    vad_like_p: float = field(default=0.0, metadata={"help": "chance of redrawing a training crop's activity as a VAD would report it"})
    mask_p: float = field(default=0.2, metadata={"help": "chance of silencing one stretch (up to 1 s) of one input channel; the targets keep it"})
    clean_labels: bool = field(default=False, metadata={"help": "targets from the DualTurn-cleaned activity (as the naturalness score uses)"})
    input_type: str = field(default="audio", metadata={"help": "model input when --model_config does not say", "choices": ["audio", "vad"]})
    window_s: float = field(default=20.0, metadata={"help": "seconds per training window"})
    alpha: float = field(default=2.0, metadata={"help": "loss weight of boundary-unit frames"})
    export_latest: bool = field(default=False, metadata={"help": "only write OUTPUT_DIR/final from the newest checkpoint, without training"})


def parse_args(argv: Sequence[str] | None = None) -> tuple[FutureActivityArguments, TrainingArguments]:
    args, training = parse_arguments(FutureActivityArguments, argv, prog="train_future_activity", defaults=TRAINING_DEFAULTS)
    if not args.train_dir and not args.train_va and not args.train_words and not args.export_latest:
        raise SystemExit("train_future_activity: give --train_dir (a folder or manifest of dialogues), --train_va (a voice-activity cache) "
                         "or --train_words (a word cache)")
    return args, training


def build_config(args: FutureActivityArguments, training: TrainingArguments) -> FutureActivityPredictorConfig:
    fields = read_options_file(training.model_config) if training.model_config else {}
    fields.setdefault("input_type", args.input_type)
    fields.setdefault("boundary_weight", args.alpha)
    return FutureActivityPredictorConfig(**fields)


def windows_for(folder: str | None, va_cache: str | None, window: WindowConfig, draws: int, seed: int, input_type: str,
                words_cache: str | None = None, model: torch.nn.Module | None = None) -> FutureActivityWindows:
    """Training crops from a dialogue folder (audio or vad models), a voice-activity cache (vad models)
    or a word cache (word-reading models: activity, words and the model's word cue)."""
    reads_words = bool(getattr(model, "reads_words", False))
    if words_cache is not None or reads_words:
        if words_cache is None or not reads_words:
            raise SystemExit("train_future_activity: a word cache (--train_words / --val_words) goes with a vad_features='timing+words' "
                             "model (--init_from a checkpoint made by turneval.training.switchboard_words init), and such a model needs one")
        from turneval.training.switchboard_words import load_words

        calls = load_words(words_cache)
        windows = FutureActivityWindows.from_voice_activity([c["va"] for c in calls], window, draws=draws, seed=seed)
        return windows.with_words(calls, model.word_cue)
    if (folder is None) == (va_cache is None):
        raise SystemExit("train_future_activity: give either a dialogue folder (--train_dir / --val_dir) or a voice-activity cache (--train_va / --val_va)")
    if va_cache is None:
        return FutureActivityWindows(load_corpus(folder), window, draws=draws, seed=seed, input_type=input_type)
    if input_type != "vad":
        raise SystemExit(f"{va_cache}: a voice-activity cache has no audio; it trains input_type 'vad' models only")

    return FutureActivityWindows.from_voice_activity(list(load_voice_activity(va_cache).values()), window, draws=draws, seed=seed)


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
        args = self.args
        window = WindowConfig(
            window_s=args.window_s, alpha=config.boundary_weight, vad_like_p=args.vad_like_p, mask_p=args.mask_p, clean_labels=args.clean_labels,
            word_dropout_p=args.word_dropout_p,
        )
        seed = self.training.seed
        self.train_set = windows_for(args.train_dir, args.train_va, window, 10**9, seed, config.input_type, args.train_words, model)
        self.val_set = None
        if args.val_dir or args.val_va or args.val_words:
            val_window = WindowConfig(window_s=args.window_s, alpha=config.boundary_weight, channel_swap_p=0.0, mask_p=0.0, clean_labels=args.clean_labels)
            self.val_set = windows_for(args.val_dir, args.val_va, val_window, VAL_DRAWS, 10_000 + seed, config.input_type, args.val_words, model)

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
