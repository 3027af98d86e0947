"""turn_taking_agreement: agreement of a turn-taking judge with the decisions taken in a
human-AI conversation (Talking Turns §4.3-4.9). A thin face over
``turneval.metrics.agreement``, where every rule lives."""
from __future__ import annotations

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_agreement import DEFAULT_THRESHOLDS, agreement, occurrence_rates, threshold_sweep
from .turneval_agreement_instances import (
    build_agreement_instances,  # noqa: F401
)
from .turneval_classification import (
    f1_thresholds,  # noqa: F401
)
from .turneval_dialogue import (
    Dialogue,  # noqa: F401
)
from .turneval_events import (
    extract_events,  # noqa: F401
)
from .turneval_files import (
    atomic_write_text,  # noqa: F401
)
from .turneval_grids import (
    CHUNK_S,  # noqa: F401
)
from .turneval_intervals import (
    Z95,  # noqa: F401
)
from .turneval_labels import (
    chunk_labels,  # noqa: F401
)
from .turneval_vocabulary import (
    is_speech_word,  # noqa: F401
)
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@inproceedings{arora2025talkingturns,
  title={Talking Turns: Benchmarking Audio Foundation Models on Turn-Taking Dynamics},
  author={Arora, Siddhant and Lu, Zhiyun and Chiu, Chung-Cheng and Pang, Ruoming and Watanabe, Shinji},
  booktitle={International Conference on Learning Representations (ICLR)},
  year={2025}
}
"""

_DESCRIPTION = """\
Turn-taking agreement measures how often a judge model's label agrees with the turn-taking
decision a party actually took, at the evaluation instances of Talking Turns metrics (a)-(e):
(a) the user pauses - does the system speak up (T) or let the user continue (C)?
(b) during the user's turn - does the system backchannel (BC) or not (C)?
(c) only the user speaks - does the system interrupt (I) or not (C)?
(d) the system pauses - does the user speak up (T) or not (C)? (the system's cues)
(e) the user interrupts the system - does the user take the floor (T) or not (C)?
The judge labels an instance T/BC/I when p_T - p_C > th_a (a, d), p_BC > th_b (b),
p_I - p_C > th_c (c), p_T - p_C > th_e (e), and C otherwise. Agreement is reported per metric
and per decision, pooled and as the mean over sessions with a 95 % interval
(mean +- 1.96 sd / sqrt(n_sessions)), with the occurrence rates of the paper's Table 2 and,
on request, the threshold sensitivity sweep (margin of error 1.96 sd / sqrt(n_thresholds)).
Build the instances with turneval.dataset_scripts.agreement_instances.
"""

_KWARGS_DESCRIPTION = """
Args:
    metric (`list` of `str`): per instance, the metric id, one of "a", "b", "c", "d", "e".
    decision (`list` of `str`): the decision actually taken: "T" or "C" for (a), (d), (e);
        "BC" or "C" for (b); "I" or "C" for (c).
    probs (`list` of `list` of `float`): the judge's distribution over (NA, BC, I, T, C) for
        the decision chunk (5 numbers per instance).
    session (`list` of `str`): the conversation each instance comes from.
    th_a (`float`, default 0.0): threshold of metrics (a) and (d).
    th_b (`float`, default 0.1): threshold of metric (b).
    th_c (`float`, default -0.45): threshold of metric (c).
    th_e (`float`, default -0.1): threshold of metric (e).
    sweep (`bool`, default False): add the threshold sensitivity sweep of every metric.
Returns:
    agreement (`dict`): per metric, its title, threshold, number of instances and per decision
        the pooled `agreement`, `session_mean`, `session_sd`, `ci95_low`, `ci95_high`,
        `ci95_half_width`, `n_instances` and `n_sessions`.
    occurrence_rates (`dict`): per metric, the share of instances with the positive decision.
    threshold_sensitivity (`dict`, only with `sweep=True`): per metric, the thresholds, the
        agreement per decision at each, their mean and margin of error.
Examples:
    >>> import evaluate
    >>> agreement_metric = evaluate.load("metrics/turn_taking_agreement")
    >>> results = agreement_metric.compute(
    ...     metric=["a", "a", "a", "b"],
    ...     decision=["T", "C", "C", "BC"],
    ...     probs=[[0.1, 0.0, 0.0, 0.6, 0.3], [0.1, 0.0, 0.0, 0.6, 0.3], [0.1, 0.0, 0.0, 0.2, 0.7], [0.5, 0.3, 0.0, 0.0, 0.2]],
    ...     session=["s1", "s1", "s2", "s1"],
    ... )
    >>> results["agreement"]["a"]["decisions"]["C"]["agreement"]
    0.5
    >>> results["agreement"]["b"]["decisions"]["BC"]["agreement"]
    1.0
    >>> results["occurrence_rates"]["a"]["rate"]
    0.3333333333333333
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TurnTakingAgreement(evaluate.Metric):
    """Judge-decision agreement for turn-taking metrics (a)-(e)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "metric": datasets.Value("string"),
                    "decision": datasets.Value("string"),
                    "probs": datasets.List(datasets.Value("float64"), length=5),
                    "session": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/espnet/espnet/tree/master/egs2/swbd/slu1"],
        )

    def _compute(
        self,
        metric,
        decision,
        probs,
        session,
        th_a: float = DEFAULT_THRESHOLDS["a"],
        th_b: float = DEFAULT_THRESHOLDS["b"],
        th_c: float = DEFAULT_THRESHOLDS["c"],
        th_e: float = DEFAULT_THRESHOLDS["e"],
        sweep: bool = False,
    ) -> dict:
        instances = {"metric": metric, "decision": decision, "probs": probs, "session": session}
        thresholds = {"a": th_a, "b": th_b, "c": th_c, "d": th_a, "e": th_e}
        results = {"agreement": agreement(instances, thresholds), "occurrence_rates": occurrence_rates(instances)}
        if sweep:
            results["threshold_sensitivity"] = {m: threshold_sweep(instances, m) for m in results["agreement"]}
        return results
