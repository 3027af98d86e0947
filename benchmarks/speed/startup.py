"""How fast the command line answers: `import turneval`, `turneval --help`, `turneval stats`.

Each is a fresh Python process (as a user's shell starts one), timed wall-clock, best of a few
runs so a busy machine's hiccup does not count. `python -c pass` in the same run is the floor
every command pays. Targets (structure issue): `import turneval` and `turneval --help` <= 0.5 s,
`turneval stats` on a one-minute annotation file <= 1 s: the package loads torch and
transformers only where a model runs.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import figure  # noqa: E402


REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "human_like.json"


def _best_wall_s(argv: list[str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, cwd=REPO, timeout=120)
        best = min(best, time.perf_counter() - start)
    return best


def run(quick: bool) -> list[dict]:
    repeats = 3 if quick else 7
    cli = [sys.executable, "-m", "turneval.cli"]
    floor = _best_wall_s([sys.executable, "-c", "pass"], repeats)
    cases = [
        ("import turneval", [sys.executable, "-c", "import turneval"], 0.5),
        ("turneval --help", [*cli, "--help"], 0.5),
        ("turneval stats (1-min annotation file)", [*cli, "stats", str(EXAMPLE)], 1.0),
    ]
    figures = [figure("startup: python -c pass", floor, "wall s", note=f"best of {repeats}: the floor of every command")]
    for name, argv, target in cases:
        wall = _best_wall_s(argv, repeats)
        figures.append(
            figure(f"startup: {name}", wall, "wall s", reference="startup: python -c pass", ratio=wall / floor,
                   note=f"best of {repeats}; target <= {target} s", headline=name == "turneval --help")
        )
    return figures
