"""The judge on real two-party calls: its pause decisions against a stopwatch and smart-turn, and
its agreement (a)-(e) beside Talking Turns' figures.

    python benchmarks/validation/real_calls_judge.py [--quick] [--spokenwoz-root DIR] [--ami-root DIR]
    python benchmarks/run_all.py --only real_speech      # real_speech.py runs this part too

The recordings (``_real_calls.real_recordings``): the SpokenWOZ and Harper Valley dev calls
(telephone, 8 kHz, one speaker per channel) and every pair of AMI ES2004a close-talk channels, speech found by
the report's VAD and no transcript, as a user's recording is read. Skips with one NaN figure without them.

1. **Pause decisions** (metrics (a)/(d): after an IPU and a silence, does the other party take
   the turn?), scored as ROC-AUC (shift positive) with 95 % intervals resampling recordings
   and resampling decisions:
   * the judge as the report asks it: its ``pause_decision`` rule at the end of the silence
     (Talking Turns' protocol), or its turn-end head where it has no rule;
   * smart-turn v3.2 (onnxruntime) as pipecat asks it: 200 ms after the IPU end;
   * the silence's length (a stopwatch; what any judge deciding at its end knows);
   with the paired differences judge minus each, per corpus. The shipped rule was fitted on
   all three corpora (``training/fit_pause_decision.py``), so these figures are in sample; the
   figure of a corpus left out of the fit is ``pause_decision_corpora.py``'s.
2. **Agreement (a)-(e)** per direction at the judge's thresholds, and with thresholds tuned on
   the other recordings only (leave one recording out; ``metrics.agreement.tune_thresholds``,
   a metric retuned where both decisions have :data:`MIN_PER_DECISION` instances), beside
   Talking Turns' judge on Switchboard (Table 6).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure, limit_threads, print_figures  # noqa: E402


MIN_PER_DECISION = 5  # as the shipped thresholds were tuned (training/tune_judge_thresholds.py)
TABLE_6 = {  # Talking Turns Table 6: its judge against human decisions, Switchboard validation (%)
    ("a", "T"): 81.2, ("a", "C"): 75.5, ("b", "BC"): 71.6, ("b", "C"): 74.8,
    ("c", "I"): 76.6, ("c", "C"): 72.8, ("e", "T"): 61.3, ("e", "C"): 57.0,
}


def _corpus(dialogue: Any) -> str:
    return str(dialogue.metadata.get("corpus", "real"))


def pause_rows(dialogues: list, judge: Any, smart_turn: Any | None) -> list[dict[str, Any]]:
    """One row per (a)/(d) pause decision: the recording, whether the other party took the
    turn, the judge's P(shift), smart-turn's P(complete) at 200 ms, and the silence elapsed at the decision (s)."""
    from dataclasses import replace

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import ipu_pauses, judge_pause_records, pause_decision_probabilities, smart_turn_clip
    from turneval.smart_turn import VAD_STOP_S

    rows = []
    for dialogue in dialogues:
        view = conversation_view(replace(dialogue, system_speaker=1))
        readings = judge_pause_records(judge, view)
        judged = pause_decision_probabilities(judge, view, readings)
        decisions = ipu_pauses(view, VAD_STOP_S)
        smart = {d.chunk: smart_turn.probability(smart_turn_clip(view.dialogue, d)) for d in decisions} if smart_turn is not None else {}
        taken = {d.chunk: d.decision for d in decisions}
        for chunk, reading in readings.items():
            if chunk not in taken:
                continue  # a silence not entered from the pauser's IPU (e.g. after an overlap)
            rows.append({"recording": dialogue.id, "corpus": _corpus(dialogue), "shift": taken[chunk] == "T",
                         "judge": judged[chunk], "smart": smart.get(chunk, math.nan), "silence_elapsed_s": reading.silence_elapsed_s})
    return rows


def decision_figures(rows: list[dict], where: str, note: str, n_resamples: int) -> list[dict]:
    """ROC-AUC of each contestant and the judge's paired differences, on ``rows``."""
    from turneval.metrics.intervals import bootstrap_roc_auc, bootstrap_roc_auc_difference

    y = np.array([r["shift"] for r in rows], dtype=int)
    clusters = np.array([r["recording"] for r in rows])
    out = [figure(f"{where} pause decisions", len(rows), "decisions",
                  note=f"{int(y.sum())} shifts, {int(len(y) - y.sum())} holds in {len(set(clusters.tolist()))} recordings; {note}")]
    if len(set(y.tolist())) < 2:
        return out + [figure(f"{where} pause decisions ROC-AUC: judge", math.nan, "", note="needs shifts and holds")]
    scores = {"judge": np.array([r["judge"] for r in rows]), "smart-turn v3.2 at 200 ms": np.array([r["smart"] for r in rows]),
              "silence length": np.array([r["silence_elapsed_s"] for r in rows])}
    for name, score in scores.items():
        if not np.all(np.isfinite(score)):
            out.append(figure(f"{where} pause decisions ROC-AUC: {name}", math.nan, "", note="not measured (pipecat-ai's ONNX file not installed)"))
            continue
        by_rec = bootstrap_roc_auc(y, score, clusters=clusters, n_resamples=n_resamples)
        by_dec = bootstrap_roc_auc(y, score, n_resamples=n_resamples)
        out.append(figure(f"{where} pause decisions ROC-AUC: {name}", by_rec.value, "", headline=name == "judge",
                          note=f"95 % CI [{by_rec.low:.3f}, {by_rec.high:.3f}] resampling recordings, [{by_dec.low:.3f}, {by_dec.high:.3f}] resampling decisions"))
        if name != "judge":
            for label, cl in (("recordings", clusters), ("decisions", None)):
                diff = bootstrap_roc_auc_difference(y, scores["judge"], score, clusters=cl, n_resamples=n_resamples)
                out.append(figure(f"{where} pause decisions ROC-AUC: judge minus {name} (paired, resampling {label})", diff.value, "",
                                  note=f"95 % CI [{diff.low:+.3f}, {diff.high:+.3f}]" + (": clears 0" if diff.low > 0 else ": touches 0")))
    return out


def judged_instances(dialogues: list, judge: Any) -> dict[str, list]:
    """Every agreement instance of each recording, both speakers as the system in turn."""
    from turneval.reporting import two_party_judged_instances

    return {d.id: two_party_judged_instances(judge, d) for d in dialogues}


def agreement_figures(by_recording: dict[str, list], corpus: dict[str, str], thresholds: dict[str, float] | None) -> list[dict]:
    """Per corpus, metric and direction: agreement at ``thresholds`` and with thresholds tuned
    leaving the recording out, beside Table 6."""
    from turneval.metrics.agreement import agreement, tune_thresholds

    held_out = []
    for rec, instances in by_recording.items():
        others = [i for r, inst in by_recording.items() if r != rec for i in inst]
        tuned = tune_thresholds(others, wide=True)
        ths = dict(thresholds or {})
        ths.update({m: r["threshold"] for m, r in tuned.items() if min(r["n_instances"].values(), default=0) >= MIN_PER_DECISION})
        result = agreement(instances, ths)
        held_out += [(rec, m, d, s["n_instances"], s["agreement"]) for m, r in result.items() for d, s in r["decisions"].items()]
    out = []
    for name in sorted(set(corpus.values())):
        instances = [i for r, inst in by_recording.items() if corpus[r] == name for i in inst]
        if not instances:
            continue
        for metric, result in agreement(instances, thresholds).items():
            for decision, s in result["decisions"].items():
                if not s["n_instances"]:
                    continue
                rows = [(n, a) for r, m, d, n, a in held_out if corpus[r] == name and m == metric and d == decision and n]
                held = sum(n * a for n, a in rows) / max(1, sum(n for n, _ in rows))
                paper = TABLE_6.get((metric, decision))
                out.append(figure(f"{name} agreement ({metric}) {s['description']}", 100 * s["agreement"], "%", headline=metric in ("a", "b", "c", "d"),
                                  note=f"threshold {result['threshold']:g}; n = {s['n_instances']}; thresholds tuned without the recording: {100 * held:.1f} %"
                                       + (f"; Talking Turns' judge on Switchboard: {paper} % (Table 6)" if paper else "")))
    return out


def skipped(reason: str) -> list[dict]:
    print(f"[real_calls_judge] skipped: {reason}", file=sys.stderr)
    return [figure("real calls: judge benchmark", math.nan, "", note=f"skipped: {reason}")]


def run_on(quick: bool, spokenwoz_root: str | None = None, ami_root: str | None = None) -> list[dict]:
    from _real_calls import real_recordings

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge
    from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3

    threads = limit_threads()
    from dataclasses import replace

    dialogues, missing = real_recordings(spokenwoz_root, ami_root, quick=quick)
    if not dialogues:
        return skipped("; ".join(missing) or "no recordings")
    # as a user's recording is read: speech from VAD, no transcript (SpokenWOZ's words would
    # otherwise define the IPUs, and the decisions would not be the report's)
    dialogues = [replace(d, words=None) for d in dialogues]
    judge = load_judge(default_checkpoint("judge"))
    try:
        smart_turn = SmartTurnV3(threads=threads)
    except SmartTurnUnavailable:
        smart_turn = None
    n = 300 if quick else 2000
    rows = pause_rows(dialogues, judge, smart_turn)
    rule = judge.config.pause_decision
    fitted = (f"in sample: {rule.source}; pause_decision_corpora.py gives each corpus's figure with the rule fitted without it"
              if rule else "no rule fitted")
    out = []
    from _real_calls import CORPUS_TITLES

    for name, where in CORPUS_TITLES.items():
        subset = [r for r in rows if r["corpus"] == name]
        if subset:
            out += decision_figures(subset, where, fitted, n)
    corpus = {d.id: _corpus(d) for d in dialogues}
    out += agreement_figures(judged_instances(dialogues, judge), corpus, judge.config.agreement_thresholds)
    return out


def run(quick: bool) -> list[dict]:
    """The run_all entry: the recordings from ``$TURNEVAL_SPOKENWOZ_ROOT`` / ``$TURNEVAL_AMI_ROOT`` or the defaults."""
    return run_on(quick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spokenwoz-root", default=None)
    parser.add_argument("--ami-root", default=None)
    parser.add_argument("--quick", action="store_true", help="SpokenWOZ only, fewer bootstrap resamples")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    figures = run_on(args.quick, args.spokenwoz_root, args.ami_root)
    return print_figures(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
