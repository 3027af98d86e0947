"""`turneval perf`: this project's own speed, memory and quality runs, side by side with peers
(not a benchmark of other systems: those are `turneval full-duplex-bench` and `turneval fd-bench`).

    turneval perf --quick                        # CI-sized inputs, a few minutes on 2 cores
    turneval perf --docs docs/performance.md     # full sizes; regenerate the performance page
    turneval perf --list

`turneval bench`, its earlier name, still works and says the new one on stderr.

The benchmarks live in the ``benchmarks/`` folder of a source checkout (they are not part of
the installed package); this command is ``python benchmarks/run_all.py`` with the same options.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from turneval.cli import UserError


BENCHMARKS_ENV = "TURNEVAL_BENCHMARKS"


def benchmarks_dir() -> Path | None:
    """The benchmarks folder: ``$TURNEVAL_BENCHMARKS``, else ``benchmarks/`` of the source
    checkout turneval is installed from (editable install), else ``./benchmarks``."""
    override = os.environ.get(BENCHMARKS_ENV)
    candidates = [Path(override)] if override else []
    candidates += [Path(__file__).resolve().parents[2] / "benchmarks", Path.cwd() / "benchmarks"]
    for folder in candidates:
        if (folder / "run_all.py").is_file():
            return folder
    return None


def _run_all_module(folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("turneval_benchmarks_run_all", folder / "run_all.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "perf",
        aliases=["bench"],  # the earlier name (cli.RENAMED says the new one on stderr)
        help="speed, memory and quality benchmarks (judge, predictor, VAD, labels, smart-turn peer)",
        description="Run every benchmarks/speed/*.py and benchmarks/validation/*.py in its own process and collect their figures into one JSON file "
        "and a markdown table (machine, versions, date), each stated as a ratio to a reference measured in "
        "the same run where one exists. Needs a source checkout (the benchmarks/ folder).",
    )
    folder = benchmarks_dir()
    if folder is not None:
        _run_all_module(folder).build_parser(parser)
    else:
        parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def run(args: argparse.Namespace) -> int:
    folder = benchmarks_dir()
    if folder is None:
        raise UserError(
            "the benchmarks/ folder was not found: run from a turneval source checkout "
            f"(git clone; pip install -e .) or set ${BENCHMARKS_ENV} to its benchmarks folder"
        )
    module = _run_all_module(folder)
    try:
        return module.run_from_args(args)
    except module.BenchmarkError as err:
        raise UserError(str(err)) from None
