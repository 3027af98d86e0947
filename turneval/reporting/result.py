"""The result of a report: every figure of one conversation, its JSON form and schema."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from turneval import __version__
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

from .references import reference_values
from .summary import summary_rows
from .verdict import predictor_of, verdict_rows


REPORT_SCHEMA_VERSION = 1


class ReportError(DialogueError):
    """The report cannot be made from this input; the message says what to fix."""


@dataclass
class Report:
    """Every figure of one conversation, and every instance with its time.

    Attributes:
        conversation: id, audio file(s), duration, system and user channel, where the speech
            segments came from.
        segments: per speaker (A, B) the speech segments in seconds.
        events: the turn-taking events (IPUs, pauses, gaps, overlaps, backchannels, turns,
            interruptions), each with its times.
        statistics: Talking Turns §3.2 statistics (per minute, % of duration, per speaker).
        full_duplex_timing: FD-Bench and Full-Duplex-Bench figures on scenarios derived from
            the events (``derived_from`` says how).
        judge: the judge's class probabilities per 40 ms chunk (row t: the label of chunk t + 1
            from the audio up to the end of chunk t) and the checkpoint; None when skipped.
        agreement: metrics (a)-(e), occurrence rates, confusion matrix, threshold sensitivity
            and every instance; None when the judge was skipped.
        naturalness: MeanNLL, TailNLL, m, the worst boundary units and all units; None when
            the predictor was skipped.
        backchannel_timing: the system's backchannel rate, band share and spacing (SWOZ).
        notes: what was skipped or approximated, in words.
        settings: thresholds, VAD settings, checkpoints, device.
        models: each model's checkpoint, training data and measured quality
            (:mod:`turneval.model_provenance`); None for a skipped model.
        transcript: the recognised words per channel, the recogniser and the WER against a
            reference (``--transcribe``, :mod:`turneval.transcribe`); None without it.
        turn_end_judge: agreement of another turn-end model (smart-turn v3.2) with the (a)/(d)
            pause decisions, beside the TurnTakingJudge's on the same instances
            (``--turn-end-judge``, :mod:`turneval.smart_turn`); None without it.
        headline: the headline figures (``figures``, by the names ``--require`` gates;
            :mod:`turneval.reporting.headline`) and the system's response gaps
            (``response_gaps_s``); None for a Report built by hand without them.
    """

    conversation: dict[str, Any]
    segments: list[list[list[float]]]
    events: dict[str, Any]
    statistics: dict[str, Any]
    full_duplex_timing: dict[str, Any]
    backchannel_timing: dict[str, Any]
    judge: dict[str, Any] | None = None
    agreement: dict[str, Any] | None = None
    naturalness: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    transcript: dict[str, Any] | None = None
    turn_end_judge: dict[str, Any] | None = None
    headline: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN and inf become None)."""
        body = {
            "schema_version": REPORT_SCHEMA_VERSION,
            "turneval_version": __version__,
            "conversation": self.conversation,
            "headline": self.headline_section(),
            "summary": list(self.summary_rows()),
            "reference_values": reference_values(),
            "segments": self.segments,
            "events": self.events,
            "statistics": self.statistics,
            "full_duplex_timing": self.full_duplex_timing,
            "backchannel_timing": self.backchannel_timing,
            "judge": self.judge,
            "agreement": self.agreement,
            "naturalness": self.naturalness,
            "notes": list(self.notes),
            "settings": self.settings,
            "models": self.models,
            "transcript": self.transcript,
            "turn_end_judge": self.turn_end_judge,
        }
        return to_jsonable(body)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def headline_section(self) -> dict[str, Any] | None:
        """The headline figures, the response gaps and the verdict rows (each figure beside its
        human range, :mod:`turneval.reporting.verdict`), as report.json holds them."""
        if self.headline is None:
            return None
        rows = verdict_rows(self.headline["figures"], bool(self.conversation.get("has_words")), predictor_of(self))
        return {**self.headline, "verdict": rows}

    def summary_rows(self) -> list[dict[str, Any]]:
        """The compact table of the terminal and the HTML page (see :func:`~turneval.reporting.summary.summary_rows`)."""
        return summary_rows(self)

    def save(self, out_dir: str | Path, html: bool = True) -> dict[str, Path]:
        """Write ``report.json`` (and ``report.html``) into ``out_dir``, each atomically.

        Both documents are rendered before either file is written, so a failure leaves no
        half-written pair behind. Without ``html`` a ``report.html`` left by an earlier run is
        removed, so the folder never pairs a new report.json with an old page.
        """
        out_dir = Path(out_dir)
        documents = {"report.json": self.to_json()}
        if html:
            from .html_report import render_html

            documents["report.html"] = render_html(self)
        written = {}
        for name, text in documents.items():
            atomic_write_text(out_dir / name, text)
            written[name] = out_dir / name
        stale = out_dir / "report.html"
        if not html and stale.is_file():
            stale.unlink()  # an older run's page would no longer describe this report.json
        return written


def report_schema() -> dict[str, Any]:
    """The JSON schema that every report.json validates against (``turneval/data/report.schema.json``)."""
    return json.loads(resources.files("turneval").joinpath("data/report.schema.json").read_text(encoding="utf-8"))
