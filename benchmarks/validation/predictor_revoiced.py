"""Naturalness predictors on re-voiced Switchboard: real timing *with sound*, held-out voices.

    python benchmarks/validation/predictor_revoiced.py [--revoiced DIR] [--split test] [--seeds 0 1 2]
        [--predictor NAME=CKPT ...] [--json OUT]

``predictor_switchboard.py`` cuts TurnNat's perturbation pairs from Switchboard's word times,
where there is no sound, so only a voice-activity predictor can be scored. The re-voiced
Switchboard corpus (docs/revoicing.md) has the same real timing and words with sound: every
IPU spoken by a synthesizer and fitted to its real times; on the test split by Flite voices
that no training excerpt used. Here every predictor scores the *same* pairs, cut with
Switchboard's edit parameters (:data:`predictor_switchboard.SWITCHBOARD_EDIT_PARAMS`) and
the builder's audio edits (room-tone fills, loudness normalisation):

- ``demo``: the bundled demo predictor (audio; learned the synthetic eSpeak corpus),
- ``switchboard_va``: the bundled voice-activity predictor (reads the segments, not the sound),
- ``minus mean abs. gap``: a baseline with no model.

Beside the pairs, issue 14's turn-end decision on the same excerpts, now with sound: after
every IPU followed by >= 200 ms of silence, does the partner speak next? Each predictor's
zero-shot score is ``p_now`` of the partner 200 ms into the silence (causal: only what came
before), beside the logistic regressions on timing and on timing + the last words, fitted on
600 real Switchboard train calls when the alignments are found (``_switchboard.locate``).

``--predictor NAME=CKPT`` adds or replaces one (e.g. an audio predictor trained on the
re-voiced train split: ``train_future_activity --train_dir PART1,PART2,...``; the Switchboard
predictor's card has that experiment). Pairs from several ``--seeds`` are pooled
(duplicates dropped); pairs of one excerpt share its voices and timing, so the 95 % intervals
resample excerpts, not pairs, and so does the paired difference of every predictor against
``switchboard_va``. Data: ``--revoiced``, ``$TURNEVAL_REVOICED`` or ``../cache/revoice``
beside the repository (a folder with ``SPLIT/manifest.jsonl``); without it the benchmark says
why and returns no figure. Under ``run_all.py`` quick mode scores 4 test excerpts, one seed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import _revoiced  # noqa: E402
from _harness import emit_result, figure, limit_threads, repo_relative  # noqa: E402
from _switchboard import locate  # noqa: E402
from judge_revoiced import load_dialogues  # noqa: E402
from predictor_switchboard import DECISION_DELAY_S, SWITCHBOARD_EDIT_PARAMS, partner_p_now  # noqa: E402

from turneval.checkpoints import named_checkpoint  # noqa: E402
from turneval.dataset_scripts.files import to_jsonable  # noqa: E402


FULL, QUICK = {"excerpts": None, "seeds": (0, 1, 2), "train_calls": 600}, {"excerpts": 4, "seeds": (0,), "train_calls": 60}
BUNDLED = {
    "demo": "future_activity_predictor_demo",
    "switchboard_va": "future_activity_predictor_switchboard",
}
"""The earlier predictors every run scores (name -> checkpoint folder in benchmarks/baselines/), where present."""
REFERENCE = "switchboard_va"
"""The predictor every other one is compared with, pair by pair."""
BASELINE = "minus mean abs. gap"
TARGET = {"overall": 0.88, "per_type": 0.75}
"""Issue 14's targets for the pairwise accuracy (TurnNat's best model: 0.880)."""
BOOTSTRAP_DRAWS = 2000


def pairs_of(dialogues: Sequence, seeds: Sequence[int]) -> list:
    """Every perturbation pair the builder cuts from ``dialogues`` with any of ``seeds`` (audio
    edited), each distinct edit once."""
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES
    from turneval.dataset_scripts.perturbations.pairs import iter_pairs

    pairs, seen = [], set()
    for dialogue in dialogues:
        dialogue.audio = load_stereo(dialogue.audio_path)
        for seed in seeds:
            for pair in iter_pairs([dialogue], PERTURBATION_TYPES, seed, edit_params=SWITCHBOARD_EDIT_PARAMS):
                key = (dialogue.id, pair.perturbation_type, json.dumps(to_jsonable(pair.edit), sort_keys=True), json.dumps(to_jsonable(pair.crop), sort_keys=True))
                if key not in seen:
                    seen.add(key)
                    pairs.append((dialogue.id, pair))
        dialogue.audio = None
    return pairs


def scorers(extra: dict[str, str]) -> dict[str, Callable]:
    """name -> ``dialogue -> m`` for the bundled predictors found, ``extra`` and the baseline."""
    from turneval.naturalness_inference import load_predictor, score_dialogue
    from turneval.training.perturbation_ranking import mean_gap_score

    paths = {name: str(named_checkpoint(folder)) for name, folder in BUNDLED.items() if named_checkpoint(folder) is not None}
    paths.update(extra)
    out: dict[str, Callable] = {}
    for name, path in paths.items():
        model = load_predictor(path)
        out[name] = lambda dialogue, model=model: float(score_dialogue(dialogue, model).score)
        out[name].path = repo_relative(path)  # type: ignore[attr-defined]
        out[name].model = model  # type: ignore[attr-defined]
    out[BASELINE] = mean_gap_score
    return out


def turn_end_results(dialogues: Sequence, models: dict[str, Any], train_calls: int) -> dict[str, Any]:
    """ROC-AUC of each predictor's ``p_now`` of the partner 200 ms into the silence after an IPU
    (pauses >= 200 ms) on ``dialogues``, and of the Switchboard regressions (timing; timing +
    words) trained on ``train_calls`` real train calls where the alignments are found (0: none)."""
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions
    from turneval.dataset_scripts.vap_targets import p_now
    from turneval.metrics.intervals import roc_auc
    from turneval.naturalness_inference import frame_probabilities

    decisions, scores = [], {name: [] for name in models}
    for dialogue in dialogues:
        found = turn_end_decisions(dialogue, DECISION_DELAY_S)
        if not found:
            continue
        dialogue.audio = load_stereo(dialogue.audio_path)
        for name, model in models.items():
            scores[name] += partner_p_now(p_now(frame_probabilities(dialogue, model), both_speakers=True), found).tolist()
        dialogue.audio = None
        decisions += found
    y = np.array([d.shift for d in decisions], dtype=int)
    out: dict[str, Any] = {"n_decisions": int(y.size), "shift_rate": float(y.mean()) if y.size else float("nan"), "roc_auc": {}}
    if not 0 < y.sum() < y.size:
        return out
    out["roc_auc"] = {name: roc_auc(y, s) for name, s in scores.items()}
    found_swb = locate() if train_calls > 0 else None
    if found_swb is not None:
        from turn_end_baselines import switchboard_decisions

        from turneval.metrics.turn_end_baselines import fit_baselines

        train = switchboard_decisions(*found_swb, "train", train_calls)
        for name, r in fit_baselines(train, decisions, feature_sets=("timing", "timing+words")).items():
            out["roc_auc"][f"LR {name} ({train_calls} real train calls)"] = float(r["roc_auc"])
    return out


def excerpt_bootstrap(groups: np.ndarray, correct: dict[str, np.ndarray], seed: int = 0) -> dict[str, Any]:
    """95 % intervals of each predictor's pairwise accuracy and of its difference from
    :data:`REFERENCE`, resampling excerpts (``groups``: the excerpt of each pair; NaN: an
    undefined pair, left out)."""
    from turneval.metrics.intervals import bootstrap_interval

    def interval(statistic, *arrays) -> tuple[float, float, float]:
        return bootstrap_interval(statistic, arrays, clusters=groups, n_resamples=BOOTSTRAP_DRAWS, seed=seed)

    accuracy = {name: interval(np.nanmean, c) for name, c in correct.items()}
    differences = {name: interval(lambda a, b: np.nanmean(a) - np.nanmean(b), c, correct[REFERENCE])
                   for name, c in correct.items() if name != REFERENCE and REFERENCE in correct}
    return {
        "accuracy_ci95": {name: [low, high] for name, (_, low, high) in accuracy.items()},
        f"minus_{REFERENCE}": {name: {"difference": value, "ci95": [low, high]} for name, (value, low, high) in differences.items()},
    }


def evaluate(root: Path, split: str, extra: dict[str, str], counts: dict[str, Any]) -> dict[str, Any]:
    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES
    from turneval.metrics.scorer_discrimination import evaluate_pairs

    limit_threads()
    dialogues = load_dialogues(root / split / "manifest.jsonl", counts["excerpts"])
    pairs = pairs_of(dialogues, counts["seeds"])
    score = scorers(extra)
    types = [pair.perturbation_type for _, pair in pairs]
    groups = np.array([excerpt for excerpt, _ in pairs])
    results, correct, scores = {}, {}, {}
    for name, fn in score.items():
        natural = np.array([fn(pair.natural) for _, pair in pairs])
        perturbed = np.array([fn(pair.perturbed) for _, pair in pairs])
        results[name] = evaluate_pairs(natural, perturbed, types, higher_is_better=True).to_dict()
        results[name]["checkpoint"] = getattr(fn, "path", None)
        scores[name] = {"natural": natural.tolist(), "perturbed": perturbed.tolist()}
        # as in the pairwise accuracy: a tie counts as wrong, an undefined pair is left out
        correct[name] = np.where(np.isfinite(natural) & np.isfinite(perturbed), (natural > perturbed).astype(float), np.nan)
    return {
        "split": split,
        "excerpts": len(dialogues),
        "seeds": list(counts["seeds"]),
        "n_pairs": len(pairs),
        "pairs_per_type": {t: types.count(t) for t in PERTURBATION_TYPES},
        "edit_params": SWITCHBOARD_EDIT_PARAMS,
        "results": results,
        **excerpt_bootstrap(groups, correct),
        "turn_end": turn_end_results(dialogues, {name: fn.model for name, fn in score.items() if hasattr(fn, "model")}, counts.get("train_calls", FULL["train_calls"])),
        "pairs": [{"excerpt": excerpt, "type": pair.perturbation_type, "edit": pair.description} for excerpt, pair in pairs],
        "scores": scores,
    }


def markdown(result: dict[str, Any]) -> str:
    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES

    per_type = result["pairs_per_type"]
    head = ["predictor", *(f"{t} ({per_type[t]})" for t in PERTURBATION_TYPES), "pairwise acc. [95 % CI, excerpts]", "C-index", f"minus {REFERENCE} [95 % CI]"]
    lines = [
        f"Re-voiced Switchboard {result['split']} split: {result['excerpts']} excerpts, seeds {result['seeds']}, {result['n_pairs']} pairs.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for name, r in result["results"].items():
        low, high = result["accuracy_ci95"][name]
        diff = result[f"minus_{REFERENCE}"].get(name)
        cells = [f"{r['per_type'][t]['pairwise_accuracy']:.3f}" if t in r["per_type"] else "–" for t in PERTURBATION_TYPES]
        diff_cell = f"{diff['difference']:+.3f} [{diff['ci95'][0]:+.3f}, {diff['ci95'][1]:+.3f}]" if diff else ""
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {r['pairwise_accuracy']:.3f} [{low:.3f}, {high:.3f}] | {r['c_index']:.3f} | {diff_cell} |")
    t = result.get("turn_end", {})
    if t.get("roc_auc"):
        lines += ["", f"Turn-end decisions (>= 200 ms silence; {t['n_decisions']} decisions, {100 * t['shift_rate']:.1f} % shifts), "
                  "ROC-AUC of P(the partner speaks next) 200 ms into the silence:", "", "| scorer | ROC-AUC |", "|---|---|"]
        lines += [f"| {name} | {auc:.3f} |" for name, auc in t["roc_auc"].items()]
    return "\n".join(lines)


def figures(result: dict[str, Any]) -> list[dict]:
    out = []
    for name, r in result["results"].items():
        low, high = result["accuracy_ci95"][name]
        out.append(figure(f"re-voiced Switchboard {result['split']} pairs, pairwise accuracy, {name}", r["pairwise_accuracy"], "",
                          headline=name != BASELINE,
                          note=f"{result['n_pairs']} pairs from {result['excerpts']} excerpts; 95 % CI [{low:.3f}, {high:.3f}]; target >= {TARGET['overall']}"))
    t = result.get("turn_end", {})
    for name, auc in t.get("roc_auc", {}).items():
        out.append(figure(f"re-voiced Switchboard {result['split']} turn-end shift/hold ROC-AUC, {name}", auc, "",
                          note=f"{t['n_decisions']} decisions after >= 200 ms of silence, read 200 ms into it"))
    return out


def run(quick: bool) -> list[dict]:
    """run_all.py entry (quick: 4 test excerpts, one seed)."""
    root = _revoiced.revoiced_root()
    if root is None:
        print(f"predictor_revoiced: no re-voiced Switchboard corpus (set {_revoiced.ENV_VAR} to a folder with test/manifest.jsonl); skipped")
        return []
    return figures(evaluate(root, "test", {}, QUICK if quick else FULL))


def parse_predictor(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--predictor takes NAME=CHECKPOINT, got {text!r}")
    return name, path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--revoiced", help="re-voiced corpus folder with SPLIT/manifest.jsonl (default: $TURNEVAL_REVOICED or ../cache/revoice)")
    p.add_argument("--split", default="test", help="split folder to cut the pairs from (default: test, the held-out Flite voices)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(FULL["seeds"]), help="pair-cutting seeds, pooled")
    p.add_argument("--excerpts", type=int, help="score only the first N excerpts")
    p.add_argument("--predictor", type=parse_predictor, action="append", default=[], metavar="NAME=CKPT", help="add (or replace) a predictor")
    p.add_argument("--train-calls", type=int, default=FULL["train_calls"], help="real Switchboard train calls for the turn-end regressions")
    p.add_argument("--json", help="write the result here")
    args = p.parse_args(argv)
    root = Path(args.revoiced) if args.revoiced else _revoiced.revoiced_root(args.split)
    if root is None or not (root / args.split / "manifest.jsonl").is_file():
        print(f"predictor_revoiced: no {args.split}/manifest.jsonl under {root or 'any default place'}; pass --revoiced or set {_revoiced.ENV_VAR}", file=sys.stderr)
        return 1
    result = evaluate(root, args.split, dict(args.predictor), {"excerpts": args.excerpts, "seeds": tuple(args.seeds), "train_calls": args.train_calls})
    return emit_result(result, args.json, markdown)


if __name__ == "__main__":
    sys.exit(main())
