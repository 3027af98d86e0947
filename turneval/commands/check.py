"""`turneval check`: gate an existing report.json on its headline figures, for CI.

    turneval check reports/call/report.json --require "response_latency_s<=0.8" --require "talk_over_rate<=0.1"

Prints a pass/fail table; exits 0 when every requirement passes and
:data:`turneval.gates.GATE_FAILED_EXIT` when any fails (a figure the report could not measure
fails). Nothing is recomputed: the figures are the ``headline`` section ``turneval report`` wrote.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from turneval.cli import UserError
from turneval.dataset_scripts.files import read_json
from turneval.gates import REQUIRE_HELP, GateError, figures_from_report, requirement_arg, run_gates


EXAMPLES = """examples:
  turneval check out/report.json --require "response_latency_s<=0.8"
  turneval check out/report.json --require "talk_over_rate<=0.1" --require "yield_rate>=0.5"
  turneval check out/                                    a folder: its report.json; no --require: print the figures"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="gate an existing report.json: pass/fail on its headline figures (exit code for CI)",
        description="Check the headline figures of a report.json that `turneval report` wrote against requirements "
        "such as 'response_latency_s<=0.8'; print a pass/fail table and exit non-zero when any fails.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("report", metavar="REPORT.json", help="a report.json, or the folder `turneval report --out` wrote")
    parser.add_argument("--require", metavar="'NAME<=X'", action="append", type=requirement_arg, default=[], help=REQUIRE_HELP)
    return parser


def run(args: argparse.Namespace) -> int:
    path = Path(args.report)
    if path.is_dir():
        path = path / "report.json"
    if not path.is_file():
        raise UserError(f"{path}: no such report.json (write one with `turneval report --out DIR`)")
    try:
        figures = figures_from_report(read_json(path, error=UserError), source=str(path))
    except GateError as err:
        raise UserError(str(err)) from None
    if not args.require:  # nothing to gate: show what could be gated
        for name, value in figures.items():
            print(f"{name:22} {'not measured' if value is None else f'{value:.4g}'}")
        return 0
    table, code = run_gates(args.require, figures)
    print(table)
    return code
