"""`turneval stats`: turn-taking statistics of one or more conversations (Talking Turns §3.2).

    turneval stats sw02001A-ms98-a-word.text session.json call.wav
    turneval stats corpus/*.json --per-dialogue --json stats.json
"""
from __future__ import annotations

import argparse
import json
import math
from typing import Any

from turneval.cli import UserError
from turneval.dataset_scripts.dialogue import SPEAKERS
from turneval.dataset_scripts.events import DEFAULT_IPU_SILENCE_S, DEFAULT_MAX_BACKCHANNEL_S, extract_events
from turneval.dataset_scripts.files import atomic_write_text
from turneval.dataset_scripts.readers import read_dialogue
from turneval.dataset_scripts.vocabulary import load_backchannel_words
from turneval.metrics.turn_statistics import corpus_statistics


_TABLE_ROWS = (
    ("IPU", "ipu"),
    ("Pause", "pause"),
    ("Gap", "gap"),
    ("Overlap", "overlap"),
    ("Silence", "silence"),
)


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "stats",
        help="turn-taking statistics: IPU, pause, gap, overlap per minute and %% of duration",
        description="Corpus-level turn-taking statistics (Talking Turns §3.2) of the given conversations: "
        "IPUs, pauses, gaps and overlaps per minute and as a percentage of the total duration, "
        "backchannels, interruptions, and with word timings the speaking and backchannel word rates. "
        "Any format turneval reads is accepted (format guessed from the file name unless --format).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="conversation files (one dialogue each)")
    parser.add_argument("--format", default=None, help="input format for every file (default: guessed per file)")
    parser.add_argument("--per-dialogue", action="store_true", help="also print (and store) each dialogue's statistics")
    parser.add_argument("--json", metavar="OUT", default=None, help="write all statistics to this JSON file")
    parser.add_argument(
        "--ipu-silence", type=float, default=DEFAULT_IPU_SILENCE_S,
        help=f"own silence (s) that splits IPUs (default {DEFAULT_IPU_SILENCE_S})",
    )
    parser.add_argument(
        "--max-backchannel", type=float, default=DEFAULT_MAX_BACKCHANNEL_S,
        help=f"without words: longest IPU (s) counted as a backchannel (default {DEFAULT_MAX_BACKCHANNEL_S})",
    )
    parser.add_argument("--backchannel-words", metavar="TXT", default=None, help="backchannel phrase list, one per line")
    parser.add_argument("--segments-only", action="store_true", help="ignore word timings; use speech segments")
    return parser


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_table(title: str, stats: dict[str, Any]) -> str:
    """A small text table of one statistics dict."""
    lines = [f"{title}  ({_fmt(stats['duration_min'])} min, {stats['n_dialogues']} dialogue(s))"]
    lines.append(f"  {'event':<12}{'count':>8}{'per min':>10}{'% dur':>9}{'mean s':>9}")
    for label, key in _TABLE_ROWS:
        lines.append(
            f"  {label:<12}{stats[f'{key}_count']:>8}{_fmt(stats[f'{key}_per_min']):>10}"
            f"{_fmt(stats[f'{key}_percent']):>9}{_fmt(stats[f'{key}_mean_s']):>9}"
        )
    for label, key in (("Backchannel", "backchannel"), ("Turn", "turn"), ("Interruption", "interruption")):
        lines.append(f"  {label:<12}{stats[f'{key}_count']:>8}{_fmt(stats[f'{key}s_per_min']):>10}")
    lines.append(f"  floor-taking share of interruptions: {_fmt(stats['floor_taking_share'])}")
    for spk in SPEAKERS:
        lines.append(
            f"  speaker {spk}: {stats[f'ipu_count_{spk}']} IPUs, {_fmt(stats[f'ipu_percent_{spk}'])} % speech, "
            f"{stats[f'backchannel_count_{spk}']} backchannels, {stats[f'interruption_count_{spk}']} interruptions, "
            f"speaking rate {_fmt(stats[f'speaking_rate_wpm_{spk}'], 1)} wpm, "
            f"backchannel words/min {_fmt(stats[f'backchannel_word_rate_{spk}'])}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.ipu_silence < 0 or args.max_backchannel < 0:
        raise UserError("--ipu-silence and --max-backchannel must be >= 0")
    if args.json:
        from turneval.input_checks import check_output_file

        check_output_file(args.json, "--json")
    phrases = load_backchannel_words(args.backchannel_words) if args.backchannel_words else None
    events = []
    for path in args.files:
        options = {"format": args.format} if args.format else {}
        dialogue = read_dialogue(path, **options)
        events.append(
            extract_events(
                dialogue,
                backchannel_words=phrases,
                use_words=False if args.segments_only else None,
                ipu_silence_s=args.ipu_silence,
                max_backchannel_s=args.max_backchannel,
            )
        )
    stats = corpus_statistics(events, per_dialogue=args.per_dialogue)
    if args.per_dialogue and len(events) > 1:
        for dialogue_id, single in stats["dialogues"].items():
            print(format_table(dialogue_id, single))
            print()
    print(format_table("all" if len(events) > 1 else events[0].dialogue_id, stats))
    if args.json:
        atomic_write_text(args.json, json.dumps(stats, indent=1))
        print(f"wrote {args.json}")
    return 0
