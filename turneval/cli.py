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
from turneval.interrupts import exit_code, handling_signals, stop_at_once_on_next_signal


COMMAND_MODULES: list[str] = [
    "turneval.commands.vad",
    "turneval.commands.synth",
    "turneval.commands.stats",
    "turneval.commands.dataset",
    # this project's own speed, memory and quality runs (was `bench`)
    "turneval.commands.perf",
    "turneval.commands.report",
    # the report over a corpus, in parallel, into one fleet report (issue 43)
    "turneval.commands.batch",
    "turneval.commands.score",
    "turneval.commands.compare",
    "turneval.commands.check",
    # benchmarks people already use, in their own layout (issue 15)
    "turneval.commands.full_duplex_bench",
    "turneval.commands.fd_bench",
    # TurnBench's per-frame submission format and scorer (issue 50)
    "turneval.commands.turnbench",
    # a live agent driven by scripted callers (issue 33)
    "turneval.commands.probe",
    # the Hugging Face release (issue 45)
    "turneval.commands.release",
    # evaluate.load("turn_naturalness") by bare name (issue 51)
    "turneval.commands.metrics",
]


class UserError(Exception):
    """An error the user can fix (bad input file, wrong option); printed without a traceback."""


RENAMED: dict[str, str] = {"bench": "perf", "fdb": "full-duplex-bench", "fdbench": "fd-bench"}
"""Earlier command name -> its name now (one word, one meaning: ``perf`` is this project's runs,
``full-duplex-bench`` and ``fd-bench`` the two benchmarks'). The old names stay as aliases."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="turneval", description="Turn-taking evaluation for spoken dialogue systems.")
    parser.add_argument("--version", action="version", version=f"turneval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
        if "--verbose" not in sub._option_string_actions:  # noqa: SLF001 (argparse has no public lookup)
            sub.add_argument("--verbose", action="store_true",
                             help="also show the libraries' progress bars, log lines and warnings (hidden by default)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; Ctrl-C or SIGTERM at any point of it ends with one line and exit 130 / 143."""
    try:
        with handling_signals():
            return _run_command(argv)
    except KeyboardInterrupt as err:  # a second signal landing as the handlers are restored: exit as the first
        return exit_code(err)


def _run_command(argv: list[str] | None) -> int:
    command = "turneval"
    try:
        parser = build_parser()  # imports every command: long enough for a Ctrl-C to land in
        args = parser.parse_args(argv)
        if not hasattr(args, "_run"):
            parser.print_help()
            return 2
        if args.command in RENAMED:
            print(f"turneval {args.command} is now called turneval {RENAMED[args.command]}; the old name still works",
                  file=sys.stderr)
            args.command = RENAMED[args.command]
        command = f"turneval {args.command}"
        with cli_warnings(args.command, quiet=bool(getattr(args, "quiet", False)), verbose=bool(getattr(args, "verbose", False))):
            return int(args._run(args) or 0)
    except (UserError, DialogueError, FileNotFoundError) as err:
        print(f"{command}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:  # a command that keeps partial work says more itself; outputs are atomic
        stop_at_once_on_next_signal()
        print(f"{command}: interrupted; nothing half-written is left: run the same command again", file=sys.stderr)
        return exit_code(err)


if __name__ == "__main__":
    # `python -m turneval.cli`: run the imported module's main, whose UserError is the class the
    # commands raise (this file, run as __main__, defines a second UserError that nothing raises)
    from turneval.cli import main as _main

    sys.exit(_main())
