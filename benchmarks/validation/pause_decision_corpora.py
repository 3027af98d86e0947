"""The judge's pause decision on three corpora of real calls, each left out of the fit, and the
end-of-turn view agent builders use, beside a stopwatch and smart-turn v3.2.

    python benchmarks/validation/pause_decision_corpora.py [--quick] [--real-root DIR]
    python benchmarks/run_all.py --only pause_decision_corpora

The corpora (``$TURNEVAL_REAL_ROOT``, default ``<repository>/../shared/real``): the SpokenWOZ
dev calls (telephone, 8 kHz), the Harper Valley Bank dev calls (telephone, 8 kHz, line echo,
look-up silences) and every pair of AMI ES2004a close-talk channels (meetings), speech by the
report's VAD, no transcript. Skips with one NaN figure without them.

1. **Leave one corpus out** (``training/fit_pause_decision.py``'s protocol, the judge's own
   features): the rule fitted on two corpora decides the third; its ROC-AUC (shift positive)
   beside the silence's length and smart-turn v3.2 200 ms after the IPU end, with the paired
   differences (95 % intervals resampling recordings). The shipped rule, fitted on all three,
   is shown as well, labelled in-sample.
2. **Leave one call out**: the shipped design refitted without one call at a time decides that
   call, so that one rule, as a report ships it, decides every call: its ROC-AUC pooled over the
   telephone corpora and over all (the pooled figure of 1 mixes three rules whose intercepts
   differ), and the (a)/(d) agreement per corpus and direction at the judge's installed
   threshold. New calls of corpora it was fitted on, which is what held-back calls of SpokenWOZ
   and Harper Valley are; 1 answers for a corpus never seen.
3. **End of turn as eot-bench counts it**, per corpus: the pauses where the speaker went on
   (holds) and the turn ends (shifts). A detector asked at 300 ms and at 600 ms of silence cuts
   the speaker off when it says "done" at a hold that is still silent then (false cut-off rate,
   over all holds), and ends a turn in time when it says so at a turn end (turn ends called,
   over those whose silence lasts that long); swept over its threshold, the median time from the speech end until it says
   "done" at shifts when at most 5 % of holds are cut off (latency at 5 % false cut-offs; asked
   every 100 ms from 200 ms to 3 s; NaN, noted "> 3 s", when no threshold keeps the false cut-offs
   that low within 3 s: holds longer than that are common where agents look things up). Detectors: a VAD
   timer (done after a fixed silence), smart-turn v3.2 (the judge's converted copy of it, P >= 0.5,
   on the pauser's channel up to that moment) and the judge's pause rule fitted without the
   corpus, asked with the silence so far.
The judge's rule reads Whisper's punctuation after the pauser's last word (every report does);
in the end-of-turn view its streamed decision hears Whisper's cue on the clip that ends at the
stop time, so that every time asked is after what it heard (a second Whisper pass a pause: not
with ``--quick``, where the view shows the VAD timer and smart-turn only).
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure, limit_threads, print_figures  # noqa: E402
from _real_calls import CORPUS_TITLES  # noqa: E402


ENV_VAR = "TURNEVAL_REAL_ROOT"
ASK_AT_S = (0.3, 0.6)
MAX_FALSE_CUTOFFS = 0.05
QUICK_CALLS = 3
STREAM_GRID_S = tuple(round(0.2 + 0.1 * k, 1) for k in range(29))  # 0.2 .. 3.0 s


def default_root() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else HERE.parents[1].parent / "shared" / "real"


def corpus_recordings(root: Path, quick: bool = False) -> dict[str, list[str]]:
    """``{corpus: [recording spec]}`` for the corpora found under ``root`` (``quick``: the first
    :data:`QUICK_CALLS` calls of each telephone corpus)."""
    found = {"spokenwoz": sorted(str(p) for p in (root / "spokenwoz" / "audio").glob("*.flac")),
             "harper_valley": sorted(str(p) for p in (root / "harper_valley" / "audio").glob("*.flac"))}
    ami = sorted((root / "ami" / "ES2004a_excerpt").glob("source*.flac"))
    if quick:
        found = {name: recs[:QUICK_CALLS] for name, recs in found.items()}
    else:
        found["ami"] = [f"{a}+{b}" for a, b in itertools.combinations(ami, 2)]
    return {name: recs for name, recs in found.items() if recs}


def streamed_cue_logits(judge: Any, view: Any, readings: Sequence[Any], grid: Sequence[float]) -> np.ndarray:
    """``[decisions, len(grid)]``: the judge's turn-completion cue asked ``t`` seconds into each
    silence, hearing the pauser's channel up to then less its decision margin (never before the
    stop time: the pause asked at ``speech_end + t``, :func:`turneval.pause_decision.cue_clips`);
    NaN once the silence is over."""
    from dataclasses import replace

    from turneval.pause_decision import cue_clips

    out = np.full((len(readings), len(grid)), np.nan)
    asked, where = [], []
    for i, r in enumerate(readings):
        for j, t in enumerate(grid):
            if t > r.silence_elapsed_s + 1e-6:
                break
            asked.append(replace(r, time=r.speech_end + t))
            where.append((i, j))
    logits = judge.turn_complete_logits(cue_clips(judge, view, asked)) if asked else np.zeros(0)
    for (i, j), v in zip(where, logits):
        out[i, j] = float(v)
    return out


def fire_times(scores: np.ndarray, grid: Sequence[float], threshold: float) -> np.ndarray:
    """When a detector first says "done" (its score at or above ``threshold``) at each pause; inf
    when it does not while the silence lasts within the grid."""
    hit = np.nan_to_num(scores, nan=-np.inf) >= threshold
    first = np.argmax(hit, axis=1)
    return np.where(hit.any(axis=1), np.asarray(grid, dtype=float)[first], np.inf)


def latency_at_false_cutoffs(scores: np.ndarray, grid: Sequence[float], shift: np.ndarray, silence: np.ndarray,
                             limit: float = MAX_FALSE_CUTOFFS) -> tuple[float, float]:
    """(median latency at shifts, false cut-off rate) at the lowest-latency threshold that cuts
    off at most ``limit`` of the holds; (inf, nan) when none does."""
    candidates = np.unique(scores[np.isfinite(scores)])
    best = (np.inf, np.nan)
    for threshold in candidates:
        fired = fire_times(scores, grid, threshold)
        cut = float(np.mean(fired[~shift] < silence[~shift] - 1e-6)) if (~shift).any() else 0.0
        if cut <= limit:
            latency = float(np.median(fired[shift])) if shift.any() else np.nan
            if latency < best[0] or not np.isfinite(best[0]):
                best = (latency, cut)
    return best


def detector_scores(judge: Any, cue: np.ndarray, rule: dict[str, Any], grid: Sequence[float],
                    call_mean_log_silence: np.ndarray | None = None, whisper_at_stop: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each detector's score at every (pause, time in the silence): the timer's elapsed time,
    smart-turn's P(complete) and the judge's pause decision by the fitted ``rule``
    (:func:`~turneval.training.fit_pause_decision.fit_rule`), P(the other party takes the turn).
    ``call_mean_log_silence``: per pause, the call's mean log silence before it (what
    ``log_silence_vs_call`` subtracts; it does not change while the silence lasts).
    ``whisper_at_stop``: per pause, Whisper's cue on the clip that ends at the stop time (heard
    before every time asked, so the streamed decision stays causal)."""
    from turneval.modeling.configuration_turn_taking_judge import PauseRule
    from turneval.modeling.modeling_turn_taking_judge import log_silence

    elapsed = np.broadcast_to(np.asarray(grid, dtype=float), cue.shape).copy()
    elapsed[np.isnan(cue)] = np.nan
    p_cue = 1.0 / (1.0 + np.exp(-cue))
    features = {"turn_complete_logit": cue, "turn_complete_p": p_cue, "log_silence_s": log_silence(elapsed)}
    if whisper_at_stop is not None:
        features["whisper_complete_logit"] = np.broadcast_to(np.nan_to_num(whisper_at_stop, nan=0.0)[:, None], cue.shape)
    if call_mean_log_silence is not None:
        features["log_silence_vs_call"] = features["log_silence_s"] - np.asarray(call_mean_log_silence, dtype=float)[:, None]
    fitted = PauseRule(features=rule["features"], weight=rule["weight"], bias=rule["bias"])  # converts the fit's arrays
    scores = {"VAD timer": elapsed, "smart-turn v3.2": p_cue}
    if all(name in features for name in fitted.features):  # without Whisper's cue at the stop time (--quick) the judge sits out
        scores["judge"] = judge.pause_decision_probabilities(features, fitted)
    return scores


def eot_figures(where: str, scores: dict[str, np.ndarray], shift: np.ndarray, silence: np.ndarray, grid: Sequence[float]) -> list[dict]:
    out = []
    holds = int((~shift).sum())
    for name, s in scores.items():
        for t in ASK_AT_S:
            j = list(grid).index(t)
            says_done = s[:, j] >= (t if name == "VAD timer" else 0.5)  # a timer set to t; a model's own P >= 0.5
            cut = float(np.mean(says_done[~shift] & (silence[~shift] > t))) if holds else np.nan
            out.append(figure(f"{where} false cut-offs at {int(t * 1000)} ms of silence: {name}", cut, "share of holds",
                              note=f"{holds} holds, {int(shift.sum())} turn ends"))
            open_ends = shift & (silence >= t)
            caught = float(np.mean(says_done[open_ends])) if open_ends.any() else np.nan
            out.append(figure(f"{where} turn ends called at {int(t * 1000)} ms of silence: {name}", caught, "share of turn ends",
                              note=f"of the {int(open_ends.sum())} turn ends whose silence lasts {int(t * 1000)} ms; the other side of the false cut-offs"))
        latency, cut = latency_at_false_cutoffs(s, grid, shift, silence)
        out.append(figure(f"{where} latency at 5 % false cut-offs: {name}", latency if np.isfinite(latency) else float("nan"), "s",
                          note=f"median over {int(shift.sum())} turn ends; {cut:.1%} of {holds} holds cut off" if np.isfinite(latency)
                          else f"> {grid[-1]:g} s: no threshold cuts off at most 5 % of {holds} holds within {grid[-1]:g} s"))
    return out


def whisper_at_stop(reader: Any, judge: Any, view: Any, readings: Sequence[Any]) -> np.ndarray:
    """Whisper's cue per pause on the cue's clip asked at the stop time (the pause's horizon)."""
    from dataclasses import replace

    from turneval.pause_decision import cue_clips

    clips = cue_clips(judge, view, [replace(r, time=r.horizon) for r in readings])
    return reader.logits(clips) if clips else np.zeros(0)


def call_left_out_figures(judge: Any, table: dict[str, np.ndarray], features: Sequence[str], c: float) -> list[dict]:
    """The shipped design with one call left out of its fit at a time
    (``training/fit_pause_decision.py``'s ``leave_one_call_out``): its ROC-AUC pooled over the
    telephone corpora and over all (one rule, as a report ships it, on calls it was not fitted
    on), beside the silence's length, and the (a)/(d) agreement per corpus and direction, each
    call decided at the threshold chosen without it (``agreement_threshold``'s ``held_out_call``),
    beside the judge's installed threshold."""
    from turneval.metrics.agreement import pause_decision_threshold
    from turneval.modeling.modeling_turn_taking_judge import log_silence
    from turneval.training.fit_pause_decision import agreement_threshold, auc_summary, leave_one_call_out

    p = leave_one_call_out(table, features, c)
    silence = log_silence(table["silence_elapsed_s"])
    corpus = np.asarray(table["corpus"]).astype(str)
    out = []
    for where, rows in (("telephone corpora pooled", corpus != "ami"), ("every corpus pooled", np.ones(len(corpus), dtype=bool))):
        if len(set(corpus[rows].tolist())) < 2:
            continue
        rule, sil = auc_summary(table, p, rows), auc_summary(table, silence, rows)
        out.append(figure(f"pause decisions ROC-AUC, {where}: judge, its call left out of the fit", rule["roc_auc"], "", headline=True,
                          note=f"{rule['decisions']} decisions, {rule['shifts']} shifts; 95 % CI {rule['ci95']} resampling recordings; "
                               f"C={c:g}; AMI's channel pairs leave with their meeting"))
        out.append(figure(f"pause decisions ROC-AUC, {where}: silence length", sil["roc_auc"], "", note=f"95 % CI {sil['ci95']}"))
    installed = pause_decision_threshold(judge.config.agreement_thresholds)
    chosen = agreement_threshold(table, features, c, p_call=p)
    for name, entry in chosen.get("held_out_call", {}).items():
        low, high = entry["p_thresholds"]
        for direction in ("speaks_up", "lets_continue"):
            value = entry[direction]
            out.append(figure(f"{CORPUS_TITLES.get(name, name)} (a)/(d) agreement, {direction.replace('_', ' ')}: judge, its call left out",
                              float("nan") if value is None else value, "",
                              note=f"{entry[direction + '_n']} decisions; each call at the P(shift) threshold chosen without it "
                                   f"({low:.2f}-{high:.2f}); installed: {installed:.2f}, chosen on every call "
                                   f"({chosen.get('installed', {}).get('p_threshold', float('nan')):.2f} here)"))
    return out


def run_on(quick: bool, root: str | None = None) -> list[dict]:
    from dataclasses import replace

    from turneval.checkpoints import default_checkpoint
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.modeling.judge_loading import load_judge
    from turneval.modeling.modeling_turn_taking_judge import log_silence
    from turneval.pause_decision import judge_pause_records
    from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3
    from turneval.training.fit_pause_decision import (
        DEFAULT_C,
        decision_table,
        fit_rule,
        held_out_figures,
        join_tables,
        leave_one_corpus_out,
        load_recording,
    )

    threads = limit_threads()
    corpora = corpus_recordings(Path(root) if root else default_root(), quick)
    if len(corpora) < 2:
        return [figure("pause decisions by corpus: skipped", float("nan"), "",
                       note=f"needs two corpora of real calls under {root or default_root()} (${ENV_VAR}); found {sorted(corpora)}")]
    judge = load_judge(default_checkpoint("judge"))
    shipped = judge.config.pause_decision
    features = list(shipped.features)
    try:
        smart_turn = SmartTurnV3(threads=threads)
    except SmartTurnUnavailable:
        smart_turn = None
    grid = STREAM_GRID_S if not quick else (0.2, 0.3, 0.6)
    dialogues = {name: [replace(load_recording(r), words=None) for r in recs] for name, recs in corpora.items()}
    reader = None
    if "whisper_complete_logit" in features:
        from turneval.whisper_completion import WhisperCompletion

        reader = WhisperCompletion()
    table = join_tables([decision_table(judge, ds, features, smart_turn, corpus=name, whisper=reader) for name, ds in dialogues.items()])
    loo = leave_one_corpus_out(table, features, DEFAULT_C)
    out = []
    held = held_out_figures(table, loo["held_out"], features)
    shipped_scores = float(shipped.bias) + np.stack([table[f] for f in features], 1) @ np.asarray(shipped.weight, dtype=float)
    from turneval.training.fit_pause_decision import auc_summary

    for corpus, entry in held.items():
        where = CORPUS_TITLES.get(corpus, corpus)
        rule, sil = entry["rule_held_out"], entry["silence_length"]
        out.append(figure(f"{where} pause decisions ROC-AUC: judge, corpus left out of the fit", rule["roc_auc"], "", headline=True,
                          note=f"{rule['decisions']} decisions, {rule['shifts']} shifts; 95 % CI {rule['ci95']} resampling recordings; "
                               f"C={loo['c']:g} chosen by the worst held-out gain over the silence (all corpora)"))
        out.append(figure(f"{where} pause decisions ROC-AUC: silence length", sil["roc_auc"], "", note=f"95 % CI {sil['ci95']}"))
        d = entry["rule_minus_silence"]
        out.append(figure(f"{where} pause decisions ROC-AUC: judge minus silence length (paired)", d["difference"], "", note=f"95 % CI {d['ci95']}"))
        if "smart_turn_v3_2" in entry:
            st, d = entry["smart_turn_v3_2"], entry["rule_minus_smart_turn"]
            out.append(figure(f"{where} pause decisions ROC-AUC: smart-turn v3.2 at 200 ms", st["roc_auc"], "", note=f"95 % CI {st['ci95']}"))
            out.append(figure(f"{where} pause decisions ROC-AUC: judge minus smart-turn (paired)", d["difference"], "", note=f"95 % CI {d['ci95']}"))
        rows = table["corpus"] == corpus
        ins = auc_summary(table, shipped_scores, rows)
        out.append(figure(f"{where} pause decisions ROC-AUC: shipped rule, in sample", ins["roc_auc"], "",
                          note="the shipped rule was fitted on all corpora including this one: in sample, not a transfer figure"))
    out += call_left_out_figures(judge, table, features, loo["c"])
    # the end-of-turn view, with each corpus's rule fitted without it
    for corpus, ds in dialogues.items():
        rows = table["corpus"] == corpus
        others = {k: v[~rows] for k, v in table.items()}
        rule = fit_rule(others, features, loo["c"])
        cues, stops = [], []
        for d in ds:
            view = conversation_view(d)
            readings = list(judge_pause_records(judge, view).values())
            cues.append(streamed_cue_logits(judge, view, readings, grid))
            if reader is not None and not quick:  # a second Whisper pass a pause: the full run only
                stops.append(whisper_at_stop(reader, judge, view, readings))
        cue = np.concatenate(cues) if cues else np.zeros((0, len(grid)))
        stop = np.concatenate(stops) if stops else None
        shift, silence = table["shift"][rows].astype(bool), table["silence_elapsed_s"][rows].astype(float)
        call_mean = log_silence(silence) - table["log_silence_vs_call"][rows] if "log_silence_vs_call" in table else None
        out += eot_figures(CORPUS_TITLES.get(corpus, corpus), detector_scores(judge, cue, rule, grid, call_mean, stop), shift, silence, grid)
    return out


def run(quick: bool) -> list[dict]:
    """The run_all entry: the corpora from ``$TURNEVAL_REAL_ROOT`` or the default."""
    return run_on(quick)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-root", default=None, help=f"the folder of spokenwoz/, harper_valley/, ami/ (default: ${ENV_VAR} or ../shared/real)")
    parser.add_argument("--quick", action="store_true", help="3 calls of each telephone corpus, a coarse time grid")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    return print_figures(run_on(args.quick, args.real_root), args.json)


if __name__ == "__main__":
    sys.exit(main())
