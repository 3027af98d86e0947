"""The training skeleton that every recipe shares (docs/training.md).

A recipe (``train_judge.py``, ``train_future_activity.py``) holds only what is its own: the
model, the data and the loss, as a :class:`Recipe`. Everything else is here, once:

- arguments: :class:`TrainingArguments` plus the recipe's own dataclass, parsed with
  transformers' ``HfArgumentParser`` from flags and/or a YAML/JSON file (``--config``; flags
  win). The names are those of transformers' ``no_trainer`` examples (``--learning_rate``,
  ``--lr_scheduler_type``, ``--num_warmup_steps``, ``--max_train_steps``,
  ``--checkpointing_steps``, ``--resume_from_checkpoint``, ...). Model fields come from a
  separate file, ``--model_config``.
- the optimizer (AdamW over the trainable parameters) and the learning-rate schedule. A
  scheduler prepared by Accelerate steps once per process for every optimizer step, so the
  schedule is made ``num_processes`` times longer: with two ranks it still reaches its end
  at the last step, not halfway (the test compares the rates of a 1-rank and a 2-rank run).
- the loop: gradient accumulation, clipping, a tqdm bar, a JSON Lines log
  (``OUTPUT_DIR/metrics.jsonl``: step, loss, lr, elapsed seconds, evaluation results).
- checkpoints ``OUTPUT_DIR/checkpoints/step_N`` (``accelerator.save_state``; the newest
  ``--checkpoints_total_limit`` are kept) and exact resume: every batch is a pure function of
  the step, and the random states come back with the checkpoint. ``--stop_after_steps N``
  ends a time-limited session at step N; ``--resume_from_checkpoint latest`` goes on.
- the compute used (wall seconds summed over sessions, processes, device), written with the
  final model (``OUTPUT_DIR/final/training_compute.json``) and to ``OUTPUT_DIR/compute.json``.
"""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch

from turneval.dataset_scripts.files import to_jsonable


CHECKPOINT_PREFIX = "step_"


@dataclass
class TrainingArguments:
    """Options every recipe takes (the names of transformers' ``no_trainer`` examples)."""

    output_dir: str = field(default="runs/train", metadata={"help": "where checkpoints, metrics.jsonl and final/ go"})
    model_config: str | None = field(default=None, metadata={"help": "YAML or JSON file of model config fields"})
    init_from: str | None = field(default=None, metadata={"help": "start from this saved model instead of a fresh one"})
    learning_rate: float = field(default=3e-4, metadata={"help": "peak learning rate (AdamW)"})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    lr_scheduler_type: str = field(
        default="cosine",
        metadata={"help": "transformers scheduler name", "choices": ["linear", "cosine", "constant", "constant_with_warmup"]},
    )
    num_warmup_steps: int = field(default=0, metadata={"help": "optimizer steps of linear warm-up"})
    max_train_steps: int | None = field(default=None, metadata={"help": "optimizer steps in all (default: num_train_epochs of the data)"})
    num_train_epochs: int = field(default=1, metadata={"help": "epochs, when max_train_steps is not given"})
    per_device_train_batch_size: int = field(default=8, metadata={"help": "examples per process and micro-step"})
    gradient_accumulation_steps: int = field(default=1, metadata={"help": "micro-steps per optimizer step"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "clip the gradient norm to this (0: no clipping)"})
    checkpointing_steps: int | None = field(default=None, metadata={"help": "save a resumable checkpoint every N steps"})
    checkpoints_total_limit: int | None = field(default=None, metadata={"help": "keep only the newest N checkpoints"})
    resume_from_checkpoint: str | None = field(default=None, metadata={"help": "'latest' or a checkpoints/step_N folder"})
    stop_after_steps: int | None = field(default=None, metadata={"help": "end this session after step N (resume later)"})
    eval_steps: int | None = field(default=None, metadata={"help": "evaluate every N steps (and at the end)"})
    logging_steps: int = field(default=1, metadata={"help": "log the loss every N steps"})
    seed: int = field(default=0, metadata={"help": "seed of the model init, the data draws and dropout"})
    cpu: bool = field(default=False, metadata={"help": "run on CPU even where a GPU exists"})
    mixed_precision: str = field(default="auto", metadata={"help": "auto: bf16/fp16 on GPUs, none on CPU", "choices": ["auto", "no", "fp16", "bf16"]})
    num_workers: int = field(default=0, metadata={"help": "DataLoader workers, where a recipe reads files"})


def parse_arguments(
    recipe_type: type,
    argv: Sequence[str] | None = None,
    prog: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> tuple[Any, TrainingArguments]:
    """``(recipe_args, training_args)`` from flags and an optional ``--config`` YAML/JSON file.

    Precedence: dataclass defaults < the recipe's ``defaults`` < the config file < flags. An
    unknown key in the file is an error that names the file and the known keys.
    """
    from transformers import HfArgumentParser

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = HfArgumentParser((recipe_type, TrainingArguments), prog=prog)
    parser.add_argument("--config", help="YAML or JSON file of the options below (flags win)")
    parser.set_defaults(**(defaults or {}))
    config_path = _pop_option(argv, "--config")
    if config_path is not None:
        values = read_options_file(config_path)
        known = {f.name for t in (recipe_type, TrainingArguments) for f in dataclasses.fields(t)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise SystemExit(f"{config_path}: unknown options {unknown}; known options: {sorted(known)}")
        parser.set_defaults(**values)
    # the extra namespace that follows the two dataclasses holds only --config (already read)
    recipe_args, training_args = parser.parse_args_into_dataclasses(args=argv)[:2]
    return recipe_args, training_args


def _pop_option(argv: list[str], name: str) -> str | None:
    """Remove ``name VALUE`` / ``name=VALUE`` from argv and return VALUE."""
    for i, arg in enumerate(argv):
        if arg == name:
            if i + 1 >= len(argv):
                raise SystemExit(f"{name} needs a file")
            value = argv[i + 1]
            del argv[i : i + 2]
            return value
        if arg.startswith(name + "="):
            del argv[i]
            return arg.split("=", 1)[1]
    return None


def read_options_file(path: str | Path) -> dict[str, Any]:
    """A dict of options from a YAML (``.yaml``/``.yml``) or JSON file; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"{path}: options file not found")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            values = yaml.safe_load(text) or {}
        else:
            values = json.loads(text)
    except Exception as err:  # yaml and json raise different types; both mean "fix the file"
        raise SystemExit(f"{path}: not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'} ({err})") from None
    if not isinstance(values, dict):
        raise SystemExit(f"{path}: expected a mapping of option names to values")
    return values


def mixed_precision_mode(requested: str) -> str:
    """``auto``: bf16 on GPUs that have it, fp16 on other GPUs, none on CPU."""
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


def make_scheduler(name: str, optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int, num_processes: int) -> Any:
    """A transformers learning-rate schedule over ``total_steps`` optimizer steps, for use
    after ``accelerator.prepare``: the prepared scheduler steps ``num_processes`` times per
    optimizer step, so both lengths are scaled by it."""
    from transformers import get_scheduler

    return get_scheduler(name, optimizer, num_warmup_steps=warmup_steps * num_processes, num_training_steps=total_steps * num_processes)


class TrainState:
    """Where training stands, checkpointed with the model (``accelerator.register_for_checkpointing``)."""

    def __init__(self) -> None:
        self.step = 0  # optimizer steps done
        self.elapsed_s = 0.0  # wall time of all sessions so far

    def state_dict(self) -> dict[str, float]:
        return {"step": self.step, "elapsed_s": self.elapsed_s}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.step, self.elapsed_s = int(state["step"]), float(state.get("elapsed_s", 0.0))


def checkpoint_step(path: Path) -> int:
    return int(path.name[len(CHECKPOINT_PREFIX) :])


def list_checkpoints(output_dir: str | Path) -> list[Path]:
    """``OUTPUT_DIR/checkpoints/step_N`` folders, oldest first."""
    folder = Path(output_dir) / "checkpoints"
    found = [p for p in folder.glob(f"{CHECKPOINT_PREFIX}*") if p.is_dir() and p.name[len(CHECKPOINT_PREFIX) :].isdigit()] if folder.is_dir() else []
    return sorted(found, key=checkpoint_step)


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[-1] if found else None


def resolve_resume(spec: str | None, output_dir: str | Path) -> Path | None:
    """The checkpoint folder that ``--resume_from_checkpoint`` names (None: start fresh)."""
    if not spec:
        return None
    path = latest_checkpoint(output_dir) if spec == "latest" else Path(spec)
    if path is None:
        raise SystemExit(f"--resume_from_checkpoint latest, but {Path(output_dir) / 'checkpoints'} holds no {CHECKPOINT_PREFIX}N folder")
    if not path.is_dir():
        raise SystemExit(f"--resume_from_checkpoint {spec}: no such checkpoint folder")
    return path


def save_checkpoint(accelerator: Any, output_dir: Path, step: int, keep: int | None) -> Path:
    """``accelerator.save_state`` into ``checkpoints/step_N`` (every rank takes part); keep the newest ``keep``."""
    target = output_dir / "checkpoints" / f"{CHECKPOINT_PREFIX}{step}"
    accelerator.save_state(str(target))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process and keep:
        for old in list_checkpoints(output_dir)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    return target


class MetricsLog:
    """``metrics.jsonl``: one JSON object per line, written by the main process only."""

    def __init__(self, path: Path, is_main: bool, fresh: bool) -> None:
        self.path, self.is_main = path, is_main
        if is_main:
            path.parent.mkdir(parents=True, exist_ok=True)
            if fresh and path.exists():
                path.unlink()

    def write(self, row: dict[str, Any]) -> None:
        if self.is_main:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(to_jsonable(row)) + "\n")


class Recipe:
    """What a training recipe supplies; the skeleton (:func:`train`) does the rest.

    Subclasses set ``name`` and implement the methods below. ``micro_batches(start_step)``
    must be a pure function of the step (and the rank), so that a resumed run sees exactly the
    batches the uninterrupted run would have seen.
    """

    name = "model"

    def build_model(self) -> torch.nn.Module:
        raise NotImplementedError

    def setup(self, model: torch.nn.Module, accelerator: Any) -> None:
        """Load the data (this rank's share); called once the accelerator exists."""

    def parameter_groups(self, model: torch.nn.Module) -> list[dict[str, Any]] | None:
        """AdamW parameter groups with their own rates, or None: one group of every trainable
        parameter at ``--learning_rate`` (the log's ``lr`` is the first group's)."""
        return None

    def steps_per_epoch(self) -> int | None:
        """Optimizer steps in one pass over the data, or None when the data has no epochs."""
        return None

    def micro_batches(self, start_step: int, accelerator: Any) -> Iterator[dict[str, torch.Tensor]]:
        """This rank's micro-batches in order, from optimizer step ``start_step`` on (endless or per epoch)."""
        raise NotImplementedError

    def loss(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def evaluate(self, model: torch.nn.Module, accelerator: Any, step: int) -> dict[str, Any] | None:
        """Validation figures (gathered over ranks), or None without validation data."""
        return None

    def save_final(self, model: torch.nn.Module, folder: Path) -> None:
        """Write the finished model (safetensors + config + code) into ``folder``."""
        model.save_pretrained(folder, safe_serialization=True)


def total_steps(recipe: Recipe, args: TrainingArguments) -> int:
    if args.max_train_steps:
        return int(args.max_train_steps)
    per_epoch = recipe.steps_per_epoch()
    if per_epoch is None:
        raise SystemExit(f"train {recipe.name}: give --max_train_steps (this data has no epochs)")
    return int(args.num_train_epochs) * per_epoch


def train(recipe: Recipe, args: TrainingArguments, recipe_args: Any = None) -> dict[str, Any]:
    """Run (or continue) training; return ``{"step", "losses", "validation", "finished"}``."""
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm

    output_dir = Path(args.output_dir)
    accelerator = Accelerator(
        cpu=args.cpu,
        mixed_precision=mixed_precision_mode(args.mixed_precision),
        gradient_accumulation_steps=args.gradient_accumulation_steps,
    )
    set_seed(args.seed)
    model = recipe.build_model()
    recipe.setup(model, accelerator)
    max_steps = total_steps(recipe, args)
    trainable = [p for p in model.parameters() if p.requires_grad]
    groups = recipe.parameter_groups(model) or [{"params": trainable}]
    optimizer = torch.optim.AdamW(groups, lr=args.learning_rate, weight_decay=args.weight_decay)
    scheduler = make_scheduler(args.lr_scheduler_type, optimizer, args.num_warmup_steps, max_steps, accelerator.num_processes)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    state = TrainState()
    accelerator.register_for_checkpointing(state)
    resume = _resume(accelerator, args.resume_from_checkpoint, output_dir, state)
    log = MetricsLog(output_dir / "metrics.jsonl", accelerator.is_main_process, fresh=resume is None)
    last_step = min(max_steps, args.stop_after_steps or max_steps)
    bar = tqdm(total=max_steps, initial=state.step, disable=not accelerator.is_local_main_process, desc=f"train {recipe.name}")
    summary: dict[str, Any] = {"losses": [], "validation": None}
    session_start, elapsed_before = time.time(), state.elapsed_s
    pending: list[float] = []
    model.train()
    batches = recipe.micro_batches(state.step, accelerator) if state.step < last_step else iter(())
    for batch in batches:
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        with accelerator.accumulate(model):
            loss = recipe.loss(model, batch)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                rate = optimizer.param_groups[0]["lr"]  # the rate of this update, before the schedule moves on
                if args.max_grad_norm:
                    accelerator.clip_grad_norm_(trainable, args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        pending.append(float(loss.detach()))
        if not accelerator.sync_gradients:
            continue
        state.step += 1
        state.elapsed_s = elapsed_before + time.time() - session_start
        step_loss = accelerator.reduce(torch.tensor(sum(pending) / len(pending), device=accelerator.device), reduction="mean").item()
        pending = []
        summary["losses"].append(step_loss)
        bar.update(1)
        bar.set_postfix(loss=f"{step_loss:.4f}")
        if args.logging_steps and state.step % args.logging_steps == 0:
            log.write({"step": state.step, "loss": step_loss, "lr": rate, "elapsed_s": round(state.elapsed_s, 2)})
        if args.eval_steps and state.step % args.eval_steps == 0:
            summary["validation"] = _evaluate(recipe, model, accelerator, state.step, log)
        if args.checkpointing_steps and (state.step % args.checkpointing_steps == 0 or state.step == last_step):
            save_checkpoint(accelerator, output_dir, state.step, args.checkpoints_total_limit)
        if state.step >= last_step:
            break
    bar.close()
    if summary["losses"] and not math.isfinite(summary["losses"][-1]):
        raise RuntimeError(f"train {recipe.name}: training diverged (the last loss is not finite)")
    compute = _compute_record(state, accelerator)
    summary.update(step=state.step, finished=state.step >= max_steps, compute=compute)
    if state.step < max_steps:  # a time-limited session: the checkpoints are the result
        accelerator.print(f"stopped at step {state.step} of {max_steps}; continue with --resume_from_checkpoint latest")
        accelerator.end_training()
        return summary
    if (summary["validation"] or {}).get("step") != state.step:
        summary["validation"] = _evaluate(recipe, model, accelerator, state.step, log)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        _save_final(recipe, accelerator.unwrap_model(model), args, recipe_args, compute)
    accelerator.end_training()
    return summary


def _resume(accelerator: Any, spec: str | None, output_dir: Path, state: TrainState) -> Path | None:
    """The checkpoint ``--resume_from_checkpoint`` names, loaded (None: a fresh start)."""
    resume = resolve_resume(spec, output_dir)
    if resume is not None:
        accelerator.load_state(str(resume))
        accelerator.print(f"resumed from {resume} at step {state.step}")
    return resume


def _compute_record(state: TrainState, accelerator: Any) -> dict[str, Any]:
    """What the run cost (compute.json): optimizer steps, wall time, processes, device, threads."""
    return {
        "optimizer_steps": state.step,
        "wall_seconds": round(state.elapsed_s, 1),
        "processes": accelerator.num_processes,
        "device": str(accelerator.device),
        "torch_threads": torch.get_num_threads(),
    }


def _save_final(recipe: Recipe, model: torch.nn.Module, args: TrainingArguments, recipe_args: Any, compute: dict[str, Any]) -> None:
    """The finished model in ``<output_dir>/final`` with the options and compute that made it."""
    output_dir = Path(args.output_dir)
    final = output_dir / "final"
    recipe.save_final(model, final)
    options = {"training": dataclasses.asdict(args), recipe.name: dataclasses.asdict(recipe_args) if dataclasses.is_dataclass(recipe_args) else recipe_args}
    (final / "training_args.json").write_text(json.dumps(options, indent=2, default=str), encoding="utf-8")
    for path in (final / "training_compute.json", output_dir / "compute.json"):
        path.write_text(json.dumps(compute, indent=2), encoding="utf-8")


def _evaluate(recipe: Recipe, model: torch.nn.Module, accelerator: Any, step: int, log: MetricsLog) -> dict[str, Any] | None:
    model.eval()
    with torch.no_grad():
        result = recipe.evaluate(model, accelerator, step)
    model.train()
    if result is not None:
        result = {"step": step, **result}
        log.write(result)
    return result


def export_latest(recipe: Recipe, output_dir: str | Path) -> Path:
    """Write ``OUTPUT_DIR/final`` from the newest checkpoint (e.g. after ``--stop_after_steps``), without training."""
    from safetensors.torch import load_file

    found = latest_checkpoint(output_dir)
    if found is None:
        raise SystemExit(f"{output_dir}: no checkpoint to export (expected checkpoints/{CHECKPOINT_PREFIX}N/)")
    model = recipe.build_model()
    model.load_state_dict(load_file(str(found / "model.safetensors")))
    final = Path(output_dir) / "final"
    recipe.save_final(model, final)
    return final
