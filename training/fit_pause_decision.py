"""The judge's (a)/(d) decision, fitted on real two-party speech of several corpora: a handful of numbers.

Talking Turns' judge decides at the *end* of a silence whether the other party takes the turn,
so how long nobody has spoken is known at that point. A stopwatch on that silence is a strong
baseline on real calls; the judge's evidence must add to it on every kind of call, not only on
the one it was fitted on. This stage fits the judge's ``pause_decision`` rule, a logistic
regression over

* ``log_silence_s``: the log of the silence elapsed at the decision (``silence_elapsed_s``);
* ``whisper_complete_logit``: Whisper tiny.en's punctuation after the pausing speaker's last word
  (``turneval.whisper_completion``), on that speaker's own channel up to ``decision_margin_s``
  before the decision;

(``--features`` names others of ``PAUSE_DECISION_FEATURES``: smart-turn's ``turn_complete_p``,
the call's pace ``log_silence_vs_call``; docs/validation.md lists what each gave), and its
``pause_decision_fallback`` (the log silence alone) for decisions where Whisper's cue cannot be
read, on the pause decisions of real recordings of **several corpora** (``--corpus NAME
RECORDING...``, repeated; stereo files with one speaker per channel, or ``LEFT+RIGHT`` pairs of
mono files), speech found by the report's VAD. The protocol is leave one corpus out: the
regularisation strength (``--c``) is the one whose rules, each fitted on all corpora but one
(every corpus weighted alike), beat the silence's length by the most on the corpus they left
out, in the worst case (:func:`leave_one_corpus_out`); the figures it prints and installs per
corpus are those held-out ones, beside the silence's length and smart-turn v3.2 200 ms after
the IPU end (pipecat's way) with paired intervals resampling recordings. The (a)/(d) agreement
threshold is chosen on held-out probabilities of the one rule, each call's from the rule fitted
on every other call (:func:`agreement_threshold`; with each call's threshold chosen without it
too, the agreement it gives is printed per corpus). The
installed rule is then fitted on every corpus at that strength, and its scale and bias
calibrated (one more logistic regression on its score), so that its probabilities, not only its
ranking, carry over to the agreement threshold. In-sample figures are kept, labelled as such.

    python -m turneval.training.fit_pause_decision \
        --corpus spokenwoz ../shared/real/spokenwoz/audio/*.flac \
        --corpus harper_valley ../shared/real/harper_valley/audio/*.flac \
        --corpus ami ../shared/real/ami/ES2004a_excerpt/source0.flac+../shared/real/ami/ES2004a_excerpt/source1.flac ... \
        --table runs/pause_table.npz --install_into checkpoints/turn_taking_judge_swb_revoiced
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np


DEFAULT_FEATURES = ("log_silence_s", "whisper_complete_logit")
"""The rule every report decides (a)/(d) with (issue 50: the inputs that add on every corpus left out)."""
CUE_SOURCES = {
    "whisper_complete_logit": "; Whisper tiny.en's punctuation read by turneval.whisper_completion",
    "completion_reader_logit": "; Whisper tiny.en's punctuation read through the completion reader's 8 s window "
                               "(turneval.modeling.modeling_completion_reader, $TURNEVAL_COMPLETION_READER)",
}
"""How the installed rule's ``source`` names the cue it reads."""
FALLBACK_FEATURES = ("log_silence_s",)
"""The rule installed as ``pause_decision_fallback``: where Whisper's cue cannot be read."""
THRESHOLD_GRID = tuple(round(0.05 + 0.01 * k, 2) for k in range(91))
"""The P(shift) thresholds the (a)/(d) agreement threshold is chosen from."""
MIN_DIRECTION = 10
"""A direction (speaks up, lets continue) of a corpus counts in choosing the threshold with at least this many decisions."""
DEFAULT_C = (0.001, 0.003, 0.01, 0.03, 0.1, 1.0)
CALL_TEMPO_SOURCE = ("declared: silences from the pause stop time (0.2 s) on, a prior of half a 1 s silence; the prior's weight "
                     "chosen from 0.5, 1, 2 by the worst corpus-left-out gain over the silence (+0.019, +0.018, +0.011), "
                     "as C is; grid: benchmarks/experiments/pause_cues_across_corpora.py --call_tempo_grid")
DECISION_MARGIN_S = 0.2
"""How long before the decision the cue stops listening when the rule is fitted and installed:
more than the VAD's onset padding plus one 40 ms chunk, so the onset that ends the silence (the
pauser's own, or the other party's echoed on the pauser's line) is never heard."""


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


def decision_table(judge: Any, dialogues: Sequence[Any], features: Sequence[str], smart_turn: Any | None = None,
                   corpus: str = "", whisper: Any | None = None) -> dict[str, np.ndarray]:
    """Every (a)/(d) decision of ``dialogues``: ``shift`` (the other party spoke next), the
    recording, the ``corpus``, each feature of ``features`` (plus the raw ``silence_elapsed_s``) and,
    with a ``smart_turn`` model (:class:`turneval.smart_turn.SmartTurnV3`), its logit 200 ms
    after the IPU end (``smart_turn_logit``, pipecat's way: the baseline beside the rule); with
    ``whisper`` (its reader: :func:`turneval.pause_decision.load_cue_reader`), ``features`` may name
    one of Whisper's turn-completion cues (``completion_reader_logit``, ``whisper_complete_logit``)."""
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import (
        completion_cue,
        heard_echo,
        judge_pause_records,
        pause_decision_features,
        smart_turn_clip,
    )

    extra = ["smart_turn_logit"] if smart_turn is not None else []
    cue = completion_cue(features)
    columns: dict[str, list] = {"shift": [], "recording": [], "corpus": [], "silence_elapsed_s": [], **{f: [] for f in [*features, *extra]}}
    for dialogue in dialogues:
        # one view holds every pause: (a) the pauses of channel 0, (d) those of channel 1
        view = conversation_view(dialogue)
        pauses = judge_pause_records(judge, view)
        if not pauses:
            continue
        values = pause_decision_features(judge, view, list(pauses.values()), names=features, whisper=whisper)
        if cue is not None:  # the report's fallback decides where the cue is not read
            columns.setdefault("cue_read", [])
            columns["cue_read"] += [bool(np.isfinite(v)) and not heard_echo(view.dialogue, r) for v, r in zip(values[cue], pauses.values())]
        columns["shift"] += [r.shift for r in pauses.values()]
        columns["recording"] += [dialogue.id] * len(pauses)
        columns["corpus"] += [corpus] * len(pauses)
        for name in ["silence_elapsed_s", *features]:
            columns[name] += list(values[name])
        if smart_turn is not None:
            for r in pauses.values():  # a pause record has what pipecat's clip needs: pauser, turn start, horizon
                p = float(np.clip(smart_turn.probability(smart_turn_clip(view.dialogue, r)), 1e-6, 1 - 1e-6))
                columns["smart_turn_logit"].append(float(np.log(p / (1 - p))))
    return {k: np.asarray(v) for k, v in columns.items()}


def join_tables(tables: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The decisions of several tables (corpora) in one, column by column."""
    return {k: np.concatenate([t[k] for t in tables]) for k in tables[0]}


def _design(table: dict[str, np.ndarray], features: Sequence[str]) -> np.ndarray:
    return np.stack([np.asarray(table[f], dtype=np.float64) for f in features], axis=1)


def _group_weights(groups: np.ndarray) -> np.ndarray:
    """One weight per decision so that every group (corpus) weighs alike, mean 1."""
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    w = 1.0 / counts[inverse]
    return w * len(w) / w.sum()


def _fit_direction(table: dict[str, np.ndarray], features: Sequence[str], c: float, rows: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c).fit(_design(table, features)[rows], table["shift"][rows].astype(int), sample_weight=_group_weights(groups[rows]))
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    from turneval.metrics.intervals import roc_auc

    return float(roc_auc(y, score)) if 0 < y.sum() < len(y) else float("nan")


def leave_one_corpus_out(table: dict[str, np.ndarray], features: Sequence[str], c_grid: Sequence[float] = DEFAULT_C,
                         group_by: str = "corpus") -> dict[str, Any]:
    """Held-out scores of rules fitted on every group but one (``group_by``: "corpus", or
    "recording" when there is one corpus), for each strength in ``c_grid``; the chosen strength
    is the one whose worst held-out group gains the most ROC-AUC over the silence's length alone
    (ties: the stronger regularisation). Returns ``c``, ``held_out`` (the chosen strength's
    scores, one per decision), ``gains`` (per strength, per group) and ``groups``."""
    from turneval.modeling.modeling_turn_taking_judge import log_silence

    y = table["shift"].astype(int)
    groups = np.asarray(table[group_by]).astype(str)
    names = sorted(set(groups.tolist()))
    if len(names) < 2:
        raise ValueError(f"leave-one-out needs at least two {group_by}s; got {names}")
    silence = log_silence(table["silence_elapsed_s"])
    held: dict[float, np.ndarray] = {}
    gains: dict[float, dict[str, float]] = {}
    for c in c_grid:
        scores = np.zeros(len(y))
        for g in names:
            test = groups == g
            w, b = _fit_direction(table, features, c, ~test, groups)
            scores[test] = _design(table, features)[test] @ w + b
        held[c] = scores
        gains[c] = {g: _auc(y[groups == g], scores[groups == g]) - _auc(y[groups == g], silence[groups == g]) for g in names}
    def worst(c: float) -> float:
        finite = [v for v in gains[c].values() if np.isfinite(v)]
        return min(finite) if finite else -np.inf
    best = max(sorted(c_grid), key=worst)  # max keeps the first of equals: the smallest C
    return {"c": float(best), "held_out": held[best], "gains": gains, "groups": groups}


def fit_rule(table: dict[str, np.ndarray], features: Sequence[str], c: float, group_by: str = "corpus") -> dict[str, Any]:
    """The rule on every decision at strength ``c`` (groups weighted alike), its scale and bias
    then calibrated by an unregularised logistic regression on its score, so that its
    probabilities match the rates of the fit data: ``weight``, ``bias`` on the original feature
    scales, and the ``in_sample_scores``."""
    from sklearn.linear_model import LogisticRegression

    groups = np.asarray(table[group_by]).astype(str)
    everything = np.ones(len(groups), dtype=bool)
    w, b = _fit_direction(table, features, c, everything, groups)
    z = _design(table, features) @ w + b
    calib = LogisticRegression(C=1e6).fit(z[:, None], table["shift"].astype(int), sample_weight=_group_weights(groups))
    scale, shift = float(calib.coef_[0][0]), float(calib.intercept_[0])
    weight, bias = w * scale, b * scale + shift
    return {"features": list(features), "weight": [float(v) for v in weight], "bias": float(bias), "c": float(c),
            "in_sample_scores": _design(table, features) @ weight + bias}


def leave_one_call_out(table: dict[str, np.ndarray], features: Sequence[str], c: float) -> np.ndarray:
    """Held-out probabilities of the shipped design at strength ``c``: each call's from the rule
    fitted (:func:`fit_rule`, corpora weighted alike) on every other call, one decision each.

    What the one rule a report ships does on new calls of the corpora it was fitted on, pooled
    across corpora: the pooled figure of :func:`leave_one_corpus_out` mixes three rules, each
    fitted without a whole corpus, whose intercepts differ by more than the corpora's decisions
    do. A call is the recording's name up to its first ``/`` (the channel pairs of one AMI
    meeting leave together: they share its speakers)."""
    return held_out_probabilities({**table, "call": _calls(table)}, features, c, group_by="call", weigh_by="corpus")


def _calls(table: dict[str, np.ndarray]) -> np.ndarray:
    """Each decision's call: its recording's name up to the first ``/`` (one AMI meeting's channel pairs are one call)."""
    return np.array([str(r).split("/")[0] for r in table["recording"]])


def fit(table: dict[str, np.ndarray], features: Sequence[str], c_grid: Sequence[float] = DEFAULT_C) -> dict[str, Any]:
    """The rule with its strength chosen leaving one group out (corpora when the table has
    several, else recordings): ``weight``, ``bias``, ``c``, ``cv_scores`` (held-out, one per
    decision) and ``in_sample_scores``."""
    group_by = "corpus" if "corpus" in table and len(set(np.asarray(table["corpus"]).tolist())) > 1 else "recording"
    loo = leave_one_corpus_out(table, features, c_grid, group_by=group_by)
    rule = fit_rule(table, features, loo["c"], group_by=group_by)
    return {**rule, "cv_scores": loo["held_out"], "group_by": group_by, "gains": loo["gains"]}


def auc_summary(table: dict[str, np.ndarray], scores: np.ndarray, rows: np.ndarray | None = None) -> dict[str, Any]:
    """Pooled ROC-AUC (shift positive) with a 95 % interval resampling recordings, and each
    recording's; over ``rows`` (a mask) when given."""
    from turneval.metrics.intervals import bootstrap_roc_auc

    rows = np.ones(len(table["shift"]), dtype=bool) if rows is None else rows
    y, groups, scores = table["shift"][rows].astype(int), table["recording"][rows], np.asarray(scores)[rows]
    ci = bootstrap_roc_auc(y, scores, clusters=groups, n_resamples=2000)
    per = {str(g): round(_auc(y[groups == g], scores[groups == g]), 3) for g in np.unique(groups) if 0 < y[groups == g].sum() < (groups == g).sum()}
    return {"roc_auc": round(float(ci.value), 3), "ci95": [round(float(ci.low), 3), round(float(ci.high), 3)], "per_recording": per,
            "decisions": int(len(y)), "shifts": int(y.sum())}


def paired_summary(table: dict[str, np.ndarray], scores: np.ndarray, baseline: np.ndarray, rows: np.ndarray) -> dict[str, Any]:
    """ROC-AUC of ``scores`` minus ``baseline`` on the same decisions, 95 % interval resampling recordings."""
    from turneval.metrics.intervals import bootstrap_roc_auc_difference

    d = bootstrap_roc_auc_difference(table["shift"][rows].astype(int), np.asarray(scores)[rows], np.asarray(baseline)[rows],
                                     clusters=table["recording"][rows], n_resamples=2000)
    return {"difference": round(float(d.value), 3), "ci95": [round(float(d.low), 3), round(float(d.high), 3)]}


def held_out_figures(table: dict[str, np.ndarray], held_out: np.ndarray, features: Sequence[str]) -> dict[str, Any]:
    """Per corpus: the rule fitted without it, the silence's length, the cue alone and smart-turn
    v3.2 at 200 ms on its decisions, with the rule's paired differences against both baselines."""
    from turneval.modeling.modeling_turn_taking_judge import log_silence

    out = {}
    silence = log_silence(table["silence_elapsed_s"])
    for corpus in sorted(set(table["corpus"].tolist())):
        rows = table["corpus"] == corpus
        entry = {"rule_held_out": auc_summary(table, held_out, rows), "silence_length": auc_summary(table, silence, rows)}
        entry["rule_minus_silence"] = paired_summary(table, held_out, silence, rows)
        for f in features:
            if f != "log_silence_s":
                entry[f"{f}_alone"] = auc_summary(table, table[f], rows)
        if "smart_turn_logit" in table:
            entry["smart_turn_v3_2"] = auc_summary(table, table["smart_turn_logit"], rows)
            entry["rule_minus_smart_turn"] = paired_summary(table, held_out, table["smart_turn_logit"], rows)
        out[corpus] = entry
    return out


def rule_record(table: dict[str, np.ndarray], features: Sequence[str], c_grid: Sequence[float], source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(config record, fitted rule)``: the rule over ``features`` by :func:`fit`, written as a
    config block (weights, bias, C, ``source``) with its measured figures: the protocol, each
    strength's gains, in sample, and held out per corpus (or per recording with one corpus)."""
    rule = fit(table, features, c_grid)
    measured: dict[str, Any] = {
        "protocol": f"leave one {rule['group_by']} out; C from {list(c_grid)} by the worst held-out gain over the silence's length",
        "gains_over_silence_by_c": {str(c): {g: round(v, 3) for g, v in gains.items()} for c, gains in rule["gains"].items()},
        "rule_in_sample": auc_summary(table, rule["in_sample_scores"]),
    }
    if rule["group_by"] == "corpus":
        measured["held_out_corpus"] = held_out_figures(table, rule["cv_scores"], features)
    else:
        measured["rule_leave_one_recording_out"] = auc_summary(table, rule["cv_scores"])
    record = {"features": rule["features"], "weight": [round(w, 6) for w in rule["weight"]], "bias": round(rule["bias"], 6),
              "c": rule["c"], "source": source, "measured": measured}
    return record, rule


def fallback_rule(table: dict[str, np.ndarray], c_grid: Sequence[float], source: str) -> dict[str, Any]:
    """The rule where Whisper's cue cannot be read (:data:`FALLBACK_FEATURES`) by the same protocol."""
    return rule_record(table, FALLBACK_FEATURES, c_grid, source + "; where Whisper's cue cannot be read")[0]


def held_out_probabilities(table: dict[str, np.ndarray], features: Sequence[str], c: float, group_by: str = "corpus",
                           weigh_by: str | None = None) -> np.ndarray:
    """P(shift) at each decision from the rule fitted (and calibrated) without its group (corpus,
    or recording when there is one corpus); the fit weighs the groups of ``weigh_by`` alike
    (default ``group_by``)."""
    corpus = np.asarray(table[group_by]).astype(str)
    p = np.zeros(len(corpus))
    for held in sorted(set(corpus)):
        rule = fit_rule({k: np.asarray(v)[corpus != held] for k, v in table.items()}, features, c, group_by=weigh_by or group_by)
        rows = corpus == held
        p[rows] = 1.0 / (1.0 + np.exp(-(_design(table, features)[rows] @ np.asarray(rule["weight"]) + rule["bias"])))
    return p


def _worst_direction(p: np.ndarray, shift: np.ndarray, corpus: np.ndarray, threshold: float, names: Sequence[str]) -> float:
    """The lowest agreement, speaks up (P > threshold at shifts) or lets continue (P <= threshold at
    holds), over the corpora ``names`` and their directions of at least :data:`MIN_DIRECTION` decisions."""
    rates = []
    for name in names:
        for rows, agree in (((corpus == name) & shift, p > threshold), ((corpus == name) & ~shift, p <= threshold)):
            if rows.sum() >= MIN_DIRECTION:
                rates.append(float(np.mean(agree[rows])))
    return min(rates) if rates else float("nan")


def best_threshold(p: np.ndarray, shift: np.ndarray, corpus: np.ndarray, names: Sequence[str]) -> float:
    """The P(shift) threshold of :data:`THRESHOLD_GRID` whose worst direction over the corpora
    ``names`` is best (ties: the lowest)."""
    return float(max(THRESHOLD_GRID, key=lambda th: _worst_direction(p, shift, corpus, th, names)))


def _agreement_of(says_shift: np.ndarray, shift: np.ndarray) -> dict[str, Any]:
    """Speaks up (the judge says shift where the other party took the turn) and lets continue, with counts."""
    return {"speaks_up": round(float(np.mean(says_shift[shift])), 3) if shift.any() else None, "speaks_up_n": int(shift.sum()),
            "lets_continue": round(float(np.mean(~says_shift[~shift])), 3) if (~shift).any() else None, "lets_continue_n": int((~shift).sum())}


def call_left_out_decisions(table: dict[str, np.ndarray], features: Sequence[str], c: float,
                            p_call: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """Each decision's (a)/(d) verdict (P(shift) above the threshold: the judge says the other party
    takes the turn) with its call never read: its P from :func:`leave_one_call_out` (``p_call``,
    computed when not given), its threshold chosen by :func:`best_threshold` on the other calls'
    probabilities, each from the rule fitted without that call and without this one. Returns the
    verdicts and each call's threshold."""
    shift, calls, corpus = table["shift"].astype(bool), _calls(table), np.asarray(table["corpus"]).astype(str)
    names = sorted(set(corpus))
    p_call = leave_one_call_out(table, features, c) if p_call is None else p_call
    says_shift, chosen = np.zeros(len(shift), dtype=bool), {}
    for call in sorted(set(calls)):
        rest = calls != call
        others = leave_one_call_out({k: np.asarray(v)[rest] for k, v in table.items()}, features, c)
        chosen[call] = best_threshold(others, shift[rest], corpus[rest], names)
        says_shift[~rest] = p_call[~rest] > chosen[call]
    return says_shift, chosen


def agreement_threshold(table: dict[str, np.ndarray], features: Sequence[str], c: float, group_by: str = "corpus",
                        p_call: np.ndarray | None = None) -> dict[str, Any]:
    """The (a)/(d) threshold on P(shift), chosen on held-out probabilities by the criterion of
    :func:`best_threshold`, with the agreement it gives where it was not chosen.

    ``installed``: chosen on the probabilities of :func:`leave_one_call_out`, each call's from the
    one rule fitted on every other call, as a report's one rule meets a new call of the corpora it
    was fitted on; written ``2 P - 1`` (the report's scale). ``held_out_call``: per corpus, each
    call decided at the threshold chosen without it (on the other calls, their probabilities from
    rules fitted without it too). ``held_out_corpus``: per corpus, its probabilities from the rule
    fitted without it (:func:`held_out_probabilities`) at the threshold chosen that way on the
    other corpora, the view of a corpus never seen; its three rules' intercepts differ, so a
    threshold chosen on them all misfits the one rule that ships (P > 0.29 there, against 0.42:
    Harper Valley lets continue 60 % with each call left out, docs/validation.md).
    ``group_by``: "recording" when the table has one corpus. With fewer than three calls there is
    nothing to choose on with a call left out: no ``installed`` and no ``held_out_call``.
    ``p_call``: :func:`leave_one_call_out`'s probabilities, when the caller has them already."""
    shift, corpus = table["shift"].astype(bool), np.asarray(table["corpus"]).astype(str)
    groups = np.asarray(table[group_by]).astype(str)
    names = sorted(set(corpus))
    out: dict[str, Any] = {"criterion": f"the P(shift) threshold whose worst direction (corpora and directions of >= {MIN_DIRECTION} decisions) is best",
                           "held_out_corpus": {}, "held_out_call": {}}
    p_group = held_out_probabilities(table, features, c, group_by)
    group_names = sorted(set(groups))
    for held in group_names:
        rows = groups == held
        th = best_threshold(p_group, shift, groups, [k for k in group_names if k != held])
        out["held_out_corpus"][held] = {"p_threshold": th, **_agreement_of(p_group[rows] > th, shift[rows])}
    calls = _calls(table)
    if len(set(calls)) < 3:  # each call left out, the threshold needs probabilities of two others
        return out
    p_call = leave_one_call_out(table, features, c) if p_call is None else p_call
    says_shift, chosen = call_left_out_decisions(table, features, c, p_call)
    for name in names:
        rows = corpus == name
        ths = [chosen[k] for k in sorted(set(calls[rows]))]
        out["held_out_call"][name] = {"p_thresholds": [min(ths), max(ths)], **_agreement_of(says_shift[rows], shift[rows])}
    th = best_threshold(p_call, shift, corpus, names)
    out["installed"] = {"p_threshold": th, "threshold": round(2 * th - 1, 2), "chosen_on": "each call's probabilities from the rule fitted without it",
                        **{k: _agreement_of(p_call[corpus == k] > th, shift[corpus == k]) for k in names}}
    return out


def readable_cue(table: dict[str, np.ndarray]) -> np.ndarray:
    """Where Whisper's cue was read (a ``cue_read`` column, when the table has one; else everywhere)."""
    return np.asarray(table["cue_read"], dtype=bool) if "cue_read" in table else np.ones(len(table["shift"]), dtype=bool)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="checkpoints/turn_taking_judge_swb_revoiced", help="judge checkpoint with a turn-completion cue")
    parser.add_argument("--corpus", nargs="+", action="append", default=[], metavar=("NAME", "RECORDING"),
                        help="a corpus's name and its real two-party recordings (stereo, or LEFT+RIGHT); repeat per corpus")
    parser.add_argument("--recordings", nargs="+", default=[], help="recordings of one corpus (named 'dev'), when no --corpus is given")
    parser.add_argument("--features", nargs="+", default=list(DEFAULT_FEATURES))
    parser.add_argument("--c", nargs="+", type=float, default=list(DEFAULT_C), help="regularisation strengths to choose from")
    parser.add_argument("--decision_margin_s", type=float, default=DECISION_MARGIN_S,
                        help="the cue stops listening this long before the decision (installed with the rule)")
    parser.add_argument("--no_smart_turn", action="store_true", help="skip the smart-turn v3.2 baseline (needs pipecat-ai's ONNX file)")
    parser.add_argument("--source", default=None, help="how the fit data is named in the config (default: the corpora and recordings)")
    parser.add_argument("--table", help="an .npz: read the decision table from it when it exists, else write it there (runs/, git-ignored)")
    parser.add_argument("--install_into", help="write the rule, its fallback and the (a)/(d) threshold into this judge checkpoint's config.json")
    parser.add_argument("--output", help="write the measured figures as JSON here")
    args = parser.parse_args(argv)
    corpora = {spec[0]: spec[1:] for spec in args.corpus} or ({"dev": args.recordings} if args.recordings else {})
    if not corpora or not all(corpora.values()):
        parser.error("give --corpus NAME RECORDING... (repeat per corpus) or --recordings RECORDING...")
    table = _decision_table_of(args, corpora)
    counts = ", ".join(f"{name} ({len(recs)})" for name, recs in corpora.items())
    source = args.source or f"training/fit_pause_decision.py on real recordings of {counts}"
    from turneval.pause_decision import completion_cue

    cue = completion_cue(args.features)
    read = readable_cue(table) if cue is not None else np.ones(len(table["shift"]), dtype=bool)
    readable = {k: v[read] for k, v in table.items()}
    out, rule = rule_record(readable, args.features, args.c, source + (CUE_SOURCES[cue] if cue is not None else ""))
    rules = {"pause_decision": out}
    if cue is not None:
        rules["pause_decision_fallback"] = fallback_rule(table, args.c, source)
        out["measured"]["cue_not_read"] = int((~read).sum())
    out["measured"]["agreement_threshold"] = agreement_threshold(readable, args.features, rule["c"], rule["group_by"])
    return _write(rules, args)


def _decision_table_of(args: argparse.Namespace, corpora: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """The decision table of ``corpora`` with the features the fit reads (from ``--table`` when it exists)."""
    from dataclasses import replace

    import torch

    from turneval.modeling.judge_loading import load_judge

    if args.table and Path(args.table).exists():
        return dict(np.load(args.table))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    judge = load_judge(args.judge)
    if judge.config.turn_completion_cue is not None:
        judge.config.turn_completion_cue = replace(judge.config.turn_completion_cue, decision_margin_s=float(args.decision_margin_s))
    if "log_silence_vs_call" in args.features and judge.config.call_tempo is None:
        from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig

        judge.config.call_tempo = CallTempoConfig(source=CALL_TEMPO_SOURCE)
    smart_turn = None
    if not args.no_smart_turn:
        from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3

        try:
            smart_turn = SmartTurnV3(threads=1)
        except SmartTurnUnavailable as err:
            print(f"smart-turn baseline skipped: {err}")
    from turneval.pause_decision import completion_cue, load_cue_reader

    cue = completion_cue(args.features)
    whisper = load_cue_reader(cue) if cue is not None else None
    table = join_tables([decision_table(judge, [load_recording(r) for r in recs], args.features, smart_turn, corpus=name, whisper=whisper)
                         for name, recs in corpora.items()])
    if args.table:
        Path(args.table).parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.table, **table)
    return table


def _write(rules: dict[str, dict[str, Any]], args: argparse.Namespace) -> int:
    """Print the rules; write them to ``--output`` and into the judge's config with ``--install_into``."""
    from turneval.modeling.configuration_turn_taking_judge import PauseRule

    for key, record in rules.items():
        PauseRule.from_dict(record, key)  # what the judge's config will read back: refuse a record it would not
    print(json.dumps(rules, indent=1))
    if args.output:
        Path(args.output).write_text(json.dumps(rules, indent=1) + "\n", encoding="utf-8")
    if args.install_into:
        from turneval.dataset_scripts.files import atomic_write_text, read_json

        config_path = Path(args.install_into) / "config.json"
        config = read_json(config_path)
        config.update(rules)
        if config.get("turn_completion_cue") is not None:
            config["turn_completion_cue"]["decision_margin_s"] = float(args.decision_margin_s)
        reads = {f for record in rules.values() for f in record["features"]}
        if "log_silence_vs_call" not in reads:
            config.pop("call_tempo", None)
        if "pause_decision_fallback" not in rules:
            config.pop("pause_decision_fallback", None)
        config["pause_decision_whisper"] = None  # every report reads Whisper's cue with the one rule
        chosen = rules["pause_decision"]["measured"]["agreement_threshold"].get("installed")
        if chosen is None:
            print("(a)/(d) threshold kept as it was: choosing one with each call left out needs recordings of three calls or more")
        else:
            config["agreement_thresholds"].update({"a": chosen["threshold"], "d": chosen["threshold"]})
            config["agreement_thresholds_source"] = (
                f"(a)/(d): training/fit_pause_decision.py, P(shift) > {chosen['p_threshold']:.2f} chosen on each call's held-out "
                "probabilities (the threshold whose worst direction is best); (b), (c), (e): "
                + config.get("agreement_thresholds_source", "").split("(b), (c), (e): ")[-1])
        atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True) + "\n")
        print(f"installed into {config_path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
