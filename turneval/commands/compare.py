"""`turneval compare`: two systems' reports side by side, with the differences and their CIs.

    turneval compare reports/system_a/ reports/system_b/ --out comparison.json

Each folder holds the ``report.json`` files of one system (found recursively; one per
conversation). For every headline figure of the report summary (statistics, timing,
agreement, naturalness) the command gives each system's mean over its conversations with a
95 % CI (``mean +- 1.96 sd / sqrt(n)``, :func:`turneval.metrics.intervals.mean_interval`), and
the difference B - A with the CI ``+- 1.96 sqrt(sd_A^2 / n_A + sd_B^2 / n_B)`` (independent
samples, normal approximation; :func:`turneval.metrics.mean_difference.mean_difference`, which
``turneval batch --by`` also uses). With one conversation per system there is no spread to
estimate: the intervals have zero width and say nothing about significance.

Naturalness m gets more: a percentile-bootstrap interval on B - A that resamples the boundary
units m is made of (and the conversations, when there are several;
:func:`turneval.metrics.naturalness_difference.bootstrap_m_difference`), so one conversation per
system is enough, and a plain sentence that says whether the difference is beyond that noise and
how it compares with the spread of m between real human conversations scored by the same
predictor (:mod:`turneval.naturalness_range`). Reports scored by different predictors are not
compared on m: its scale belongs to the predictor.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Sequence

from turneval.cli import UserError
from turneval.dataset_scripts.files import atomic_write_text, read_json, to_jsonable
from turneval.metrics.mean_difference import mean_difference


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "compare",
        help="compare two systems' report.json folders: means, differences and 95%% CIs",
        description="Compare two systems from the report.json files that `turneval report` wrote for each: per "
        "figure, each system's mean over its conversations with a 95 percent CI, and the difference B - A with its CI.",
    )
    parser.add_argument("system_a", metavar="A", help="folder of system A's report.json files (or one report.json)")
    parser.add_argument("system_b", metavar="B", help="folder of system B's report.json files (or one report.json)")
    parser.add_argument("--out", metavar="FILE.json", default=None, help="write the comparison here")
    return parser


def load_reports(location: str | Path) -> list[dict[str, Any]]:
    """Every report.json under a folder (or the one file given), each checked for a summary."""
    location = Path(location)
    if location.is_dir():
        files = sorted(location.rglob("report.json"))
        if not files:
            raise UserError(f"{location}: no report.json files in this folder (write them with `turneval report --out`)")
    elif location.is_file():
        files = [location]
    else:
        raise UserError(f"{location}: no such folder or file")
    reports = []
    for file in files:
        data = read_json(file, error=UserError)
        if not isinstance(data, dict) or not isinstance(data.get("summary"), list):
            raise UserError(f"{file}: not a turneval report.json (no 'summary' list)")
        data["_file"] = str(file)
        reports.append(data)
    return reports


def _figures(reports: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """key -> {"label", "unit", "values": [...]} over the reports (missing values left out)."""
    figures: dict[str, dict[str, Any]] = {}
    for rep in reports:
        for row in rep["summary"]:
            entry = figures.setdefault(row["key"], {"label": row["label"], "unit": row["unit"], "reference": row.get("reference"), "values": []})
            if isinstance(row.get("value"), (int, float)) and math.isfinite(row["value"]):
                entry["values"].append(float(row["value"]))
    return figures


def compare_reports(reports_a: Sequence[dict[str, Any]], reports_b: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per figure: each system's mean with its CI, and the difference B - A with its CI."""
    fig_a, fig_b = _figures(reports_a), _figures(reports_b)
    rows = []
    for key in list(fig_a) + [k for k in fig_b if k not in fig_a]:
        a, b = fig_a.get(key, {"values": []}), fig_b.get(key, {"values": []})
        meta = fig_a.get(key) or fig_b[key]
        rows.append({"key": key, "label": meta["label"], "unit": meta["unit"], "reference": meta.get("reference"),
                     **mean_difference(a["values"], b["values"])})
    return to_jsonable({
        "system_a": {"n_reports": len(reports_a), "files": [r["_file"] for r in reports_a]},
        "system_b": {"n_reports": len(reports_b), "files": [r["_file"] for r in reports_b]},
        "figures": rows,
        "naturalness": compare_naturalness(reports_a, reports_b),
    })


def _naturalness_units(reports: Sequence[dict[str, Any]]) -> tuple[list[list[float]], set[str]]:
    """Per report with a defined m, its boundary units' NLLs; and the predictors that scored them."""
    units, checkpoints = [], set()
    for rep in reports:
        nat = rep.get("naturalness") or {}
        nll = [u["unit_nll"] for u in nat.get("units") or [] if isinstance(u.get("unit_nll"), (int, float)) and math.isfinite(u["unit_nll"])]
        if nll:
            units.append(nll)
            checkpoints.add(str(nat.get("checkpoint")))
    return units, checkpoints


def compare_naturalness(reports_a: Sequence[dict[str, Any]], reports_b: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """m of B minus m of A with its bootstrap interval over boundary units, the human spread of m
    for the predictor, and the sentence that says what it means; None when a side has no m."""
    from turneval.metrics.naturalness_difference import bootstrap_m_difference, difference_sentence
    from turneval.naturalness_range import checkpoint_key, human_m_range

    (units_a, ckpt_a), (units_b, ckpt_b) = _naturalness_units(reports_a), _naturalness_units(reports_b)
    if not units_a or not units_b:
        return None
    names = sorted({checkpoint_key(c) for c in ckpt_a | ckpt_b})
    if len(names) > 1:
        return {"predictors": names, "difference": None,
                "sentence": f"Naturalness m: not compared: the reports were scored by different predictors ({', '.join(names)}), and m's "
                            "scale belongs to its predictor; score both systems with one --predictor."}
    d = bootstrap_m_difference(units_a, units_b)
    human = human_m_range(names[0])
    sd, n = (human.get("sd"), (human.get("range") or {}).get("n")) if human else (None, None)
    sentence = difference_sentence(d, sd, n)
    if human is None:
        sentence += f" No range of m on real human conversations is stored for {names[0]}."
    return {"predictors": names, "difference": d.to_dict(), "human_sd": sd, "human_range": None if human is None else human.get("range"),
            "sentence": sentence}


def format_comparison(result: dict[str, Any]) -> str:
    def fmt(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3g}"

    rows = result["figures"]
    width = max(len(r["label"]) for r in rows) if rows else 10
    lines = [f"A: {result['system_a']['n_reports']} report(s), B: {result['system_b']['n_reports']} report(s)",
             f"{'figure':{width}}  {'A mean':>9}  {'B mean':>9}  {'B - A':>9}  {'95% CI of B - A':>22}"]
    for r in rows:
        d = r["difference"]
        ci = "n/a" if d["ci95_low"] is None else f"[{fmt(d['ci95_low'])}, {fmt(d['ci95_high'])}]"
        lines.append(f"{r['label']:{width}}  {fmt(r['a']['mean']):>9}  {fmt(r['b']['mean']):>9}  {fmt(d['mean']):>9}  {ci:>22}")
    if result.get("naturalness"):
        lines.append(result["naturalness"]["sentence"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.out:
        from turneval.input_checks import check_output_file

        check_output_file(args.out)
    result = compare_reports(load_reports(args.system_a), load_reports(args.system_b))
    print(format_comparison(result))
    if args.out:
        atomic_write_text(args.out, json.dumps(result, indent=1, allow_nan=False))
        print(f"wrote {args.out}")
    return 0
