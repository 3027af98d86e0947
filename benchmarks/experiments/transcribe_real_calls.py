"""What `--transcribe` hears on real bank calls, and what decoding each window once would cost it.

    python benchmarks/experiments/transcribe_real_calls.py                # the 6 Harper Valley dev calls
    python benchmarks/experiments/transcribe_real_calls.py --repeat 1 --variants continue

Each call's two channels are transcribed as a report does (`WhisperTranscriber`, Whisper tiny.en,
greedy, the channel's speech by the report's VAD cut into windows of at most 30 s) and scored
against the call's own transcript (`word_error_rate`: Whisper's English normaliser, and verbatim).
The variants differ only in transformers' long-form loop, which decodes a window again from the
last complete segment when the first pass ends inside a sentence:

* ``continue``: transformers' default, what the report runs;
* ``one_call``: ``force_unique_generate_call=True``, each window decoded once.

The variants alternate ``--repeat`` times in one process (the first pass carries the warm-up);
CPU seconds are ``time.process_time`` of the transcription alone (both torch threads).

Measured 2026-11-29 (2-core Intel Xeon, torch's 2 threads; Gridspace-Stanford Harper Valley speech
dataset, CC BY 4.0; 6 dev calls, 366 s, 12 channels, 26 windows): ``continue`` WER 13.8 %
(verbatim 19.7 %), 32.7 CPU s on the second pass; ``one_call`` 16.6 % (22.6 %), 31.2 CPU s, 11 of the
12 channels' words different. Decoding each window once saves 5 % of the transcription's CPU and
loses words at the windows' ends: not kept (docs/history.md, 2026-11-29). Those runs had the encoder
in float32; in bfloat16 (the default where the CPU multiplies it natively, since 9300566) ``continue``
gives 13.9 % (verbatim 19.7 %) for 26.2-27.7 CPU s against 40.7 beside it.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared data readers

VARIANTS: dict[str, dict[str, Any]] = {"continue": {}, "one_call": {"force_unique_generate_call": True}}


def transcribe_calls(transcriber: Any, calls: Sequence[Any], extra_generate_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Both channels of every call (a Dialogue with audio, segments and words) transcribed with
    ``extra_generate_kwargs`` on top of the transcriber's own: CPU seconds, windows, the WER of
    all channels together and of each, and the hypotheses (one text a channel)."""
    from turneval.transcribe import word_error_rate

    base = dict(transcriber.generate_kwargs)
    transcriber.generate_kwargs = {**base, **extra_generate_kwargs}
    references, hypotheses, cpu_s, windows = [], [], 0.0, 0
    try:
        for call in calls:
            for channel in (0, 1):
                started = time.process_time()
                words, n_windows, _, _ = transcriber.transcribe(call.audio[channel], call.segments[channel])
                cpu_s += time.process_time() - started
                windows += n_windows
                references.append(" ".join(w.text for w in call.words[channel]))
                hypotheses.append(" ".join(w.text for w in words))
    finally:
        transcriber.generate_kwargs = base
    pooled = word_error_rate(" ".join(references), " ".join(hypotheses))
    return {"cpu_s": cpu_s, "windows": windows, "wer": pooled["wer"], "wer_verbatim": pooled["wer_verbatim"],
            "wer_per_channel": [word_error_rate(r, h)["wer"] for r, h in zip(references, hypotheses)], "hypotheses": hypotheses}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harper-valley-root", type=Path, default=None, help="default: ../shared/real/harper_valley")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)

    from _harper_valley import load_calls

    from turneval.transcribe import WhisperTranscriber

    calls = load_calls(args.harper_valley_root)
    transcriber = WhisperTranscriber()
    seconds = sum(call.audio.shape[-1] for call in calls) / 16000
    print(f"{len(calls)} Harper Valley calls, {seconds:.0f} s, both channels (Gridspace-Stanford Harper Valley speech dataset, CC BY 4.0)")
    texts: dict[str, list[str]] = {}
    for _ in range(args.repeat):
        for name in args.variants:
            result = transcribe_calls(transcriber, calls, VARIANTS[name])
            texts[name] = result["hypotheses"]
            per_channel = ", ".join("-" if w is None else f"{w:.3f}" for w in result["wer_per_channel"])
            print(f"{name}: {result['cpu_s']:.1f} CPU s, {result['windows']} windows, WER {result['wer']:.4f} "
                  f"(verbatim {result['wer_verbatim']:.4f}); per channel {per_channel}", flush=True)
    if len(texts) == 2:
        first, second = texts.values()
        print(f"channels whose words differ between the variants: {sum(a != b for a, b in zip(first, second))} of {len(first)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
