# A copy of turneval.metrics.rubric for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Rubric pass rates of Audio MultiChallenge: APR and ARS, overall and per axis.

Every benchmark item (one final-turn response) is graded against one or more atomic rubrics,
each of which passes or fails. Two scores summarise the grades:

* **APR** (average pass rate): an item passes only when *all* its rubrics pass; APR is the
  share of items that pass.
* **ARS** (average rubric score): an item scores the share of its rubrics that pass; ARS is the
  mean of the item scores.

Both are reported over all items and per axis (Inference Memory, Instruction Retention, Self
Coherence, Voice Editing, ... - any axis names). Every item needs at least one rubric: an item
without rubrics has no defined score, so it is an error, not a silent pass or fail.

Example:

    >>> from turneval.metrics.rubric import rubric_pass_rates
    >>> scores = rubric_pass_rates(
    ...     rubric_results=[[True, True], [True, False, False], [True]],
    ...     axes=["memory", "memory", "editing"],
    ... )
    >>> scores["apr"], round(scores["ars"], 4)
    (0.6666666666666666, 0.7778)
    >>> scores["per_axis"]["memory"]["apr"], round(scores["per_axis"]["memory"]["ars"], 4)
    (0.5, 0.6667)
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


__all__ = ["RubricError", "item_scores", "rubric_pass_rates"]


class RubricError(ValueError):
    """Rubric grades are malformed (an item without rubrics, a grade that is not pass/fail)."""


def _as_bool(value: Any, item: int, rubric: int, item_ids: Sequence[str] | None) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("pass", "fail", "true", "false", "yes", "no"):
        return value.strip().lower() in ("pass", "true", "yes")
    name = f"item {item_ids[item]!r}" if item_ids is not None else f"item {item}"
    raise RubricError(f"{name}, rubric {rubric}: grade {value!r} is not pass/fail (use a bool, 0/1 or 'pass'/'fail')")


def item_scores(rubric_results: Sequence[Sequence[Any]], item_ids: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per item: whether all rubrics pass, and the share of rubrics passed.

    Raises:
        RubricError: an item has no rubrics or a grade is not pass/fail; the message names it.
    """
    if item_ids is not None and len(item_ids) != len(rubric_results):
        raise RubricError(f"{len(item_ids)} item ids for {len(rubric_results)} items")
    passed_all = np.zeros(len(rubric_results), dtype=bool)
    share = np.zeros(len(rubric_results), dtype=np.float64)
    for i, grades in enumerate(rubric_results):
        if grades is None or len(grades) == 0:
            name = f"item {item_ids[i]!r}" if item_ids is not None else f"item {i}"
            raise RubricError(f"{name} has no rubrics; every item needs at least one graded rubric")
        flags = [_as_bool(g, i, j, item_ids) for j, g in enumerate(grades)]
        passed_all[i] = all(flags)
        share[i] = sum(flags) / len(flags)
    return passed_all, share


def _summary(passed_all: np.ndarray, share: np.ndarray, n_rubrics: int) -> dict[str, Any]:
    n = int(len(passed_all))
    return {
        "apr": float(passed_all.mean()) if n else math.nan,
        "ars": float(share.mean()) if n else math.nan,
        "n_items": n,
        "n_rubrics": n_rubrics,
    }


def rubric_pass_rates(
    rubric_results: Sequence[Sequence[Any]],
    axes: Sequence[str] | None = None,
    item_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """APR and ARS over all items and per axis.

    Args:
        rubric_results: per item, the pass/fail grade of each of its rubrics.
        axes: per item, its evaluation axis (optional).
        item_ids: per item, a name used in error messages (optional).

    Returns:
        ``{"apr", "ars", "n_items", "n_rubrics", "per_axis": {axis: {"apr", "ars", "n_items",
        "n_rubrics"}}, "axis_macro_apr", "axis_macro_ars"}``; the macro scores are the unweighted
        means over axes (absent without ``axes``).
    """
    passed_all, share = item_scores(rubric_results, item_ids)
    sizes = np.asarray([len(g) for g in rubric_results], dtype=np.int64)
    out = _summary(passed_all, share, int(sizes.sum()))
    if axes is None:
        return out
    if len(axes) != len(rubric_results):
        raise RubricError(f"{len(axes)} axes for {len(rubric_results)} items; give one axis per item")
    axes_arr = np.asarray([str(a) for a in axes], dtype=object)
    per_axis = {}
    for axis in sorted(set(axes_arr)):
        mask = axes_arr == axis
        per_axis[axis] = _summary(passed_all[mask], share[mask], int(sizes[mask].sum()))
    out["per_axis"] = per_axis
    out["axis_macro_apr"] = float(np.mean([s["apr"] for s in per_axis.values()])) if per_axis else math.nan
    out["axis_macro_ars"] = float(np.mean([s["ars"] for s in per_axis.values()])) if per_axis else math.nan
    return out
