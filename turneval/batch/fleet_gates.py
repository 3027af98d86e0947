"""Pass/fail gates on a fleet: a statistic of a headline figure over the calls.

    >>> from turneval.batch.fleet_gates import parse_fleet_requirement
    >>> str(parse_fleet_requirement("p90(response_latency_s)<=1.2"))
    'p90(response_latency_s)<=1.2'

A fleet requirement is ``STAT(NAME) OP NUMBER``: STAT one of :data:`FLEET_STATISTICS`, NAME a
headline figure (:data:`turneval.headline_figures.FIGURES`, stored units: rates are
fractions), OP as for the single report's gates (:mod:`turneval.gates`), which check them and
print the table; a statistic with no calls to compute it on fails as "not measured". Any
failure exits with :data:`turneval.gates.GATE_FAILED_EXIT`, as ``turneval report --require``.
"""
from __future__ import annotations

import argparse
import re
from typing import Any, Mapping

from turneval.gates import GATE_FAILED_EXIT, GateError, Requirement, parse_requirement
from turneval.headline_figures import FIGURES


FLEET_STATISTICS = {
    "median": "the median over the calls",
    "p10": "the 10th percentile over the calls",
    "p90": "the 90th percentile over the calls",
    "mean": "the mean over the calls",
    "share_outside": "the share of calls outside the human range (0-1)",
}
_FLEET_REQUIREMENT = re.compile(r"^\s*([a-z_0-9]+)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)(.*)$")

FLEET_REQUIRE_HELP = ("a pass/fail gate on the fleet, STAT(NAME) OP NUMBER (repeatable; quote it), STAT one of "
                      f"{', '.join(FLEET_STATISTICS)}, e.g. --require 'p90(response_latency_s)<=1.2' "
                      f"--require 'share_outside(talk_over_rate)<=0.1'; any failure exits with code {GATE_FAILED_EXIT}. "
                      "Names: " + ", ".join(FIGURES))


def parse_fleet_requirement(text: str) -> Requirement:
    """Read ``"p90(response_latency_s)<=1.2"`` (GateError naming what is wrong)."""
    match = _FLEET_REQUIREMENT.match(text)
    if match is None:
        raise GateError(f"requirement {text!r} is not STAT(NAME) OP NUMBER, e.g. 'p90(response_latency_s)<=1.2' "
                        f"(STAT one of {', '.join(FLEET_STATISTICS)})")
    stat, name, rest = match.groups()
    if stat not in FLEET_STATISTICS:
        raise GateError(f"requirement {text!r}: unknown statistic {stat!r}; known: {', '.join(FLEET_STATISTICS)}")
    if name not in FIGURES:
        raise GateError(f"requirement {text!r}: unknown figure {name!r}; known figures: {', '.join(FIGURES)}")
    try:  # the operator and number are read as the single report's gates read them
        bare = parse_requirement(f"{name}{rest}")
    except GateError as err:
        raise GateError(str(err).replace(repr(f"{name}{rest}"), repr(text))) from None
    return Requirement(f"{stat}({name})", bare.op, bare.threshold)


def fleet_requirement_arg(text: str) -> Requirement:
    """:func:`parse_fleet_requirement` as an argparse ``type`` (a bad gate stops the command line at once)."""
    try:
        return parse_fleet_requirement(text)
    except GateError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def fleet_figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``STAT(NAME) -> value`` from batch.json's figures, what the gates check."""
    out: dict[str, Any] = {}
    for entry in summary["figures"]:
        for stat in FLEET_STATISTICS:
            out[f"{stat}({entry['name']})"] = entry.get(stat)
    return out
