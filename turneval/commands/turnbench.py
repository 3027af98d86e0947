"""`turneval turnbench`: the judge's causal per-frame scores in TurnBench's submission format, and its scorer.

    turneval turnbench export CONVERSATIONS/ --out SUBMISSION/     # manifest.json + traces/<task_id>.npz
    turneval turnbench score SUBMISSION/ --annotations CONVERSATIONS/
"""
from __future__ import annotations

import argparse
import json
import math

from turneval.cli import UserError


_EPILOG = """\
layout (TurnBench's):
  CONVERSATIONS/<task_id>/speaker_1_audio.wav, speaker_2_audio.wav   (or two-channel files, channel 0 = speaker 1)
  CONVERSATIONS/<task_id>/speaker_{1,2}_annotation_{a,b,c}.srt       annotations, one event a subtitle, its label the text
  SUBMISSION/manifest.json, SUBMISSION/traces/<task_id>.npz            eot_score_speaker_1/2, interruption_score_speaker_1/2

figures (see docs/turnbench.md):
  EOT recall and median latency at the lowest threshold that fires in at most 10 % of holds
  interruption recall and false positives (per minute) at --interruption-threshold
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "turnbench",
        help="write the judge's per-frame end-of-turn and interruption scores in TurnBench's format, or score a submission",
        description="TurnBench's view of the judge: `export` writes the judge's causal per-frame scores (25 Hz) for a folder "
        "of two-channel conversations in TurnBench's unified submission format; `score` scores any such submission "
        "against per-speaker SRT annotations.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser("export", help="the judge's scores for every conversation of a folder")
    export.add_argument("folder", metavar="CONVERSATIONS", help="a folder of <task_id>/speaker_{1,2}_audio.wav, or of two-channel files")
    export.add_argument("--out", metavar="DIR", required=True, help="the submission folder to write (manifest.json, traces/)")
    export.add_argument("--judge", metavar="PATH|HUB_ID", default=None, help="TurnTakingJudge checkpoint (default: the bundled one)")
    export.add_argument("--split", default="unknown", help="the split named in manifest.json (dev, test)")
    export.add_argument("--quiet", action="store_true", help="no progress bar")
    score = actions.add_parser("score", help="score a submission against SRT annotations")
    score.add_argument("submission", metavar="SUBMISSION", help="a folder with manifest.json and traces/<task_id>.npz")
    score.add_argument("--annotations", metavar="DIR", required=True, help="a folder of <task_id>/speaker_{1,2}_annotation_*.srt")
    score.add_argument("--interruption-threshold", type=float, default=0.5, help="the interruption scores' threshold (default 0.5)")
    score.add_argument("--json", metavar="FILE", default=None, help="also write the figures (and the EOT threshold sweep) to FILE")
    return parser


def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{100 * value:.1f} %"


def run(args: argparse.Namespace) -> int:
    from turneval.benchmark_runs.turnbench import TurnBenchError, export, score

    try:
        if args.action == "export":
            manifest = export(args.folder, args.out, judge=args.judge, split=args.split, progress=not args.quiet)
            print(f"wrote {len(manifest['task_ids'])} conversations' traces at {manifest['frame_rate_hz']:g} Hz into {args.out}")
            return 0
        result = score(args.submission, args.annotations, interruption_threshold=args.interruption_threshold)
    except TurnBenchError as err:
        raise UserError(str(err)) from None
    threshold = "none keeps it" if result.eot_threshold is None else f"threshold {result.eot_threshold:.2f}"
    latency = "n/a" if not math.isfinite(result.eot_median_latency_ms) else f"{result.eot_median_latency_ms:.0f} ms"
    print(f"{result.tasks} conversations, {result.minutes:.1f} min")
    print(f"EOT: recall {_pct(result.eot_recall)} of {result.eot_events} turn ends, median latency {latency}, "
          f"false positives {_pct(result.eot_false_positive_rate)} of {result.holds} holds ({threshold}, false-positive rate <= 10 %)")
    print(f"interruption: recall {_pct(result.interruption_recall)} of {result.interruption_events}, "
          f"{result.interruption_false_positives} false positives ({result.interruption_false_positives_per_min:.2f} a minute) "
          f"at threshold {result.interruption_threshold:g}")
    if args.json:
        from pathlib import Path

        from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

        atomic_write_text(Path(args.json), json.dumps(to_jsonable(result.to_dict()), indent=2) + "\n")
    return 0
