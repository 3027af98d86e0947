"""Pass/fail gates on a report's headline figures, for continuous integration.

    >>> from turneval.gates import check_requirements, format_gate_table
    >>> results = check_requirements(["response_latency_s<=0.8", "talk_over_rate<=0.1"],
    ...                              {"response_latency_s": 0.62, "talk_over_rate": None})
    >>> [r.passed for r in results]
    [True, False]
    >>> print(format_gate_table(results))  # doctest: +NORMALIZE_WHITESPACE
    requirement              value         result
    response_latency_s<=0.8  0.62          pass
    talk_over_rate<=0.1      not measured  FAIL

A requirement is ``NAME OP NUMBER`` with OP one of ``<=, >=, <, >, ==``; NAME is one of
:data:`HEADLINE_FIGURES`, the figures at the top of every report (``report.json["headline"]``).
A figure the report could not measure (None, NaN) fails its requirement: a gate that passes
because nothing was measured would let a broken agent through.

This module is imported by the CLI before any model loads, so it imports nothing heavy.
"""
from __future__ import annotations

import argparse
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from turneval.headline_figures import FIGURES, measured


GATE_FAILED_EXIT = 3
"""Exit code of ``turneval report --require`` / ``turneval check`` when a requirement fails
(1 stays "error: the report could not be made", 2 argparse's "bad command line")."""

HEADLINE_FIGURES: dict[str, str] = {name: figure.description for name, figure in FIGURES.items()}
"""The headline figures by name, each with what it measures (rates are fractions 0-1): the
registry :data:`turneval.headline_figures.FIGURES`; these names are what ``--require`` accepts."""

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "<": operator.lt,
    ">": operator.gt,
}
# two-character operators first, so "<=" is not read as "<" followed by "=0.8"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|==|<|>)\s*(\S+)\s*$")


class GateError(ValueError):
    """A requirement that cannot be read, or a report without headline figures; the message says what to fix."""


@dataclass(frozen=True)
class Requirement:
    """``name op threshold``, e.g. ``response_latency_s <= 0.8``."""

    name: str
    op: str
    threshold: float

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.threshold:g}"

    def holds(self, value: float) -> bool:
        return _OPERATORS[self.op](value, self.threshold)


@dataclass(frozen=True)
class GateResult:
    """One requirement checked: the figure's value (None: not measured) and whether it passed."""

    requirement: Requirement
    value: float | None
    passed: bool

    @property
    def reason(self) -> str:
        return "not measured" if self.value is None else ("pass" if self.passed else "outside")


def parse_requirement(text: str, known: Iterable[str] | None = None) -> Requirement:
    """Read ``"response_latency_s<=0.8"``; ``known`` are the accepted names (default the headline figures).

    Raises:
        GateError: the text is not ``NAME OP NUMBER``, the name is unknown (the message lists
            the known names), or the number is not a finite number.
    """
    names = list(HEADLINE_FIGURES if known is None else known)
    match = _REQUIREMENT.match(text)
    if match is None:
        raise GateError(f"requirement {text!r} is not NAME OP NUMBER (OP one of <=, >=, <, >, ==), "
                        f"e.g. 'response_latency_s<=0.8'")
    name, op, number = match.groups()
    if name not in names:
        raise GateError(f"requirement {text!r}: unknown figure {name!r}; known figures: {', '.join(names)}")
    try:
        threshold = float(number)
    except ValueError:
        raise GateError(f"requirement {text!r}: {number!r} is not a number") from None
    if not math.isfinite(threshold):
        raise GateError(f"requirement {text!r}: the threshold must be a finite number")
    return Requirement(name, op, threshold)


def requirement_arg(text: str) -> Requirement:
    """:func:`parse_requirement` as an argparse ``type``: a bad requirement stops the command
    line at once, before minutes of analysis, with the message that names the known figures."""
    try:
        return parse_requirement(text)
    except GateError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


REQUIRE_HELP = ("a pass/fail gate on a headline figure, NAME OP NUMBER with OP one of <=, >=, <, >, == "
                "(repeatable; quote it), e.g. --require 'response_latency_s<=0.8' --require 'talk_over_rate<=0.1'; "
                f"any failure exits with code {GATE_FAILED_EXIT}. Names: " + ", ".join(HEADLINE_FIGURES))
"""The ``--require`` help text of ``turneval report`` and ``turneval check``."""


def evaluate(requirements: Iterable[Requirement], figures: Mapping[str, Any]) -> list[GateResult]:
    """Check each requirement against ``figures`` (name -> number or None); a missing,
    None or non-finite figure fails as "not measured"."""
    out = []
    for req in requirements:
        value = measured(figures.get(req.name))
        out.append(GateResult(req, value, value is not None and req.holds(value)))
    return out


def check_requirements(texts: Iterable[str], figures: Mapping[str, Any]) -> list[GateResult]:
    """Parse ``texts`` (names checked against the headline figures) and evaluate them on ``figures``."""
    return evaluate([parse_requirement(t) for t in texts], figures)


def all_passed(results: Iterable[GateResult]) -> bool:
    """True when every requirement passed (and vacuously for none)."""
    return all(r.passed for r in results)


def format_gate_table(results: Iterable[GateResult]) -> str:
    """A short plain-text table: requirement, value, pass/FAIL (FAIL in capitals so a CI log shows it)."""
    rows = [("requirement", "value", "result")]
    for r in results:
        value = "not measured" if r.value is None else f"{r.value:.4g}"
        rows.append((str(r.requirement), value, "pass" if r.passed else "FAIL"))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    return "\n".join(f"{a:{widths[0]}}  {b:{widths[1]}}  {c}".rstrip() for a, b, c in rows)


def run_gates(requirements: Iterable[Requirement], figures: Mapping[str, Any]) -> tuple[str, int]:
    """Evaluate and format: the table, with a last line that sums up, and the exit code
    (0 when every requirement passed, :data:`GATE_FAILED_EXIT` otherwise)."""
    results = evaluate(requirements, figures)
    failed = [r for r in results if not r.passed]
    verdict = (f"requirements: all {len(results)} passed" if not failed
               else f"requirements: {len(failed)} of {len(results)} failed")
    return format_gate_table(results) + "\n" + verdict, (GATE_FAILED_EXIT if failed else 0)


def figures_from_report(data: Mapping[str, Any], source: str = "report.json") -> dict[str, Any]:
    """The headline figures of a loaded report.json (``data["headline"]``).

    Raises:
        GateError: the report has no headline section (written before turneval had one).
    """
    headline = data.get("headline") if isinstance(data, Mapping) else None
    if not isinstance(headline, Mapping) or not isinstance(headline.get("figures"), Mapping):
        raise GateError(f"{source} has no headline figures (it was written by an older turneval, or is not a "
                        "turneval report.json); rerun `turneval report` on the conversation")
    return dict(headline["figures"])
