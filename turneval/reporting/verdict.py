"""The verdict at the top of every report: the headline figures beside the human ranges.

Each headline figure (:data:`turneval.headline_figures.FIGURES`) is put beside its range on real
human conversations (``turneval/data/human_ranges.json``, measured by
``tools/build_human_ranges.py`` with the report's own code) and marked when it falls outside.
The terminal, the HTML page and the Space all show these rows; the HTML page adds the system's
response gaps drawn over the human distribution. The model caveats become one short note.
"""
from __future__ import annotations

import html
import io
import json
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from turneval.headline_figures import FIGURES
from turneval.model_provenance import provenance_warnings

from .number_format import format_number


if TYPE_CHECKING:  # pragma: no cover - typing only
    from .result import Report

HUMAN_RANGES_FILE = "data/human_ranges.json"

VERDICT_FIGURES: dict[str, tuple[str, str, float]] = {name: (f.label, f.unit, f.factor) for name, f in FIGURES.items()}
"""name -> (label for people, unit shown, factor from the stored value to the shown one), from the
registry :data:`turneval.headline_figures.FIGURES`."""

MARKS = {"within": "within", "above": "ABOVE", "below": "BELOW", "no range": "no range", "not measured": "not measured"}
"""The plain mark beside each figure (capitals when outside the human range, so it is seen)."""


@lru_cache(maxsize=1)
def _ranges_text() -> str:
    return resources.files("turneval").joinpath(HUMAN_RANGES_FILE).read_text(encoding="utf-8")


def human_ranges() -> dict[str, Any]:
    """The measured human ranges (``turneval/data/human_ranges.json``), a fresh copy."""
    return json.loads(_ranges_text())


def human_range(name: str, has_words: bool = False, ranges: Mapping[str, Any] | None = None,
                predictor: str | None = None) -> dict[str, Any] | None:
    """``{"low", "high", "median", "n", "source"}`` of one figure, or None when none is measured.

    With words (a transcript) the range measured from words is used where there is one, since
    backchannels and IPUs are then found from the words, as the range's were. m has no fixed
    scale, so its range is the one measured with the report's own ``predictor``
    (:func:`turneval.naturalness_range.human_m_range`) unless the ranges file gives one.
    """
    entry = ((ranges or human_ranges())["figures"]).get(name) or {}
    chosen = (entry.get("range_with_words") if has_words else None) or entry.get("range")
    if not chosen and name == "naturalness_m" and predictor:
        from turneval.naturalness_range import human_m_range

        chosen = (human_m_range(predictor) or {}).get("range")
    if not chosen or chosen.get("low") is None or chosen.get("high") is None:
        return None
    return dict(chosen)


def mark(value: float | None, rng: Mapping[str, Any] | None) -> str:
    """``within``, ``above``, ``below`` the range; ``no range``; ``not measured``."""
    if value is None:
        return "not measured"
    if rng is None:
        return "no range"
    if value > rng["high"]:
        return "above"
    if value < rng["low"]:
        return "below"
    return "within"


def verdict_rows(figures: Mapping[str, Any], has_words: bool = False, predictor: str | None = None) -> list[dict[str, Any]]:
    """One row per headline figure: name, label, unit, value and range as shown, the mark
    (``predictor``: the checkpoint that scored m, whose range m is read against)."""
    ranges = human_ranges()
    rows = []
    for name, (label, unit, factor) in VERDICT_FIGURES.items():
        value = figures.get(name)
        rng = human_range(FIGURES[name].range_key, has_words, ranges, predictor)
        shown = None if rng is None else {k: (rng[k] * factor if isinstance(rng.get(k), (int, float)) else rng.get(k))
                                          for k in ("low", "high", "median")}
        rows.append({
            "name": name, "label": label, "unit": unit,
            "value": None if value is None else value * factor,
            "human_low": None if shown is None else shown["low"],
            "human_high": None if shown is None else shown["high"],
            "human_median": None if shown is None else shown["median"],
            "human_source": None if rng is None else rng.get("source"),
            "mark": mark(value, rng),
        })
    return rows


def verdict_line(rows: Sequence[Mapping[str, Any]]) -> str:
    """One sentence: how many figures fall outside the human range, and which."""
    ranged = [r for r in rows if r["mark"] in ("within", "above", "below")]
    outside = [r for r in ranged if r["mark"] != "within"]
    if not ranged:
        return "Verdict: no figure could be set beside a human range."
    if not outside:
        return f"Verdict: all {len(ranged)} figures with a human range fall inside it."
    which = "; ".join(f"{r['label'].split(' (')[0].lower()} {r['mark']}" for r in outside)
    return f"Verdict: {len(outside)} of {len(ranged)} figures outside the human range: {which}."


def shown_value(value: Any, unit: str) -> str:
    """A verdict figure as printed: 3 significant digits and its unit (m: 4 digits), ``n/a`` when not measured."""
    if value is None:
        return "n/a"
    # m is a log-likelihood near -3 to -7: three digits would round its differences away
    return f"{format_number(value, 3 if unit else 4)} {unit}".strip()


def shown_range(row: Mapping[str, Any]) -> str:
    """A row's human range as printed (``0.16-0.47 s``, ``-8 to -5.6``), ``-`` when there is none."""
    if row["human_low"] is None:
        return "-"
    low, high = format_number(row["human_low"], 2), format_number(row["human_high"], 2)
    joint = " to " if row["human_low"] < 0 else "-"  # "-8 to -5.6", not "-8--5.6"
    return f"{low}{joint}{high} {row['unit']}".strip()


def range_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the ranges come from, in a sentence or two (terminal, HTML and Space alike)."""
    notes = []
    own_notes = ("naturalness_m", "judge_agreement_a")  # measured on other data: each says where below
    source = next((r["human_source"] for r in rows if r["human_source"] and r["name"] not in own_notes), None)
    if source:
        notes.append("Human range: the 10th-90th percentile over real conversations, each speaker in turn as the system "
                      f"({source}; turneval/data/human_ranges.json).")
    judge = next((r for r in rows if r["name"] == "judge_agreement_a" and r["human_source"]), None)
    if judge:
        notes.append(f"The judge's range: {judge['human_source']}.")
    m = next((r for r in rows if r["name"] == "naturalness_m"), None)
    if m and m["human_source"]:
        notes.append(f"m's range was measured with the same predictor ({m['human_source']}; turneval/data/naturalness_human_range.json).")
    elif m and m["mark"] == "no range":
        notes.append("m has no human range for this predictor: compare m only between systems scored by the same predictor.")
    return notes


def format_verdict(rows: Sequence[Mapping[str, Any]]) -> str:
    """The verdict for the terminal: the sentence, then figure, value, human range and mark."""
    width = max(len(r["label"]) for r in rows)
    lines = [verdict_line(rows), f"{'':{width}}  {'this conversation':>17}  {'human range':>15}"]
    for r in rows:
        lines.append(f"{r['label']:{width}}  {shown_value(r['value'], r['unit']):>17}  {shown_range(r):>15}  {MARKS[r['mark']]}")
    lines += range_notes(rows)
    return "\n".join(lines)


def about_models(models: Mapping[str, Any] | None) -> str | None:
    """The model caveats as one short note (None when there is none to make)."""
    warnings = [w.removeprefix("WARNING: ") for w in provenance_warnings(models)]
    if not warnings:
        return None
    return ("About the models: " + " ".join(warnings)
            + " How far each is validated on real speech: docs/validation.md and the model cards.")


# ---------------------------------------------------------------------------------------
# HTML and the gap plot
# ---------------------------------------------------------------------------------------


def gaps_png(gaps: Sequence[float], has_words: bool = False, dpi: int = 90) -> bytes:
    """The system's response gaps over the human distribution (Switchboard, pooled), as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    human = human_ranges()["response_gaps"]["words" if has_words else "segments"]
    edges = np.asarray(human["bin_edges_s"], dtype=float)
    counts = np.asarray(human["counts"], dtype=float)
    width = np.diff(edges)
    fig, ax = plt.subplots(figsize=(7.5, 2.6), layout="constrained")
    ax.bar(edges[:-1], counts / max(counts.sum(), 1) / width, width=width, align="edge", color="#b0bec5",
           label=f"people (Switchboard, {human['n']:,} gaps)")
    if len(gaps):
        ours, _ = np.histogram(np.clip(gaps, 0, edges[-1]), bins=edges)
        ax.step(edges, np.append(ours, ours[-1]) / len(gaps) / np.append(width, width[-1]), where="post", color="#ef6c00",
                lw=2, label=f"this system ({len(gaps)} gaps)")
        ax.axvline(float(np.median(gaps)), color="#ef6c00", ls="--", lw=1)
    if human.get("quantiles_s"):
        ax.axvline(human["quantiles_s"]["p50"], color="#455a64", ls="--", lw=1)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_xlabel(f"silence before the system answers (s); the last bin holds all over {edges[-1]:g} s; dashed: medians")
    ax.set_ylabel("share per s")
    ax.legend(fontsize=8, frameon=False)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


VERDICT_CSS = (".verdict td.mark-within{color:#2e7d32}.verdict td.mark-above,.verdict td.mark-below{color:#c62828;font-weight:bold}"
               ".verdict td.gate{color:#777;font-family:monospace;font-size:.85em}.lead{font-size:1.1em;font-weight:600}"
               "img.gaps{max-width:720px;width:100%;border:1px solid #ddd}")


def verdict_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The verdict as an HTML fragment: the sentence and the table (the gate name of each figure beside it)."""
    out = [f'<p class="lead">{html.escape(verdict_line(rows).removeprefix("Verdict: "))}</p>', '<table class="verdict">',
           "<tr><th>figure</th><th>this conversation</th><th>human range</th><th></th><th>gate name</th></tr>"]
    for r in rows:
        out.append(f"<tr><td>{html.escape(r['label'])}</td><td class=\"num\">{html.escape(shown_value(r['value'], r['unit']))}</td>"
                   f"<td class=\"num\">{html.escape(shown_range(r))}</td><td class=\"mark-{r['mark'].replace(' ', '-')}\">"
                   f"{html.escape(MARKS[r['mark']])}</td><td class=\"gate\">{r['name']}</td></tr>")
    out.append("</table>")
    notes = " ".join(html.escape(n) for n in range_notes(rows))
    out.append(f'<p class="ref">{notes} Gate any figure in CI: '
               "<code>turneval report ... --require 'response_latency_s&lt;=0.8'</code>.</p>")
    return "\n".join(out)


def predictor_of(rep: "Report") -> str | None:
    """The checkpoint that scored the report's m (a folder or a name), for m's human range."""
    models = rep.models or {}
    predictor = models.get("predictor") or {}
    return predictor.get("path") or predictor.get("name") or (rep.settings or {}).get("predictor")


def shown_figures(rep: "Report") -> dict[str, Any]:
    """What the first screen of a report shows, as text: the verdict sentence and, per headline
    figure, its value, human range and mark as printed (docs/report_first_screen.json records
    this beside the README's screenshot, and a test compares it with a fresh report)."""
    rows, _ = report_verdict(rep)
    return {
        "verdict": verdict_line(rows) if rows else None,
        "figures": [{"name": r["name"], "label": r["label"], "value": shown_value(r["value"], r["unit"]),
                     "human_range": shown_range(r), "mark": MARKS[r["mark"]]} for r in rows],
    }


def report_verdict(rep: "Report") -> tuple[list[dict[str, Any]], str | None]:
    """The verdict rows and the about-the-models note of a report (no rows without headline figures)."""
    figures = (rep.headline or {}).get("figures") or {}
    rows = verdict_rows(figures, bool(rep.conversation.get("has_words")), predictor_of(rep)) if figures else []
    return rows, about_models(rep.models)
