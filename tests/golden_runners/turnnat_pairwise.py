"""golden/turnnat/pairwise_*: TurnNat pairwise accuracy, C-index and mean intervals.

The reference reports the same numbers through four functions; all four are rebuilt here
from ``turneval.metrics.scorer_discrimination`` (dialogue NLL: lower is more natural).
"""
from __future__ import annotations

from turneval.metrics.scorer_discrimination import c_index, evaluate_pairs


SET = "turnnat"
PREFIXES = ("pairwise_",)


def _column(pairs, key):
    return [float(p[key]) for p in pairs]


def run_case(case: dict) -> dict:
    pairs = case["input"]["pairs"]
    natural = _column(pairs, "natural_dialog_nll")
    edited = _column(pairs, "edited_dialog_nll")
    report = evaluate_pairs(
        natural,
        edited,
        higher_is_better=False,
        parts={
            "mean_nll": (_column(pairs, "natural_mean_nll"), _column(pairs, "edited_mean_nll")),
            "tail_nll": (_column(pairs, "natural_tail_nll"), _column(pairs, "edited_tail_nll")),
        },
    )

    summarize = {"n": report.n}
    for part in ("mean_nll", "tail_nll"):
        stats = report.parts[part]
        summarize[f"natural_{part}"] = stats.natural.to_dict()
        summarize[f"edited_{part}"] = stats.perturbed.to_dict()
        summarize[f"delta_{part}"] = stats.delta.to_dict()
    summarize["natural_dialogue_nll"] = report.scores.natural.to_dict()
    summarize["edited_dialogue_nll"] = report.scores.perturbed.to_dict()
    summarize["delta_nll"] = report.scores.delta.to_dict()
    summarize["pairwise_accuracy"] = report.pairwise.accuracy
    summarize.update(report.c_index.to_dict("c_index"))

    overall = {"n": report.n, "pairwise_accuracy": report.pairwise.accuracy}
    overall.update(report.scores.delta.to_dict("delta_nll_"))
    overall.update(report.scores.perturbed.to_dict("edited_nll_"))
    overall.update(report.scores.natural.to_dict("natural_nll_"))
    overall.update(report.c_index.to_dict("dialogue_nll_c_index"))

    raw = c_index(natural, edited, higher_is_better=False)
    return {
        "evaluate_naturalness_5types.summarize": summarize,
        "evaluate_naturalness_5types.c_index(edited, natural)": raw.to_dict("c_index"),
        "score_vap_nll_naturalness.dialogue_nll_c_index(edited, natural)": raw.to_dict("dialogue_nll_c_index"),
        "score_vap_nll_naturalness.summarize_pairs.overall": overall,
    }
