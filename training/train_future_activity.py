"""Train the FutureActivityPredictor with Accelerate.

    accelerate launch training/train_future_activity.py \
        --train-dir corpus/train --val-dir corpus/val --output-dir runs/fap --steps 2000

One CPU process, two CPU ranks (``accelerate launch --multi_gpu --num_processes 2`` with
``--cpu``) and multi-GPU machines run the same script. Loss: frame cross-entropy over the 256
VAP classes with weight ``alpha`` on boundary-unit frames, plus the voice-activity BCE
(TurnNat Eq. 5-6). Augmentation: channel swap and masking a stretch of one channel.

Checkpoints (``accelerator.save_state``) are written every ``--save-every`` steps under
``OUTPUT_DIR/checkpoints/step_N``; ``--resume`` continues from the latest one exactly, because
every batch is a pure function of (seed, step, rank).

Voice-activity-only models can train on voice activity alone: ``--train-va`` / ``--val-va``
take the ``.npz`` caches of ``turneval.training.switchboard_va`` (Switchboard's word times)
instead of ``--train-dir`` / ``--val-dir``; ``--vad-like-p`` and ``--clean-labels`` prepare
the model for the VAD output a report gives it (see ``future_activity_data``).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from tqdm.auto import tqdm
from transformers import get_cosine_schedule_with_warmup

from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.training.corpus import load_corpus
from turneval.training.future_activity_data import FutureActivityWindows, WindowConfig

VAL_DRAWS = 64


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train-dir", help="folder (or manifest) of dialogues: audio + turneval JSON")
    p.add_argument("--val-dir", help="validation dialogues (default: none)")
    p.add_argument("--train-va", help="instead of --train-dir (vad models): a voice-activity cache (.npz, turneval.training.switchboard_va)")
    p.add_argument("--val-va", help="instead of --val-dir: a voice-activity cache")
    p.add_argument("--vad-like-p", type=float, default=0.0, help="chance of redrawing a training crop's activity as a VAD would report it")
    p.add_argument("--clean-labels", action="store_true", help="targets from the DualTurn-cleaned activity (as the naturalness score uses)")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--config", help="JSON file of FutureActivityPredictorConfig fields")
    p.add_argument("--init-from", help="start from this checkpoint instead of random weights")
    p.add_argument("--input-type", choices=["audio", "vad"], default="audio")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch-size", type=int, default=8, help="per process and micro-step")
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--window-s", type=float, default=20.0)
    p.add_argument("--alpha", type=float, default=2.0, help="loss weight of boundary-unit frames")
    p.add_argument("--save-every", type=int, default=500)
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT_DIR")
    p.add_argument("--stop-at", type=int, help="save and stop after this step (to fit a time slot); --resume goes on")
    p.add_argument("--export-latest", action="store_true", help="only write OUTPUT_DIR/final from the latest checkpoint, without training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu", action="store_true", help="run on CPU even where a GPU exists")
    p.add_argument("--mixed-precision", choices=["no", "fp16", "bf16"], default="no")
    return p.parse_args(argv)


def build_config(args: argparse.Namespace) -> FutureActivityPredictorConfig:
    fields = json.loads(Path(args.config).read_text()) if args.config else {}
    fields.setdefault("input_type", args.input_type)
    fields.setdefault("boundary_weight", args.alpha)
    return FutureActivityPredictorConfig(**fields)


def windows_for(folder: str | None, va_cache: str | None, window: WindowConfig, draws: int, seed: int, config) -> FutureActivityWindows:
    """Training crops from a dialogue folder (audio or vad models) or a voice-activity cache (vad models)."""
    if (folder is None) == (va_cache is None):
        raise SystemExit("give either a dialogue folder (--train-dir / --val-dir) or a voice-activity cache (--train-va / --val-va)")
    if va_cache is None:
        return FutureActivityWindows(load_corpus(folder), window, draws=draws, seed=seed, input_type=config.input_type)
    if config.input_type != "vad":
        raise SystemExit(f"{va_cache}: a voice-activity cache has no audio; it trains input_type 'vad' models only (set it with --input-type vad)")
    from turneval.training.switchboard_va import load_voice_activity

    return FutureActivityWindows.from_voice_activity(list(load_voice_activity(va_cache).values()), window, draws=draws, seed=seed)


def collate(examples: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {key: torch.stack([e[key] for e in examples]) for key in examples[0]}


def batch_for(dataset: FutureActivityWindows, step: int, micro: int, args, accelerator: Accelerator) -> dict[str, torch.Tensor]:
    """The batch of (step, micro-step, rank): a pure function of them, so resuming is exact."""
    per_step = args.batch_size * args.grad_accum * accelerator.num_processes
    first = step * per_step + (micro * accelerator.num_processes + accelerator.process_index) * args.batch_size
    return collate([dataset[(first + j) % len(dataset)] for j in range(args.batch_size)])


def latest_checkpoint(output_dir: Path) -> tuple[Path, int] | None:
    found = sorted((int(p.name.split("_")[1]), p) for p in (output_dir / "checkpoints").glob("step_*") if (p / "trainer_state.json").exists())
    return (found[-1][1], found[-1][0]) if found else None


@torch.no_grad()
def evaluate(model, dataset: FutureActivityWindows | None, args, accelerator: Accelerator) -> float | None:
    """Mean weighted loss over a fixed set of validation windows, averaged over ranks."""
    if dataset is None:
        return None
    model.eval()
    losses = []
    for start in range(accelerator.process_index * args.batch_size, len(dataset), args.batch_size * accelerator.num_processes):
        batch = collate([dataset[i] for i in range(start, min(start + args.batch_size, len(dataset)))])
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        losses.append(model(**batch).loss.reshape(1))
    model.train()
    local = torch.cat(losses) if losses else torch.zeros(0, device=accelerator.device)
    gathered = accelerator.gather_for_metrics(local) if accelerator.num_processes > 1 else local
    return float(gathered.mean()) if gathered.numel() else None


def save_final(model: FutureActivityPredictorModel, output_dir: Path) -> Path:
    """The model as a standalone checkpoint (safetensors + code for trust_remote_code) in OUTPUT_DIR/final."""
    model.config.register_for_auto_class()
    model.register_for_auto_class("AutoModel")
    model.save_pretrained(output_dir / "final", safe_serialization=True)
    return output_dir / "final"


def export_latest(output_dir: Path) -> Path:
    """Write OUTPUT_DIR/final from the newest training checkpoint (e.g. after --stop-at)."""
    from safetensors.torch import load_file

    found = latest_checkpoint(output_dir)
    if found is None:
        raise FileNotFoundError(f"{output_dir}: no checkpoint to export (expected checkpoints/step_N/)")
    model = FutureActivityPredictorModel(FutureActivityPredictorConfig.from_pretrained(output_dir))
    model.load_state_dict(load_file(str(found[0] / "model.safetensors")))
    return save_final(model, output_dir)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.export_latest:
        print(f"wrote {export_latest(Path(args.output_dir))}")
        return 0
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision, gradient_accumulation_steps=args.grad_accum)
    set_seed(args.seed)
    output_dir = Path(args.output_dir)
    config = build_config(args)
    if args.init_from:
        model = FutureActivityPredictorModel.from_pretrained(args.init_from)
        config = model.config
    else:
        model = FutureActivityPredictorModel(config)
    window = WindowConfig(window_s=args.window_s, alpha=config.boundary_weight, vad_like_p=args.vad_like_p, clean_labels=args.clean_labels)
    train_set = windows_for(args.train_dir, args.train_va, window, 10**9, args.seed, config)
    val_set = None
    if args.val_dir or args.val_va:
        val_window = WindowConfig(window_s=args.window_s, alpha=config.boundary_weight, channel_swap_p=0.0, mask_p=0.0, clean_labels=args.clean_labels)
        val_set = windows_for(args.val_dir, args.val_va, val_window, VAL_DRAWS, 10_000 + args.seed, config)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    # A prepared scheduler steps once per process per optimizer step (accelerate's convention).
    ranks = accelerator.num_processes
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps * ranks, args.steps * ranks)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)

    start_step = 0
    if args.resume and (found := latest_checkpoint(output_dir)):
        accelerator.load_state(str(found[0]))
        start_step = found[1]
        accelerator.print(f"resumed from {found[0]} (step {start_step})")

    log_path = output_dir / "metrics.jsonl"
    if accelerator.is_main_process:
        output_dir.mkdir(parents=True, exist_ok=True)
        config.save_pretrained(output_dir)
    model.train()
    last_step = min(args.steps, args.stop_at or args.steps)
    progress = tqdm(range(start_step, last_step), initial=start_step, total=args.steps, disable=not accelerator.is_local_main_process, desc="train")
    started = time.time()
    for step in progress:
        for micro in range(args.grad_accum):
            batch = {k: v.to(accelerator.device) for k, v in batch_for(train_set, step, micro, args, accelerator).items()}
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        done = step + 1
        record = {"step": done, "loss": float(loss.detach()), "lr": scheduler.get_last_lr()[0], "elapsed_s": round(time.time() - started, 2)}
        if val_set is not None and (done % args.eval_every == 0 or done == args.steps):
            record["val_loss"] = evaluate(model, val_set, args, accelerator)
        progress.set_postfix(loss=f"{record['loss']:.3f}")
        if accelerator.is_main_process:
            with log_path.open("a") as f:
                f.write(json.dumps(record) + "\n")
        if done % args.save_every == 0 or done == last_step:
            checkpoint = output_dir / "checkpoints" / f"step_{done}"
            accelerator.save_state(str(checkpoint))
            if accelerator.is_main_process:
                (checkpoint / "trainer_state.json").write_text(json.dumps({"step": done, "seed": args.seed}))
        accelerator.wait_for_everyone()

    if accelerator.is_main_process and last_step == args.steps:
        save_final(accelerator.unwrap_model(model), output_dir)
    accelerator.end_training()
    if start_step < last_step and not math.isfinite(record["loss"]):
        raise RuntimeError("training diverged: the last loss is not finite")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
