"""Evaluate a TurnTakingJudge (Talking Turns Tables 1, 5, 6; §A.4, A.8).

* One-vs-rest ROC-AUC per class and overall (macro mean), on every chunk of every
  conversation of an evaluation set (Table 1: in-domain test and out-of-domain corpora).
* F1 at per-class operating points tuned on the validation set to maximise one-vs-rest F1
  (Table 5).
* Thresholds of the agreement metrics (a)-(e) tuned on human-human validation data, with the
  agreement per decision and the threshold-sensitivity margin of error of §A.8 (Table 6).

Any reader's corpus works for out-of-domain evaluation: write its Dialogues to a manifest
(``builders.manifest.write_dialogue_manifest``) or a turn_taking_chunks parquet export.

    python -m turneval.training.evaluate_judge --judge runs/judge/final \
        --validation data/synth:validation --test synthetic=data/synth:test \
        --test fisher=data/fisher_manifest.jsonl:test --out reports/judge_eval

writes ``judge_eval.json`` and ``judge_eval.md``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from turneval.dataset_scripts.agreement_instances import build_agreement_instances
from turneval.dataset_scripts.files import atomic_write_text, to_jsonable
from turneval.dataset_scripts.labels import FLOOR_STATES
from turneval.metrics.agreement import tune_thresholds
from turneval.metrics.classification import f1_table, f1_thresholds, roc_auc_table


# Paper row order of Tables 1 and 5.
TABLE_ORDER = ("C", "BC", "T", "I", "NA")
LABEL_TITLES = {"C": "C (Continuation)", "BC": "BC (Backchannel)", "T": "T (Turn change)", "I": "I (Interruption)", "NA": "NA (Silence)"}
AGREEMENT_ROWS = {
    "a": ("(a) When to speak up?", {"T": "When listener decides to speak up", "C": "When listener lets speaker continue"}),
    "b": ("(b) When to backchannel?", {"BC": "When listener backchannels", "C": "When listener does not backchannel"}),
    "c": ("(c) When to interrupt?", {"I": "When listener interrupts", "C": "When listener does not interrupt"}),
    "d": ("(d) Convey user to speak up?", {"T": "When listener decides to speak up", "C": "When listener lets speaker continue"}),
    "e": ("(e) Handle user interruptions?", {"T": "When interrupting speaker takes the floor", "C": "When interrupting speaker does not take the floor"}),
}


# ---------------------------------------------------------------------------- scoring data
def conversation_audio(row: dict[str, Any]) -> np.ndarray:
    """The mono 16 kHz mix of a turn_taking_chunks row's audio file."""
    import soundfile as sf

    from turneval.dataset_scripts.sampler import read_context_window

    info = sf.info(row["audio_path"])
    n = int(round(info.frames * 16000 / info.samplerate))
    audio, _ = read_context_window(row["audio_path"], n, n)
    return audio


def score_rows(judge, rows: Sequence[dict[str, Any]], batch_size: int = 8) -> list[dict[str, Any]]:
    """Judge probabilities for every chunk of every conversation, beside its labels.

    Each entry: ``labels`` (chunks 1..n-1, i.e. the predicted chunks), ``probs`` (the matching
    rows), and the row's ``floor``/``label_ids``/``conversation_id`` for agreement instances.
    """
    scored = []
    for row in rows:
        probs = judge.score(conversation_audio(row), batch_size=batch_size).probabilities
        labels = np.asarray(row["labels"], dtype=np.int64)
        n = min(len(labels), probs.shape[0] + 1)
        scored.append({
            "conversation_id": row["conversation_id"],
            "labels": labels[1:n],
            "probs": probs[: n - 1],
            "label_ids": labels[:n],
            "floor": row.get("floor"),
        })
    return scored


def pooled(scored: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    labels = np.concatenate([s["labels"] for s in scored]) if scored else np.zeros(0, np.int64)
    probs = np.concatenate([s["probs"] for s in scored]) if scored else np.zeros((0, 5))
    return labels, probs


def human_human_instances(scored: Sequence[dict[str, Any]], label_names: Sequence[str]) -> list[Any]:
    """Agreement instances of human-human conversations: each speaker in turn plays the system."""
    instances = []
    for s in scored:
        if s["floor"] is None:
            continue
        names = [label_names[i] for i in s["label_ids"]]
        # turn_taking_chunks stores the floor state as an index into FLOOR_STATES ("NA", "A", ...)
        floor = [FLOOR_STATES[int(v)] if not isinstance(v, str) else v for v in list(s["floor"])[: len(names)]]
        for system in (0, 1):
            instances += build_agreement_instances(names, floor, s["probs"], system, f"{s['conversation_id']}/{system}")
    return instances


# ---------------------------------------------------------------------------- report
def evaluate(judge, validation_rows: Sequence[dict[str, Any]] | None, test_sets: dict[str, Sequence[dict[str, Any]]], batch_size: int = 8) -> dict[str, Any]:
    """Tune operating points and agreement thresholds on validation; score every test set."""
    names = list(judge.config.label_names)
    report: dict[str, Any] = {"label_names": names, "context_mode": judge.config.context_mode, "sets": {}}
    thresholds = None
    if validation_rows:
        val = score_rows(judge, validation_rows, batch_size)
        labels, probs = pooled(val)
        thresholds = f1_thresholds(labels, probs, len(names))
        report["validation"] = {
            "n_chunks": int(len(labels)),
            "roc_auc": roc_auc_table(labels, probs, names),
            "operating_points": dict(zip(names, thresholds.tolist())),
            "f1": f1_table(labels, probs, thresholds, names),
        }
        try:
            report["validation"]["agreement"] = tune_thresholds(human_human_instances(val, names))
        except ImportError as err:  # the agreement metrics are an optional part of the install
            report["validation"]["agreement_error"] = str(err)
    for set_name, rows in test_sets.items():
        scored = score_rows(judge, rows, batch_size)
        labels, probs = pooled(scored)
        entry = {"n_conversations": len(rows), "n_chunks": int(len(labels)), "roc_auc": roc_auc_table(labels, probs, names),
                 "class_counts": dict(zip(names, np.bincount(labels, minlength=len(names)).tolist()))}
        if thresholds is not None:
            entry["f1"] = f1_table(labels, probs, thresholds, names)
        report["sets"][set_name] = entry
    return report


def _pct(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def markdown_report(report: dict[str, Any]) -> str:
    """Tables in the layout of Talking Turns Tables 1, 5 and 6."""
    lines = ["# TurnTakingJudge evaluation", ""]
    sets = report["sets"]
    names = report["label_names"]
    order = [n for n in TABLE_ORDER if n in names] + [n for n in names if n not in TABLE_ORDER]
    if sets:
        lines += ["## ROC-AUC (Table 1 layout)", "", "| Turn-Taking Label | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
        for name in order + ["overall"]:
            title = LABEL_TITLES.get(name, "Overall" if name == "overall" else name)
            lines.append(f"| {title} | " + " | ".join(_pct(s["roc_auc"][name]) for s in sets.values()) + " |")
        lines.append("")
    blocks = ([("Validation", report["validation"])] if "validation" in report else []) + [(k, v) for k, v in sets.items() if "f1" in v]
    for title, block in blocks:
        lines += [f"## {title}: ROC-AUC and F1 at tuned operating points (Table 5 layout)", "", "| Turn-Taking Label | ROC-AUC | F1 |", "|---|---|---|"]
        for name in order + ["overall"]:
            label = LABEL_TITLES.get(name, "Overall" if name == "overall" else name)
            lines.append(f"| {label} | {_pct(block['roc_auc'][name])} | {_pct(block['f1'][name])} |")
        lines.append("")
    agreement = report.get("validation", {}).get("agreement")
    if agreement:
        lines += ["## Validation: agreement with human decisions (Table 6 layout)", "", "| Turn-Taking Metric | Agreement | Margin of Error | Threshold |", "|---|---|---|---|"]
        for metric, (title, decisions) in AGREEMENT_ROWS.items():
            if metric not in agreement:
                continue
            entry = agreement[metric]
            lines.append(f"| **{title}** | | | {entry['threshold']:+.2f} |")
            for decision, text in decisions.items():
                moe = entry["margin_of_error"].get(decision, math.nan)
                moe_text = "-" if math.isnan(moe) else f"±{100 * moe:.2f}"
                lines.append(f"| {text} (n={entry['n_instances'].get(decision, 0)}) | {_pct(entry['agreement'].get(decision, math.nan))} | {moe_text} | |")
        lines.append("")
    return "\n".join(lines)


def write_report(report: dict[str, Any], out: str | Path) -> tuple[Path, Path]:
    """``<out>/judge_eval.json`` and ``<out>/judge_eval.md``, written atomically."""
    out = Path(out)
    json_path, md_path = out / "judge_eval.json", out / "judge_eval.md"
    atomic_write_text(json_path, json.dumps(to_jsonable(report), indent=2))
    atomic_write_text(md_path, markdown_report(report))
    return json_path, md_path


def _split_source(text: str) -> tuple[str, str]:
    """``path:split`` -> (path, split); the split defaults to ``test``."""
    if ":" in text and not Path(text).exists():
        path, split = text.rsplit(":", 1)
        return path, split
    return text, "test"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Evaluate a TurnTakingJudge (ROC-AUC, tuned F1, agreement thresholds).")
    parser.add_argument("--judge", help="checkpoint folder (default: the shipped demo judge)")
    parser.add_argument("--validation", help="SOURCE[:SPLIT] to tune operating points and thresholds on (split default 'test'; write e.g. data:validation)")
    parser.add_argument("--test", action="append", default=[], help="[NAME=]SOURCE[:SPLIT], repeatable (in-domain test, OOD corpora)")
    parser.add_argument("--context_mode", choices=("window", "causal"), help="override the checkpoint's context mode")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--max_conversations", type=int, help="score only the first N conversations of each set")
    parser.add_argument("--cache_dir")
    parser.add_argument("--out", required=True, help="output folder for judge_eval.json and judge_eval.md")
    args = parser.parse_args(argv)

    from turneval.modeling.judge_loading import load_judge
    from turneval.training.judge_data import load_chunk_rows

    overrides = {"context_mode": args.context_mode} if args.context_mode else {}
    judge = load_judge(args.judge, **overrides)

    def rows_of(spec: str) -> list[dict[str, Any]]:
        rows = load_chunk_rows(*_split_source(spec), cache_dir=args.cache_dir)
        return rows[: args.max_conversations] if args.max_conversations else rows

    validation = rows_of(args.validation) if args.validation else None
    tests = {}
    for spec in args.test:
        name, _, source = spec.rpartition("=")
        tests[name or Path(_split_source(source)[0]).stem] = rows_of(source)
    report = evaluate(judge, validation, tests, args.batch_size)
    json_path, md_path = write_report(report, args.out)
    print(markdown_report(report))
    print(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
