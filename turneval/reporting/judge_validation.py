"""How many real instances of each agreement direction the judge's thresholds were checked on.

A judge's (a)-(e) thresholds are tuned on real dev recordings (``training/tune_judge_thresholds.py``
writes ``config.agreement_validation``: the recordings and the instances of every metric and
decision there). Backchannels, interruptions and floor-taking are rare in real calls, so a
direction may rest on a handful of instances; the report then says so beside its figure
instead of quoting it as a validated agreement.

>>> agreement = {"metrics": {"b": {"decisions": {"BC": {"agreement": 0.4}, "C": {"agreement": 0.85}}}}}
>>> validation = {"source": "6 real calls", "instances": {"b": {"BC": 7, "C": 9000}}}
>>> marked = mark_validation(agreement, validation)
>>> marked["metrics"]["b"]["decisions"]["BC"]["validated"], marked["metrics"]["b"]["decisions"]["C"]["validated"]
(False, True)
>>> validation_note(marked["metrics"]["b"]["decisions"]["BC"])
'too few real instances to validate: 7, 20 needed'
"""
from __future__ import annotations

from typing import Any


MIN_REAL_INSTANCES = 20
"""A direction checked on fewer real instances than this is reported as not validated."""


def mark_validation(agreement: dict[str, Any], validation: dict[str, Any] | None, minimum: int = MIN_REAL_INSTANCES) -> dict[str, Any]:
    """``agreement`` (the report's section) with every decision's ``validation_instances`` (how
    many real instances of it the thresholds were checked on), ``validation_source`` and
    ``validated`` (at least ``minimum``); unchanged without a ``validation`` record."""
    if not validation:
        return agreement
    counts = validation.get("instances", {})
    for metric, entry in agreement.get("metrics", {}).items():
        for decision, figures in entry.get("decisions", {}).items():
            n = int(counts.get(metric, {}).get(decision, 0))
            figures.update({"validation_instances": n, "validation_source": str(validation.get("source", "")),
                            "validated": n >= minimum, "validation_minimum": minimum})
    agreement["validation"] = {"source": validation.get("source", ""), "minimum_instances": minimum}
    return agreement


def validation_note(figures: dict[str, Any]) -> str:
    """The words beside a direction's agreement: empty when validated or unknown."""
    if "validated" not in figures or figures["validated"]:
        return ""
    return f"too few real instances to validate: {figures['validation_instances']}, {figures['validation_minimum']} needed"


__all__ = ["MIN_REAL_INSTANCES", "mark_validation", "validation_note"]
