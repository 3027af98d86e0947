"""The judge's turn-end head: a linear read of the bidirectional encoder at metric (a)'s decisions.

The bundled judge's chunk head ranks shifts above holds 200 ms into a pause no better than
chance (ROC-AUC 0.505 on the Flite test split), although it predicts the next 40 ms well.
This script asks whether the information is in a frozen Whisper encoder and, with
``--install_into``, makes the answer part of the judge: at every turn-end decision
(:func:`~turneval.dataset_scripts.turn_end_decisions.turn_end_decisions`, 200 ms after the
IPU end) it runs the pretrained encoder **bidirectionally** over the last ``window_s`` seconds
of the *pausing speaker's own channel* (the audio up to the decision time only), pools three
views (the last layer over the last 0.5 s and the last 0.1 s, layer 2 over the last 0.5 s) and
fits a logistic regression for shift vs hold on the training manifest's decisions. Installed,
the regression (its standardization folded into the weights) becomes the judge's
:class:`~turneval.modeling.modeling_turn_taking_judge.TurnEndHead`, with copies of the
pretrained upper layers, and ``turneval report`` judges (a)/(d) with it.

With ``--timing`` the regression also reads the conversation's timing at the IPU end
(:data:`~turneval.dataset_scripts.turn_end_decisions.TIMING_FEATURES`, from the speech
segments alone, as a report has them).

``--train`` takes several manifests and pools their decisions. Each manifest's features are
cached in their own file, so the parts of a large corpus can be computed by parallel
``--features_only`` runs into one ``--cache`` folder before one run fits the regression.

    python -m turneval.training.fit_turn_end_head --train REVOICE/train \
        --eval val=REVOICE/val --eval test=REVOICE/test --cache runs/turn_end_features_4s \
        --window_s 4 --timing --c 0.003 --install_into checkpoints/turn_taking_judge_swb_revoiced

Measured 2026-11-24 (tiny.en, 10,571 decisions of the 10 h re-voiced train split; ROC-AUC on
val / the Flite test split): 8 s of audio 0.767 / 0.737; 4 s of audio + timing (the bundled
head) 0.793 / 0.783; beside the chunk head's 0.501 / 0.505 and the text-only logistic
regression's 0.764 on the test decisions (model card of the bundled judge). Measured
2026-11-25 on the 33,433 decisions of the 32 h split (4 s + timing, C 0.003 chosen on val):
0.793 / 0.784, the bundled head; more decisions did not move it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.turn_end_decisions import DEFAULT_MIN_SILENCE_S as DECISION_DELAY_S
from turneval.modeling.configuration_turn_taking_judge import TURN_END_HEAD_DEFAULTS
from turneval.modeling.modeling_turn_taking_judge import pooled_pause_views


def decision_window(channel: np.ndarray, end_s: float, window_s: float) -> torch.Tensor:
    """``[1, n]`` audio of the ``window_s`` seconds before ``end_s`` (silence before the start),
    ``end_s`` rounded down to the chunk grid so no later sample is read
    (:func:`~turneval.modeling.modeling_turn_taking_judge.pause_window`)."""
    from turneval.modeling.modeling_turn_taking_judge import pause_window

    return torch.from_numpy(np.ascontiguousarray(pause_window(channel, end_s, window_s, SAMPLE_RATE)))[None]


SHARED_LAYERS = int(TURN_END_HEAD_DEFAULTS["shared_layers"])
POOL_FRAMES = list(TURN_END_HEAD_DEFAULTS["pool_frames"])


@torch.no_grad()
def decision_features(encoder_judge, window: torch.Tensor) -> np.ndarray:
    """The turn-end head's pooled views of one window (last layer over the last 25 and 5 frames,
    0.5 s and 0.1 s; layer 2 over the last 25), read from the pretrained encoder itself
    (:func:`~turneval.modeling.modeling_turn_taking_judge.pooled_pause_views`, the head's own)."""
    encoder = encoder_judge.encoder
    features = encoder_judge.log_mel(window, causal=False).to(encoder_judge.classifier.weight.dtype)
    pooled = pooled_pause_views(encoder, encoder.layers[SHARED_LAYERS:], encoder.layer_norm, features, SHARED_LAYERS, POOL_FRAMES)
    return pooled[0].float().numpy()


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


def manifest_timing(manifest: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """The timing features (:func:`~turneval.dataset_scripts.turn_end_decisions.timing_features`)
    and labels of the same decisions as :func:`manifest_decisions`, in the same order, from the
    speech segments alone as the report computes them (no audio is read)."""
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest
    from turneval.dataset_scripts.turn_end_decisions import (
        speech_timings,
        timing_at,
        timing_features,
        turn_end_decisions,
    )

    ts, ys = [], []
    for _, dialogue in read_dialogue_manifest(resolve_manifest(manifest)):
        timings = speech_timings(dialogue)
        for decision in turn_end_decisions(dialogue, DECISION_DELAY_S):
            ts.append(timing_features(timing_at(timings, decision.speaker, decision.ipu_end)))
            ys.append(int(decision.shift))
    return np.stack(ts) if ts else np.zeros((0, 6), np.float32), np.asarray(ys)


def fit_linear_head(x: np.ndarray, y: np.ndarray, c: float = 1e-3):
    """Standardized L2 logistic regression (strong regularization: ~1,150 features)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000)).fit(x, y)


def folded_linear(fitted) -> tuple[np.ndarray, float]:
    """A fitted :func:`fit_linear_head` pipeline as one linear map on the raw features: the
    standardization folded into the regression's weights and bias."""
    scaler, regression = fitted[0], fitted[-1]
    weight = regression.coef_[0] / scaler.scale_
    bias = float(regression.intercept_[0] - np.sum(regression.coef_[0] * scaler.mean_ / scaler.scale_))
    return weight, bias


def cached_decisions(encoder_judge, manifest: str | Path, window_s: float, cache: Path | None, name: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`manifest_decisions`, read from / written to ``cache/<name>-<key digest>.npz`` when a
    cache is given (the features of 10,571 decisions take ~12 CPU minutes). The file name holds a
    digest of the manifest's path and the window, so runs on different manifests can share one
    cache folder (and fill it in parallel); the file says what it holds."""
    if cache is None:
        return manifest_decisions(encoder_judge, manifest, window_s)
    key = json.dumps({"manifest": str(Path(manifest).resolve()), "window_s": window_s, "delay_s": DECISION_DELAY_S})
    path = cache / f"{name}-{hashlib.sha1(key.encode()).hexdigest()[:10]}.npz"
    if path.exists():
        stored = np.load(path)
        if str(stored["key"]) == key:
            return stored["x"], stored["y"]
        print(f"{path}: made for another manifest or window; recomputing", file=sys.stderr)
    x, y = manifest_decisions(encoder_judge, manifest, window_s)
    cache.mkdir(parents=True, exist_ok=True)
    # write then rename: a parallel run never reads a half-written file
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, x=x, y=y, key=np.array(key))
    partial.replace(path)
    return x, y


def install_head(judge, encoder_judge, fitted, window_s: float, provenance: dict[str, Any], timing: bool = False):
    """Make ``fitted`` (a fitted :func:`fit_linear_head` pipeline on :func:`decision_features`, followed
    by the timing features when ``timing``) the judge's turn-end head: copies of
    ``encoder_judge``'s pretrained upper layers and layer norm, and the regression with its
    standardization folded into one linear layer.

    The judge's own front end and lower layers must be the pretrained ones the features were
    read from (true of a frozen or partially fine-tuned judge); otherwise this refuses."""
    from turneval.dataset_scripts.turn_end_decisions import TIMING_FEATURES
    from turneval.modeling.modeling_turn_taking_judge import TurnEndHead

    shared = SHARED_LAYERS
    mine, base = judge.encoder.state_dict(), encoder_judge.encoder.state_dict()
    lower = [k for k in base if not k.startswith("layers.") or int(k.split(".")[1]) < shared]
    lower = [k for k in lower if not k.startswith("layer_norm.")]
    changed = [k for k in lower if not torch.equal(mine[k].float(), base[k].float())]
    if changed:
        raise ValueError(f"the judge's encoder differs from the pretrained one in {changed[:3]}...: its lower layers were fine-tuned, "
                         "so the head's features would not be what it was fitted on; install into a frozen or partial judge")
    weight, bias = folded_linear(fitted)
    judge.config.turn_end_head = {"window_s": float(window_s), "stop_s": DECISION_DELAY_S, "shared_layers": shared, "pool_frames": POOL_FRAMES,
                                  "timing_features": list(TIMING_FEATURES) if timing else [], **provenance}
    head = TurnEndHead(judge.whisper_config, judge.config.turn_end_head)
    for layer, source in zip(head.layers, encoder_judge.encoder.layers[shared:]):
        layer.load_state_dict(source.state_dict())
    head.layer_norm.load_state_dict(encoder_judge.encoder.layer_norm.state_dict())
    with torch.no_grad():
        head.classifier.weight.copy_(torch.from_numpy(weight[None].astype(np.float32)))
        head.classifier.bias.fill_(bias)
    judge.turn_end_head = head.to(judge.classifier.weight.dtype).eval()
    return judge


def main(argv: Sequence[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    from turneval.modeling.whisper_conversion import judge_from_whisper

    parser = argparse.ArgumentParser(description="Fit a linear read-out of a frozen bidirectional encoder at turn-end decisions; optionally the judge's turn-end head.")
    parser.add_argument("--train", required=True, nargs="+", help="manifest.jsonl (or its folder) of two-channel dialogues; several are pooled")
    parser.add_argument("--features_only", action="store_true", help="only compute (and cache) the decision features of --train and --eval; fit nothing")
    parser.add_argument("--eval", action="append", default=[], metavar="NAME=MANIFEST", help="sets to score (repeatable)")
    parser.add_argument("--backbone", default="tiny.en")
    parser.add_argument("--window_s", type=float, default=8.0)
    parser.add_argument("--c", type=float, default=1e-3, help="inverse L2 strength of the logistic regression")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache", type=Path, help="folder for the decision features (<set>.npz), reused when they match")
    parser.add_argument("--timing", action="store_true",
                        help="also read the conversation's timing at the IPU end (TIMING_FEATURES, from the speech segments)")
    parser.add_argument("--install_into", type=Path, help="judge checkpoint folder: install the fit as its turn-end head (in place)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    encoder_judge = judge_from_whisper(None if args.backbone == "tiny.en" else args.backbone, context_mode="window", context_s=args.window_s).eval()

    def features(manifest: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        x, y = cached_decisions(encoder_judge, manifest, args.window_s, args.cache, name)
        if not args.timing:
            return x, y
        t, ty = manifest_timing(manifest)
        if not np.array_equal(y, ty):
            raise ValueError(f"{manifest}: the cached decisions of {name!r} are not this manifest's; delete {args.cache}/{name}-*.npz")
        return np.concatenate([x, t], axis=1), y

    parts = [features(manifest, "train") for manifest in args.train]
    if args.features_only:
        for spec in args.eval:
            name, _, manifest = spec.partition("=")
            features(manifest, name)
        return 0
    x, y = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    fitted = fit_linear_head(x, y, args.c)
    result: dict[str, Any] = {"train_decisions": int(len(y)), "train_shift_rate": round(float(y.mean()), 4)}
    for spec in args.eval:
        name, _, manifest = spec.partition("=")
        ex, ey = features(manifest, name)
        result[name] = {"decisions": int(len(ey)), "roc_auc": round(float(roc_auc_score(ey, fitted.predict_proba(ex)[:, 1])), 4)}
    print(json.dumps(result))
    if args.install_into is not None:
        from turneval.modeling.judge_loading import load_judge

        judge = load_judge(args.install_into)
        provenance = {"backbone": args.backbone, "train_manifest": [str(m) for m in args.train] if len(args.train) > 1 else str(args.train[0]), "c": args.c,
                      "measured": result}
        install_head(judge, encoder_judge, fitted, args.window_s, provenance, timing=args.timing).save_pretrained(args.install_into)
        print(f"installed the turn-end head into {args.install_into} (retune its (a)/(d) thresholds: training/tune_judge_thresholds.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["cached_decisions", "decision_features", "decision_window", "fit_linear_head", "folded_linear", "install_head", "manifest_decisions", "manifest_timing"]
