"""Recipe of the Switchboard predictor (an earlier generation, no longer shipped; kept in
``benchmarks/baselines/future_activity_predictor_switchboard``, where the look-ahead recipe starts).

    python -m turneval.training.recipes.future_activity_predictor_switchboard --out runs/predictor_swb \\
        --swb-root SWB/swb_ms98_transcriptions --splits-dir shared/real/switchboard_ms98/splits   # about 40 min, 1 CPU thread
    python -m turneval.training.recipes.future_activity_predictor_switchboard --out runs/predictor_swb_quick --quick   # CI

Stages (model_cards/future_activity_predictor_switchboard, "Training"):

1. data: the voice activity of every call of the VAP train, val and test splits, read once from
   the ms98 word alignments and cached (``training.switchboard_va``; the model hears no sound);
2. training: the voice-activity predictor (``training.train_future_activity``, 1,500 steps x 32
   random 20 s crops, half of them redrawn as a VAD would report them; ``OUT/fap_swb/final`` is
   the bundled checkpoint's weights and config). The test cache is what
   ``benchmarks/validation/predictor_switchboard.py`` measures the card's figures on.

``--quick`` runs the same stages on made-up calls in the ms98 layout and a few steps: it checks
the recipe, not the model.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from turneval.training.recipes.stages import (
    Stage,
    add_switchboard_arguments,
    recipe_parser,
    run_stages,
    switchboard_inputs,
)


CONFIG = Path(__file__).resolve().parents[1] / "configs" / "future_activity_switchboard_va.json"


@dataclass(frozen=True)
class SwitchboardSize:
    """The numbers that differ between the shipped run and the --quick run."""

    steps: str = "1500"
    batch: str = "32"
    window_s: str = "20"
    every: str = "250"
    """checkpoint and validation cadence (steps)"""


SHIPPED = SwitchboardSize()
QUICK = SwitchboardSize(steps="2", batch="4", window_s="10", every="2")


def voice_activity_stages(out: Path, swb_root: Path, splits_dir: Path) -> tuple[dict[str, str], list[Stage]]:
    """The voice-activity caches of the train, val and test splits below ``out``: (paths, stages)."""
    cache = {split: str(out / "cache" / f"swb_va_{split}.npz") for split in ("train", "val", "test")}
    return cache, [
        Stage(f"voice-activity-{split}", "data", "turneval.training.switchboard_va",
              ("--transcripts", str(swb_root), "--splits", str(splits_dir), "--split", split, "--out", cache[split]))
        for split in ("train", "val", "test")
    ]


def stages(out: Path, swb_root: Path, splits_dir: Path, size: SwitchboardSize = SHIPPED) -> list[Stage]:
    """The Switchboard predictor's stages in order, writing below ``out``."""
    cache, voice_activity = voice_activity_stages(out, swb_root, splits_dir)
    train = Stage("train", "training", "turneval.training.train_future_activity",
                  ("--train_va", cache["train"], "--val_va", cache["val"], "--output_dir", str(out / "fap_swb"),
                   "--model_config", str(CONFIG), "--input_type", "vad", "--max_train_steps", size.steps,
                   "--per_device_train_batch_size", size.batch, "--window_s", size.window_s, "--learning_rate", "2e-3",
                   "--num_warmup_steps", "50", "--vad_like_p", "0.5", "--mask_p", "0", "--clean_labels",
                   "--checkpointing_steps", size.every, "--eval_steps", size.every, "--cpu"))
    return [*voice_activity, train]


def main(argv: Sequence[str] | None = None) -> int:
    parser = recipe_parser(__doc__.split("\n\n")[0])
    add_switchboard_arguments(parser)
    args = parser.parse_args(argv)
    first, swb_root, splits_dir, _ = switchboard_inputs(args, parser)
    run_stages(first + stages(args.out, swb_root, splits_dir, QUICK if args.quick else SHIPPED),
               dry_run=args.dry_run, from_stage=args.from_stage)
    if not args.dry_run:
        print(f"the predictor: {args.out / 'fap_swb' / 'final'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
