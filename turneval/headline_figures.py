"""The one registry of the headline figures: the handful a voice-agent builder checks first.

    >>> from turneval.headline_figures import FIGURES, figure_value
    >>> FIGURES["talk_over_rate"].unit, FIGURES["talk_over_rate"].factor
    ('%', 100.0)
    >>> figure_value({"headline": {"figures": {"talk_over_rate": 0.25}}}, "talk_over_rate")
    0.25

Every reader of these figures takes them from here: the report's verdict
(:mod:`turneval.reporting.verdict`), the single-call gates (:mod:`turneval.gates`, ``turneval
report/check --require``), and the fleet table and fleet gates of ``turneval batch``
(:mod:`turneval.batch.fleet`). The report computes the values
(:func:`turneval.reporting.headline.headline_figures`) and stores them in report.json under
``headline.figures`` by these names; stored values are fractions for rates, and ``factor``
turns one into the number people read (a percentage).

This module imports nothing: the CLI reads it before any model loads.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class HeadlineFigure:
    """One headline figure.

    Attributes:
        name: the name in report.json's ``headline.figures`` and in ``--require``.
        label: the figure for people (the verdict's row).
        unit: the unit it is shown in (after ``factor``).
        factor: from the stored value to the shown one (100 for a rate shown in percent).
        description: what it measures, in a sentence (the gates' help).
        better: ``"lower"``, ``"higher"`` or ``"inside"`` (nearer the human range): which way a
            call is worse, for the fleet's worst calls.
        range_key: its entry in ``turneval/data/human_ranges.json`` (``figures``).
    """

    name: str
    label: str
    unit: str
    factor: float
    description: str
    better: str
    range_key: str

    def read(self, report_json: Mapping[str, Any]) -> float | None:
        """This figure of a loaded report.json (None: not measured, or not a number)."""
        figures = (report_json.get("headline") or {}).get("figures") or {}
        return measured(figures.get(self.name))


def measured(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing, a flag, not a number, NaN or inf."""
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


_FIGURES = (
    HeadlineFigure("response_latency_s", "Response latency (median silence before the system answers)", "s", 1.0,
                   "median silence (s) from the end of a user turn to the system's reply", "lower", "response_latency_s"),
    HeadlineFigure("talk_over_rate", "Talks over the user (share of the user's turns)", "%", 100.0,
                   "share of the user's turns in which the system starts talking while the user speaks (not backchannels)",
                   "lower", "talk_over_rate"),
    HeadlineFigure("cut_off_rate", "Cuts the user off at a pause (user resumes into the reply)", "%", 100.0,
                   "share of the user's pauses inside a turn at which the system takes the turn", "lower", "cut_off_rate"),
    HeadlineFigure("yield_rate", "Yields when the user interrupts", "%", 100.0,
                   "share of the user's interruptions of the system after which the user holds the floor", "higher", "yield_rate"),
    HeadlineFigure("backchannels_per_min", "Backchannels", "/min", 1.0, "the system's backchannels per minute", "inside",
                   "backchannels_per_min"),
    HeadlineFigure("overlap_share", "Overlap (both speak)", "%", 100.0, "share of the conversation in which both speak", "inside",
                   "overlap_share"),
    HeadlineFigure("judge_agreement_a", "Judge agrees with its pause decisions (a)", "%", 100.0,
                   "share of the system's pause decisions (speak up / let the user go on) the judge agrees with, metric (a)",
                   "higher", "judge_agreement_a"),
    HeadlineFigure("naturalness_m", "Naturalness m (higher is more natural)", "", 1.0,
                   "naturalness score m of the whole conversation (higher is more natural)", "higher", "naturalness_m"),
)

FIGURES: dict[str, HeadlineFigure] = {f.name: f for f in _FIGURES}
"""The headline figures by name, in the order every table shows them."""


def figure_value(report_json: Mapping[str, Any], name: str) -> float | None:
    """The figure ``name`` of a loaded report.json (None when not measured)."""
    return FIGURES[name].read(report_json)
