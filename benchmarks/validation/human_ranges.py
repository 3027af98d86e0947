"""Human ranges of the report's headline figures, measured on real conversations.

The figures of ``tools/build_human_ranges.py`` (which writes the shipped
``turneval/data/human_ranges.json``; see its docstring for the data and the method), as a
benchmark: each range's median with its 10th-90th percentile in the note. Nothing is written.
"""
from __future__ import annotations

import sys
from pathlib import Path


TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import build_human_ranges  # noqa: E402


def run(quick: bool) -> list[dict]:
    """run_all.py entry: Switchboard's segments and, outside ``quick``, the judge on the real calls."""
    return build_human_ranges.run(quick)


if __name__ == "__main__":
    for fig in run("--quick" in sys.argv):
        print(f"{fig['name']}: {fig['value']:.3g} ({fig.get('note', '')})")
