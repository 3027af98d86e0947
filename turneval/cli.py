"""The `turneval` command line.

Each subcommand lives in its own module under turneval/commands/ with two functions:
``add_parser(subparsers)`` and ``run(args) -> int``. Listing a module here is all it takes
to add a subcommand.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from turneval import __version__
from turneval.console import cli_warnings
from turneval.dataset_scripts.dialogue import DialogueError


COMMAND_MODULES: list[str] = [
    "turneval.commands.vad",
    "turneval.commands.synth",
    "turneval.commands.stats",
    "turneval.commands.dataset",
    "turneval.commands.bench",
    "turneval.commands.report",
    # the report over a corpus, in parallel, into one fleet report (issue 43)
    "turneval.commands.batch",
    "turneval.commands.score",
    "turneval.commands.compare",
    "turneval.commands.check",
    # benchmarks people already use, in their own layout (issue 15)
    "turneval.commands.full_duplex_bench",
    "turneval.commands.fd_bench",
    # a live agent driven by scripted callers (issue 33)
    "turneval.commands.probe",
    # the Hugging Face release (issue 45)
    "turneval.commands.release",
    # evaluate.load("turn_naturalness") by bare name (issue 51)
    "turneval.commands.metrics",
]


class UserError(Exception):
    """An error the user can fix (bad input file, wrong option); printed without a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="turneval", description="Turn-taking evaluation for spoken dialogue systems.")
    parser.add_argument("--version", action="version", version=f"turneval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return 2

    try:
        with cli_warnings(args.command, quiet=bool(getattr(args, "quiet", False))):
            return int(args._run(args) or 0)
    except (UserError, DialogueError, FileNotFoundError) as err:
        print(f"turneval {args.command}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # `python -m turneval.cli`: run the imported module's main, whose UserError is the class the
    # commands raise (this file, run as __main__, defines a second UserError that nothing raises)
    from turneval.cli import main as _main

    sys.exit(_main())
