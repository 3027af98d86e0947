"""One registry of the headline figures: the verdict, the single and fleet gates and the fleet table read it."""
from __future__ import annotations

import subprocess
import sys

from turneval.batch.fleet_gates import FLEET_REQUIRE_HELP
from turneval.gates import HEADLINE_FIGURES
from turneval.headline_figures import FIGURES, figure_value
from turneval.reporting.verdict import human_ranges, verdict_rows


def test_every_reader_takes_the_registry():
    assert list(HEADLINE_FIGURES) == list(FIGURES)
    rows = verdict_rows(dict.fromkeys(FIGURES, 0.5))
    assert [r["name"] for r in rows] == list(FIGURES)
    assert [(r["label"], r["unit"], r["value"]) for r in rows] == [(f.label, f.unit, 0.5 * f.factor) for f in FIGURES.values()]
    assert all(name in FLEET_REQUIRE_HELP for name in FIGURES)
    ranges = human_ranges()["figures"]
    assert {f.range_key for f in FIGURES.values()} == set(ranges)
    assert {f.better for f in FIGURES.values()} <= {"lower", "higher", "inside"}


def test_a_figure_is_read_from_report_json_as_the_gates_read_it():
    report = {"headline": {"figures": {"talk_over_rate": 0.25, "yield_rate": None, "cut_off_rate": float("nan")}}}
    assert figure_value(report, "talk_over_rate") == 0.25
    assert figure_value(report, "yield_rate") is None and figure_value(report, "cut_off_rate") is None
    assert figure_value({}, "naturalness_m") is None


def test_the_verdict_no_longer_imports_the_summary():
    # reporting/__init__ imports summary itself: load verdict without the package's __init__
    code = ("import importlib.util, sys; import turneval.headline_figures, turneval.model_provenance; "
            "spec = importlib.util.find_spec('turneval.reporting'); "
            "import types; pkg = types.ModuleType('turneval.reporting'); pkg.__path__ = spec.submodule_search_locations; "
            "sys.modules['turneval.reporting'] = pkg; import turneval.reporting.verdict; "
            "print('turneval.reporting.summary' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
