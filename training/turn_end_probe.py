"""Is "shift or hold?" in the encoder? A linear probe at metric (a)'s decisions.

The bundled judge ranks shifts above holds 200 ms into a pause no better than chance (ROC-AUC
0.505 on the Flite test split), although it predicts the next 40 ms well. This probe asks
whether the information is in a frozen Whisper encoder at all: at every turn-end decision
(:func:`~turneval.dataset_scripts.turn_end_decisions.turn_end_decisions`, 200 ms after the
IPU end) it runs the encoder **bidirectionally** over the last ``window_s`` seconds of the
*pausing speaker's own channel* (the audio up to the decision time only), pools three views
(the last layer over the last 0.5 s and the last 0.1 s, layer 2 over the last 0.5 s) and
fits a logistic regression for shift vs hold on the training manifest's decisions.

    python -m turneval.training.turn_end_probe --train /work/cache/revoice/train \
        --eval val=/work/cache/revoice/val --eval test=/work/cache/revoice/test

Measured 2026-11-23 (tiny.en, 8 s, 10,571 decisions of the 10 h re-voiced train split):
ROC-AUC 0.767 on val, 0.737 on the Flite test split, beside the judge's 0.505 and the
text-only logistic regression's 0.764 (model card of the bundled judge).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch


SAMPLE_RATE = 16000
DECISION_DELAY_S = 0.2


def decision_window(channel: np.ndarray, end_s: float, window_s: float, chunk_samples: int = 640) -> torch.Tensor:
    """``[1, n]`` audio of the ``window_s`` seconds before ``end_s`` (silence before the start),
    ``end_s`` rounded down to the chunk grid so no later sample is read."""
    end = int(round(end_s * SAMPLE_RATE))
    end -= end % chunk_samples
    start = end - int(round(window_s * SAMPLE_RATE))
    piece = np.asarray(channel[max(0, start) : end], dtype=np.float32)
    if start < 0:
        piece = np.concatenate([np.zeros(-start, np.float32), piece])
    return torch.from_numpy(np.ascontiguousarray(piece))[None]


@torch.no_grad()
def decision_features(encoder_judge, window: torch.Tensor, lower_layer: int = 2) -> np.ndarray:
    """Pooled bidirectional states of one window: last layer over the last 25 and 5 frames
    (0.5 s, 0.1 s), ``lower_layer`` over the last 25."""
    features = encoder_judge.log_mel(window, causal=False).to(encoder_judge.classifier.weight.dtype)
    states = encoder_judge.encoder(features, causal=False)
    last, lower = states[-1][0], states[lower_layer][0]
    return torch.cat([last[-25:].mean(0), last[-5:].mean(0), lower[-25:].mean(0)]).float().numpy()


def manifest_decisions(encoder_judge, manifest: str | Path, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels (1 = shift) of every turn-end decision of a manifest with audio."""
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions

    xs, ys = [], []
    for _, dialogue in read_dialogue_manifest(resolve_manifest(manifest)):
        stereo = load_stereo(dialogue.audio_path)
        for decision in turn_end_decisions(dialogue, DECISION_DELAY_S):
            window = decision_window(stereo[decision.speaker], decision.ipu_end + DECISION_DELAY_S, window_s)
            xs.append(decision_features(encoder_judge, window))
            ys.append(int(decision.shift))
    if not xs:
        raise ValueError(f"{manifest}: no turn-end decisions (two-speaker dialogues with pauses of >= 200 ms needed)")
    return np.stack(xs), np.asarray(ys)


def fit_probe(x: np.ndarray, y: np.ndarray, c: float = 1e-3):
    """Standardized L2 logistic regression (strong regularization: ~1,150 features)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000)).fit(x, y)


def main(argv: Sequence[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    from turneval.modeling.whisper_conversion import judge_from_whisper

    parser = argparse.ArgumentParser(description="Linear probe of a frozen bidirectional encoder at turn-end decisions.")
    parser.add_argument("--train", required=True, help="manifest.jsonl (or its folder) of two-channel dialogues")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=MANIFEST", help="sets to score (repeatable)")
    parser.add_argument("--backbone", default="tiny.en")
    parser.add_argument("--window_s", type=float, default=8.0)
    parser.add_argument("--c", type=float, default=1e-3, help="inverse L2 strength of the logistic regression")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    encoder_judge = judge_from_whisper(None if args.backbone == "tiny.en" else args.backbone, context_mode="window", context_s=args.window_s).eval()
    x, y = manifest_decisions(encoder_judge, args.train, args.window_s)
    probe = fit_probe(x, y, args.c)
    result: dict[str, Any] = {"train_decisions": int(len(y)), "train_shift_rate": round(float(y.mean()), 4)}
    for spec in args.eval:
        name, _, manifest = spec.partition("=")
        ex, ey = manifest_decisions(encoder_judge, manifest, args.window_s)
        result[name] = {"decisions": int(len(ey)), "roc_auc": round(float(roc_auc_score(ey, probe.predict_proba(ex)[:, 1])), 4)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["decision_features", "decision_window", "fit_probe", "manifest_decisions"]
