"""`turneval fd-bench`: score FD-Bench run logs with the benchmark's rules and scripted round times.

    turneval fd-bench data/Moshi-output/                    # every run log (*.txt) in the folder
    turneval fd-bench data/VITA-1.5-output/easy.txt --ground-truth openai/data_gen/output_all.jsonl
"""
from __future__ import annotations

import argparse
import sys

from turneval.benchmark_runs._common import ResultWriteError
from turneval.benchmark_runs.fd_bench import evaluate_fd_bench_run
from turneval.cli import UserError


_EPILOG = """\
layout (FD-Bench's own):
  data/<MODEL>-output/<dataset>.txt   run log, one line per conversation:
      conversation_N.wav || tokens || text || [{'start': s, 'end': e}, ...] || [{'start': s, 'end': e}, ...]
      field 4: the scripted user rounds, field 5: the system's speech segments (16 kHz sample indices)
  openai/data_gen/output_all.jsonl    scripted rounds, line N = conversation_N.wav:
      {'round-1': {'user': ..., 'interruption': 'Topic Shift'}, 'round-2': {...}, ...}
      round 1 is the First Inquiry; round k takes the interruption type that round k-1 announces

figures (FD-Bench's benchmarking.py, analyze_VAD_interruption_new2 + analyze_VAD_marks; see docs/fd_bench.md):
  SRR   replies to ordinary rounds / rounds               SIR   yielded interruptions / interruptions
  SRIR  replies after a yielded interruption / yielded    EIR   system starts > 0.5 s before the user ends / rounds
  NIR   short system segments ending >= 2.5 s before the next round / gaps (can exceed 100 %)
  FSED, ERT, EIT, IRD  medians (ms) of reply delays, early-reply leads, early-interrupt leads, yield delays
  per-category counts (all / int-suc / res-suc) for the five interruption types
  WER and C-PPL are not computed (Whisper-X, Llama 3)

examples:
  turneval fd-bench data/Moshi-output/ --out results/moshi          # Moshi: first segment (greeting) dropped
  turneval fd-bench run.txt --ground-truth output_all.jsonl --model-name MyModel --preamble keep
  turneval fd-bench data/Freeze-omni-output/ --skip-missing --json freeze.json --quiet
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fd-bench",
        aliases=["fdbench"],  # the earlier name, too close to Full-Duplex-Bench's (cli.RENAMED says the new one on stderr)
        help="score FD-Bench run logs (SRR, SIR, SRIR, EIR, NIR, FSED, ERT, EIT, IRD) with the scripted round times",
        description="Evaluate FD-Bench run logs exactly as the benchmark's benchmarking.py does, from the scripted user "
        "round times and the system's speech segments the logs hold, with each round's scripted type (first inquiry, "
        "then the announced interruption). Writes fdbench.json (schema: turneval/data/fdbench.schema.json) and "
        "fdbench.md (a results row per run log in the paper's shape, the per-category counts, every conversation) "
        "into --out, and prints the tables.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("log_dir", metavar="LOG_DIR", help="FD-Bench's data/<MODEL>-output/ folder, or one run log file")
    parser.add_argument("--ground-truth", metavar="JSONL", default=None,
                        help="the scripted rounds, FD-Bench's openai/data_gen/output_all.jsonl "
                        "(default: found in LOG_DIR or up to three folders above it)")
    parser.add_argument("--model-name", default=None, help="row label (default: MODEL of a <MODEL>-output folder)")
    parser.add_argument("--preamble", choices=("auto", "drop", "keep"), default="auto",
                        help="drop each conversation's first system segment (Moshi's greeting): auto drops it when the "
                        "model name is Moshi, as FD-Bench does (default auto)")
    parser.add_argument("--out", metavar="DIR", default=None, help="write fdbench.json and fdbench.md into DIR")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the JSON to FILE")
    parser.add_argument("--skip-missing", action="store_true",
                        help="skip conversations without matching scripted rounds (listed) instead of stopping")
    parser.add_argument("--no-conversations", action="store_true", help="print the summary tables only")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def run(args: argparse.Namespace) -> int:
    result = evaluate_fd_bench_run(
        args.log_dir,
        ground_truth=args.ground_truth,
        model_name=args.model_name,
        preamble=args.preamble,
        skip_missing=args.skip_missing,
        show_progress=not args.quiet and sys.stderr.isatty(),
    )
    print(result.to_markdown(per_conversation=not args.no_conversations))
    try:
        written = result.write(args.out, args.json)
    except ResultWriteError as err:
        raise UserError(str(err)) from None
    if written:
        print("wrote " + ", ".join(written))
    return 0
