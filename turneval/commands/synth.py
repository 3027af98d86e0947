"""`turneval synth`: generate a synthetic dyadic corpus spoken by eSpeak NG.

    turneval synth OUT_DIR --n 10 --seed 0 --duration 120 --style human
    turneval synth OUT_DIR --n 50 --seed 1 --style human --style cascaded --style eager_duplex --snr 20
"""
from __future__ import annotations

import argparse

from turneval.cli import UserError
from turneval.dataset_scripts.synthetic import CorpusRecipe, generate_corpus
from turneval.dataset_scripts.synthetic.corpus import AUDIO_FORMATS
from turneval.dataset_scripts.synthetic.timing import STYLES
from turneval.input_checks import check_output_dir


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "synth",
        help="generate synthetic two-speaker conversations (stereo wav + JSON ground truth)",
        description="Generate synthetic dyadic conversations with eSpeak NG voices and human-like (or "
        "system-like) turn-taking timing. Writes <id>.wav, <id>.json and manifest.csv into OUT_DIR.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", help="output folder (created if needed)")
    parser.add_argument("--n", type=int, default=10, help="number of conversations (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--duration", type=float, default=120.0, help="seconds per conversation (default 120)")
    parser.add_argument(
        "--style", action="append", choices=STYLES, default=None,
        help="dialogue style; repeat to mix styles, one drawn per conversation (default human)",
    )
    parser.add_argument("--system-channel", type=int, choices=(0, 1), default=None,
                        help="system channel for the system styles (default: drawn per conversation)")
    parser.add_argument("--snr", type=float, default=None, help="add background noise at this SNR in dB")
    parser.add_argument("--format", choices=tuple(AUDIO_FORMATS), default="wav", help="audio format (default wav)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise UserError(f"--n must be at least 1, got {args.n}")
    if not args.duration >= 5:  # also refuses nan
        raise UserError(f"--duration must be at least 5 seconds, got {args.duration}")

    check_output_dir(args.out_dir, "OUT_DIR")
    manifest = generate_corpus(
        args.out_dir,
        args.n,
        args.seed,
        recipe=CorpusRecipe(
            duration_s=args.duration,
            styles=tuple(args.style or ("human",)),
            system_speaker=args.system_channel,
            snr_db=args.snr,
        ),
        audio_format=args.format,
        progress=not args.quiet,
    )
    print(f"wrote {args.n} conversation(s) and {manifest}")
    return 0
