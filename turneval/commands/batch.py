"""`turneval batch`: every `report` over a corpus, in parallel, into one fleet report (docs/batch.md).

    turneval batch calls/ --out fleet/
    turneval batch manifest.csv --out fleet/ --by agent_version --require "p90(response_latency_s)<=1.2"
    turneval batch 'calls/*.wav' --out fleet/ --ray auto

Every option of `turneval report` that says how a conversation is evaluated applies to all
calls. Exit codes: 0 all calls reported and every requirement passed; 3 a requirement failed
(as `report --require`); 4 some calls failed (errors.jsonl says why; the fleet report covers
the rest); 1 nothing could be reported or the command line names nothing usable; 130 / 143
stopped by Ctrl-C / SIGTERM (the finished calls are kept; the same command resumes).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from turneval.cli import UserError
from turneval.commands.report import add_report_options, report_options
from turneval.gates import GATE_FAILED_EXIT, GateError, run_gates
from turneval.input_checks import seconds_limit_or_zero


CALLS_FAILED_EXIT = 4
"""Exit code when some calls could not be reported (the fleet report covers the others)."""
SETTINGS_FILE = "batch_settings.json"

EXAMPLES = """examples:
  turneval batch calls/ --out fleet/                                  every audio file under calls/, every core
  turneval batch 'week42/*.wav' --system-channel 0 --out fleet/       a glob (quoted), the system on channel 0
  turneval batch pairs/ --pair-suffixes _caller,_bot --out fleet/     mono pairs: X_caller.wav + X_bot.wav
  turneval batch manifest.csv --by agent_version --out fleet/         slices by a manifest column, with the difference's CI
  turneval batch data/test.parquet --no-predictor --out fleet/        a parquet data set with audio bytes
  turneval batch calls/ --out fleet/ --require "p90(response_latency_s)<=1.2" --require "share_outside(talk_over_rate)<=0.1"
  turneval batch calls/ --out fleet/ --ray auto                       on the Ray cluster this machine belongs to

The same command again resumes: finished calls are skipped (also after Ctrl-C or SIGTERM, which stop
the workers within seconds). Exit codes: 0 all reported and every requirement passed, 3 a requirement
failed, 4 some calls failed (errors.jsonl), 1 nothing reported, 130 / 143 interrupted (Ctrl-C / SIGTERM)."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from turneval.batch.fleet_gates import FLEET_REQUIRE_HELP, fleet_requirement_arg

    parser = subparsers.add_parser(
        "batch",
        help="run the report over a corpus in parallel (every core, or a Ray cluster) into one fleet report",
        description="Run `turneval report` over every call of a corpus (folders or globs of audio, mono pairs, annotation "
        "JSONs, a manifest CSV/JSONL with metadata columns, or a parquet data set) on worker processes or a Ray cluster. "
        "Each call's report goes to OUT/calls/ID/ as it finishes; a rerun resumes; failures go to OUT/errors.jsonl. "
        "OUT/calls.parquet and calls.csv hold one row per call; OUT/batch.json and batch.html the distribution of each "
        "headline figure beside the human range.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="folders, globs (quoted), audio files, annotation JSONs, manifests (.csv, .jsonl), .parquet data sets")
    parser.add_argument("--out", metavar="DIR", required=True, help="the batch folder (created; a rerun resumes in it)")
    parser.add_argument("--system-channel", type=int, choices=(0, 1), default=None,
                        help="the system's channel for every call whose input does not name one (default: an annotation JSON's, else 1)")
    parser.add_argument("--pair-suffixes", metavar="USER,SYSTEM", default="_user,_system",
                        help="mono pairs by name: the stem endings of the user's and the system's file (default _user,_system)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes, each loading the models once (default: the cores; with --ray: the cluster's CPUs)")
    parser.add_argument("--ray", metavar="ADDRESS|auto", default=None,
                        help="run the calls as Ray tasks on a cluster (auto: the one this machine belongs to; "
                        "needs pip install 'turneval[ray]')")
    parser.add_argument("--by", metavar="COLUMN", action="append", default=[],
                        help="also give the figures per value of this metadata column, with each difference's 95%% CI (repeatable)")
    parser.add_argument("--require", metavar="'STAT(NAME)<=X'", action="append", type=fleet_requirement_arg, default=[],
                        help=FLEET_REQUIRE_HELP)
    parser.add_argument("--call-timeout", type=seconds_limit_or_zero, default=None, metavar="S",
                        help="stop a call after S seconds and record it as failed (default: 300 + 3 x the call's length "
                        "in seconds; 0: no limit)")
    parser.add_argument("--quiet", action="store_true", help="errors only: no progress line, no table (for CI logs)")
    add_report_options(parser)
    return parser


def _pair_suffixes(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise UserError(f"--pair-suffixes {text!r}: give two different stem endings, USER,SYSTEM (e.g. _user,_system)")
    return parts[0], parts[1]


def _settings(args: argparse.Namespace) -> dict:
    """What decides a call's figures: a rerun into the same folder must not mix two settings."""
    keys = ("judge", "predictor", "no_judge", "no_predictor", "device", "vad_threshold", "max_seconds", "band_limit",
            "turn_end_judge", "transcribe", "asr_model", "system_channel", "pair_suffixes")
    return {k: getattr(args, k) for k in keys}


def _check_resume(out: Path, settings: dict) -> None:
    path = out / SETTINGS_FILE
    if path.is_file():
        before = json.loads(path.read_text(encoding="utf-8"))
        changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
        if changed:
            raise UserError(f"{out} holds a batch run with other settings ({', '.join(changed)}); resume it with the same "
                            "options, or give another --out")


def _preflight(options) -> None:
    """The checks a worker would fail on, made once here: device, band, checkpoints exist."""
    from turneval.bandwidth import check_band_limit
    from turneval.reporting.inference import check_device, resolve_checkpoint

    if options.device != "cpu":  # every machine has a CPU; checking it would import torch here for nothing
        check_device(options.device)
    check_band_limit(options.band_limit)
    for kind, spec, flag in (("judge", options.judge, "--no-judge"), ("predictor", options.predictor, "--no-predictor")):
        if spec is not False and (spec is None or isinstance(spec, str)):
            if resolve_checkpoint(kind, spec, flag) is None:
                raise UserError(f"no {kind} checkpoint is installed; pass --{kind} PATH, or {flag}")


def run(args: argparse.Namespace) -> int:
    from turneval.batch.discover import DiscoveryError, discover_calls
    from turneval.batch.fleet import call_rows, fleet_summary, format_fleet, write_fleet, write_table
    from turneval.batch.fleet_gates import fleet_figures
    from turneval.batch.runner import WorkerSettings, finished_ids, read_errors, run_calls
    from turneval.input_checks import check_output_dir
    from turneval.interrupts import exit_code, stop_at_once_on_next_signal

    options = report_options(args, progress=False)
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: give at least 1")
    out = Path(args.out)
    check_output_dir(out)
    settings = _settings(args)
    _check_resume(out, settings)
    try:
        calls = discover_calls(args.inputs, pair_suffixes=_pair_suffixes(args.pair_suffixes),
                               system_channel=args.system_channel, spool=out / "inputs")
    except DiscoveryError as err:
        raise UserError(str(err)) from None
    columns = {"status", "input"} | {key for call in calls for key in call.metadata}
    unknown = [column for column in args.by if column not in columns]
    if unknown:  # before hours of work, not after
        raise UserError(f"--by {', '.join(unknown)}: no call has this column; the columns are {', '.join(sorted(columns))}")
    _preflight(options)
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS_FILE).write_text(json.dumps(settings, indent=1), encoding="utf-8")
    try:
        workers = WorkerSettings(workers=args.workers, ray_address=args.ray, call_timeout=args.call_timeout,
                                 verbose=getattr(args, "verbose", False))
        summary = run_calls(calls, out, options, settings=workers, html=not args.no_html, quiet=args.quiet)
    except RuntimeError as err:  # Ray missing or unreachable, workers that cannot load the models
        raise UserError(str(err)) from None
    except KeyboardInterrupt as err:  # the workers are gone by now
        stop_at_once_on_next_signal()
        done = len(finished_ids(calls, out))
        print(f"turneval batch: interrupted; {done} of {len(calls)} calls are finished in {out} (the calls in progress "
              "were discarded): run the same command again to resume", file=sys.stderr)
        return exit_code(err)
    errors = read_errors(out)
    rows = call_rows(calls, out, {e["id"]: e["reason"] for e in errors})
    write_table(rows, out)
    try:
        fleet = fleet_summary(rows, args.by, errors)
    except ValueError as err:
        raise UserError(str(err)) from None
    gates_text, gate_code = (None, 0)
    if args.require:
        try:
            gates_text, gate_code = run_gates(args.require, fleet_figures(fleet))
        except GateError as err:
            raise UserError(str(err)) from None
        fleet["requirements"] = {"text": [str(r) for r in args.require], "passed": gate_code == 0}
    write_fleet(fleet, out, gates_text)
    if not args.quiet:
        print(format_fleet(fleet))
    if gates_text and (gate_code or not args.quiet):
        print(gates_text)
    if fleet["n_failed"]:
        print(f"{fleet['n_failed']} of {fleet['n_calls']} calls failed; the reasons are in {out / 'errors.jsonl'}", file=sys.stderr)
    if not args.quiet:
        print(f"wrote {out / 'batch.html'}, batch.json, calls.csv, calls.parquet ({summary.reported} calls reported this run, "
              f"{summary.skipped} already finished)")
    if fleet["n_reported"] == 0:
        return 1
    if gate_code:
        return GATE_FAILED_EXIT
    return CALLS_FAILED_EXIT if fleet["n_failed"] else 0
