"""turn_naturalness: does a naturalness scorer rank natural turn-taking above perturbed
turn-taking? (TurnNat Eq. 11-14). A thin face over ``turneval.metrics.scorer_discrimination``, where
every rule lives."""
from __future__ import annotations

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_files import (
    to_jsonable,  # noqa: F401
)
from .turneval_intervals import (
    Z95,  # noqa: F401
)
from .turneval_scorer_discrimination import evaluate_pairs
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@article{turnnat2026,
  title={TurnNat: Automatic Evaluation of Turn-Taking Naturalness in Dyadic Spoken Dialogue},
  year={2026}
}
"""

_DESCRIPTION = """\
Turn naturalness evaluates a dialogue-level turn-taking naturalness scorer on matched pairs of
a natural clip and a locally perturbed copy (late response, early entry, hold instead of shift,
shift instead of hold, excessive backchannel). It is scale-free:

- C-index: over all perturbed x natural combinations, the share ordered the right way (ties
  left out); 0.5 is chance, 1 is perfect separation.
- Pairwise accuracy: the share of matched pairs ranked the right way (ties count as wrong),
  with a Wilson confidence interval.
- Mean delta: the mean per-pair margin with its 95 % normal interval (mean +- 1.96 sd/sqrt(n)).
- Per-type pairwise accuracy when perturbation types are given.

Direction: by default the scores are NLL-like (lower = more natural, as TurnNat's dialogue
NLL), so a pair is right when perturbed > natural and delta = perturbed - natural. Pass
`higher_is_better=True` for naturalness scores (higher = more natural, e.g. TurnNat's
m = -NLL); then delta = natural - perturbed. Either way higher C-index, accuracy and delta are
better. Pairs with a NaN or infinite score are dropped.
"""

_KWARGS_DESCRIPTION = """
Args:
    natural_scores (`list` of `float`): the score of each pair's natural clip.
    perturbed_scores (`list` of `float`): the score of each pair's perturbed clip.
    perturbation_types (`list` of `str`, *optional*): each pair's perturbation type, for
        per-type accuracy.
    higher_is_better (`bool`, defaults to `False`): False for NLL/surprisal scores, True for
        naturalness scores.
    confidence (`float`, defaults to 0.95): level of the Wilson intervals.
Returns:
    c_index (`float`, NaN when every combination is tied) and its counts c_index_concordant,
    c_index_wrong, c_index_tied, c_index_total_pairs, c_index_comparable_pairs (`int`);
    pairwise_accuracy, pairwise_accuracy_ci_low, pairwise_accuracy_ci_high (`float`);
    n_pairs, n_correct, n_dropped (`int`); mean_delta, mean_delta_ci_low, mean_delta_ci_high,
    mean_natural, mean_perturbed (`float`); per_type (`dict`): per type, pairwise_accuracy,
    ci_low, ci_high, n_pairs, n_correct.
Examples:
    >>> import evaluate
    >>> turn_naturalness = evaluate.load("metrics/turn_naturalness")
    >>> results = turn_naturalness.compute(
    ...     natural_scores=[1.0, 1.5, 2.0, 1.2],
    ...     perturbed_scores=[2.0, 1.4, 3.0, 1.9],
    ...     perturbation_types=["late_response", "early_entry", "late_response", "early_entry"],
    ... )
    >>> results["pairwise_accuracy"], results["c_index"]
    (0.75, 0.8)
    >>> results["per_type"]["late_response"]["pairwise_accuracy"]
    1.0
    >>> round(results["mean_delta"], 3)
    0.65

    Naturalness scores (higher = more natural) give the same ranking metrics:

    >>> flipped = turn_naturalness.compute(
    ...     natural_scores=[-1.0, -1.5, -2.0, -1.2],
    ...     perturbed_scores=[-2.0, -1.4, -3.0, -1.9],
    ...     higher_is_better=True,
    ... )
    >>> flipped["pairwise_accuracy"], flipped["c_index"]
    (0.75, 0.8)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TurnNaturalness(evaluate.Metric):
    """C-index, pairwise accuracy and mean delta of a turn-taking naturalness scorer."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "natural_scores": datasets.Value("float64"),
                    "perturbed_scores": datasets.Value("float64"),
                }
            ),
            reference_urls=["https://github.com/TedZhangHao/turn-taking-naturalness"],
        )

    def _compute(
        self,
        natural_scores,
        perturbed_scores,
        perturbation_types=None,
        higher_is_better: bool = False,
        confidence: float = 0.95,
    ) -> dict:
        natural = [float("nan") if v is None else v for v in natural_scores]
        perturbed = [float("nan") if v is None else v for v in perturbed_scores]
        report = evaluate_pairs(
            natural,
            perturbed,
            perturbation_types=perturbation_types,
            higher_is_better=higher_is_better,
            confidence=confidence,
        )
        return report.to_dict()
