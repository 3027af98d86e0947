"""C-index (TurnNat Eq. 13) over 10^5 natural x 10^5 perturbed values, against scikit-learn.

The C-index over all natural x perturbed combinations is the ROC-AUC of "perturbed" vs
"natural" when no values tie, so ``sklearn.metrics.roc_auc_score`` on the same values is the
reference: same answer, measured in the same run. Fast in both modes (milliseconds).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import best_of, figure  # noqa: E402


N = 100_000


def run(quick: bool) -> list[dict]:
    from sklearn.metrics import roc_auc_score

    from turneval.metrics.scorer_discrimination import c_index

    rng = np.random.default_rng(0)
    natural = rng.normal(0.0, 1.0, N)
    perturbed = rng.normal(0.5, 1.0, N)  # continuous: no ties, so both give the same number
    repeats = 3 if quick else 7
    ours = best_of(lambda: c_index(natural, perturbed), repeats)
    labels = np.concatenate([np.zeros(N), np.ones(N)])
    values = np.concatenate([natural, perturbed])
    sklearn = best_of(lambda: roc_auc_score(labels, values), repeats)
    difference = abs(ours.result.c_index - sklearn.result)
    if difference > 1e-9:
        raise AssertionError(f"c_index {ours.result.c_index} differs from roc_auc_score {sklearn.result}")
    size = f"{N:,} x {N:,} combinations"
    return [
        figure("C-index 10^5 x 10^5: turneval", ours.cpu_s * 1000, "CPU ms",
               reference="C-index 10^5 x 10^5: sklearn roc_auc_score", note=f"{size}, best of {repeats}; same value as sklearn"),
        figure("C-index 10^5 x 10^5: sklearn roc_auc_score", sklearn.cpu_s * 1000, "CPU ms", note=f"{size}, best of {repeats}"),
    ]
