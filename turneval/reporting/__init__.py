"""The main job (docs/report.md): every turn-taking figure of one human-AI conversation.

    >>> import turneval                                              # doctest: +SKIP
    >>> rep = turneval.report("call.wav", system_channel=1)
    >>> turneval.reporting.save_report(rep, "out/")                  # report.json + report.html

The package holds the stages of a report, each in its own module; the metric rules they
apply live in :mod:`turneval.metrics` (shared with ``turneval score``, the Space and the
evaluate modules):

=================  =========================================================================
``inputs``         audio (stereo or two mono files), speech segments by VAD or from an
                   annotation JSON, the system channel -> a Dialogue and the facts of
                   reading it (:class:`InputFacts`: files, band, VAD settings, notes)
``inference``      device, checkpoints (through :mod:`turneval.checkpoints`), the judge
                   streamed over a whole conversation
``build``          :func:`report`: typed options (:class:`ReportOptions`), the models loaded
                   once (:func:`load_models`), one stage per section (events, statistics,
                   full-duplex timing, agreement, naturalness, backchannel timing) -> a
                   :class:`Report` (:func:`build_report`)
``result``         :class:`Report`: one dataclass per section, its JSON form and schema
``report_files``   :func:`save_report`: report.json and report.html
``headline``       the values of the headline figures (their registry:
                   :mod:`turneval.headline_figures`; what ``--require`` gates)
``verdict``        those figures beside the human ranges measured on real conversations, marked
                   when outside; the response-gap plot; the one note about the models
``summary``        the terminal text (verdict first) and the full table beside the papers' values
``number_format``  how a number is printed
``references``     the papers' human reference values
``html_report``    the self-contained HTML page
=================  =========================================================================

(The package is ``turneval.reporting`` rather than ``turneval.report`` so that the function
``turneval.report`` is not shadowed by a subpackage of the same name.)
"""
from __future__ import annotations

from .build import (
    N_WORST_UNITS,
    ConversationInput,
    LoadedModels,
    ReportOptions,
    build_report,
    check_conversation,
    event_summary,
    load_models,
    report,
)
from .inference import (
    check_device,
    judge_interruption_probabilities,
    judge_precision,
    judge_probabilities,
    load_judge_model,
    load_predictor_model,
    resolve_checkpoint,
    two_party_judged_instances,
)
from .inputs import (
    VAD_BLOCK_S,
    InputFacts,
    InputSettings,
    check_inputs,
    load_conversation,
    read_annotations,
    read_conversation,
)
from .number_format import format_number
from .references import reference_lookup, reference_values
from .report_files import save_report
from .result import (
    ABSENT,
    REPORT_SCHEMA_VERSION,
    BackchannelTiming,
    ConversationFacts,
    Events,
    FullDuplexTiming,
    Headline,
    JudgeSection,
    Models,
    Report,
    ReportError,
    Section,
    Settings,
    SummaryRow,
    report_schema,
)
from .summary import format_summary, summary_rows


__all__ = [
    "N_WORST_UNITS",
    "ConversationInput",
    "LoadedModels",
    "ReportOptions",
    "build_report",
    "check_conversation",
    "load_models",
    "REPORT_SCHEMA_VERSION",
    "VAD_BLOCK_S",
    "Report",
    "ReportError",
    "check_device",
    "check_inputs",
    "event_summary",
    "format_number",
    "format_summary",
    "judge_interruption_probabilities",
    "judge_precision",
    "judge_probabilities",
    "load_conversation",
    "InputFacts",
    "InputSettings",
    "read_conversation",
    "load_judge_model",
    "load_predictor_model",
    "read_annotations",
    "reference_lookup",
    "reference_values",
    "report",
    "report_schema",
    "save_report",
    "ABSENT",
    "BackchannelTiming",
    "ConversationFacts",
    "Events",
    "FullDuplexTiming",
    "Headline",
    "JudgeSection",
    "Models",
    "Section",
    "Settings",
    "SummaryRow",
    "resolve_checkpoint",
    "summary_rows",
    "two_party_judged_instances",
]
