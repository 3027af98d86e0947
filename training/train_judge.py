"""Train the TurnTakingJudge with Accelerate (Talking Turns §4.1, A.4; SPEC §5).

Class-balanced examples come from the turn_taking_chunks rows through
``BalancedChunkSampler`` (every class at about the count of T, redrawn each epoch). The
backbone is frozen (the paper), adapted with LoRA (peft; merged into the weights before
saving) or fully fine-tuned. Gradient accumulation, mixed precision where the device allows,
checkpoints every N steps with exact resume (``accelerator.save_state`` / ``load_state``),
validation (loss and one-vs-rest ROC-AUC), a tqdm bar and a JSON Lines metrics log.

Runs unchanged on one CPU process, several CPU ranks and several GPUs::

    python -m turneval.training.train_judge --config training/configs/judge_synthetic.yaml
    accelerate launch --multi_gpu --num_processes 2 --cpu -m turneval.training.train_judge \
        --config training/configs/judge_synthetic.yaml --cpu
    accelerate launch -m turneval.training.train_judge --config training/configs/judge_switchboard.yaml

The output folder gets ``metrics.jsonl``, ``checkpoints/step-N/`` (resume with
``--resume_from latest``; ``--stop_after_steps N`` ends a time-limited session after N steps
so that the next one resumes) and the final model in ``final/`` (safetensors, loadable with
``AutoModel.from_pretrained(path, trust_remote_code=True)``).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader

from turneval.dataset_scripts.sampler import BalancedChunkSampler
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.training.judge_data import EpochExamples, class_weights, load_chunk_rows

DEFAULTS: dict[str, Any] = {
    "data": None,
    "train_split": "train",
    "validation_split": "validation",
    "cache_dir": None,
    "output_dir": "runs/judge",
    "backbone": "tiny.en",
    "encoder_config": None,
    "init_from": None,
    "context_mode": "window",
    "context_s": 30.0,
    "stream_hop_s": None,
    "backbone_mode": "frozen",
    "lora_r": 8,
    "lora_alpha": 16,
    "lora_dropout": 0.0,
    "label_smoothing": 0.0,
    "classifier_dropout": 0.0,
    "window_labels": "last",
    "learning_rate": 1e-3,
    "weight_decay": 0.0,
    "lr_scheduler": "linear",
    "warmup_steps": 0,
    "batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_steps": None,
    "epochs": 1,
    "oversample": False,
    "mixed_precision": "auto",
    "seed": 0,
    "num_workers": 0,
    "save_steps": 0,
    "save_total_limit": None,
    "eval_steps": 0,
    "max_eval_examples": 512,
    "logging_steps": 1,
    "resume_from": None,
    "stop_after_steps": None,
    "cpu": False,
}


class TrainProgress:
    """Where training stands (checkpointed with the model so a resumed run continues exactly)."""

    def __init__(self) -> None:
        self.step = 0  # optimizer steps done
        self.epoch = 0
        self.offset = 0  # examples of this rank's epoch share already consumed

    def state_dict(self) -> dict[str, int]:
        return {"step": self.step, "epoch": self.epoch, "offset": self.offset}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.step, self.epoch, self.offset = int(state["step"]), int(state["epoch"]), int(state["offset"])


# ---------------------------------------------------------------------------- arguments
# Options whose default is None, by type (the others take the type of their default).
_OPTION_TYPES = {"max_steps": int, "stop_after_steps": int, "save_total_limit": int, "stream_hop_s": float}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Train the TurnTakingJudge (Accelerate). Every option can also come from --config.")
    parser.add_argument("--config", help="YAML or JSON file of defaults for the options below")
    for key, value in DEFAULTS.items():
        flag = f"--{key}"
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None)
        else:
            kind = _OPTION_TYPES.get(key, type(value) if value is not None else str)
            parser.add_argument(flag, type=kind, default=None)
    return parser


def resolve_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Defaults < config file < command line."""
    args = build_parser().parse_args(argv)
    values = dict(DEFAULTS)
    if args.config:
        values.update(read_config_file(args.config))
    values.update({k: v for k, v in vars(args).items() if v is not None and k != "config"})
    if isinstance(values.get("encoder_config"), str):
        values["encoder_config"] = json.loads(values["encoder_config"])
    if not values["data"]:
        raise SystemExit("train_judge: give --data (a turn_taking_chunks parquet folder or a dialogue manifest)")
    if values["window_labels"] not in ("last", "all"):
        raise SystemExit("train_judge: --window_labels must be 'last' or 'all'")
    if values["window_labels"] == "all" and values["context_mode"] != "causal":
        raise SystemExit("train_judge: --window_labels all needs --context_mode causal (one pass scores every chunk)")
    return argparse.Namespace(**values)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Options from a YAML or JSON file; unknown keys are an error that names the file."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        values = yaml.safe_load(text) or {}
    else:
        values = json.loads(text)
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        raise SystemExit(f"{path}: unknown options {unknown}; known: {sorted(DEFAULTS)}")
    return values


# ---------------------------------------------------------------------------- model
def build_model(args: argparse.Namespace) -> TurnTakingJudge:
    """A judge from a checkpoint (``init_from``), random init (``backbone: random``) or Whisper."""
    overrides = {
        "context_mode": args.context_mode,
        "context_s": args.context_s,
        "stream_hop_s": args.stream_hop_s,
        "backbone_mode": args.backbone_mode,
        "label_smoothing": args.label_smoothing,
        "classifier_dropout": args.classifier_dropout,
    }
    if args.init_from:
        return TurnTakingJudge.from_pretrained(args.init_from, **overrides)
    if args.backbone == "random":
        return TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=args.encoder_config, backbone_source="random init", **overrides))
    from turneval.modeling.whisper_conversion import judge_from_whisper

    return judge_from_whisper(args.backbone, cache=args.cache_dir, encoder_config=args.encoder_config or {}, **overrides)


def apply_backbone_mode(model: TurnTakingJudge, args: argparse.Namespace) -> torch.nn.Module:
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


def mixed_precision_mode(requested: str) -> str:
    """``auto``: bf16 on GPUs that have it, fp16 on other GPUs, none on CPU."""
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


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


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run training; return a summary (final step, last losses, validation metrics)."""
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm
    from transformers import get_scheduler

    from turneval.training.evaluate_judge import roc_auc_table

    output_dir = Path(args.output_dir)
    accelerator = Accelerator(
        cpu=args.cpu,
        mixed_precision=mixed_precision_mode(args.mixed_precision),
        gradient_accumulation_steps=args.gradient_accumulation_steps,
    )
    set_seed(args.seed)
    model = apply_backbone_mode(build_model(args), args)
    config: TurnTakingJudgeConfig = (model.get_base_model() if hasattr(model, "get_base_model") else model).config
    label_names = list(config.label_names)

    rows = load_chunk_rows(args.data, args.train_split, args.cache_dir)
    sampler = BalancedChunkSampler(
        rows,
        context_s=config.context_s,
        seed=args.seed,
        rank=accelerator.process_index,
        world_size=accelerator.num_processes,
        oversample=args.oversample,
        label_names=label_names,
    )
    per_update = args.batch_size * args.gradient_accumulation_steps
    updates_per_epoch = len(sampler) // per_update
    if updates_per_epoch == 0:
        raise SystemExit(
            f"train_judge: {len(sampler)} balanced examples per rank are fewer than one update "
            f"({per_update} = batch_size x gradient_accumulation_steps); lower them or add data"
        )
    max_steps = args.max_steps or args.epochs * updates_per_epoch
    weights = class_weights(rows, len(label_names)).to(accelerator.device) if args.window_labels == "all" else None

    val_sampler = None
    if args.eval_steps or args.validation_split:
        try:
            val_rows = load_chunk_rows(args.data, args.validation_split, args.cache_dir)
            val_sampler = BalancedChunkSampler(
                val_rows, context_s=config.context_s, seed=args.seed, rank=accelerator.process_index,
                world_size=accelerator.num_processes, label_names=label_names,
            )
        except KeyError:
            accelerator.print(f"train_judge: no {args.validation_split!r} split; validation is skipped")

    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.learning_rate, weight_decay=args.weight_decay)
    scheduler = get_scheduler(args.lr_scheduler, optimizer, num_warmup_steps=args.warmup_steps, num_training_steps=max_steps)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    progress = TrainProgress()
    accelerator.register_for_checkpointing(progress)
    checkpoints = output_dir / "checkpoints"
    if args.resume_from:
        resume = latest_checkpoint(checkpoints) if args.resume_from == "latest" else Path(args.resume_from)
        if resume is None:
            raise SystemExit(f"train_judge: --resume_from latest, but {checkpoints} holds no checkpoint")
        accelerator.load_state(str(resume))
        accelerator.print(f"resumed from {resume} at step {progress.step}")

    log_path = output_dir / "metrics.jsonl"
    if accelerator.is_main_process:
        output_dir.mkdir(parents=True, exist_ok=True)
        if not args.resume_from and log_path.exists():
            log_path.unlink()
    bar = tqdm(total=max_steps, initial=progress.step, disable=not accelerator.is_local_main_process, desc="judge")
    summary: dict[str, Any] = {"losses": []}
    started = time.time()
    window_labels = args.window_labels == "all"
    model.train()
    while progress.step < max_steps:
        data = EpochExamples(sampler, progress.epoch, window_labels=window_labels, chunk_samples=config.samples_per_chunk)
        usable = updates_per_epoch * per_update  # whole updates only: accumulation never spans epochs
        data.indices = data.indices[progress.offset : usable]
        loader = DataLoader(data, batch_size=args.batch_size, num_workers=args.num_workers, shuffle=False, drop_last=True)
        pending: list[float] = []
        for batch in loader:
            batch = {k: v.to(accelerator.device) for k, v in batch.items() if isinstance(v, torch.Tensor)}
            with accelerator.accumulate(model):
                loss = step_loss(model, batch, weights, config.label_smoothing)
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            progress.offset += args.batch_size
            pending.append(float(loss.detach()))
            if not accelerator.sync_gradients:
                continue
            progress.step += 1
            step_mean = accelerator.reduce(torch.tensor(np.mean(pending), device=accelerator.device), reduction="mean").item()
            pending = []
            summary["losses"].append(step_mean)
            bar.update(1)
            bar.set_postfix(loss=f"{step_mean:.4f}")
            if args.logging_steps and progress.step % args.logging_steps == 0:
                log_row(accelerator, log_path, {"step": progress.step, "epoch": progress.epoch, "loss": step_mean, "lr": scheduler.get_last_lr()[0], "elapsed_s": round(time.time() - started, 2)})
            if args.eval_steps and val_sampler is not None and progress.step % args.eval_steps == 0:
                summary["validation"] = validate(model, val_sampler, args, accelerator, label_names, log_path, progress.step, roc_auc_table)
                model.train()
            if args.save_steps and progress.step % args.save_steps == 0:
                save_checkpoint(accelerator, checkpoints, progress.step, args.save_total_limit)
            if progress.step >= max_steps or (args.stop_after_steps and progress.step >= args.stop_after_steps):
                break
        else:
            progress.epoch += 1
            progress.offset = 0
            continue
        break  # max_steps reached, or this session's stop_after_steps
    bar.close()
    if progress.step < max_steps:  # a time-limited session: the checkpoints are the result
        accelerator.print(f"stopped at step {progress.step} of {max_steps}; continue with --resume_from latest")
        accelerator.end_training()
        return {**summary, "step": progress.step}
    if val_sampler is not None and summary.get("validation", {}).get("step") != progress.step:
        summary["validation"] = validate(model, val_sampler, args, accelerator, label_names, log_path, progress.step, roc_auc_table)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        judge = final_model(accelerator.unwrap_model(model))
        judge.config.backbone_mode = args.backbone_mode
        judge.save_pretrained(output_dir / "final", safe_serialization=True)
        (output_dir / "final" / "training_args.json").write_text(json.dumps(vars(args), indent=2, default=str), encoding="utf-8")
    accelerator.end_training()
    summary["step"] = progress.step
    return summary


def validate(model, sampler, args, accelerator, label_names, log_path, step, roc_auc_table) -> dict[str, Any]:
    """Validation loss and per-class ROC-AUC on a fixed balanced draw (gathered over ranks)."""
    model.eval()
    limit = max(1, args.max_eval_examples // accelerator.num_processes)
    probs, labels = predict_examples(model, sampler, limit, args.batch_size, accelerator.device)
    probs, labels = accelerator.gather(probs).cpu().numpy(), accelerator.gather(labels).cpu().numpy()
    loss = float(-np.mean(np.log(np.clip(probs[np.arange(len(labels)), labels], 1e-12, None)))) if len(labels) else math.nan
    result = {"step": step, "eval_loss": loss, "eval_examples": int(len(labels)), "eval_roc_auc": roc_auc_table(labels, probs, label_names)}
    log_row(accelerator, log_path, result)
    return result


def log_row(accelerator, path: Path, row: dict[str, Any]) -> None:
    if accelerator.is_main_process:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")


def save_checkpoint(accelerator, folder: Path, step: int, keep: int | None) -> None:
    """``accelerator.save_state`` to ``folder/step-N`` (all ranks take part); prune old ones."""
    target = folder / f"step-{step}"
    accelerator.save_state(str(target))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process and keep:
        import shutil

        for old in sorted(folder.glob("step-*"), key=lambda p: int(p.name.split("-")[1]))[:-keep]:
            shutil.rmtree(old, ignore_errors=True)


def latest_checkpoint(folder: Path) -> Path | None:
    found = sorted(folder.glob("step-*"), key=lambda p: int(p.name.split("-")[1])) if folder.is_dir() else []
    return found[-1] if found else None


def main(argv: Sequence[str] | None = None) -> int:
    summary = train(resolve_args(argv))
    if summary["losses"]:
        print(json.dumps({"step": summary["step"], "last_loss": summary["losses"][-1], "validation": summary.get("validation")}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
