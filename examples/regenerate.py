"""Regenerate the bundled example conversations in this folder.

    python examples/regenerate.py            # writes examples/<name>.wav and <name>.json

Each example is one call of generate_dialogue with a fixed seed, so the files come out the
same on every machine (see examples/README.md).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from turneval.dataset_scripts.synthetic import generate_dialogue, write_dialogue


DURATION_S = 60.0
EXAMPLES = {
    # name: (style, seed, system channel)
    "human_like": ("human", 5, None),
    "cascaded_like": ("cascaded", 0, 1),
    "eager_duplex_like": ("eager_duplex", 3, 1),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent), help="output folder (default: examples/)")
    args = parser.parse_args(argv)
    for name, (style, seed, system) in EXAMPLES.items():
        dialogue = generate_dialogue(seed, duration_s=DURATION_S, style=style, system_speaker=system, dialogue_id=name)
        audio_path, json_path = write_dialogue(dialogue, args.out)
        print(f"{name}: {audio_path} {json_path} {dialogue.metadata['counts']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
