"""rubric_pass_rate: APR and ARS of rubric-graded responses (Audio MultiChallenge), overall
and per axis. A thin face over ``turneval.metrics.rubric``, where every rule lives."""
from __future__ import annotations

import datasets
import evaluate

# turneval's code, copied beside this file (turneval_*.py, `make sync-metrics`) so that the module
# runs without turneval. evaluate carries only the files a script imports, so every copy is
# imported here, also those only the other copies or the Space's app.py use (noqa: F401).
from .turneval_files import (
    to_jsonable,  # noqa: F401
)
from .turneval_rubric import rubric_pass_rates
from .turneval_widget import (
    launch_gradio_widget,  # noqa: F401
)


_CITATION = """\
@article{audiomultichallenge2025,
  title={Audio MultiChallenge: A Multi-Turn Evaluation of Spoken Dialogue Systems on Natural Human Interaction},
  journal={arXiv preprint arXiv:2512.14865},
  year={2025}
}
"""

_DESCRIPTION = """\
Rubric pass rate scores responses that were graded against atomic rubrics (each rubric passes
or fails, e.g. by an LLM judge). APR (average pass rate) is the share of items whose rubrics
*all* pass; ARS (average rubric score) is the mean over items of the share of rubrics passed.
Both are reported over all items and per evaluation axis (e.g. Inference Memory, Instruction
Retention, Self Coherence, Voice Editing). Every item must have at least one rubric.
"""

_KWARGS_DESCRIPTION = """
Args:
    rubric_results (`list` of `list` of `bool`): per item, the pass (True) / fail (False) grade
        of each of its rubrics.
    axis (`list` of `str`): per item, its evaluation axis (give one name to all items when the
        benchmark has no axes).
Returns:
    apr (`float`), ars (`float`), n_items (`int`), n_rubrics (`int`),
    per_axis (`dict`): per axis, apr, ars, n_items, n_rubrics;
    axis_macro_apr, axis_macro_ars (`float`): unweighted means over axes.
Examples:
    >>> import evaluate
    >>> rubric_metric = evaluate.load("metrics/rubric_pass_rate")
    >>> results = rubric_metric.compute(
    ...     rubric_results=[[True, True], [True, False, False], [True]],
    ...     axis=["memory", "memory", "editing"],
    ... )
    >>> round(results["apr"], 4), round(results["ars"], 4)
    (0.6667, 0.7778)
    >>> results["per_axis"]["editing"]["apr"]
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RubricPassRate(evaluate.Metric):
    """APR and ARS over rubric grades, overall and per axis."""

    def _info(self) -> evaluate.MetricInfo:
        grades = datasets.List(datasets.Value("bool"))
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"rubric_results": grades, "axis": datasets.Value("string")}),
            reference_urls=["https://arxiv.org/abs/2512.14865"],
        )

    def _compute(self, rubric_results, axis) -> dict:
        return rubric_pass_rates(rubric_results, axes=axis)
