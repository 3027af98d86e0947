"""The range of naturalness m on real human conversations, per predictor: what a report's m is read against.

The figures of ``tools/build_naturalness_range.py`` (which writes the shipped
``turneval/data/naturalness_human_range.json``; see its docstring for the sources), as a
benchmark: per predictor, the pooled median with its 10th-90th percentile range. Nothing is
written. Quick mode: the SpokenWOZ audio calls and 4 Switchboard calls; without the SpokenWOZ
folder it skips with one NaN figure that says why.
"""
from __future__ import annotations

import sys
from pathlib import Path


TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import build_naturalness_range  # noqa: E402


def run(quick: bool) -> list[dict]:
    """run_all.py entry: the default data folders."""
    return build_naturalness_range.run(quick)


if __name__ == "__main__":
    for fig in run("--quick" in sys.argv):
        print(f"{fig['name']}: {fig['value']:.3g} ({fig.get('note', '')})")
