"""The FutureActivityPredictor on real human timing: Switchboard's test split.

    python benchmarks/validation/predictor_switchboard.py --swb-root PATH [--splits DIR] [--predictor CKPT]
        [--test-calls 200] [--train-calls 600] [--pair-calls 100] [--json OUT]

Three views of the voice-activity-only predictor (default: the bundled one), each beside the
published or anchor figure it answers:

1. **VAP zero-shot events** (Ekstedt & Skantze 2022) on the first ``--test-calls`` test calls
   (ids sorted): shift/hold in mutual silences, shift prediction 0.5 s before them,
   backchannel prediction 0.5 s before a backchannel, short/long at the onset of an IPU.
   Events and the balanced draw are ``turneval.dataset_scripts.vap_events`` (VAP's rules).
   Frame scores come from the model's 256-way output: ``p_now`` / ``p_future`` of the
   speaker in question (``vap_targets``), and for backchannels the mass of the classes in
   which that speaker is active in the first two bins only. Balanced accuracy at 0.5 and at
   the threshold that maximises it on as many validation calls (VAP tunes its thresholds on
   validation data), and ROC-AUC, over frames as VAP counts them.
2. **Turn-end decisions** (issue 14): after an IPU and >= 200 ms of silence, shift or hold.
   The model's P(shift) is ``p_now`` of the partner at the decision time (200 ms into the
   silence); beside it the logistic-regression baselines of
   ``turneval.metrics.turn_end_baselines`` fitted on the first ``--train-calls`` train
   calls, on the same decisions (anchors: timing 0.667, timing + words 0.789).
3. **TurnNat perturbation pairs** cut from the first ``--pair-calls`` test calls by the
   perturbation builder (the five types, seed 0): C-index, pairwise accuracy overall and per
   type, beside TurnNat Table III (their best scorer D4, alpha 8, and VAP's V0). Switchboard
   has no sound here: the builder edits a silent placeholder track, and the voice-activity
   model reads only the edited segments. One departure from the reference filters
   (:data:`SWITCHBOARD_EDIT_PARAMS`): hold-instead-of-shift accepts edited pauses up to 3 s.

Under ``run_all.py`` (``run(quick)``) the data is found as ``_switchboard.py`` says; quick mode
uses 20 test, 60 train and 10 pair calls. Without the data, or with an audio predictor, the
benchmark says why and returns no figure.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import emit_result, figure, limit_threads, repo_relative  # noqa: E402
from _switchboard import locate, map_calls, predictor_parser, run_where_located, switchboard_predictor  # noqa: E402
from _turnnat_paper import TABLE_III as TURNNAT_TABLE_III  # noqa: E402

from turneval.dataset_scripts.grids import FRAME_HZ  # noqa: E402
from turneval.dataset_scripts.turn_end_decisions import DEFAULT_MIN_SILENCE_S as DECISION_DELAY_S  # noqa: E402


FULL, QUICK = {"test": 200, "train": 600, "pairs": 100}, {"test": 20, "train": 60, "pairs": 10}

NO_MODEL = "no model: minus mean abs. gap"
"""The pairs' baseline: ``perturbation_ranking.mean_gap_score``, timing statistics with no model."""
SWITCHBOARD_EDIT_PARAMS: dict[str, dict[str, float]] = {"hold_instead_of_shift": {"max_edited_hold_gap_ms": 3000.0}}
"""Where the pairs depart from the reference CLI's candidate filters, and why.

Hold-instead-of-shift removes a 1.2-8 s response from an A-B-A exchange; the pause it leaves
runs from A's end to A's return, so it holds the whole response and both gaps. The reference
keeps pauses of 0.5-1.5 s, which real calls cannot give: on the first 100 test calls the
shortest of 228 candidates leaves 1.63 s, and none is kept. Up to 3 s keeps 46 of them (a
missed shift then reads as a long pause of the holder, as the perturbation means it)."""

TARGETS = {"pairwise_accuracy": 0.88, "per_type": 0.75, "turn_end_timing_anchor": 0.667, "turn_end_words_anchor": 0.789}
"""Issue 14's targets for the predictor."""


# -- model outputs ------------------------------------------------------------------------
def backchannel_class_mask() -> np.ndarray:
    """``[256, 2]``: classes in which the speaker is active in bin 0 or 1 and silent in bins 2-3
    while the partner is active in bin 3 (a short entry into the partner's ongoing turn)."""
    from turneval.dataset_scripts.vap_targets import class_bit_matrix

    bits = class_bit_matrix()  # [256, 2, 4]
    mask = np.zeros((bits.shape[0], 2), dtype=np.float32)
    for s in (0, 1):
        near = bits[:, s, :2].max(axis=1) > 0
        later = bits[:, s, 2:].max(axis=1) > 0
        mask[:, s] = near & ~later & (bits[:, 1 - s, 3] > 0)
    return mask


def frame_scores(probs: np.ndarray) -> dict[str, np.ndarray]:
    """The per-frame zero-shot quantities of ``probs [T, 256]``: each ``[T, 2]`` float32."""
    from turneval.dataset_scripts.vap_targets import p_future, p_now

    return {
        "p_now": p_now(probs, both_speakers=True),
        "p_future": p_future(probs, both_speakers=True),
        "p_bc": (probs @ backchannel_class_mask()).astype(np.float32),
    }


def call_scores(dialogue, model) -> dict[str, Any]:
    """Voice activity and frame scores of one call (the 256-way output itself is not kept)."""
    import torch

    va = dialogue.frame_activity().T.astype(np.int8)
    with torch.inference_mode():
        probs = model.predict_long(torch.from_numpy(va.astype(np.float32))).numpy()
    return {"va": va, **frame_scores(probs)}


# -- 1. VAP zero-shot events ----------------------------------------------------------------
def _regions(events: Sequence[tuple[int, int, int]], first: int | None = None) -> list[tuple[int, int, int]]:
    return [(s, min(e, s + first) if first else e, spk) for s, e, spk in events]


def event_samples(calls: Sequence[dict[str, Any]], seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per task: (frame scores, 0/1 labels) over the balanced VAP events of all calls.

    shift/hold: P(next speaker is the other one) = ``p_now`` of the speaker who did not speak
    last; shift prediction: ``p_future`` of that speaker in the 0.5 s before the silence;
    backchannel prediction: ``p_bc`` of the (candidate) backchanneller; short/long:
    ``p_future`` of the speaker at the first 10 frames of its IPU (long = positive).
    """
    from turneval.dataset_scripts.vap_events import BalancedEventSampler, turn_taking_events

    sampler = BalancedEventSampler(seed=seed)
    out: dict[str, tuple[list[float], list[int]]] = {k: ([], []) for k in ("shift_hold", "shift_prediction", "backchannel_prediction", "short_long")}

    def add(task: str, scores: np.ndarray, regions, label: int, channel_of) -> None:
        for s, e, spk in regions:
            values = scores[s:e, channel_of(spk)]
            out[task][0].extend(values.tolist())
            out[task][1].extend([label] * len(values))

    for call in calls:
        ev = sampler(turn_taking_events(call["va"]))
        now, fut, bc = call["p_now"], call["p_future"], call["p_bc"]
        # shift: the event speaker is the next (new) speaker; hold: the event speaker keeps the floor
        add("shift_hold", now, ev["shift"], 1, lambda spk: spk)
        add("shift_hold", now, ev["hold"], 0, lambda spk: 1 - spk)
        add("shift_prediction", fut, ev["pred_shift"], 1, lambda spk: spk)
        add("shift_prediction", fut, ev["pred_shift_neg"], 0, lambda spk: 1 - spk)
        add("backchannel_prediction", bc, ev["pred_backchannel"], 1, lambda spk: spk)
        add("backchannel_prediction", bc, ev["pred_backchannel_neg"], 0, lambda spk: spk)
        add("short_long", fut, _regions(ev["long"], 10), 1, lambda spk: spk)
        add("short_long", fut, _regions(ev["short"], 10), 0, lambda spk: spk)
    return {k: (np.asarray(v[0], dtype=np.float64), np.asarray(v[1], dtype=int)) for k, v in out.items()}


EVENT_DELAY_FRAMES = round(DECISION_DELAY_S * FRAME_HZ)  # 200 ms into the silence, the turn-end decisions' moment


def shift_hold_per_event(calls: Sequence[dict[str, Any]], delay_frames: int = EVENT_DELAY_FRAMES) -> tuple[np.ndarray, np.ndarray]:
    """One score per shift/hold event of every call, unbalanced: ``p_now`` of the speaker who
    did not speak last, ``delay_frames`` into the mutual silence (1 = shift).

    VAP's own reading (:func:`event_samples`) pools every frame of the balanced events, so long
    silences weigh most and the figure moves with the holds the balancing draws; this reading
    asks what the turn-end decisions ask, once per silence."""
    from turneval.dataset_scripts.vap_events import turn_taking_events

    scores, labels = [], []
    for call in calls:
        events = turn_taking_events(call["va"])
        for label, key in ((1, "shift"), (0, "hold")):
            for start, end, speaker in events[key]:
                if start + delay_frames < end:
                    other = speaker if key == "shift" else 1 - speaker
                    scores.append(float(call["p_now"][start + delay_frames, other]))
                    labels.append(label)
    return np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=int)


def classification_figures(scores: np.ndarray, labels: np.ndarray, threshold: float = 0.5, tuned: float | None = None) -> dict[str, float]:
    """Balanced accuracy at ``threshold`` (and at ``tuned``, a threshold chosen on validation
    data, when given), ROC-AUC, and the counts."""
    from sklearn.metrics import roc_auc_score

    from turneval.metrics.classification import balanced_accuracy

    counts = {"n_positive": int(labels.sum()), "n_negative": int((labels == 0).sum())}
    if labels.size == 0 or len(set(labels.tolist())) < 2:
        out = {"balanced_accuracy": float("nan"), "roc_auc": float("nan"), **counts}
    else:
        out = {"balanced_accuracy": balanced_accuracy(labels == 1, scores > threshold), "roc_auc": float(roc_auc_score(labels, scores)), **counts}
    if tuned is not None:
        out["threshold_tuned"] = tuned
        out["balanced_accuracy_tuned"] = balanced_accuracy(labels == 1, scores >= tuned) if labels.size else float("nan")
    return out


# -- 2. turn-end decisions -------------------------------------------------------------------
def partner_p_now(p_now: np.ndarray, decisions: Sequence, delay_s: float = DECISION_DELAY_S) -> np.ndarray:
    """P(shift) for each decision of one conversation: ``p_now [T, 2]`` of the partner at the
    last frame ``delay_s`` into the silence (causal: only what came before)."""
    frames = [min(int((d.ipu_end + delay_s) * FRAME_HZ) - 1, p_now.shape[0] - 1) for d in decisions]
    return np.array([p_now[f, 1 - d.speaker] for f, d in zip(frames, decisions)], dtype=np.float64)


def decision_scores(decisions: Sequence, calls: dict[str, dict[str, Any]], delay_s: float = DECISION_DELAY_S) -> np.ndarray:
    """:func:`partner_p_now` for decisions of many calls (``calls``: id without ``sw`` -> scores);
    NaN for a decision whose call was not scored."""
    out = np.full(len(decisions), np.nan)
    for k, d in enumerate(decisions):
        call = calls.get(d.dialogue_id.removeprefix("sw"))
        if call is not None:
            out[k] = partner_p_now(call["p_now"], [d], delay_s)[0]
    return out


# -- 3. TurnNat pairs ------------------------------------------------------------------------
def with_silent_audio(dialogue):
    """The dialogue with a silent stereo track of its length (the perturbation builder edits audio)."""
    from turneval.dataset_scripts.grids import SAMPLE_RATE

    dialogue.audio = np.zeros((2, int(round(dialogue.duration * SAMPLE_RATE))), dtype=np.float32)
    return dialogue


def pair_results(dialogues: Sequence, model, seed: int = 0, read_words: bool = True) -> dict[str, Any]:
    """TurnNat's perturbation test (``evaluate_pairs``) on pairs cut from ``dialogues``.

    ``read_words=False``: the pairs are cut with the words (the edits' rules read them), but
    scored without (what a word-reading predictor gets from a recording without a transcript)."""
    from dataclasses import replace

    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES
    from turneval.dataset_scripts.perturbations.pairs import iter_pairs
    from turneval.metrics.scorer_discrimination import evaluate_pairs
    from turneval.naturalness_inference import score_dialogue
    from turneval.training.perturbation_ranking import mean_gap_score

    natural, perturbed, types, skips = [], [], [], {}
    gap_natural, gap_perturbed = [], []
    for dialogue in dialogues:
        pairs = iter_pairs(
            [with_silent_audio(dialogue)], PERTURBATION_TYPES, seed, skip_counts=skips, edit_params=SWITCHBOARD_EDIT_PARAMS, normalize=False
        )
        for pair in pairs:
            scored = (pair.natural, pair.perturbed) if read_words else (replace(pair.natural, words=None), replace(pair.perturbed, words=None))
            natural.append(float(score_dialogue(scored[0], model).score))
            perturbed.append(float(score_dialogue(scored[1], model).score))
            gap_natural.append(mean_gap_score(pair.natural))
            gap_perturbed.append(mean_gap_score(pair.perturbed))
            types.append(pair.perturbation_type)
        dialogue.audio = None
    report = evaluate_pairs(natural, perturbed, types, higher_is_better=True).to_dict()
    # what timing statistics alone rank right, with no model: minus the mean abs. gap at speaker changes
    report[NO_MODEL] = evaluate_pairs(gap_natural, gap_perturbed, types, higher_is_better=True).to_dict()
    report["pairs_per_type"] = {t: types.count(t) for t in PERTURBATION_TYPES}
    report["skipped"] = skips
    report["edit_params"] = SWITCHBOARD_EDIT_PARAMS
    return report


# -- the whole benchmark ---------------------------------------------------------------------
def evaluate(swb_root: Path, splits: Path, predictor: str | None, counts: dict[str, int]) -> dict[str, Any]:
    import torch
    from turn_end_baselines import switchboard_decisions

    from turneval.dataset_scripts.readers import read_split_ids
    from turneval.metrics.classification import balanced_accuracy_threshold
    from turneval.metrics.turn_end_baselines import fit_baselines
    from turneval.naturalness_inference import load_predictor

    torch.set_num_threads(max(1, limit_threads()))
    # the Switchboard voice-activity predictor is what these figures are about, not the report default
    predictor = predictor or switchboard_predictor()
    model = load_predictor(predictor)
    predictor = repo_relative(predictor)  # results name a bundled checkpoint as the repository does
    if model.config.input_type != "vad":
        raise SystemExit("predictor_switchboard: the predictor reads audio; Switchboard's word times give voice activity only (pass a vad predictor)")
    result: dict[str, Any] = {"predictor": predictor, "counts": counts, "timings_s": {}}

    start = time.perf_counter()
    test_ids = read_split_ids(splits, "test")[: counts["test"]]
    scored = dict(map_calls(swb_root, test_ids, lambda d: call_scores(d, model)))
    result["timings_s"]["model over test calls"] = time.perf_counter() - start
    result["test_hours"] = sum(c["va"].shape[0] for c in scored.values()) / 50 / 3600

    start = time.perf_counter()
    # VAP picks each task's threshold on validation data; the same is done here on the first val calls
    val_ids = read_split_ids(splits, "val")[: counts["test"]]
    val_samples = event_samples([c for _, c in map_calls(swb_root, val_ids, lambda d: call_scores(d, model))])
    tuned = {task: balanced_accuracy_threshold(val_samples[task][1], val_samples[task][0]) for task in val_samples}
    test_calls = [scored[k] for k in sorted(scored, key=int)]
    samples = event_samples(test_calls)
    result["zero_shot"] = {task: classification_figures(*samples[task], tuned=tuned[task]) for task in samples}
    result["shift_hold_per_event"] = classification_figures(*shift_hold_per_event(test_calls))
    result["timings_s"]["zero-shot events (val thresholds + test)"] = time.perf_counter() - start

    start = time.perf_counter()
    train = switchboard_decisions(swb_root, splits, "train", counts["train"])
    test = switchboard_decisions(swb_root, splits, "test", counts["test"])
    baselines = fit_baselines(train, test, feature_sets=("timing", "timing+words"))
    model_p = decision_scores(test, scored)
    labels = np.asarray([d.shift for d in test], dtype=int)
    keep = np.isfinite(model_p)
    turn_end = {"model": classification_figures(model_p[keep], labels[keep])}
    for name, r in baselines.items():
        scores = np.asarray(r.pop("scores"))
        turn_end[f"LR {name}"] = classification_figures(scores, labels)
    turn_end["n_decisions"], turn_end["shift_rate"] = int(labels.size), float(labels.mean()) if labels.size else float("nan")
    result["turn_end"] = turn_end
    result["timings_s"]["turn-end decisions + baselines"] = time.perf_counter() - start

    start = time.perf_counter()
    pair_ids = read_split_ids(splits, "test")[: counts["pairs"]]
    dialogues = [d for _, d in map_calls(swb_root, pair_ids, lambda d: d)]
    result["pairs"] = pair_results(dialogues, model)
    result["timings_s"]["perturbation pairs"] = time.perf_counter() - start
    return result


def markdown(result: dict[str, Any]) -> str:
    z = result["zero_shot"]
    lines = [
        f"Predictor: {result['predictor']}; {result['counts']['test']} test calls ({result['test_hours']:.1f} h).",
        "",
        "| VAP zero-shot task | balanced accuracy (0.5) | balanced accuracy (val threshold) | ROC-AUC | frames (pos / neg) |",
        "|---|---|---|---|---|",
    ]
    for task, r in z.items():
        lines.append(f"| {task.replace('_', ' ')} | {r['balanced_accuracy']:.3f} | {r.get('balanced_accuracy_tuned', float('nan')):.3f} "
                     f"(at {r.get('threshold_tuned', float('nan')):.3f}) | {r['roc_auc']:.3f} | {r['n_positive']} / {r['n_negative']} |")
    if "shift_hold_per_event" in result:
        e = result["shift_hold_per_event"]
        lines += ["", f"Shift/hold once per event, 200 ms into the silence, every event (unbalanced): ROC-AUC {e['roc_auc']:.3f} "
                      f"({e['n_positive']} shifts / {e['n_negative']} holds)."]
    t = result["turn_end"]
    lines += ["", f"Turn-end decisions (>= 200 ms silence, {t['n_decisions']} test decisions, {100 * t['shift_rate']:.1f} % shifts):", "",
              "| scorer | ROC-AUC | balanced accuracy (0.5) |", "|---|---|---|"]
    for name in ("model", "LR timing", "LR timing+words"):
        lines.append(f"| {name} | {t[name]['roc_auc']:.3f} | {t[name]['balanced_accuracy']:.3f} |")
    p = result["pairs"]
    types = list(p["pairs_per_type"])
    lines += ["", f"TurnNat perturbation pairs from {result['counts']['pairs']} test calls:", "",
              "| scorer | " + " | ".join(types) + " | pairwise acc. | C-index | pairs |", "|---|" + "---|" * (len(types) + 3)]
    per = [f"{p['per_type'][k]['pairwise_accuracy']:.3f} ({p['pairs_per_type'][k]})" if k in p["per_type"] else "–" for k in types]
    lines.append(f"| this predictor | {' | '.join(per)} | {p['pairwise_accuracy']:.3f} | {p['c_index']:.3f} | {p['n_pairs']} |")
    if NO_MODEL in p:
        b = p[NO_MODEL]
        per = [f"{b['per_type'][k]['pairwise_accuracy']:.3f}" if k in b["per_type"] else "–" for k in types]
        lines.append(f"| {NO_MODEL} | {' | '.join(per)} | {b['pairwise_accuracy']:.3f} | {b['c_index']:.3f} | {b['n_pairs']} |")
    for name, row in TURNNAT_TABLE_III.items():
        lines.append(f"| TurnNat {name} | {' | '.join(f'{row[k]:.3f}' for k in types)} | {row['pairwise_accuracy']:.3f} | {row['c_index']:.3f} | |")
    return "\n".join(lines)


def figures(result: dict[str, Any]) -> list[dict]:
    where = f"{result['counts']['test']} Switchboard test calls"
    out = []
    for task, r in result["zero_shot"].items():
        out.append(figure(f"predictor zero-shot {task.replace('_', ' ')} balanced accuracy", r.get("balanced_accuracy_tuned", r["balanced_accuracy"]), "",
                          note=f"{where}; threshold {r.get('threshold_tuned', 0.5):.3f} tuned on as many val calls; "
                               f"at 0.5: {r['balanced_accuracy']:.3f}; ROC-AUC {r['roc_auc']:.3f}"))
    if "shift_hold_per_event" in result:
        e = result["shift_hold_per_event"]
        out.append(figure("predictor shift/hold ROC-AUC, one score per event 200 ms into the silence", e["roc_auc"], "",
                          note=f"{where}; every VAP shift/hold event, unbalanced: {e['n_positive']} shifts / {e['n_negative']} holds; "
                               "p_now of the speaker who did not speak last"))
    t = result["turn_end"]
    out.append(figure("predictor turn-end shift/hold ROC-AUC", t["model"]["roc_auc"], "", headline=True,
                      note=f"{t['n_decisions']} decisions; LR timing {t['LR timing']['roc_auc']:.3f} (anchor 0.667), "
                           f"LR timing+words {t['LR timing+words']['roc_auc']:.3f} (anchor 0.789)"))
    p = result["pairs"]
    out.append(figure("predictor TurnNat pairwise accuracy (Switchboard test)", p["pairwise_accuracy"], "", headline=True,
                      note=f"{p['n_pairs']} pairs; target >= 0.88; C-index {p['c_index']:.3f}"
                           + (f"; no model (minus mean abs. gap) {p[NO_MODEL]['pairwise_accuracy']:.3f}" if NO_MODEL in p else "")))
    for k, r in p["per_type"].items():
        out.append(figure(f"predictor pairwise accuracy: {k.replace('_', ' ')}", r["pairwise_accuracy"], "",
                          note=f"{r['n_pairs']} pairs; target >= 0.75"))
    return out


def run(quick: bool) -> list[dict]:
    """run_all.py entry (quick: 20 test / 60 train / 10 pair calls)."""
    return run_where_located(evaluate, figures, QUICK if quick else FULL)


def main(argv: Sequence[str] | None = None) -> int:
    p = predictor_parser(__doc__)
    p.add_argument("--test-calls", type=int, default=FULL["test"])
    p.add_argument("--train-calls", type=int, default=FULL["train"], help="train calls of the LR baselines")
    p.add_argument("--pair-calls", type=int, default=FULL["pairs"], help="test calls the perturbation pairs are cut from")
    p.add_argument("--quick", action="store_true", help="20 test / 60 train / 10 pair calls")
    p.add_argument("--json", help="write the full result here")
    args = p.parse_args(argv)
    found = locate(args.swb_root, args.splits)
    if found is None:
        return 0
    counts = dict(QUICK) if args.quick else {"test": args.test_calls, "train": args.train_calls, "pairs": args.pair_calls}
    result = evaluate(*found, args.predictor, counts)
    return emit_result(result, args.json, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
