"""Loading a TurnTakingJudge checkpoint with errors that say what to fix.

`TurnTakingJudge.from_pretrained` fails deep inside transformers or safetensors on a folder
with a missing or damaged weight file; `load_judge` checks the folder first.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from turneval.dataset_scripts.files import read_json

from .configuration_turn_taking_judge import TurnTakingJudgeConfig
from .modeling_turn_taking_judge import TurnTakingJudge


class JudgeCheckpointError(ValueError):
    """A judge checkpoint folder is missing, incomplete or damaged."""


def check_checkpoint(folder: str | os.PathLike) -> Path:
    """Raise JudgeCheckpointError unless ``folder`` holds a readable judge checkpoint."""
    from safetensors import safe_open

    folder = Path(folder)
    if not folder.is_dir():
        raise JudgeCheckpointError(f"judge checkpoint {folder} does not exist or is not a folder")
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise JudgeCheckpointError(f"{config_path} is missing: not a saved TurnTakingJudge")
    config = read_json(config_path, error=JudgeCheckpointError)
    if config.get("model_type") != TurnTakingJudgeConfig.model_type:
        raise JudgeCheckpointError(f"{config_path}: model_type is {config.get('model_type')!r}, expected 'turn_taking_judge'")
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        weight_files = sorted({folder / name for name in json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()})
    else:
        weight_files = [folder / "model.safetensors"]
    for file in weight_files:
        if not file.is_file():
            others = sorted(p.name for p in folder.glob("*.bin"))
            hint = f" ({', '.join(others)} present, but only safetensors are loaded)" if others else ""
            raise JudgeCheckpointError(f"{file} is missing{hint}: the checkpoint is incomplete")
        try:
            with safe_open(str(file), framework="pt") as handle:
                for key in handle.keys():
                    handle.get_slice(key)
        except Exception as err:
            raise JudgeCheckpointError(f"{file} is damaged or not a safetensors file ({err})") from None
    return folder


def load_judge(path: str | os.PathLike | None = None, **kwargs: Any) -> TurnTakingJudge:
    """Load a judge checkpoint (default: the shipped demo) in eval mode, after checking it.

    ``kwargs`` go to `from_pretrained` (e.g. ``context_mode="causal"`` to override the config).
    """
    if path is None:
        from turneval.checkpoints import default_checkpoint

        path = default_checkpoint("judge")
        if path is None:
            raise JudgeCheckpointError(
                "no judge checkpoint given and the bundled one is not installed; pass a checkpoint folder"
            )
    folder = check_checkpoint(path)
    try:
        model = TurnTakingJudge.from_pretrained(str(folder), **kwargs)
    except (OSError, RuntimeError) as err:
        raise JudgeCheckpointError(f"{folder}: the weights do not load into a TurnTakingJudge ({err})") from None
    return model.eval()


def compact_checkpoint(folder: str | os.PathLike) -> int:
    """Store every float32 tensor of ``folder/model.safetensors`` that fp16 holds exactly as fp16.

    A frozen backbone converted from fp16 weights (the bundled tiny.en) halves in size and
    loads back bit for bit (the config's dtype stays float32, so loading upcasts). Returns the
    new file size in bytes.
    """
    import torch
    from safetensors.torch import load_file, save_file

    path = check_checkpoint(folder) / "model.safetensors"
    tensors = load_file(str(path))
    for name, tensor in tensors.items():
        if tensor.dtype == torch.float32:
            half = tensor.half()
            if torch.equal(half.float(), tensor):
                tensors[name] = half
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata={"format": "pt"})
    os.replace(tmp, path)
    return path.stat().st_size


__all__ = ["JudgeCheckpointError", "check_checkpoint", "compact_checkpoint", "load_judge"]
