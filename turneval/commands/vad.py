"""`turneval vad`: speech segments of each channel of a stereo recording (Silero VAD).

    turneval vad call.wav                          # summary on the terminal
    turneval vad call.wav --out call.csv           # VAD CSV (speaker,start,end)
    turneval vad call.wav --out call.json --system-channel 1 --stream
"""
from __future__ import annotations

import argparse
from pathlib import Path

from turneval.cli import UserError
from turneval.dataset_scripts.readers import write_vad_csv
from turneval.dataset_scripts.vad import VAD_BANDS, SileroVAD, VADConfig, dialogue_from_audio
from turneval.input_checks import seconds_limit


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "vad",
        help="voice activity of each channel of a stereo recording (Silero VAD, bundled model)",
        description="Run Silero VAD (the model bundled in the silero-vad package; nothing is downloaded) on "
        "each channel of a stereo recording and write the speech segments as VAD CSV (.csv) or turneval "
        "annotations (.json); both are read by `turneval stats` and by `turneval report --annotations` (and the .json by `turneval score`).",
    )
    parser.add_argument("audio", metavar="AUDIO", help="stereo wav/flac/ogg/opus/mp3, one speaker per channel")
    parser.add_argument("--out", metavar="FILE", default=None, help="write segments to FILE (.csv or .json)")
    parser.add_argument("--system-channel", type=int, choices=(0, 1), default=None, help="channel of the system")
    parser.add_argument("--threshold", type=float, default=0.5, help="speech probability threshold (default 0.5)")
    parser.add_argument("--min-speech-ms", type=float, default=250.0, help="drop speech up to this long (default 250)")
    parser.add_argument("--min-silence-ms", type=float, default=100.0, help="silence that ends a segment (default 100)")
    parser.add_argument("--speech-pad-ms", type=float, default=30.0, help="padding on each side (default 30)")
    parser.add_argument("--band", choices=VAD_BANDS, default="telephone",
                        help="what the detector hears: telephone (default; each channel low-passed to 0-4 kHz, so a wideband "
                        "recording and its 8 kHz version get the same segments) or full (the audio as given)")
    parser.add_argument("--max-seconds", type=seconds_limit, default=None, help="refuse longer recordings (seconds, > 0)")
    parser.add_argument("--stream", action="store_true", help="stream the file block by block (flat memory)")
    return parser


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower() not in (".csv", ".json"):
        raise UserError(f"--out {out}: use a .csv (VAD CSV) or .json (turneval annotations) file name")
    if out is not None:
        from turneval.input_checks import check_output_file

        check_output_file(out)
    try:
        config = VADConfig(
            threshold=args.threshold,
            min_speech_ms=args.min_speech_ms,
            min_silence_ms=args.min_silence_ms,
            speech_pad_ms=args.speech_pad_ms,
            band=args.band,
        )
    except ValueError as err:
        raise UserError(str(err)) from err
    dialogue = dialogue_from_audio(
        args.audio,
        system_speaker=args.system_channel,
        vad=SileroVAD(config),
        keep_audio=not args.stream,
        max_seconds=args.max_seconds,
    )
    for speaker, segments in enumerate(dialogue.segments):
        speech = sum(end - start for start, end in segments)
        role = " (system)" if speaker == dialogue.system_speaker else ""
        share = 100 * speech / dialogue.duration if dialogue.duration else 0.0
        print(f"channel {speaker}{role}: {len(segments)} segments, {speech:.1f} s speech ({share:.1f} % of {dialogue.duration:.1f} s)")
    if out is not None:
        if out.suffix.lower() == ".csv":
            write_vad_csv(dialogue, out)
        else:
            dialogue.save_annotations(out)
        print(f"wrote {out}")
    return 0
