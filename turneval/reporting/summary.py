"""The headline figures of a report as one table: rows for report.json and the HTML page, text for the terminal."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from turneval.dataset_scripts.agreement_instances import METRIC_DECISIONS, METRIC_DESCRIPTIONS
from turneval.dataset_scripts.files import to_jsonable

from .judge_validation import validation_note
from .number_format import format_number
from .references import reference_lookup, reference_values
from .verdict import format_verdict, report_verdict


if TYPE_CHECKING:  # pragma: no cover - typing only
    from .result import Report


def _get(data: Any, *path: Any) -> Any:
    for key in path:
        if data is None:
            return None
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _pct(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else 100.0 * float(value)


def summary_rows(rep: "Report") -> list[dict[str, Any]]:
    """One row per headline figure: ``section, key, label, value, unit`` and, where the papers
    have one, ``reference`` (human, in domain) with its ``reference_source``."""
    refs = reference_lookup()
    primary = reference_values()["primary"]
    stats, timing = rep.statistics, rep.full_duplex_timing
    rows: list[tuple[str, str, str, Any, str]] = [
        ("statistics", "statistics.ipu_per_min", "IPUs per minute", stats.get("ipu_per_min"), "/min"),
        ("statistics", "statistics.pause_per_min", "Pauses per minute", stats.get("pause_per_min"), "/min"),
        ("statistics", "statistics.gap_per_min", "Gaps per minute", stats.get("gap_per_min"), "/min"),
        ("statistics", "statistics.overlap_per_min", "Overlaps per minute", stats.get("overlap_per_min"), "/min"),
        ("statistics", "statistics.gap_percent", "Gaps, % of duration", stats.get("gap_percent"), "%"),
        ("statistics", "statistics.overlap_percent", "Overlaps, % of duration", stats.get("overlap_percent"), "%"),
        ("statistics", "statistics.gap_mean_s", "Mean gap", stats.get("gap_mean_s"), "s"),
        ("statistics", "statistics.backchannels_per_min_system", "System backchannels per minute", stats.get("backchannels_per_min_system"), "/min"),
        ("statistics", "statistics.interruptions_per_min_system", "System interruptions per minute", stats.get("interruptions_per_min_system"), "/min"),
        ("statistics", "statistics.speaking_rate_wpm", "System speaking rate", stats.get("speaking_rate_wpm_system"), "wpm"),
        ("statistics", "statistics.backchannel_word_rate", "System backchannel word rate", stats.get("backchannel_word_rate_system"), "/min"),
        ("timing", "fdbench.fsed_ms", "FD-Bench first-speech emission delay", _get(timing, "fdbench", "fsed_ms"), "ms"),
        ("timing", "fdbench.srr", "FD-Bench success response rate", _pct(_get(timing, "fdbench", "srr")), "%"),
        ("timing", "fdbench.eir", "FD-Bench early interrupt rate", _pct(_get(timing, "fdbench", "eir")), "%"),
        ("timing", "fdb.smooth_turn_taking.tor", "FDB smooth turn-taking TOR", _pct(_get(timing, "full_duplex_bench", "smooth_turn_taking", "take_over_rate")), "%"),
        ("timing", "fdb.smooth_turn_taking.latency", "FDB smooth turn-taking latency", _get(timing, "full_duplex_bench", "smooth_turn_taking", "mean_latency_s"), "s"),
        ("timing", "fdb.pause_handling.tor", "FDB pause-handling TOR (lower is better)", _pct(_get(timing, "full_duplex_bench", "pause_handling", "take_over_rate")), "%"),
        ("timing", "fdb.user_interruption.tor", "FDB user-interruption TOR", _pct(_get(timing, "full_duplex_bench", "user_interruption", "take_over_rate")), "%"),
        ("backchannel", "backchannel.mean_rate_per_minute", "System backchannels per minute (SWOZ band 4-6)", rep.backchannel_timing.get("mean_rate_per_minute"), "/min"),
        ("backchannel", "backchannel.in_band_share", "Minutes in the 4-6 /min band", _pct(rep.backchannel_timing.get("in_band_share")), "%"),
    ]
    if rep.agreement is not None:
        # every metric and decision gets a row, so that reports line up (n/a: no such decision here)
        for metric in METRIC_DECISIONS:
            occ = _get(rep.agreement, "occurrence_rates", metric, "rate")
            rows.append(("agreement", f"occurrence.{metric}", refs[f"occurrence.{metric}"]["label"], _pct(occ), "%"))
        for metric, decisions in METRIC_DECISIONS.items():
            for decision in decisions:
                value = _get(rep.agreement, "metrics", metric, "decisions", decision, "agreement")
                label = f"({metric}) agreement: {METRIC_DESCRIPTIONS[metric][decision]}"
                note = validation_note(_get(rep.agreement, "metrics", metric, "decisions", decision) or {})
                label = f"{label} [{note}]" if note and _pct(value) is not None else label
                rows.append(("agreement", f"agreement.{metric}.{decision}", label, _pct(value), "%"))
    if rep.naturalness is not None:
        rows += [
            ("naturalness", "naturalness.score", "Naturalness m (higher is more natural)", rep.naturalness.get("naturalness_score"), ""),
            ("naturalness", "naturalness.mean_nll", "MeanNLL", rep.naturalness.get("mean_nll"), "nats"),
            ("naturalness", "naturalness.tail_nll", "TailNLL (worst 25 % of units)", rep.naturalness.get("tail_nll"), "nats"),
            ("naturalness", "naturalness.system_onset_nll", "System's speech onsets, mean NLL (diagnostic, not in m)",
             rep.naturalness.get("system_onset_nll"), "nats"),
        ]
    if rep.turn_end_judge is not None:
        name = rep.turn_end_judge["name"]
        for metric in ("a", "d"):
            for decision in METRIC_DECISIONS[metric]:
                value = _get(rep.turn_end_judge, "metrics", metric, "decisions", decision, "agreement")
                label = f"({metric}) agreement: {METRIC_DESCRIPTIONS[metric][decision]} - {name}"
                rows.append(("agreement", f"turn_end_judge.{metric}.{decision}", label, _pct(value), "%"))
    if rep.transcript is not None and rep.transcript.get("wer"):
        for role in ("system", "user"):
            if role in rep.transcript["wer"]:
                rows.append(("transcript", f"transcript.wer.{role}", f"{role.capitalize()} WER (recognised words vs reference)", _pct(_get(rep.transcript, "wer", role, "wer")), "%"))
    out = []
    for section, key, label, value, unit in rows:
        ref = refs.get(key)
        row = {"section": section, "key": key, "label": label, "value": to_jsonable(value), "unit": unit, "reference": None, "reference_source": None}
        if ref is not None and primary in ref["values"]:
            row["reference"] = ref["values"][primary]
            row["reference_source"] = f"Talking Turns {ref['table']}, {reference_values()['systems'][primary]}"
        out.append(row)
    return out


def format_summary(rep: "Report") -> str:
    """The terminal text: the verdict (headline figures beside the human ranges), the one note
    about the models, then every figure beside the papers' human reference value, then the notes."""
    rows = rep.summary_rows()
    width = max(len(r["label"]) for r in rows)
    lines = [f"turneval report: {rep.conversation['id']} ({rep.conversation['duration_s']:.1f} s, system = channel {rep.conversation['system_channel']})"]
    verdict, models_note = report_verdict(rep)
    if verdict:
        lines += [format_verdict(verdict), ""]
    if models_note:
        lines += [models_note, ""]
    lines.append(f"{'All figures':{width}}  {'this conversation':>18}  {'reference (human)':>18}")
    section = None
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            lines.append(f"-- {section}")
        ours = "n/a" if r["value"] is None else f"{format_number(r['value'])} {r['unit']}".strip()
        ref = "" if r["reference"] is None else f"{format_number(r['reference'])} {r['unit']}".strip()
        lines.append(f"{r['label']:{width}}  {ours:>18}  {ref:>18}")
    lines.append("Reference values: Talking Turns (Arora et al. 2025) Tables 2, 6 and 8, human in-domain (Switchboard); see reference_values in report.json.")
    # the model warnings are in the note above; the rest once each
    lines += [f"note: {n}" for n in rep.notes if not (models_note and n.startswith("WARNING:"))]
    return "\n".join(lines)
