"""The judge's interruption head: a logistic regression on two-channel levels for metric (e).

Metric (e) asks, when one speaker talks over the floor holder, whether the interruption takes
the floor (the holder falls silent: T) or not (the interrupter falls silent: C). The chunk
head reads it as ``p_T - p_C`` in the last overlapped chunk, from the mono mix; on the re-voiced
val split its best threshold gives 30.9 / 78.3 % agreement, barely better than a coin. Each
speaker's own channel says much more: the voice that is about to stop is fading. This script
collects every (e) decision of the training manifests
(:func:`~turneval.dataset_scripts.interruption_outcomes.interruption_readings`), reads
:data:`~turneval.dataset_scripts.interruption_outcomes.INTERRUPTION_FEATURES` (the overlap's
length; per channel, level changes over the last 1.5 s before the decision, never after it),
fits a standardized L2 logistic regression and, with ``--install_into``, folds the
standardization into the weights and stores it as the judge's ``interruption_head``
(config.json only: 8 weights and a bias). ``turneval report`` then judges (e) with it; retune
the (e) threshold afterwards (``training/tune_judge_thresholds.py``).

    python -m turneval.training.fit_interruption_head --train REVOICE/train [MORE/train ...] \\
        --eval val=REVOICE/val --eval test=REVOICE/test --install_into checkpoints/turn_taking_judge_swb_revoiced

No encoder runs: the features of the 32 h re-voiced train split take a few CPU minutes.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from turneval.modeling.configuration_turn_taking_judge import InterruptionRule

# the turn-end head's regression (standardized, L2) and its folding into one linear map
from turneval.training.fit_turn_end_head import fit_linear_head, folded_linear


def manifest_interruptions(manifest: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Features and outcomes (1 = the interruption took the floor) of every (e) decision of a
    manifest of two-channel dialogues with audio."""
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest
    from turneval.dataset_scripts.interruption_outcomes import interruption_features, interruption_readings
    from turneval.dataset_scripts.labels import chunk_labels

    xs, ys = [], []
    for _, dialogue in read_dialogue_manifest(resolve_manifest(manifest)):
        labels = chunk_labels(dialogue)
        readings = interruption_readings(labels)
        if not readings:
            continue
        stereo = load_stereo(dialogue.audio_path)
        for chunk, reading in readings.items():
            xs.append(interruption_features(stereo, reading))
            ys.append(int(labels.labels[chunk] == "T"))
    if not xs:
        raise ValueError(f"{manifest}: no interruptions of a floor holder resolved by T or C; metric (e) needs overlapping two-speaker dialogues")
    return np.stack(xs), np.asarray(ys)


def head_config(fitted, provenance: dict[str, Any]) -> InterruptionRule:
    """The judge config's ``interruption_head``: the fitted pipeline as one linear map (the
    scaler folded into the weights) over :data:`INTERRUPTION_FEATURES`, with ``provenance``
    (keys of :class:`~turneval.modeling.configuration_turn_taking_judge.InterruptionRule`:
    ``c``, ``train_manifest``, ``source``, ``measured``)."""
    from turneval.dataset_scripts.interruption_outcomes import INTERRUPTION_FEATURES

    weight, bias = folded_linear(fitted)
    return InterruptionRule.from_dict({"features": list(INTERRUPTION_FEATURES), "weight": [float(w) for w in weight], "bias": bias, **provenance})


def main(argv: Sequence[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    parser = argparse.ArgumentParser(description="Logistic regression for metric (e) on two-channel levels; optionally the judge's interruption head.")
    parser.add_argument("--train", required=True, nargs="+", help="manifest.jsonl (or its folder) of two-channel dialogues; several are pooled")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=MANIFEST", help="sets to score (repeatable)")
    parser.add_argument("--c", type=float, default=0.1, help="inverse L2 strength of the logistic regression")
    parser.add_argument("--install_into", type=Path, help="judge checkpoint folder: store the regression as its interruption_head (config.json)")
    args = parser.parse_args(argv)

    parts = [manifest_interruptions(m) for m in args.train]
    x, y = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    fitted = fit_linear_head(x, y, args.c)
    result: dict[str, Any] = {"train_decisions": int(len(y)), "train_floor_taken_rate": round(float(y.mean()), 4)}
    for spec in args.eval:
        name, _, manifest = spec.partition("=")
        ex, ey = manifest_interruptions(manifest)
        result[name] = {"decisions": int(len(ey)), "roc_auc": round(float(roc_auc_score(ey, fitted.predict_proba(ex)[:, 1])), 4)}
    print(json.dumps(result))
    if args.install_into is not None:
        from turneval.dataset_scripts.files import atomic_write_text, read_json

        config_path = args.install_into / "config.json"
        config = read_json(config_path)
        train = [str(m) for m in args.train]
        config["interruption_head"] = head_config(fitted, {"train_manifest": train if len(train) > 1 else train[0], "c": args.c, "measured": result}).to_dict()
        atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True) + "\n")
        print(f"installed the interruption head into {args.install_into} (retune its (e) threshold: training/tune_judge_thresholds.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["head_config", "manifest_interruptions"]
