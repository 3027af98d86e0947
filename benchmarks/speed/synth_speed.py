"""Speed of the synthetic corpus generator: real-time factor and where the time goes.

    python benchmarks/speed/synth_speed.py [--minutes 2] [--n 5] [--style human]

Generates ``n`` conversations of ``minutes`` each and reports CPU seconds per minute of
conversation (and the real-time factor, CPU time / audio time) for the whole generator, for
eSpeak itself (including the per-utterance library reload that keeps the output
reproducible) and for writing wav + JSON. ``run(quick)`` gives the same figures to
``benchmarks/run_all.py``.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from turneval.dataset_scripts.synthetic import espeak, generate_dialogue, write_dialogue


def measure(n: int, minutes: float, style: str = "human") -> dict[str, float]:
    """CPU seconds of ``n`` conversations of ``minutes``: the generator, eSpeak inside it, and
    writing wav + JSON; plus the number of eSpeak calls and the minutes generated."""
    spent = {"espeak": 0.0, "calls": 0}
    original = espeak.synthesize

    def timed(tokens, voice):
        start = time.process_time()
        try:
            return original(tokens, voice)
        finally:
            spent["espeak"] += time.process_time() - start
            spent["calls"] += 1

    import turneval.dataset_scripts.synthetic.generator as generator

    espeak.synthesize = generator.synthesize = timed
    try:
        generate_dialogue(0, duration_s=10)  # warm-up: imports, first library load
        spent.update(espeak=0.0, calls=0)
        total = write = 0.0
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(n):
                start = time.process_time()
                dialogue = generate_dialogue(seed, duration_s=minutes * 60, style=style)
                total += time.process_time() - start
                start = time.process_time()
                write_dialogue(dialogue, tmp)
                write += time.process_time() - start
    finally:
        espeak.synthesize = generator.synthesize = original
    return {"generate": total, "espeak": spent["espeak"], "write": write, "calls": spent["calls"], "minutes": n * minutes}


def run(quick: bool) -> list[dict]:
    """Figures for benchmarks/run_all.py: CPU s per minute of conversation, by part."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness
    from _harness import figure

    n, minutes = (2, 0.5) if quick else (5, 2.0)
    got = measure(n, minutes)
    size = f"{n} x {minutes:g} min human-style conversations, {got['calls']} utterances"
    return [
        figure("synthesis generate_dialogue: CPU s per audio minute", got["generate"] / got["minutes"], "CPU s/min",
               note=f"{size}; RTF {got['generate'] / (got['minutes'] * 60):.4f}"),
        figure("synthesis eSpeak part: CPU s per audio minute", got["espeak"] / got["minutes"], "CPU s/min",
               reference="synthesis generate_dialogue: CPU s per audio minute", note="ratio = share of the generator's time"),
        figure("synthesis write wav+json: CPU s per audio minute", got["write"] / got["minutes"], "CPU s/min"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="length of each conversation")
    parser.add_argument("--n", type=int, default=5, help="number of conversations")
    parser.add_argument("--style", default="human", choices=("human", "cascaded", "eager_duplex"))
    args = parser.parse_args()

    got = measure(args.n, args.minutes, args.style)
    minutes = got["minutes"]
    print(f"{args.n} x {args.minutes:g} min '{args.style}' conversations ({got['calls']} utterances)")
    for name, seconds in (("generate_dialogue", got["generate"]), ("  of which eSpeak", got["espeak"]), ("write wav+json", got["write"])):
        print(f"{name:20s} {seconds / minutes:7.3f} CPU s per minute   RTF {seconds / (minutes * 60):.4f}")


if __name__ == "__main__":
    main()
