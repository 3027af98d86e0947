"""Speed of the synthetic corpus generator: real-time factor and where the time goes.

    python benchmarks/synth_speed.py [--minutes 2] [--n 5] [--style human]

Generates ``n`` conversations of ``minutes`` each and reports CPU seconds per minute of
conversation (and the real-time factor, CPU time / audio time) for the whole generator, for
eSpeak itself (including the per-utterance library reload that keeps the output
reproducible) and for writing wav + JSON.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from turneval.dataset_scripts.synthetic import espeak, generate_dialogue, write_dialogue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="length of each conversation")
    parser.add_argument("--n", type=int, default=5, help="number of conversations")
    parser.add_argument("--style", default="human", choices=("human", "cascaded", "eager_duplex"))
    args = parser.parse_args()

    spent = {"espeak": 0.0, "calls": 0}
    original = espeak.synthesize

    def timed(tokens, voice):
        start = time.process_time()
        try:
            return original(tokens, voice)
        finally:
            spent["espeak"] += time.process_time() - start
            spent["calls"] += 1

    espeak.synthesize = timed
    import turneval.dataset_scripts.synthetic.generator as generator

    generator.synthesize = timed
    generate_dialogue(0, duration_s=10)  # warm-up: imports, first library load
    spent.update(espeak=0.0, calls=0)

    total = write = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.n):
            start = time.process_time()
            dialogue = generate_dialogue(seed, duration_s=args.minutes * 60, style=args.style)
            total += time.process_time() - start
            start = time.process_time()
            write_dialogue(dialogue, tmp)
            write += time.process_time() - start
    minutes = args.n * args.minutes
    print(f"{args.n} x {args.minutes:g} min '{args.style}' conversations ({spent['calls']} utterances)")
    for name, seconds in (("generate_dialogue", total), ("  of which eSpeak", spent["espeak"]), ("write wav+json", write)):
        print(f"{name:20s} {seconds / minutes:7.3f} CPU s per minute   RTF {seconds / (minutes * 60):.4f}")


if __name__ == "__main__":
    main()
