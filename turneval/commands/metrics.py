"""`turneval metrics`: turneval's six `evaluate` modules.

    turneval metrics list                  # each module's name and file
    turneval metrics install               # evaluate.load("turn_naturalness") by bare name, in any directory

`install` writes each module (with the turneval code it carries) into evaluate's modules cache
as the canonical module ``evaluate-metric/<name>``, where evaluate looks when the Hub has no
module of that name; it writes under ``$HF_MODULES_CACHE`` (default ``$HF_HOME/modules``), so run
it again after changing either, or after upgrading turneval. Why a command: docs/release.md.
"""
from __future__ import annotations

import argparse

from turneval.cli import UserError


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "metrics",
        help="turneval's evaluate modules: list them, or install them so evaluate.load finds them by name",
        description="turneval's six evaluate modules. 'install' puts them into evaluate's modules cache, so that "
        "evaluate.load(\"turn_naturalness\") (and the five other names) works in any directory, offline too.",
    )
    parser.add_argument("action", choices=("list", "install"), help="list the modules, or install them for evaluate.load by name")
    parser.add_argument("--modules-cache", default=None, metavar="DIR",
                        help="evaluate's modules cache to write (default: $HF_MODULES_CACHE, else $HF_HOME/modules)")
    return parser


def run(args: argparse.Namespace) -> int:
    from turneval.evaluate_modules import MODULE_NEEDS, EvaluateModulesError, install_bare_names, module_script

    if args.action == "list":
        for name in MODULE_NEEDS:
            print(f"{name:<24} {module_script(name)}")
        return 0
    try:
        installed = install_bare_names(args.modules_cache)
    except (EvaluateModulesError, ImportError, OSError) as err:
        raise UserError(f"cannot install the evaluate modules: {err}") from None
    for name, path in installed.items():
        print(f'evaluate.load("{name}")  ->  {path.parent}')
    return 0
