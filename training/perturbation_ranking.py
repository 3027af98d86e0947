"""The perturbation test: does a scorer rank natural dialogue above perturbed dialogue?

    python training/perturbation_ranking.py --dialogues corpus/test \
        --predictor benchmarks/baselines/future_activity_predictor_demo \
        --vad-predictor runs/fap_vad/final --out results/naturalness

Natural/perturbed pairs of the five TurnNat types are made from the dialogues
(``turneval.dataset_scripts.perturbations``), every scorer scores both clips of each pair, and
``turneval.metrics.scorer_discrimination.evaluate_pairs`` gives delta m, C-index, pairwise accuracy with
its Wilson interval and per-type accuracy, in the layout of TurnNat Table III. Scorers:

- the audio FutureActivityPredictor (``--predictor``),
- the voice-activity-only FutureActivityPredictor (``--vad-predictor``),
- a trivial baseline that needs no model: minus the mean absolute gap at speaker changes,
  so the table shows what a model adds over timing statistics alone.

All scores are "higher is more natural".
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable

import numpy as np

from turneval.dataset_scripts.audio import load_stereo
from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.files import atomic_write_text
from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES
from turneval.dataset_scripts.perturbations.pairs import PerturbationPair, iter_pairs
from turneval.metrics.scorer_discrimination import evaluate_pairs
from turneval.training.corpus import load_corpus


Scorer = Callable[[Dialogue], float]


def mean_gap_score(dialogue: Dialogue) -> float:
    """Trivial baseline: minus the mean |gap| (s) between one speaker's end and the other's next start.

    Overlapping starts count as negative gaps, so both late and early entries lower the score.
    """
    edges = sorted([(s, e, spk) for spk in (0, 1) for s, e in dialogue.segments[spk]])
    gaps = []
    for (s0, e0, spk0), (s1, e1, spk1) in zip(edges, edges[1:]):
        if spk1 != spk0 and e1 > e0:  # a change of speaker, not a short overlap inside the other's speech
            gaps.append(s1 - e0)
    return -float(np.mean(np.abs(gaps))) if gaps else float("nan")


def model_scorer(path: str, device: str) -> Scorer:
    from turneval.naturalness_inference import load_predictor, score_dialogue

    model = load_predictor(path, device=device)
    return lambda dialogue: float(score_dialogue(dialogue, model).score)


def load_dialogues(folder: str) -> list[Dialogue]:
    dialogues = load_corpus(folder)
    for d in dialogues:
        d.audio = load_stereo(d.audio_path)
    return dialogues


def score_pairs(pairs: list[PerturbationPair], scorers: dict[str, Scorer]) -> dict[str, dict[str, list[float]]]:
    from tqdm.auto import tqdm

    scores = {name: {"natural": [], "perturbed": []} for name in scorers}
    for pair in tqdm(pairs, desc="score pairs"):
        for name, scorer in scorers.items():
            scores[name]["natural"].append(scorer(pair.natural))
            scores[name]["perturbed"].append(scorer(pair.perturbed))
    return scores


def markdown_table(results: dict[str, dict]) -> str:
    """TurnNat Table III layout: a row per scorer, per-type accuracy, overall accuracy, C-index, delta m."""
    header = ["scorer", *PERTURBATION_TYPES, "pairwise acc. [95% CI]", "C-index", "delta m [95% CI]", "pairs"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, r in results.items():
        per_type = [f"{r['per_type'][t]['pairwise_accuracy']:.3f}" if t in r["per_type"] else "–" for t in PERTURBATION_TYPES]
        lines.append(
            "| "
            + " | ".join(
                [
                    name,
                    *per_type,
                    f"{r['pairwise_accuracy']:.3f} [{r['pairwise_accuracy_ci_low']:.3f}, {r['pairwise_accuracy_ci_high']:.3f}]",
                    f"{r['c_index']:.3f}",
                    f"{r['mean_delta']:.3f} [{r['mean_delta_ci_low']:.3f}, {r['mean_delta_ci_high']:.3f}]",
                    str(r["n_pairs"]),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def run(dialogues: list[Dialogue], scorers: dict[str, Scorer], seed: int = 0) -> dict:
    skipped: list[str] = []
    pairs = list(iter_pairs(dialogues, PERTURBATION_TYPES, seed, skipped=skipped))
    if not pairs:
        raise RuntimeError(f"no perturbation pair could be made from {len(dialogues)} dialogue(s): {skipped[:3]}")
    types = [p.perturbation_type for p in pairs]
    scores = score_pairs(pairs, scorers)
    results = {
        name: evaluate_pairs(s["natural"], s["perturbed"], types, higher_is_better=True).to_dict() for name, s in scores.items()
    }
    return {
        "n_dialogues": len(dialogues),
        "n_pairs": len(pairs),
        "pairs_per_type": {t: types.count(t) for t in PERTURBATION_TYPES},
        "skipped": len(skipped),
        "results": results,
        "pairs": [{"pair_id": p.pair_id, "type": p.perturbation_type, "edit": p.description} for p in pairs],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dialogues", required=True, help="folder or manifest of annotated dialogues with stereo audio")
    p.add_argument("--predictor", help="audio FutureActivityPredictor checkpoint")
    p.add_argument("--vad-predictor", help="voice-activity-only FutureActivityPredictor checkpoint")
    p.add_argument("--out", required=True, help="output folder for naturalness.json and naturalness.md")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)

    scorers: dict[str, Scorer] = {}
    if args.predictor:
        scorers["FutureActivityPredictor (audio)"] = model_scorer(args.predictor, args.device)
    if args.vad_predictor:
        scorers["FutureActivityPredictor (VAD only)"] = model_scorer(args.vad_predictor, args.device)
    scorers["baseline: minus mean abs. gap"] = mean_gap_score
    summary = run(load_dialogues(args.dialogues), scorers, args.seed)
    out = Path(args.out)
    atomic_write_text(out / "naturalness.json", json.dumps(summary, indent=1))
    table = markdown_table(summary["results"])
    atomic_write_text(out / "naturalness.md", f"# Perturbation test ({summary['n_pairs']} pairs)\n\n{table}\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
