"""A self-contained HTML page for a :class:`~turneval.reporting.result.Report`.

No network, no JavaScript, no external CSS: the timeline is an SVG drawn by matplotlib (its
curves and markers rasterised, so it stays about as small as a PNG; its labels stay vector
shapes with ids, ``unit-label-N``, that a browser test can measure) and inlined; the tables
are plain HTML and fit a 1280 px window. The timeline shows both speakers' voice activity,
the judge's class probabilities, a marker at every evaluated decision (green: the judge
agrees with the decision taken, red: it does not) and the worst boundary units of the
naturalness score (shaded, numbered by rank). Long conversations are drawn as several rows
so the page stays readable. The Space shows the same figure as a PNG.
"""
from __future__ import annotations

import base64
import html
import io
import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from turneval.model_provenance import models_html, shown_path

from .number_format import format_number
from .references import reference_values
from .verdict import VERDICT_CSS, gaps_png, report_verdict, verdict_html


if TYPE_CHECKING:  # pragma: no cover - typing only
    from .result import Report

MAX_ROWS = 10
"""At most this many timeline rows; a row spans at least MIN_ROW_S seconds."""
MIN_ROW_S = 60.0
MAX_INSTANCE_ROWS = 2000
"""The page lists at most this many decisions (report.json has all of them)."""
LABEL_COLOURS = {"NA": "#9e9e9e", "BC": "#2e7d32", "I": "#c62828", "T": "#1565c0", "C": "#ef6c00"}
METRIC_ROWS = ("a", "b", "c", "d", "e")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.ref{color:#555}
.note{background:#fff8e1;border-left:4px solid #ffb300;padding:.4em .8em;margin:.3em 0}
svg.timeline{width:100%;height:auto;border:1px solid #ddd}details{margin:.6em 0}summary{cursor:pointer}
.ok{color:#2e7d32}.bad{color:#c62828}table{max-width:100%}td{overflow-wrap:anywhere}
""" + VERDICT_CSS


def _fmt(value: Any) -> str:
    return format_number(value, digits=3)


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str | None = None) -> str:
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    for row in rows:
        cells = []
        for cell in row:
            cls = ' class="num"' if isinstance(cell, (int, float)) and not isinstance(cell, bool) else ""
            cells.append(f"<td{cls}>{html.escape(_fmt(cell))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _folded(summary: str, content: str) -> str:
    """``content`` behind a summary line the reader opens (long tables of secondary figures)."""
    return f"<details><summary>{html.escape(summary)}</summary>\n{content}\n</details>"


def _kv_table(data: dict[str, Any], skip: Iterable[str] = ()) -> str:
    skip = set(skip)
    rows = [(k, v) for k, v in data.items() if k not in skip and not isinstance(v, (dict, list))]
    return _table(("figure", "value"), rows)


# ---------------------------------------------------------------------------------------
# Timeline plot
# ---------------------------------------------------------------------------------------


def unit_labels(units: list[tuple[int, float]], char_s: float) -> list[tuple[float, str]]:
    """``(x, text)`` labels for ranked units ``(rank, start)``, none drawn over another: a unit
    that starts before the previous label's text ends (``char_s``: seconds per character at the
    plot's scale) joins that label ("#1/#4")."""
    labels: list[tuple[float, list[int]]] = []
    text = lambda ranks: "/".join(f"#{r}" for r in sorted(ranks))  # noqa: E731
    for rank, start in sorted(units, key=lambda u: (u[1], u[0])):
        if labels and start < labels[-1][0] + (len(text(labels[-1][1])) + 1) * char_s:
            labels[-1][1].append(rank)
        else:
            labels.append((start, [rank]))
    return [(x, text(ranks)) for x, ranks in labels]


def timeline_png(rep: "Report", dpi: int = 90) -> bytes:
    """The timeline figure as PNG bytes (matplotlib, Agg backend)."""
    import matplotlib.pyplot as plt

    fig = timeline_figure(rep)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def timeline_svg(rep: "Report", dpi: int = 90) -> str:
    """The timeline figure as an inline ``<svg>`` element that scales to its container's width.

    Curves, markers and shading are rasterised at ``dpi`` (thousands of vector points would make
    the page heavy); text stays vector, and each worst-unit label is a group ``unit-label-N``."""
    import matplotlib.pyplot as plt

    fig = timeline_figure(rep)
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections, *ax.patches]:
            artist.set_rasterized(True)
    buffer = io.BytesIO()
    with plt.rc_context({"svg.hashsalt": "turneval-timeline"}):  # the same ids on every run
        fig.savefig(buffer, format="svg", dpi=dpi)
    plt.close(fig)
    svg = buffer.getvalue().decode("utf-8")
    svg = svg[svg.index("<svg"):]  # inline: no XML declaration or DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)  # the creator's RDF block
    head_end = svg.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", svg[:head_end])
    return head + ' class="timeline" role="img" aria-label="timeline plot"' + svg[head_end:]


def timeline_figure(rep: "Report") -> Any:
    """The timeline as a matplotlib figure (constrained layout: the title, the legend and the
    labels keep clear of the plots)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    duration = float(rep.conversation["duration_s"])
    row_s = max(MIN_ROW_S, duration / MAX_ROWS)
    n_rows = max(1, int(math.ceil(duration / row_s - 1e-9)))
    row_s = min(row_s, duration) if n_rows == 1 else row_s
    has_judge = rep.judge is not None
    panels = 3 if has_judge else 1
    ratios = [1.2, 2.0, 1.6][:panels]
    fig, axes = plt.subplots(n_rows * panels, 1, figsize=(14, (1.1 + 2.4 * (panels > 1) + 0.4) * n_rows + 0.4), squeeze=False,
                             gridspec_kw={"height_ratios": ratios * n_rows}, layout="constrained")
    axes = axes[:, 0]
    system, user = rep.conversation["system_channel"], rep.conversation["user_channel"]
    worst = (rep.naturalness or {}).get("worst_units") or []
    probs = names = times = None
    if has_judge:
        probs = np.asarray([[np.nan] * 5 if r is None else [np.nan if v is None else v for v in r] for r in rep.judge["probabilities"]], dtype=float)
        names = rep.judge["label_names"]
        # row t is about chunk t + 1: draw it at that chunk's centre
        times = (np.arange(probs.shape[0]) + 1.5) * rep.judge["chunk_s"]
    instances = (rep.agreement or {}).get("instances") or []
    rows_units: list[tuple[Any, list[tuple[int, float]]]] = []
    for row in range(n_rows):
        lo, hi = row * row_s, min(duration, (row + 1) * row_s)
        group = axes[row * panels : (row + 1) * panels]
        activity = group[0]
        for y, speaker, who, colour in ((1, user, "user", "#1565c0"), (0, system, "system", "#ef6c00")):
            spans = [(s, e - s) for s, e in rep.segments[speaker] if e > lo and s < hi]
            activity.broken_barh(spans, (y - 0.35, 0.7), facecolors=colour)
        activity.set_yticks([0, 1], [f"system (ch {system})", f"user (ch {user})"])
        activity.set_ylim(-0.6, 1.6)
        if has_judge:
            judge_ax, decision_ax = group[1], group[2]
            sel = (times >= lo) & (times < hi)
            for k, name in enumerate(names):
                judge_ax.plot(times[sel], probs[sel, k], lw=0.9, color=LABEL_COLOURS.get(name), label=name)
            judge_ax.set_ylim(0, 1)
            judge_ax.set_ylabel("judge p")
            if row == 0:  # beside the plot, not over the curves
                judge_ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8, frameon=False)
            for agrees, colour, marker in ((True, "#2e7d32", "o"), (False, "#c62828", "x")):
                shown = [i for i in instances if lo <= i["time"] < hi and i["agrees"] == agrees]
                if shown:  # one scatter call per kind: thousands of single calls take seconds
                    decision_ax.scatter([i["time"] for i in shown], [4 - METRIC_ROWS.index(i["metric"]) for i in shown],
                                        s=14, color=colour, marker=marker)
            decision_ax.set_yticks(range(5), [f"({m})" for m in reversed(METRIC_ROWS)])
            decision_ax.set_ylim(-0.7, 4.7)
            decision_ax.set_ylabel("decisions")
        shown_units = []
        for rank, unit in enumerate(worst, start=1):
            start, end = unit["window"]
            if end > lo and start < hi:
                for ax in group:
                    ax.axvspan(max(start, lo), min(end, hi), color="#ffd54f", alpha=0.35, lw=0)
                shown_units.append((rank, max(start, lo)))
        for ax in group:
            ax.set_xlim(lo, lo + row_s)
            ax.grid(axis="x", alpha=0.3)
        group[-1].set_xlabel("time (s)")
        rows_units.append((group[0], shown_units))
    fig.suptitle(
        "Voice activity" + (", judge probabilities, decisions (green o: judge agrees, red x: disagrees)" if has_judge else "")
        + (", worst naturalness units shaded" if worst else ""),
        fontsize=10,
    )
    _label_units(fig, rows_units)
    return fig


def _label_units(fig: Any, rows_units: list[tuple[Any, list[tuple[int, float]]]]) -> None:
    """Number the worst units above each row's activity panel, labels that would touch merged.

    The width of a character is measured by the renderer once the layout is done (a guess from
    the figure's size drew labels over each other), so merging follows what is drawn."""
    if not any(units for _, units in rows_units):
        return
    fig.draw_without_rendering()  # constrained layout places the axes
    renderer = fig.canvas.get_renderer()
    count = 0
    for ax, units in rows_units:
        probe = ax.text(ax.get_xlim()[0], 1.45, "#8/#8/#8/#8", fontsize=8)
        box = probe.get_window_extent(renderer)
        probe.remove()
        (x0, _), (x1, _) = ax.transData.inverted().transform([[box.x0, box.y0], [box.x1, box.y0]])
        for x, text in unit_labels(units, char_s=(x1 - x0) / 11):
            count += 1
            ax.text(x, 1.45, text, fontsize=8, va="center", color="#8d6e00", gid=f"unit-label-{count}")


# ---------------------------------------------------------------------------------------
# Page
# ---------------------------------------------------------------------------------------


def _summary_section(rep: "Report") -> str:
    rows = [
        (r["label"], r["value"], r["unit"], "" if r["reference"] is None else r["reference"], r["reference_source"] or "")
        for r in rep.summary_rows()
    ]
    return _table(("figure", "this conversation", "unit", "reference value (human)", "reference source"), rows)


def _agreement_section(rep: "Report") -> str:
    agreement = rep.agreement
    if agreement is None:
        return "<p>Judge skipped: no agreement metrics.</p>"
    rows = []
    for metric, entry in agreement["metrics"].items():
        for decision, s in entry["decisions"].items():
            checked = "" if "validation_instances" not in s else f"{s['validation_instances']}" + ("" if s["validated"] else ": too few to validate")
            rows.append((f"({metric}) {entry['title']}", s["description"], s["n_instances"], s["agreement"], s["ci95_low"], s["ci95_high"], checked))
    parts = [_table(("metric", "decision taken", "instances", "agreement", "95% CI low", "95% CI high",
                     "real instances the judge was checked on"), rows,
                    f"Judge thresholds: {agreement['thresholds']}")]
    occ = [(f"({m})", o["decision"], o["count"], o["n_instances"], 100 * o["rate"]) for m, o in agreement["occurrence_rates"].items()]
    parts.append("<h3>Occurrence rates (Talking Turns Table 2)</h3>" + _table(("metric", "decision", "count", "instances", "rate %"), occ))
    sens = [(f"({m})", d, v["mean"][d], v["margin_of_error"][d]) for m, v in agreement["threshold_sensitivity"].items() for d in v["mean"]]
    parts.append(_folded("Threshold sensitivity (§A.8)", _table(("metric", "decision", "mean agreement", "margin of error"), sens)))
    cm = agreement.get("confusion_matrix")
    if cm:
        labels = cm["labels"]
        parts.append(_folded("Single-label confusion matrix of the system's decisions (% of decisions; rows: taken, columns: judge)",
                             _table(["taken \\ judge"] + labels, [[a] + list(row) for a, row in zip(labels, cm["matrix"])])))
    inst = [(i["time"], f"({i['metric']})", i["decision"], i["judge_label"], i["agrees"]) for i in agreement["instances"]]
    shown = inst[:MAX_INSTANCE_ROWS]
    more = "" if len(shown) == len(inst) else f" (the first {len(shown)} here; all of them are in report.json)"
    parts.append(f"<details><summary>All {len(inst)} evaluated decisions{more}</summary>"
                 + _table(("time (s)", "metric", "decision taken", "judge label", "agrees"), shown) + "</details>")
    return "\n".join(parts)


def _timing_section(rep: "Report") -> str:
    timing = rep.full_duplex_timing
    parts = [f"<p>{html.escape(timing['derived_from'])}</p>"]
    if timing.get("fdbench"):
        parts.append("<h3>FD-Bench</h3>" + _kv_table(timing["fdbench"]))
    fdb = timing["full_duplex_bench"]
    rows = [(task, fdb[task]["n_samples"], fdb[task]["take_over_rate"], fdb[task]["mean_latency_s"])
            for task in ("smooth_turn_taking", "pause_handling", "user_interruption")]
    parts.append("<h3>Full-Duplex-Bench</h3>" + _table(("task", "samples", "take-over rate", "mean latency (s)"), rows))
    t = fdb["timing"]
    parts.append(_table(("v1.5 timing", "n", "mean (s)", "95% CI low", "95% CI high"),
                        [(name, t[name]["n"], t[name]["mean"], t[name]["ci95_low"], t[name]["ci95_high"]) for name in ("stop_latency", "response_gap")]))
    return "\n".join(parts)


def _naturalness_section(rep: "Report") -> str:
    nat = rep.naturalness
    if nat is None:
        return "<p>Predictor skipped: no naturalness score.</p>"
    shown = {**nat, "checkpoint": shown_path(nat["checkpoint"])} if nat.get("checkpoint") else nat
    parts = [_folded("Every naturalness figure", _kv_table(shown, skip=("units", "worst_units")))]
    rows = [(rank, u["time"], u["type"], u["speaker"], f"{u['window'][0]:.2f}-{u['window'][1]:.2f}", u["unit_nll"])
            for rank, u in enumerate(nat["worst_units"], start=1)]
    parts.append("<h3>Worst boundary units (shaded in the timeline)</h3>"
                 + _table(("rank", "boundary time (s)", "boundary", "speaker", "window (s)", "unit NLL"), rows))
    return "\n".join(parts)


def _statistics_section(rep: "Report") -> str:
    return _folded(f"Every statistic ({len(rep.statistics)}; the main ones are in All figures)", _kv_table(rep.statistics))


def _backchannel_section(rep: "Report") -> str:
    bc = rep.backchannel_timing
    rows = [("backchannels", bc["n_backchannels"]), ("mean rate per minute", bc["mean_rate_per_minute"]),
            ("share of segments in the band", bc["in_band_share"]), ("band (per minute)", f"{bc['band'][0]:g}-{bc['band'][1]:g}"),
            ("spacing violations (< 1 s apart)", bc["spacing"]["n_violations"]), ("user backchannels", bc.get("user_n_backchannels"))]
    return _table(("system backchannels (SWOZ)", "value"), rows)


def _references_section(rep: "Report") -> str:
    refs = reference_values()
    systems = list(refs["systems"])
    rows = [[e["label"], f"{e['table']}"] + [e["values"].get(s, "") for s in systems] for e in refs["values"]]
    return (f"<p class=\"ref\">{html.escape(refs['description'])} Source: {html.escape(refs['source'])}.</p>"
            + _folded(f"The {len(rows)} reference values", _table(["figure", "table"] + [refs["systems"][s] for s in systems], rows)))


def _turn_end_judge_section(rep: "Report") -> str:
    te = rep.turn_end_judge
    rows = []
    for metric, entry in te["metrics"].items():
        for decision, s in entry["decisions"].items():
            same = _get_nested(te.get("judge_same_instances"), metric, "decisions", decision, "agreement")
            rows.append((f"({metric}) {entry['title']}", s["description"], s["n_instances"], s["agreement"], s["ci95_low"], s["ci95_high"], same))
    parts = [f"<p>{html.escape(te['rule'])}</p>",
             _table(("metric", "decision taken", "instances", f"{te['name']} agreement", "95% CI low", "95% CI high",
                     "TurnTakingJudge agreement, same instances"), rows)]
    inst = [(i["time"], f"({i['metric']})", i["decision"], i["p_complete"], i["label"], i["agrees"], i.get("judge_label", ""))
            for i in te["instances"][:MAX_INSTANCE_ROWS]]
    parts.append(f"<details><summary>All {te['n_instances']} pause decisions</summary>"
                 + _table(("time (s)", "metric", "decision taken", "P(complete)", f"{te['name']} label", "agrees", "judge label"), inst) + "</details>")
    return "\n".join(parts)


def _get_nested(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _transcript_section(rep: "Report") -> str:
    tr = rep.transcript
    wer = tr.get("wer") or {}
    rows = []
    for channel, role in enumerate(tr["channels"]):
        w = wer.get(role) or {}
        rows.append((f"{role} (channel {channel})", tr["n_words"][channel], tr["n_windows"][channel], tr["dropped_words"][channel],
                     w.get("wer"), w.get("wer_verbatim"), w.get("n_reference_words")))
    parts = [f"<p>Recogniser: {html.escape(tr['model'])}; WER reference: {html.escape(str(tr['reference_source']))}.</p>",
             _table(("channel", "words", "30 s windows", "dropped (far from speech)", "WER", "WER verbatim", "reference words"), rows)]
    for channel, role in enumerate(tr["channels"]):
        parts.append(f"<details><summary>{html.escape(role)}'s words</summary><p>{html.escape(tr['texts'][channel])}</p></details>")
    return "\n".join(parts)


def _models_section(rep: "Report") -> str:
    return models_html(getattr(rep, "models", None))


def _verdict_section(rep: "Report") -> str:
    rows, _ = report_verdict(rep)
    if not rows:
        return "<p>This report has no headline figures.</p>"
    gaps = rep.headline.get("response_gaps_s") or []
    png = base64.b64encode(gaps_png(gaps, bool(rep.conversation.get("has_words")))).decode("ascii")
    return (verdict_html(rows) + "\n<h3>The system's response gaps beside people's</h3>\n"
            f'<img class="gaps" alt="response gaps against the human distribution" src="data:image/png;base64,{png}">')


def render_html(rep: "Report") -> str:
    """The full page as a string: the verdict first, then the pictures, every figure, the notes."""
    conv = rep.conversation
    source = conv.get("audio") or f"user {conv.get('user_audio')}, system {conv.get('system_audio')}"
    _, models_note = report_verdict(rep)
    about = "" if models_note is None else f'<div class="note">{html.escape(models_note)}</div>'
    # the model warnings are in the one note above; the other notes close the page
    notes = [n for n in rep.notes if not (models_note and n.startswith("WARNING:"))]
    sections = [
        ("Verdict", _verdict_section(rep) + about),
        ("Timeline", timeline_svg(rep)),
        ("All figures", _summary_section(rep)),
        ("Turn-taking agreement (judge vs decisions taken)", _agreement_section(rep)),
        ("Naturalness", _naturalness_section(rep)),
        ("Full-duplex timing", _timing_section(rep)),
        ("Backchannel timing", _backchannel_section(rep)),
        ("Turn-taking statistics", _statistics_section(rep)),
        ("Reference values", _references_section(rep)),
        ("Models (checkpoints, training data, measured quality)", _models_section(rep)),
        ("Notes", "".join(f"<p>{html.escape(n)}</p>" for n in notes) or "<p>None.</p>"),
    ]
    if getattr(rep, "turn_end_judge", None) is not None:
        sections.insert(4, (f"Turn-end agreement: {rep.turn_end_judge['name']} beside the judge (metrics a and d)", _turn_end_judge_section(rep)))
    if getattr(rep, "transcript", None) is not None:
        sections.insert(-3, ("Recognised words (--transcribe)", _transcript_section(rep)))
    body = "\n".join(f"<h2>{html.escape(title)}</h2>\n{content}" for title, content in sections)
    title = f"turneval report: {conv['id']}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n<p>{html.escape(source)} &middot; {conv['duration_s']:.1f} s &middot; "
        f"system on channel {conv['system_channel']}, user on channel {conv['user_channel']} &middot; speech from "
        f"{html.escape(str(conv.get('segments_source')))}</p>\n{body}\n</body></html>\n"
    )


__all__ = ["render_html", "timeline_png", "timeline_svg"]
