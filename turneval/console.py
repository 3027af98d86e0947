"""What the command line prints besides its results: warnings as one plain line, --quiet, --verbose.

Python shows a warning as ``/path/to/module.py:123: NarrowBandWarning: ...``, which reads like a
crash. On the command line a warning is ``turneval report: warning: ...`` instead. The progress
bars and log lines of transformers ("Loading weights") and huggingface_hub, and the warnings of
other libraries, are hidden unless ``--verbose``; ``--quiet`` silences turneval's warnings too
(the report's notes still hold them).
"""
from __future__ import annotations

import os
import sys
import warnings
from contextlib import contextmanager
from typing import Iterator


def silence_libraries() -> None:
    """Progress bars and info logs of transformers / huggingface_hub off (before or after their import)."""
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if "transformers" in sys.modules:  # already imported: switch its bars off directly
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def silence_worker() -> None:
    """A batch worker (a process or a Ray actor) says nothing: the libraries' bars and log lines off
    and every warning ignored (those of a report are in its notes)."""
    silence_libraries()
    warnings.simplefilter("ignore")


def _ours(category: type) -> bool:
    return category.__module__.split(".")[0] == "turneval"


@contextmanager
def cli_warnings(command: str, quiet: bool = False, verbose: bool = False) -> Iterator[None]:
    """Within the block, turneval's warnings print as ``turneval COMMAND: warning: message`` (once
    each), other libraries' only with ``verbose`` (their progress bars too); ``quiet`` silences
    every warning."""
    if not verbose:
        silence_libraries()
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        else:
            # a new filter also resets the once-per-location registry: every run shows its warnings
            warnings.filterwarnings("default", category=UserWarning)

            def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
                if not verbose and not _ours(category):
                    return
                print(f"turneval {command}: warning: {message}", file=sys.stderr)

            warnings.showwarning = show
        yield


__all__ = ["cli_warnings", "silence_libraries"]
