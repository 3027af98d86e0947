"""`turneval full-duplex-bench`: score a Full-Duplex-Bench run folder with the benchmark's own rules.

    turneval full-duplex-bench runs/moshi/                         # every task folder below it
    turneval full-duplex-bench runs/moshi/v1.0/candor_turn_taking  # one task folder
    turneval full-duplex-bench runs/moshi/ --out results/ --gt-distribution icc_gt_distribution.json
"""
from __future__ import annotations

import argparse
import sys

from turneval.benchmark_runs._common import ResultWriteError
from turneval.benchmark_runs.full_duplex_bench import evaluate_full_duplex_bench_run, whisper_words
from turneval.cli import UserError


_EPILOG = """\
layout (the benchmark's own; one folder per sample inside each task folder):
  candor_pause_handling/<id>/        pause.json        output.json   (+ input.wav, output.wav)
  candor_turn_taking/<id>/           turn_taking.json  output.json
  synthetic_user_interruption/<id>/  interrupt.json    output.json   [rating.json]
  icc_backchannel/<id>/              output.wav        output.json   (+ icc_gt_distribution.json in the run folder)
  v1.5 <scenario>/<id>/              metadata.json  input.wav  output.wav  [input.json output.json
                                     content_tag.json latency_intervals.json]
  output.json / input.json are the benchmark's ASR word timestamps
  ({"text", "chunks": [{"text", "timestamp": [start_s, end_s]}]}) written by its get_transcript/asr.py.

figures (the benchmark's definitions; see docs/full_duplex_bench.md):
  TOR       take-over: 0 when the system says nothing, or at most 3 words spanning < 1 s; else 1
  latency   first output word start - user turn end (turn_taking.json[0].timestamp[0]) or
            interruption end (interrupt.json[0].timestamp[1]); negatives count as 0; TOR=1 samples only
  backchannel  TOR, backchannels per second, JS distance of their 0.2 s timing histogram to the humans'
  v1.5      per-sample overlap check of input.json / output.json words, behaviour tag counts and ratios
            (content_tag.json), stop and response latency (get_timing: Silero VAD, merged pauses)

examples:
  turneval full-duplex-bench runs/moshi/ --out results/moshi --model-name Moshi
  turneval full-duplex-bench runs/x/icc_backchannel --gt-distribution Full-Duplex-Bench/v1_v1.5/evaluation/icc_gt_distribution.json
  turneval full-duplex-bench runs/x/ --skip-missing --json x.json --quiet
  turneval full-duplex-bench runs/x/ --transcribe          # no ASR files yet: words by turneval's offline Whisper
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "full-duplex-bench",
        aliases=["fdb"],  # the earlier name, too close to FD-Bench's (cli.RENAMED says the new one on stderr)
        help="score a Full-Duplex-Bench run folder (v1.0 tasks, v1.5 overlap) in the benchmark's own layout",
        description="Evaluate a Full-Duplex-Bench run folder exactly as the benchmark's evaluation scripts do: "
        "pause handling, backchannel, smooth turn-taking and user interruption (v1.0), and the v1.5 overlap "
        "scenarios. Word-based rules read the benchmark's ASR word files (output.json); nothing is transcribed "
        "here. Writes fdb.json (schema: turneval/data/fdb.schema.json) and fdb.md (a results table per task in the "
        "paper's shape, then every sample) into --out, and prints the tables.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run folder (task folders below it) or one task folder")
    parser.add_argument("--task", default=None,
                        choices=("pause_handling", "backchannel", "smooth_turn_taking", "user_interruption", "overlap"),
                        help="force the task of the folder(s) (default: told from the metadata files and folder names)")
    parser.add_argument("--gt-distribution", metavar="JSON", default=None,
                        help="the benchmark's icc_gt_distribution.json for the backchannel JSD "
                        "(default: looked up in the task folder and the two folders above it)")
    parser.add_argument("--model-name", default=None, help="row label of the tables (default: the run folder's name)")
    parser.add_argument("--out", metavar="DIR", default=None, help="write fdb.json and fdb.md into DIR")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the JSON to FILE")
    parser.add_argument("--skip-missing", action="store_true",
                        help="score the complete samples and list the others, instead of stopping at the first gap")
    parser.add_argument("--no-samples", action="store_true", help="print the summary tables only (files keep every sample)")
    parser.add_argument("--transcribe", action="store_true",
                        help="where a sample has no output.json (input.json for v1.5), transcribe its audio with "
                        "turneval's offline Whisper (tiny.en) instead of stopping; user interruption is cut at the "
                        "interruption end, as the benchmark's asr.py does. The benchmark's own files are always preferred")
    parser.add_argument("--asr-model", metavar="PATH", default=None,
                        help="with --transcribe: a local HF Whisper checkpoint folder or a CTranslate2 model.bin (default tiny.en)")
    parser.add_argument("--device", default="cpu", help="with --transcribe: cpu or cuda (default cpu)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.asr_model and not args.transcribe:
        raise UserError("--asr-model goes with --transcribe")
    show = not args.quiet and sys.stderr.isatty()
    transcribe = whisper_words(args.asr_model, device=args.device, show_progress=show) if args.transcribe else None
    result = evaluate_full_duplex_bench_run(
        args.run_dir,
        task=args.task,
        gt_distribution=args.gt_distribution,
        skip_missing=args.skip_missing,
        model_name=args.model_name,
        show_progress=show,
        transcribe=transcribe,
    )
    print(result.to_markdown(per_sample=not args.no_samples))
    try:
        written = result.write(args.out, args.json)
    except ResultWriteError as err:
        raise UserError(str(err)) from None
    if written:
        print("wrote " + ", ".join(written))
    return 0
