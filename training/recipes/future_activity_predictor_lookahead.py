"""Recipe of the look-ahead predictor, ``checkpoints/future_activity_predictor_lookahead``.

    python -m turneval.training.recipes.future_activity_predictor_lookahead --out runs/predictor_lookahead \\
        --swb-root SWB/swb_ms98_transcriptions.tar.gz --splits-dir shared/real/switchboard_ms98/splits   # about 5 min, 2 CPU threads
    python -m turneval.training.recipes.future_activity_predictor_lookahead --out runs/predictor_lookahead_quick --quick   # CI

Stages (model_cards/future_activity_predictor_lookahead, "Training"):

1. data: the voice activity of every call of the VAP train, val and test splits, read once from
   the ms98 word alignments (``training.switchboard_va``, as the Switchboard predictor's recipe);
2. backbone: the starting point, the bundled voice-activity predictor widened to
   ``vad_features="timing+ends"`` with a 1 s look-ahead, the end inputs weighted 0
   (``training.warm_start``; ``--init-checkpoint``);
3. training: 600 steps x 32 random 20 s crops of the train calls, half of them redrawn as a VAD
   would report them (``training.train_future_activity --train_va``); ``OUT/fap_lookahead/final``
   is the bundled checkpoint's weights and config.

``--quick`` runs the same stages on made-up calls in the ms98 layout and a few steps: it checks
the recipe, not the model.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from turneval.training.recipes.future_activity_predictor_switchboard import (
    QUICK,
    SwitchboardSize,
    voice_activity_stages,
)
from turneval.training.recipes.stages import Stage, run_warm_started_recipe


SHIPPED = SwitchboardSize(steps="600", every="200")
"""600 steps from the Switchboard predictor's weights, checkpoints every 200; --quick as there."""
LOOKAHEAD_S = "1.0"
"""How far ahead the model reads each speaker's activity (chosen between 0.5 and 1.0 s on the real dev calls; model card)."""


def stages(out: Path, swb_root: Path, splits_dir: Path, init_checkpoint: Path, size: SwitchboardSize = SHIPPED) -> list[Stage]:
    """The look-ahead predictor's stages in order, writing below ``out``."""
    cache, voice_activity = voice_activity_stages(out, swb_root, splits_dir)
    init = str(out / "init")
    return [
        *voice_activity,
        Stage("init", "backbone", "turneval.training.warm_start",
              ("--checkpoint", str(init_checkpoint), "--vad_features", "timing+ends", "--end_lookahead_s", LOOKAHEAD_S, "--out", init)),
        Stage("train", "training", "turneval.training.train_future_activity",
              ("--init_from", init, "--train_va", cache["train"], "--val_va", cache["val"], "--output_dir", str(out / "fap_lookahead"),
               "--input_type", "vad", "--max_train_steps", size.steps, "--per_device_train_batch_size", size.batch,
               "--window_s", size.window_s, "--learning_rate", "1e-3", "--num_warmup_steps", "50", "--vad_like_p", "0.5",
               "--mask_p", "0", "--clean_labels", "--checkpointing_steps", size.every, "--eval_steps", size.every, "--cpu")),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return run_warm_started_recipe(__doc__, stages, (SHIPPED, QUICK), "fap_lookahead", argv)


if __name__ == "__main__":
    sys.exit(main())
