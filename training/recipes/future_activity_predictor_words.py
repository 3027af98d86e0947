"""Recipe of the word-reading predictor, ``checkpoints/future_activity_predictor_words``.

    python -m turneval.training.recipes.future_activity_predictor_words --out runs/predictor_words \\
        --swb-root SWB/swb_ms98_transcriptions.tar.gz --splits-dir shared/real/switchboard_ms98/splits   # about 10 min, 2 CPU threads
    python -m turneval.training.recipes.future_activity_predictor_words --out runs/predictor_words_quick --quick   # CI

Stages (model_cards/future_activity_predictor_words, "Training"):

1. data: the voice activity and the words of every call of the VAP train, val and test splits,
   read once from the ms98 word alignments (``training.switchboard_words cache``);
2. heads: the word cue, a logistic regression on each word and the one or two before it that
   says whether the speaker stops after it and the other side speaks next (``fit``; C = 0.1);
3. backbone: the starting point, the bundled look-ahead predictor (it knows when each speaker
   stops) widened to ``vad_features="timing+words+ends"``, the cue inputs weighted 0 and the
   fitted cue inside (``init``; ``--init-checkpoint``);
4. training: 600 steps x 32 random 20 s crops of the train calls, half of them redrawn as a VAD
   would report them, a quarter without words (``training.train_future_activity
   --train_words``); ``OUT/fap_words/final`` is the bundled checkpoint's weights and config.

``--quick`` runs the same stages on made-up calls in the ms98 layout and a few steps: it checks
the recipe, not the model.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from turneval.training.recipes.future_activity_predictor_switchboard import QUICK, SwitchboardSize
from turneval.training.recipes.stages import Stage, run_warm_started_recipe


SHIPPED = SwitchboardSize(steps="600", every="200")
"""600 steps from the look-ahead predictor's weights (as that model from the Switchboard one; 1,800
gave the same pairs within a point), checkpoints every 200; --quick as there."""


def stages(out: Path, swb_root: Path, splits_dir: Path, init_checkpoint: Path, size: SwitchboardSize = SHIPPED) -> list[Stage]:
    """The word-reading predictor's stages in order, writing below ``out``."""
    cache = {split: str(out / "cache" / f"swb_words_{split}.npz") for split in ("train", "val", "test")}
    words = [
        Stage(f"words-{split}", "data", "turneval.training.switchboard_words",
              ("cache", "--transcripts", str(swb_root), "--splits", str(splits_dir), "--split", split, "--out", cache[split]))
        for split in ("train", "val", "test")
    ]
    cue = str(out / "word_cue.npz")
    init = str(out / "init")
    return [
        *words,
        Stage("word-cue", "heads", "turneval.training.switchboard_words", ("fit", "--train", cache["train"], "--val", cache["val"], "--out", cue)),
        Stage("init", "backbone", "turneval.training.switchboard_words", ("init", "--checkpoint", str(init_checkpoint), "--cue", cue, "--out", init)),
        Stage("train", "training", "turneval.training.train_future_activity",
              ("--init_from", init, "--train_words", cache["train"], "--val_words", cache["val"], "--output_dir", str(out / "fap_words"),
               "--input_type", "vad", "--max_train_steps", size.steps, "--per_device_train_batch_size", size.batch,
               "--window_s", size.window_s, "--learning_rate", "1e-3", "--num_warmup_steps", "50", "--vad_like_p", "0.5",
               "--mask_p", "0", "--clean_labels", "--word_dropout_p", "0.25",
               "--checkpointing_steps", size.every, "--eval_steps", size.every, "--cpu")),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return run_warm_started_recipe(__doc__, stages, (SHIPPED, QUICK), "fap_words", argv, init_from="future_activity_predictor_lookahead")


if __name__ == "__main__":
    sys.exit(main())
