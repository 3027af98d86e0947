"""The `turneval` command line as a whole: every subcommand is listed and has working help."""
import subprocess
import sys

import pytest

from turneval import cli


def _command_name(module: str) -> str:
    """The name a command module registers (``full_duplex_bench`` registers ``fdb``)."""
    import argparse
    import importlib

    subparsers = argparse.ArgumentParser(prog="turneval").add_subparsers()
    return importlib.import_module(module).add_parser(subparsers).prog.split()[-1]


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for module in cli.COMMAND_MODULES:
        assert _command_name(module) in out


@pytest.mark.parametrize("module", cli.COMMAND_MODULES)
def test_each_subcommand_help(module, capsys):
    name = _command_name(module)
    with pytest.raises(SystemExit) as exit_info:
        cli.main([name, "--help"])
    assert exit_info.value.code == 0
    assert "usage: turneval" in capsys.readouterr().out


def test_no_command_prints_help_and_fails():
    result = subprocess.run([sys.executable, "-m", "turneval.cli"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "COMMAND" in result.stdout


def test_version():
    result = subprocess.run([sys.executable, "-m", "turneval.cli", "--version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.startswith("turneval ")
