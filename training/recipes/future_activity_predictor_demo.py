"""Recipe of the audio demo predictor (an earlier generation, no longer shipped; kept in
``benchmarks/baselines/future_activity_predictor_demo``): every stage, in order.

    python -m turneval.training.recipes.future_activity_predictor_demo --out runs/predictor_demo   # about an hour, 2 CPU cores
    python -m turneval.training.recipes.future_activity_predictor_demo --out runs/predictor_quick --quick   # CI: seconds

Stages (model_cards/future_activity_predictor, "Training"):

1. data: three synthetic corpora (``turneval synth``, eSpeak NG voices, style human): 80
   conversations x 90 s for training (seed 1), 8 for validation (seed 2), 12 for the test (seed 3);
2. training: the audio predictor (``training.train_future_activity``, 1,000 steps of 10 s crops;
   ``OUT/fap_audio/final`` is the bundled checkpoint's weights and config), and the
   voice-activity-only baseline beside it (800 steps, not shipped);
3. evaluation: the perturbation test on the test corpus (``training/perturbation_ranking.py``),
   the card's pairwise accuracy and C-index.

``--quick`` runs the same stages on a few 20 s conversations and a few steps: it checks the
recipe, not the model.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from turneval.training.recipes.stages import Stage, recipe_parser, run_stages


TRAIN = "turneval.training.train_future_activity"
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@dataclass(frozen=True)
class DemoSize:
    """The numbers that differ between the shipped run and the --quick run."""

    conversations: tuple[int, int, int] = (80, 8, 12)
    """train, validation, test"""
    duration_s: str = "90"
    audio_steps: str = "1000"
    vad_steps: str = "800"
    audio_batch: str = "6"
    vad_batch: str = "8"
    window_s: str = "10"


SHIPPED = DemoSize()
QUICK = DemoSize(conversations=(2, 1, 2), duration_s="20", audio_steps="2", vad_steps="2", audio_batch="2", vad_batch="2", window_s="5")


def stages(out: Path, size: DemoSize = SHIPPED) -> list[Stage]:
    """The demo predictor's stages in order, writing below ``out``."""
    corpus = {split: str(out / "corpus" / split) for split in ("train", "val", "test")}

    def synth(split: str, n: int, seed: int) -> Stage:
        return Stage(f"synth-{split}", "data", "turneval.cli",
                     ("synth", corpus[split], "--n", str(n), "--seed", str(seed), "--duration", size.duration_s, "--quiet"))

    def train(name: str, folder: str, config: str, steps: str, batch: str) -> Stage:
        return Stage(name, "training", TRAIN,
                     ("--train_dir", corpus["train"], "--val_dir", corpus["val"], "--output_dir", str(out / folder),
                      "--model_config", str(CONFIGS / config), "--max_train_steps", steps, "--per_device_train_batch_size", batch,
                      "--learning_rate", "2e-3", "--num_warmup_steps", "30", "--window_s", size.window_s, "--cpu"))

    n_train, n_val, n_test = size.conversations
    return [
        synth("train", n_train, 1),
        synth("val", n_val, 2),
        synth("test", n_test, 3),
        train("train-audio", "fap_audio", "future_activity_demo.json", size.audio_steps, size.audio_batch),
        train("train-vad-baseline", "fap_vad", "future_activity_vad_demo.json", size.vad_steps, size.vad_batch),
        Stage("perturbation-ranking", "evaluation", "turneval.training.perturbation_ranking",
              ("--dialogues", corpus["test"], "--predictor", str(out / "fap_audio" / "final"),
               "--vad-predictor", str(out / "fap_vad" / "final"), "--out", str(out / "naturalness_eval"))),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args = recipe_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    run_stages(stages(args.out, QUICK if args.quick else SHIPPED), dry_run=args.dry_run, from_stage=args.from_stage)
    if not args.dry_run:
        print(f"the predictor: {args.out / 'fap_audio' / 'final'}; its benchmark: {args.out / 'naturalness_eval'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
