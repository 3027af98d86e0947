"""The judge's (a)/(d) decision, fitted on real two-party speech: a handful of numbers.

Talking Turns' judge decides at the *end* of a silence whether the other party takes the turn,
so how long nobody has spoken is known at that point. A stopwatch on that silence is a strong
baseline on real calls; the judge's audio evidence must add to it, not replace it. This stage
fits the judge's ``pause_decision`` rule: a logistic regression over

* ``turn_complete_logit``: the turn-completion cue (smart-turn v3.2 converted into the judge,
  ``training/convert_smart_turn.py``), which heard real human turn ends, on the pausing
  speaker's own channel up to 200 ms after their IPU;
* ``log_silence_s``: the log of the silence's length at the decision;
* optionally ``turn_end_logit``: the judge's own turn-end head (trained on re-voiced audio),

on the pause decisions of real recordings (``--recordings``: stereo files with one speaker per
channel, or ``LEFT+RIGHT`` pairs of mono files), speech found by the report's VAD. Three
numbers for the default features. The regularisation strength is chosen from ``--c`` by
leave-one-recording-out ROC-AUC over the pooled held-out scores; the script prints that
cross-validated figure, each recording's, and the silence and cue alone on the same decisions,
and the same on ``--check`` recordings that the fit never sees.

    python -m turneval.training.fit_pause_decision \
        --recordings ../shared/real/spokenwoz/audio/*.flac \
        --check ../shared/real/ami/ES2004a_excerpt/source0.flac+../shared/real/ami/ES2004a_excerpt/source1.flac \
        --install_into checkpoints/turn_taking_judge_swb_revoiced
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np


DEFAULT_FEATURES = ("turn_complete_logit", "log_silence_s")
DEFAULT_C = (0.01, 0.1, 1.0, 10.0)


def load_recording(spec: str) -> Any:
    """A two-party Dialogue from a stereo file or ``LEFT+RIGHT`` mono files, speech by the report's VAD."""
    from turneval.reporting.inputs import load_conversation

    if "+" in spec:
        left, right = spec.split("+", 1)
        dialogue = load_conversation(None, user_audio=left, system_audio=right, system_channel=1)
        dialogue.id = f"{Path(left).parent.name}/{Path(left).stem}+{Path(right).stem}"
    else:
        dialogue = load_conversation(spec, system_channel=1)
        dialogue.id = Path(spec).stem
    return dialogue


def decision_table(judge: Any, dialogues: Sequence[Any], features: Sequence[str]) -> dict[str, np.ndarray]:
    """Every (a)/(d) decision of ``dialogues``: ``shift`` (the other party spoke next), the
    recording, and each feature of ``features`` (plus the raw ``silence_s``)."""
    from dataclasses import replace

    from turneval.dataset_scripts.agreement_instances import PAUSE_METRICS, dialogue_agreement_instances
    from turneval.dataset_scripts.labels import chunk_labels
    from turneval.reporting.inference import judge_pause_readings, pause_decision_features

    columns: dict[str, list] = {"shift": [], "recording": [], "silence_s": [], **{f: [] for f in features}}
    for dialogue in dialogues:
        # one view holds every pause: (a) the pauses of channel 0, (d) those of channel 1
        dialogue = dialogue if dialogue.system_speaker is not None else replace(dialogue, system_speaker=1)
        labels = chunk_labels(dialogue)
        readings = judge_pause_readings(judge, dialogue, labels)
        if not readings:
            continue
        values = pause_decision_features(judge, dialogue, readings, names=features)
        placeholder = np.zeros((len(labels), len(judge.config.label_names)))
        taken = {i.chunk: i.decision for i in dialogue_agreement_instances(dialogue, placeholder, labels=labels, metrics=PAUSE_METRICS)}
        columns["shift"] += [taken[chunk] == "T" for chunk in readings]
        columns["recording"] += [dialogue.id] * len(readings)
        for name in ["silence_s", *features]:
            columns[name] += list(values[name])
    return {k: np.asarray(v) for k, v in columns.items()}


def fit(table: dict[str, np.ndarray], features: Sequence[str], c_grid: Sequence[float] = DEFAULT_C) -> dict[str, Any]:
    """The rule (weights on the original feature scales, bias), C chosen by leave-one-recording-out
    pooled ROC-AUC, and the cross-validated scores."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    x = np.stack([table[f] for f in features], axis=1).astype(np.float64)
    y = table["shift"].astype(int)
    groups = table["recording"]
    held_out: dict[float, np.ndarray] = {}
    for c in c_grid:
        scores = np.zeros(len(y))
        for g in np.unique(groups):
            test = groups == g
            scores[test] = LogisticRegression(C=c).fit(x[~test], y[~test]).decision_function(x[test])
        held_out[c] = scores
    best_c = max(c_grid, key=lambda c: roc_auc_score(y, held_out[c]))
    model = LogisticRegression(C=best_c).fit(x, y)
    return {"features": list(features), "weight": [float(w) for w in model.coef_[0]], "bias": float(model.intercept_[0]),
            "c": float(best_c), "cv_scores": held_out[best_c], "in_sample_scores": model.decision_function(x)}


def auc_summary(table: dict[str, np.ndarray], scores: np.ndarray) -> dict[str, Any]:
    """Pooled ROC-AUC (shift positive) with a 95 % interval resampling recordings, and each recording's."""
    from sklearn.metrics import roc_auc_score

    from turneval.metrics.intervals import bootstrap_roc_auc

    y, groups = table["shift"].astype(int), table["recording"]
    ci = bootstrap_roc_auc(y, scores, clusters=groups, n_resamples=2000)
    per = {str(g): round(float(roc_auc_score(y[groups == g], scores[groups == g])), 3)
           for g in np.unique(groups) if 0 < y[groups == g].sum() < (groups == g).sum()}
    return {"roc_auc": round(float(ci.value), 3), "ci95": [round(float(ci.low), 3), round(float(ci.high), 3)], "per_recording": per,
            "decisions": int(len(y)), "shifts": int(y.sum())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="checkpoints/turn_taking_judge_swb_revoiced", help="judge checkpoint with a turn-completion cue")
    parser.add_argument("--recordings", nargs="+", required=True, help="real two-party recordings to fit on (stereo, or LEFT+RIGHT)")
    parser.add_argument("--check", nargs="*", default=[], help="real recordings the fit never sees, scored with the fitted rule")
    parser.add_argument("--features", nargs="+", default=list(DEFAULT_FEATURES))
    parser.add_argument("--c", nargs="+", type=float, default=list(DEFAULT_C), help="regularisation strengths to choose from")
    parser.add_argument("--source", default=None, help="how the fit data is named in the config (default: the recordings' names)")
    parser.add_argument("--install_into", help="write the rule into this judge checkpoint's config.json")
    parser.add_argument("--output", help="write the measured figures as JSON here")
    args = parser.parse_args(argv)

    import torch

    from turneval.modeling.judge_loading import load_judge

    torch.set_num_threads(min(2, torch.get_num_threads()))
    judge = load_judge(args.judge)
    table = decision_table(judge, [load_recording(r) for r in args.recordings], args.features)
    rule = fit(table, args.features, args.c)
    measured = {
        "fit": {"rule_in_sample": auc_summary(table, rule["in_sample_scores"]),
                "rule_leave_one_recording_out": auc_summary(table, rule["cv_scores"]),
                **{f"{f}_alone": auc_summary(table, table[f]) for f in args.features}},
    }
    if args.check:
        check = decision_table(judge, [load_recording(r) for r in args.check], args.features)
        z = rule["bias"] + np.stack([check[f] for f in args.features], 1) @ np.asarray(rule["weight"])
        measured["check"] = {"rule": auc_summary(check, z), **{f"{f}_alone": auc_summary(check, check[f]) for f in args.features}}
    source = args.source or f"training/fit_pause_decision.py on {len(args.recordings)} real recordings ({', '.join(sorted(set(table['recording'].tolist())))})"
    out = {"features": rule["features"], "weight": [round(w, 6) for w in rule["weight"]], "bias": round(rule["bias"], 6),
           "c": rule["c"], "source": source, "measured": measured}
    print(json.dumps(out, indent=1))
    if args.output:
        Path(args.output).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    if args.install_into:
        from turneval.dataset_scripts.files import atomic_write_text, read_json

        config_path = Path(args.install_into) / "config.json"
        config = read_json(config_path)
        config["pause_decision"] = out
        atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True) + "\n")
        print(f"installed into {config_path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
