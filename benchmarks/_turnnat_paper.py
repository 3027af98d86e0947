"""TurnNat's published figures (shared/papers/002_977af8109332f042.txt), shown beside ours.

Copied from the paper, never computed here. Per-type pair accuracies are fractions; the
perturbation names are ours (``hold_instead_of_shift`` under the paper's "Hold->shift",
``shift_instead_of_hold`` under "Shift->hold").
"""
from __future__ import annotations


TABLE_III: dict[str, dict[str, float]] = {
    "D4 (DualTurn, 256-way + aux., alpha 8)": {
        "late_response": 0.950, "early_entry": 0.925, "hold_instead_of_shift": 0.810, "shift_instead_of_hold": 0.845,
        "excessive_backchannel": 0.870, "pairwise_accuracy": 0.880, "c_index": 0.676,
    },
    "V0 (VAP released, 256-way)": {
        "late_response": 0.900, "early_entry": 0.910, "hold_instead_of_shift": 0.660, "shift_instead_of_hold": 0.820,
        "excessive_backchannel": 0.740, "pairwise_accuracy": 0.806, "c_index": 0.633,
    },
}
"""Table III: automatic discrimination of natural and perturbed clips (their benchmark)."""

BEST_MODEL = "D4 (DualTurn, 256-way + aux., alpha 8)"

HUMAN_PREFERENCE = 0.680
"""Table II / §V-A: listeners preferred the natural clip in 68.0 % of pairwise comparisons (78.0 %
of annotations matched the pair's majority vote): what people hear in these edits."""


def paper_figures(perturbation_type: str) -> str:
    """The paper's figures for one type (or ``"all"``), for a benchmark figure's note."""
    best = TABLE_III[BEST_MODEL]
    if perturbation_type == "all":
        return (f"TurnNat: listeners preferred the natural clip in {100 * HUMAN_PREFERENCE:.0f} % of comparisons; "
                f"its best model ranked {100 * best['pairwise_accuracy']:.0f} % of its pairs")
    return f"TurnNat's best model: {100 * best[perturbation_type]:.1f} % of its pairs"
