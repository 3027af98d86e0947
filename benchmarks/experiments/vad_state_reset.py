"""Would Silero hear the copied backchannels of the real-call pairs if its state were reset in silence?

    python benchmarks/experiments/vad_state_reset.py [--reset-after-s 2.0] [--ami-root DIR] [--spokenwoz-root DIR] [--json OUT]

The real-call perturbation test (``benchmarks/validation/real_perturbations.py``) ranks a backchannel
pair as well as the VAD hears the inserted copies: 0.88 where it heard every copy, 0.65 where
it missed one. On the AMI channel pair FEE016 + MEE014 it hears half of them, and it hears
MEE014's own backchannel, bit for bit the same samples in both crops, only in the edited crop,
after a copy. The difference is Silero's recurrent state, carried from frame to frame over the
whole channel. Here the state (and the 64 samples of context) is zeroed once the speech
probability has stayed below ``QUIET`` for ``--reset-after-s`` seconds, frame by frame (the
report's stream offers no reset; this reaches into it), and two things are measured, stock
Silero beside the reset:

* **copies heard**: per AMI channel pair, the inserted backchannel copies heard
  (``real_perturbations.backchannels_heard``) and the pairs with every copy heard;
* **agreement with people's annotation**: per channel, the share of annotated speech the VAD
  misses and the share of non-speech it marks (10 ms frames): the AMI ES2004a headsets against
  the excerpt's RTTM, the SpokenWOZ channels against their word times (gaps under 0.3 s closed).

Answer (2026-11-26, reset after 2 s): the reset hears all 20 copies on FEE016 + MEE014 (stock:
10), but marks FEE013's crosstalk as speech (false alarms 6.6 % -> 66 % of its non-speech): the
state that misses the backchannel is the state that rejects crosstalk. The report's VAD is left
as it is (docs/naturalness.md §5).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent, HERE.parent / "validation"):  # its own, the shared helpers, the validation scripts it reuses
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import emit_result, limit_threads  # noqa: E402

from turneval.dataset_scripts import vad  # noqa: E402


QUIET = 0.1
"""A frame below this speech probability counts towards the quiet stretch that resets the state."""
FRAME_S = vad.FRAME_SAMPLES / vad.SAMPLE_RATE
WORD_GAP_S = 0.3
"""Word-time references: gaps up to this long are closed (speech as a listener hears it)."""


def probabilities_with_reset(audio: np.ndarray, reset_after_s: float | None, band: str = "telephone") -> np.ndarray:
    """Silero's per-frame speech probabilities of one 16 kHz channel; with ``reset_after_s``, its
    state and context are zeroed each time the probability has stayed below :data:`QUIET` that long
    (None: the stock stream, frame by frame)."""
    return probabilities_and_resets(audio, reset_after_s, band)[0]


def probabilities_and_resets(audio: np.ndarray, reset_after_s: float | None, band: str = "telephone") -> tuple[np.ndarray, list[int]]:
    """:func:`probabilities_with_reset` and the frames after which the state was zeroed."""
    stream = vad._ProbabilityStream(max_frames=1, band=band)
    samples = np.asarray(audio, dtype=np.float32).reshape(-1)
    if stream._band is not None:
        samples = np.concatenate([stream._band.accept(samples), stream._band.finish()])
    n = -(-samples.size // vad.FRAME_SAMPLES)  # the last partial frame zero-padded, as the stock stream
    samples = np.pad(samples, (0, n * vad.FRAME_SAMPLES - samples.size))
    limit = None if reset_after_s is None else max(1, int(round(reset_after_s / FRAME_S)))
    out, resets, quiet = np.zeros(n, dtype=np.float32), [], 0
    for i in range(n):
        out[i] = stream._run(samples[i * vad.FRAME_SAMPLES : (i + 1) * vad.FRAME_SAMPLES])[0]
        quiet = quiet + 1 if out[i] < QUIET else 0
        if limit is not None and quiet >= limit:
            stream._hidden[:] = 0.0
            stream._cell[:] = 0.0
            stream._context[:] = 0.0
            resets.append(i)
            quiet = 0
    return out, resets


def segments_with_reset(channels: np.ndarray, reset_after_s: float | None) -> list[list[tuple[float, float]]]:
    """Speech segments (s) of each channel of ``[channels, n]`` 16 kHz audio, the report's VAD settings."""
    config = vad.VADConfig()
    out = []
    for channel in np.asarray(channels, dtype=np.float32):
        tracker = vad.SegmentTracker(config)
        found = tracker.push(probabilities_with_reset(channel, reset_after_s, band=config.band)) + tracker.finish(channel.size)
        out.append(vad._to_seconds(found))
    return out


def frame_mask(segments: Sequence[tuple[float, float]], n_frames: int, hz: int = 100) -> np.ndarray:
    """Segments (s) as a boolean mask of ``n_frames`` frames at ``hz``."""
    mask = np.zeros(n_frames, dtype=bool)
    for start, end in segments:
        mask[max(0, int(round(start * hz))) : max(0, int(round(end * hz)))] = True
    return mask


def agreement(reference: Sequence[tuple[float, float]], found: Sequence[tuple[float, float]], duration_s: float) -> dict[str, float]:
    """``miss``: share of the reference's speech frames not found; ``false_alarm``: share of its
    non-speech frames found as speech (10 ms frames)."""
    n = int(np.ceil(duration_s * 100)) + 1
    ref, hyp = frame_mask(reference, n), frame_mask(found, n)
    return {"miss": float((ref & ~hyp).sum() / max(ref.sum(), 1)), "false_alarm": float((hyp & ~ref).sum() / max((~ref).sum(), 1))}


def closed_word_spans(words: Sequence[Any], gap_s: float = WORD_GAP_S) -> list[tuple[float, float]]:
    """One channel's words as speech spans, gaps up to ``gap_s`` closed."""
    spans: list[list[float]] = []
    for word in sorted(words, key=lambda w: w.start):
        if spans and word.start - spans[-1][1] <= gap_s:
            spans[-1][1] = max(spans[-1][1], word.end)
        else:
            spans.append([word.start, word.end])
    return [(s, e) for s, e in spans]


def backchannel_pairs(ami_root: str | None) -> dict[str, list]:
    """Per AMI channel pair, its excessive_backchannel pairs as the benchmark draws them."""
    from _real_calls import ami_channel_pairs
    from real_perturbations import FULL_SEEDS, perturbation_pairs

    out = {}
    for dialogue in ami_channel_pairs(ami_root):
        pairs = [p for p in perturbation_pairs(dialogue, FULL_SEEDS)[0] if p.perturbation_type == "excessive_backchannel"]
        if pairs:
            out[dialogue.id] = pairs
    return out


def copies_heard(pairs_by_recording: dict[str, list], reset_after_s: float | None) -> dict[str, dict[str, int]]:
    """Per channel pair: inserted backchannel copies heard, copies, pairs with every copy heard, pairs."""
    from real_perturbations import backchannels_heard

    out = {}
    for recording, pairs in pairs_by_recording.items():
        counts = [backchannels_heard(p.edit, segments_with_reset(p.natural.audio, reset_after_s),
                                     segments_with_reset(p.perturbed.audio, reset_after_s)) for p in pairs]
        out[recording] = {"heard": sum(h for h, _ in counts), "copies": sum(n for _, n in counts),
                          "pairs_every_copy": sum(h == n for h, n in counts), "pairs": len(pairs)}
    return out


def annotated_channels(ami_root: str | None, spokenwoz_root: str | None) -> list[tuple[str, np.ndarray, list[tuple[float, float]]]]:
    """(name, 16 kHz channel, reference speech) of every AMI headset and every SpokenWOZ channel."""
    from _ami import load_recordings
    from _spokenwoz import load_calls

    out = []
    for rec in load_recordings(ami_root):
        out += [(f"{rec.id}:{name}", audio, rec.speakers[name]) for name, audio in sorted(rec.sources.items())]
    for call in load_calls(spokenwoz_root):
        out += [(f"{call.id}:{'AB'[ch]}", call.audio[ch], closed_word_spans(call.words[ch])) for ch in (0, 1)]
    return out


def evaluate(reset_after_s: float, ami_root: str | None = None, spokenwoz_root: str | None = None) -> dict[str, Any]:
    limit_threads()
    result: dict[str, Any] = {"reset_after_s": reset_after_s, "quiet": QUIET, "copies_heard": {}, "agreement": {}}
    channels, pairs = annotated_channels(ami_root, spokenwoz_root), backchannel_pairs(ami_root)
    for label, reset in (("stock", None), ("reset", reset_after_s)):
        result["copies_heard"][label] = copies_heard(pairs, reset)
        result["agreement"][label] = {name: agreement(ref, segments_with_reset(audio[None, :], reset)[0], audio.size / vad.SAMPLE_RATE)
                                      for name, audio, ref in channels}
    return result


def markdown(result: dict[str, Any]) -> str:
    heard = result["copies_heard"]
    lines = [f"Silero stock vs its state reset after {result['reset_after_s']:g} s below {result['quiet']:g}.", "",
             "| AMI channel pair | copies heard, stock | reset | pairs with every copy heard, stock | reset |", "|---|---|---|---|---|"]
    for pair, s in heard["stock"].items():
        r = heard["reset"][pair]
        lines.append(f"| {pair} | {s['heard']} of {s['copies']} | {r['heard']} of {r['copies']} | "
                     f"{s['pairs_every_copy']} of {s['pairs']} | {r['pairs_every_copy']} of {r['pairs']} |")
    lines += ["", "| channel | miss, stock | reset | false alarm, stock | reset |", "|---|---|---|---|---|"]
    for name, s in result["agreement"]["stock"].items():
        r = result["agreement"]["reset"][name]
        lines.append(f"| {name} | {100 * s['miss']:.1f} % | {100 * r['miss']:.1f} % | {100 * s['false_alarm']:.1f} % | {100 * r['false_alarm']:.1f} % |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reset-after-s", type=float, default=2.0, help="quiet stretch that resets the state")
    parser.add_argument("--ami-root", default=None, help="AMI folder (default: $TURNEVAL_AMI_ROOT or ../shared/real/ami)")
    parser.add_argument("--spokenwoz-root", default=None, help="SpokenWOZ folder (default: $TURNEVAL_SPOKENWOZ_ROOT or ../shared/real/spokenwoz)")
    parser.add_argument("--json", default=None, help="write the result here")
    args = parser.parse_args(argv)
    return emit_result(evaluate(args.reset_after_s, args.ami_root, args.spokenwoz_root), args.json, markdown)


if __name__ == "__main__":
    sys.exit(main())
