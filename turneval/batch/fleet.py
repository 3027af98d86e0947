"""The fleet report of a batch: one table of every call and the distribution of each headline figure.

Written into the batch folder:

* ``calls.parquet`` and ``calls.csv``: one row per call (reported or failed): ``id``,
  ``status``, ``input``, ``duration_s``, every headline figure
  (:data:`turneval.headline_figures.FIGURES`, stored units: rates are fractions), the
  metadata columns of the inputs, ``report`` (the call's report.html) and ``reason`` (why it
  failed).
* ``batch.json`` and ``batch.html``: per headline figure over the reported calls the median,
  p10 and p90, each with a 95 % percentile-bootstrap interval over calls, beside the human range
  the single report uses, the share of calls outside that range and the worst calls (linked
  to their own report.html); with ``--by COLUMN`` each value of the column side by side, with
  the difference of each slice's mean from the first slice's and its interval, as
  ``turneval compare`` computes it (:func:`turneval.metrics.mean_difference.mean_difference`).

Everything is computed from the ``call.json`` each call's folder holds, so the table and
figures of a resumed run equal those of an uninterrupted one.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from turneval.dataset_scripts.files import atomic_write_bytes, atomic_write_text, to_jsonable
from turneval.headline_figures import FIGURES, HeadlineFigure
from turneval.metrics.mean_difference import mean_difference

from .calls import call_dir
from .discover import Call


N_BOOTSTRAP = 2000
"""Bootstrap resamples of the calls for the intervals of the median, p10 and p90."""
BOOTSTRAP_SEED = 0
N_WORST = 5
"""Calls listed as the worst of each figure."""
QUANTILES = {"p10": 0.1, "median": 0.5, "p90": 0.9}


# --------------------------------------------------------------------------- the table
@dataclass
class FleetRow:
    """One call of the fleet table: what calls.csv shows (:meth:`columns`) and, per headline
    figure, the verdict's mark and the human range that the fleet statistics read."""

    id: str
    status: str
    """"reported", "failed" or "not run"."""
    input: str
    duration_s: float | None = None
    figures: dict[str, float | None] = field(default_factory=dict)
    """Every headline figure by name (stored units), None where not measured."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The input's metadata columns (a manifest's extra columns)."""
    report: str | None = None
    """The call's report.html (else its report.json), relative to the batch folder."""
    reason: str | None = None
    marks: dict[str, str | None] = field(default_factory=dict)
    """Per figure: "within", "above", "below" its human range, or None."""
    human_ranges: dict[str, list[float] | None] = field(default_factory=dict)

    def columns(self) -> dict[str, Any]:
        """The row as calls.csv holds it: id, status, input, duration_s, the figures, the metadata
        columns that do not clash with those, report, reason."""
        out: dict[str, Any] = {"id": self.id, "status": self.status, "input": self.input, "duration_s": self.duration_s,
                               **self.figures}
        out.update({k: v for k, v in self.metadata.items() if k not in out})
        out["report"], out["reason"] = self.report, self.reason
        return out

    def get(self, column: str) -> Any:
        """The value of one calls.csv column (None when the row has no such column)."""
        return self.columns().get(column)

    @property
    def reported(self) -> bool:
        return self.status == "reported"


def _call_row(call: Call, out_dir: str | Path, errors: Mapping[str, str]) -> FleetRow:
    folder = call_dir(out_dir, call.id)
    summary = folder / "call.json"
    row = FleetRow(id=call.id, status="reported", input=call.source, metadata=dict(call.metadata), reason=errors.get(call.id))
    if not summary.is_file():
        row.status = "failed" if call.id in errors else "not run"
        row.figures = dict.fromkeys(FIGURES)
        return row
    data = json.loads(summary.read_text(encoding="utf-8"))
    row.duration_s, row.figures = data["duration_s"], dict(data["figures"])
    row.marks, row.human_ranges = data["marks"], data["human_ranges"]
    row.report = f"calls/{call.id}/report.html" if (folder / "report.html").is_file() else f"calls/{call.id}/report.json"
    return row


def call_rows(calls: Sequence[Call], out_dir: str | Path, errors: Mapping[str, str]) -> list[FleetRow]:
    """One row per call (see the module docstring), in call-id order."""
    return [_call_row(call, out_dir, errors) for call in sorted(calls, key=lambda c: c.id)]


def _columns(rows: Sequence[FleetRow]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row.columns() if k not in columns]
    tail = ["report", "reason"]
    return [c for c in columns if c not in tail] + tail


def write_table(rows: Sequence[FleetRow], out_dir: str | Path) -> dict[str, Path]:
    """calls.parquet and calls.csv (each atomically)."""
    import io

    import pandas as pd

    columns = _columns(rows)
    cells = (row.columns() for row in rows)  # once per row: columns() builds the row's dict
    frame = pd.DataFrame([{c: row.get(c) for c in columns} for row in cells], columns=columns)
    for name in FIGURES:
        frame[name] = frame[name].astype("float64")
    for column in columns:  # metadata of mixed types: text, so that parquet takes it
        if frame[column].dtype == object and column not in ("id", "status", "input", "report", "reason"):
            kinds = {type(v) for v in frame[column] if v is not None}
            if len(kinds) > 1:
                frame[column] = frame[column].map(lambda v: None if v is None else str(v))
    out = Path(out_dir)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    atomic_write_bytes(out / "calls.parquet", buffer.getvalue())
    atomic_write_text(out / "calls.csv", frame.to_csv(index=False, float_format="%.6g"))
    return {"calls.parquet": out / "calls.parquet", "calls.csv": out / "calls.csv"}


# --------------------------------------------------------------------------- statistics
def quantiles_with_intervals(values: Sequence[float], n_resamples: int = N_BOOTSTRAP, seed: int = BOOTSTRAP_SEED) -> dict[str, Any]:
    """p10, median and p90 of ``values``, each with a 95 % percentile-bootstrap interval over the
    values (the calls); intervals are None with fewer than two calls."""
    v = np.asarray(values, dtype=float)
    probs = list(QUANTILES.values())
    point = np.quantile(v, probs)
    out: dict[str, Any] = {}
    if v.size >= 2:
        rng = np.random.default_rng(seed)
        draws = np.quantile(v[rng.integers(0, v.size, size=(n_resamples, v.size))], probs, axis=1)
        low, high = np.percentile(draws, [2.5, 97.5], axis=1)
    for i, name in enumerate(QUANTILES):
        out[name] = float(point[i])
        out[f"{name}_ci95"] = [float(low[i]), float(high[i])] if v.size >= 2 else None
    return out


def badness(figure: HeadlineFigure, value: float, rng: Sequence[float] | None) -> float:
    """How bad a call is on one figure, for ranking the worst (larger is worse)."""
    if figure.better == "lower":
        return value
    if figure.better == "higher":
        return -value
    if rng is None:
        return 0.0
    return max(rng[0] - value, value - rng[1], 0.0)


def _common_range(rows: Sequence[FleetRow], name: str) -> list[float] | None:
    ranges = [tuple(r.human_ranges[name]) for r in rows if r.human_ranges.get(name)]
    if not ranges:
        return None
    return list(max(set(ranges), key=ranges.count))


def figure_distribution(figure: HeadlineFigure, rows: Sequence[FleetRow]) -> dict[str, Any]:
    """The distribution of one figure over the reported calls (see the module docstring)."""
    name = figure.name
    measured = [r for r in rows if r.reported and r.figures.get(name) is not None]
    entry: dict[str, Any] = {"name": name, "label": figure.label, "unit": figure.unit, "factor": figure.factor,
                             "better": figure.better, "n": len(measured),
                             "n_not_measured": sum(1 for r in rows if r.reported) - len(measured)}
    values = [float(r.figures[name]) for r in measured]
    entry["mean"] = float(np.mean(values)) if values else None
    entry.update(quantiles_with_intervals(values) if values else {k: None for q in QUANTILES for k in (q, f"{q}_ci95")})
    entry["human_range"] = _common_range(measured, name)
    marked = [r.marks[name] for r in measured if r.marks.get(name) in ("within", "above", "below")]
    entry["n_with_range"] = len(marked)
    entry["share_outside"] = sum(m != "within" for m in marked) / len(marked) if marked else None
    ranked = sorted(measured, key=lambda r: (-badness(figure, r.figures[name], r.human_ranges.get(name)), r.id))
    if figure.better == "inside":
        ranked = [r for r in ranked if badness(figure, r.figures[name], r.human_ranges.get(name)) > 0]
    entry["worst"] = [{"id": r.id, "value": r.figures[name], "report": r.report} for r in ranked[:N_WORST]]
    return entry


def slices(rows: Sequence[FleetRow], column: str) -> dict[str, Any]:
    """The reported calls split by ``column``: per value each figure's n, mean, median, p10, p90,
    and each later value's difference from the first (mean, 95 % CI, as ``turneval compare``)."""
    by_level: dict[str, list[FleetRow]] = {}
    for r in rows:
        value = r.get(column) if r.reported else None
        if value is not None:
            by_level.setdefault(str(value), []).append(r)
    levels = sorted(by_level)
    out: dict[str, Any] = {"column": column, "levels": [], "differences": []}
    if not levels:
        return out
    values = {level: {name: [float(r.figures[name]) for r in by_level[level] if r.figures.get(name) is not None]
                      for name in FIGURES} for level in levels}
    for level in levels:
        figs = {}
        for name, vals in values[level].items():
            figs[name] = {"n": len(vals), "mean": float(np.mean(vals)) if vals else None,
                          **({q: float(np.quantile(vals, p)) for q, p in QUANTILES.items()} if vals else dict.fromkeys(QUANTILES))}
        out["levels"].append({"value": level, "n_calls": len(by_level[level]), "figures": figs})
    reference = levels[0]
    out["reference"] = reference
    for level in levels[1:]:
        for name in FIGURES:
            d = mean_difference(values[reference][name], values[level][name])["difference"]
            out["differences"].append({"level": level, "figure": name, **d})
    return out


# --------------------------------------------------------------------------- batch.json / .html
def fleet_summary(rows: Sequence[FleetRow], by: Sequence[str] = (), errors: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """batch.json's content (before the gates)."""
    reported = [r for r in rows if r.reported]
    for column in by:
        if not any(column in r.columns() for r in rows):
            known = sorted({k for r in rows for k in r.columns()} - set(FIGURES) - {"status", "report", "reason"})
            raise ValueError(f"--by {column}: no call has this column; the columns are {', '.join(known)}")
    return to_jsonable({
        "n_calls": len(rows),
        "n_reported": len(reported),
        "n_failed": sum(1 for r in rows if r.status == "failed"),
        "audio_hours": sum(r.duration_s or 0.0 for r in reported) / 3600,
        "figures": [figure_distribution(f, rows) for f in FIGURES.values()],
        "slices": [slices(rows, column) for column in by],
        "errors": list(errors),
        "bootstrap": {"resamples": N_BOOTSTRAP, "seed": BOOTSTRAP_SEED, "over": "calls", "interval": "95 % percentile"},
    })


def _shown(value: Any, figure: Mapping[str, Any], digits: int = 3) -> str:
    from turneval.reporting.number_format import format_number

    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{format_number(value * figure['factor'], digits)} {figure['unit']}".strip()


def _shown_ci(ci: Sequence[float] | None, figure: Mapping[str, Any]) -> str:
    if not ci:
        return ""
    return f" [{_shown(ci[0], figure).removesuffix(figure['unit']).strip()}, {_shown(ci[1], figure)}]"


def format_fleet(summary: Mapping[str, Any]) -> str:
    """The terminal text: counts, then per figure median, p10, p90 (with intervals), human range, share outside."""
    lines = [f"turneval batch: {summary['n_reported']} of {summary['n_calls']} calls reported, {summary['n_failed']} failed, "
             f"{summary['audio_hours']:.2f} h of audio"]
    width = max(len(f["label"].split(" (")[0]) for f in summary["figures"])
    lines.append(f"{'figure':{width}}  {'median [95% CI]':>24}  {'p10':>8}  {'p90':>8}  {'human range':>14}  outside")
    for f in summary["figures"]:
        rng = f["human_range"]
        shown_range = "-" if rng is None else f"{_shown(rng[0], f, 2)} to {_shown(rng[1], f, 2)}"
        outside = "n/a" if f["share_outside"] is None else f"{100 * f['share_outside']:.0f} %"
        lines.append(f"{f['label'].split(' (')[0]:{width}}  {_shown(f['median'], f) + _shown_ci(f['median_ci95'], f):>24}  "
                     f"{_shown(f['p10'], f):>8}  {_shown(f['p90'], f):>8}  {shown_range:>14}  {outside}")
    return "\n".join(lines)


_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}"
        ".ci{color:#777;font-size:.85em}.bad{color:#c62828;font-weight:bold}code{font-size:.9em}")


def render_html(summary: Mapping[str, Any], gates_text: str | None = None) -> str:
    """batch.html: self-contained; the worst calls link to their own report.html."""
    esc = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>turneval batch</title>",
           f"<style>{_CSS}</style></head><body>", "<h1>turneval batch</h1>",
           f"<p>{summary['n_reported']} of {summary['n_calls']} calls reported, {summary['n_failed']} failed, "
           f"{summary['audio_hours']:.2f} hours of audio. Intervals: 95 % percentile bootstrap over calls "
           f"({summary['bootstrap']['resamples']} resamples). Table of every call: <a href='calls.csv'>calls.csv</a> "
           "(<a href='calls.parquet'>parquet</a>).</p>",
           "<table><tr><th>figure</th><th>calls</th><th>median</th><th>p10</th><th>p90</th><th>human range</th>"
           "<th>outside it</th><th>worst calls</th></tr>"]
    for f in summary["figures"]:
        rng = f["human_range"]
        cells = []
        for q in QUANTILES:
            cells.append(f"<td class='num'>{esc(_shown(f[q], f))}<br><span class='ci'>{esc(_shown_ci(f[f'{q}_ci95'], f))}</span></td>")
        worst = ", ".join(f"<a href='{esc(w['report'])}'>{esc(w['id'])}</a> ({esc(_shown(w['value'], f))})" if w["report"]
                          else esc(w["id"]) for w in f["worst"])
        outside = "n/a" if f["share_outside"] is None else f"{100 * f['share_outside']:.0f} % of {f['n_with_range']}"
        out.append(f"<tr><td>{esc(f['label'])}<br><code>{f['name']}</code></td><td class='num'>{f['n']}</td>"
                   f"{cells[1]}{cells[0]}{cells[2]}"
                   f"<td class='num'>{'-' if rng is None else esc(_shown(rng[0], f, 2) + ' to ' + _shown(rng[1], f, 2))}</td>"
                   f"<td class='num'>{esc(outside)}</td><td>{worst}</td></tr>")
    out.append("</table>")
    for sl in summary["slices"]:
        out.append(f"<h2>By {esc(sl['column'])}</h2><table><tr><th>figure</th>"
                   + "".join(f"<th>{esc(lv['value'])} (n={lv['n_calls']})<br>median / mean</th>" for lv in sl["levels"])
                   + "".join(f"<th>{esc(d)} - {esc(sl.get('reference', ''))}<br>mean difference [95% CI]</th>"
                             for d in dict.fromkeys(x["level"] for x in sl["differences"])) + "</tr>")
        for f in summary["figures"]:
            row = f"<tr><td>{esc(f['label'].split(' (')[0])}</td>"
            for lv in sl["levels"]:
                g = lv["figures"][f["name"]]
                row += f"<td class='num'>{esc(_shown(g['median'], f))} / {esc(_shown(g['mean'], f))}</td>"
            for d in (x for x in sl["differences"] if x["figure"] == f["name"]):
                ci = "" if d["ci95_low"] is None else f" [{_shown(d['ci95_low'], f)}, {_shown(d['ci95_high'], f)}]"
                row += f"<td class='num'>{esc(_shown(d['mean'], f))}<span class='ci'>{esc(ci)}</span></td>"
            out.append(row + "</tr>")
        out.append("</table>")
    if gates_text:
        out.append(f"<h2>Requirements</h2><pre>{esc(gates_text)}</pre>")
    if summary["errors"]:
        out.append(f"<h2>Failed calls ({len(summary['errors'])})</h2><table><tr><th>call</th><th>reason</th></tr>")
        out += [f"<tr><td>{esc(e['id'])}</td><td>{esc(e['reason'] or '')}</td></tr>" for e in summary["errors"]]
        out.append("</table><p>Also in <a href='errors.jsonl'>errors.jsonl</a>.</p>")
    out.append("</body></html>")
    return "\n".join(out)


def write_fleet(summary: Mapping[str, Any], out_dir: str | Path, gates_text: str | None = None) -> dict[str, Path]:
    """batch.json and batch.html (each atomically)."""
    out = Path(out_dir)
    atomic_write_text(out / "batch.json", json.dumps(summary, indent=1, allow_nan=False))
    atomic_write_text(out / "batch.html", render_html(summary, gates_text))
    return {"batch.json": out / "batch.json", "batch.html": out / "batch.html"}
