"""One module per `turneval` subcommand (see turneval/cli.py)."""
