"""TurnBench's view of the judge: causal per-frame scores in its unified submission format, and a scorer.

TurnBench (Sesame AI and others, 2026: 154 two-channel conversations, three annotators per
speaker, speaker-disjoint dev/test) scores end-of-turn (EOT) and interruption detectors from
per-frame scores, both speakers, both directions. Its unified submission layout::

    SUBMISSION/
        manifest.json        baseline, checkpoint, frame_rate_hz, split, task_ids, lookahead_ms
        traces/<task_id>.npz  float32 arrays at frame_rate_hz: eot_score_speaker_1,
                              eot_score_speaker_2, interruption_score_speaker_1,
                              interruption_score_speaker_2

``eot_score_speaker_K`` answers at each frame "is speaker K finishing their turn?", and
``interruption_score_speaker_K`` "is speaker K barging in on the other?". :func:`export` writes
the judge's scores that way for a folder of two-channel conversations; :func:`score` scores a
submission against per-speaker SRT annotations (see :func:`read_srt`).

The judge's scores (25 frames a second, its 40 ms chunks; frame i from the audio up to
0.04 (i + 1) s, speech found by the report's VAD, whose end of speech needs its minimum silence
heard: ``lookahead_ms``):

* EOT of speaker K: 0 while K speaks; from the stop time (0.2 s) after each of K's speech ends
  until anyone speaks again, the judge's pause decision (``pause_decision``: the log of the
  silence so far and Whisper's cue on K's channel up to the stop time; its fallback where the
  cue cannot be read), P(the other party takes the turn); 0 again once someone speaks.
* Interruption by speaker K: while K speaks over the other party, having started after them,
  the judge's chunk head's P(I) + P(T) (an interruption or a turn change rather than a
  backchannel or the other going on); 0 elsewhere.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np


FRAME_RATE_HZ = 25.0
ARRAYS = ("eot_score_speaker_1", "eot_score_speaker_2", "interruption_score_speaker_1", "interruption_score_speaker_2")
AGREE_S = 0.2
"""Annotators agree on an event when their labels match and start and end lie within 200 ms."""
EOT_WINDOW_S = 2.0
"""A turn end is detected when the score crosses the threshold within 2 s after it."""
INTERRUPTION_WINDOW_S = (0.25, 2.0)
"""An interruption is detected from 250 ms before its start to 2 s after."""
FP_REFRACTORY_S = 1.0
"""A false alarm held above the threshold counts once a second."""
MAX_EOT_FPR = 0.1
"""EOT recall and latency are read at the lowest threshold that fires in at most 10 % of holds."""
THRESHOLDS = tuple(round(0.01 * k, 2) for k in range(1, 100))


class TurnBenchError(ValueError):
    """A folder, submission or annotation that cannot be read; the message says which and why."""


# ----------------------------------------------------------------------------- conversations
def conversations(folder: str | Path) -> dict[str, tuple[Path, Path | None]]:
    """``{task_id: (speaker 1 audio, speaker 2 audio)}`` of ``folder``: TurnBench's layout (a folder
    per conversation holding ``speaker_1_audio.wav`` and ``speaker_2_audio.wav``) or two-channel
    files (channel 0 = speaker 1; the second path None)."""
    root = Path(folder)
    if not root.is_dir():
        raise TurnBenchError(f"{root}: not a folder; give a folder of conversations (TurnBench's <task_id>/speaker_1_audio.wav layout or stereo files)")
    found: dict[str, tuple[Path, Path | None]] = {}
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        one, two = sub / "speaker_1_audio.wav", sub / "speaker_2_audio.wav"
        if one.is_file() and two.is_file():
            found[sub.name] = (one, two)
    for f in sorted(p for p in root.iterdir() if p.suffix.lower() in (".wav", ".flac")):
        found.setdefault(f.stem, (f, None))
    if not found:
        raise TurnBenchError(f"{root}: no conversation found; expected <task_id>/speaker_1_audio.wav + speaker_2_audio.wav, or stereo .wav/.flac files")
    return found


def _speaking(ipus: Sequence[tuple[float, float]], n_frames: int) -> np.ndarray:
    """Per frame: does the speaker speak in it (any part of the 40 ms)?"""
    out = np.zeros(n_frames, dtype=bool)
    for a, b in ipus:
        out[int(a * FRAME_RATE_HZ): int(math.ceil(b * FRAME_RATE_HZ))] = True
    return out


# ----------------------------------------------------------------------------- export
def judge_traces(judge: Any, dialogue: Any, whisper: Any = None) -> dict[str, np.ndarray]:
    """The four score arrays of one two-channel conversation (see the module docstring)."""
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.dataset_scripts.events import merge_into_ipus
    from turneval.modeling.modeling_turn_taking_judge import log_silence
    from turneval.pause_decision import (
        completion_cue,
        default_cue_reader,
        heard_echo,
        pause_decision_features,
        stop_time_pauses,
    )
    from turneval.reporting.inference import judge_probabilities

    rule = judge.config.pause_decision
    cue = None if rule is None else completion_cue(rule.features)
    if rule is None or not set(rule.features) <= {"log_silence_s", cue}:
        raise TurnBenchError("turnbench export reads a judge whose pause_decision reads log_silence_s and Whisper's turn-completion cue "
                             f"(completion_reader_logit or whisper_complete_logit); this one reads {None if rule is None else list(rule.features)}")
    audio = np.asarray(dialogue.audio)
    n = int(audio.shape[1] / 16000 * FRAME_RATE_HZ)
    ipus = [[(u.start, u.end) for u in merge_into_ipus(dialogue.segments[k], k)] for k in (0, 1)]  # the report's IPUs
    speaking = [_speaking(ipus[k], n) for k in (0, 1)]
    anyone = speaking[0] | speaking[1]
    eot = [np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)]
    pauses = stop_time_pauses(str(dialogue.id), ipus, judge.config.pause_stop_s, FRAME_RATE_HZ)
    values = np.zeros(len(pauses))
    if cue is not None and pauses:
        # the report's clips (the cue's, from the turn start to the stop time) and reader
        whisper = whisper if whisper is not None else default_cue_reader(cue)
        values = pause_decision_features(judge, conversation_view(dialogue), pauses, [cue], whisper)[cue]
    fallback = judge.config.pause_decision_fallback
    for pause, value in zip(pauses, values):
        first = int(math.ceil(pause.horizon * FRAME_RATE_HZ))
        last = first
        while last < n and not anyone[last]:
            last += 1
        if last <= first:
            continue
        elapsed = (np.arange(first, last) + 1) / FRAME_RATE_HZ - pause.speech_end
        unread = not np.isfinite(value) or heard_echo(dialogue, pause)
        features = {"log_silence_s": log_silence(elapsed), **({cue: np.full(len(elapsed), 0.0 if unread else value)} if cue else {})}
        chosen = fallback if unread and fallback is not None else rule
        eot[pause.pauser][first:last] = judge.pause_decision_probabilities(features, rule=chosen)
    probs = judge_probabilities(judge, audio)
    names = list(judge.config.label_names)
    barge = probs[:, names.index("I")] + probs[:, names.index("T")]
    barge = np.concatenate([np.zeros(1, dtype=np.float32), barge[: n - 1]]) if n else barge[:0]  # row t scores chunk t + 1
    interruption = [np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)]
    for k in (0, 1):
        for start, end in ipus[k]:
            f = int(start * FRAME_RATE_HZ)
            if f < n and any(a < start < b for a, b in ipus[1 - k]):  # K came in while the other party spoke
                last = min(n, int(math.ceil(end * FRAME_RATE_HZ)))
                both = speaking[1 - k][f:last]
                interruption[k][f:last] = np.where(both, barge[f:last], 0.0)
    return {"eot_score_speaker_1": eot[0], "eot_score_speaker_2": eot[1],
            "interruption_score_speaker_1": interruption[0].astype(np.float32), "interruption_score_speaker_2": interruption[1].astype(np.float32)}


def export(folder: str | Path, out: str | Path, judge: Any = None, split: str = "unknown", progress: bool = False) -> dict[str, Any]:
    """Write the judge's traces of every conversation in ``folder`` into ``out`` (manifest.json,
    traces/<task_id>.npz); returns the manifest."""
    from turneval.dataset_scripts.files import atomic_path, atomic_write_text
    from turneval.reporting.inference import load_judge_model
    from turneval.reporting.inputs import load_conversation
    from turneval.reporting.progress import progress_bar

    found = conversations(folder)
    model, name = load_judge_model(judge)
    target = Path(out)
    (target / "traces").mkdir(parents=True, exist_ok=True)
    for task_id, (one, two) in progress_bar(found.items(), len(found), "turnbench export", progress):
        if two is None:
            dialogue = load_conversation(one, system_channel=1)
        else:
            dialogue = load_conversation(None, user_audio=one, system_audio=two, system_channel=1)
        traces = judge_traces(model, dialogue)
        with atomic_path(target / "traces" / f"{task_id}.npz") as partial, open(partial, "wb") as handle:
            np.savez(handle, **traces)
    manifest = {"baseline": "turneval turn-taking judge", "checkpoint": name, "frame_rate_hz": FRAME_RATE_HZ, "split": split,
                "task_ids": list(found), "lookahead_ms": 0,
                "notes": "frame i scores the audio up to 0.04 (i + 1) s; speech by the report's VAD (Silero), whose speech ends "
                         "are final once its minimum silence is heard"}
    atomic_write_text(target / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


# ----------------------------------------------------------------------------- annotations
_TIME = re.compile(r"(\d+):(\d{2}):(\d{2})[,.](\d{3})")


def read_srt(path: str | Path) -> list[tuple[float, float, str]]:
    """``(start, end, label)`` of each subtitle block of an SRT file; the label is the block's text."""
    text = Path(path).read_text(encoding="utf-8-sig")
    events = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.strip().splitlines()]
        timing = next((i for i, line in enumerate(lines) if "-->" in line), None)
        if timing is None:
            continue
        stamps = _TIME.findall(lines[timing])
        if len(stamps) != 2:
            raise TurnBenchError(f"{path}: cannot read the times {lines[timing]!r}; expected HH:MM:SS,mmm --> HH:MM:SS,mmm")
        start, end = ((int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000) for h, m, s, ms in stamps)
        events.append((start, end, " ".join(lines[timing + 1:]).strip()))
    return events


def canonical(label: str) -> str:
    """TurnBench's canonical classes from an annotation label (Turn, Interruption, Backchannel,
    Overlap, Laughter, NonContent), by the words it holds."""
    low = label.lower()
    for word, name in (("interrupt", "Interruption"), ("backchannel", "Backchannel"), ("overlap", "Overlap"), ("laugh", "Laughter"), ("turn", "Turn")):
        if word in low:
            return name
    return "NonContent"


def consensus(tracks: Sequence[Sequence[tuple[float, float, str]]]) -> list[tuple[float, float, str]]:
    """The events every annotator marks with the same class, start and end within :data:`AGREE_S`
    (times: their medians); one annotator's events as they are."""
    tracks = [[(a, b, canonical(label)) for a, b, label in t] for t in tracks]
    if len(tracks) == 1:
        return sorted(tracks[0])
    out = []
    for a, b, label in tracks[0]:
        matches = [[(x, y) for x, y, other in t if other == label and abs(x - a) <= AGREE_S and abs(y - b) <= AGREE_S] for t in tracks[1:]]
        if all(matches):
            starts = [a] + [m[0][0] for m in matches]
            ends = [b] + [m[0][1] for m in matches]
            out.append((float(np.median(starts)), float(np.median(ends)), label))
    return sorted(out)


def read_annotations(folder: str | Path, task_id: str) -> dict[int, list[tuple[float, float, str]]]:
    """``{speaker: consensus events}`` from ``folder/<task_id>/speaker_K_annotation_*.srt``."""
    sub = Path(folder) / task_id
    out = {}
    for k in (1, 2):
        files = sorted(sub.glob(f"speaker_{k}_annotation_*.srt"))
        if not files:
            raise TurnBenchError(f"{sub}: no speaker_{k}_annotation_*.srt; every conversation needs both speakers' annotations")
        out[k] = consensus([read_srt(f) for f in files])
    return out


def gold_events(events: dict[int, list[tuple[float, float, str]]]) -> dict[str, dict[int, list]]:
    """Per speaker: turn ends (a Turn after which the other speaker's next Turn begins before this
    speaker's next one), holds (the gap between two Turns of one speaker that no Turn of the
    other begins in) and interruption starts."""
    turns = {k: [(a, b) for a, b, label in events[k] if label == "Turn"] for k in (1, 2)}
    out: dict[str, dict[int, list]] = {"eot": {1: [], 2: []}, "holds": {1: [], 2: []}, "interruption": {1: [], 2: []}}
    for k in (1, 2):
        own, other = turns[k], turns[3 - k]
        for i, (a, b) in enumerate(own):
            following = own[i + 1][0] if i + 1 < len(own) else math.inf
            if any(b <= x < following for x, _ in other):
                out["eot"][k].append(b)
            elif math.isfinite(following) and following > b:
                out["holds"][k].append((b, following))
        out["interruption"][k] = [a for a, _, label in events[k] if label == "Interruption"]
    return out


# ----------------------------------------------------------------------------- scoring
@dataclass
class TurnBenchScore:
    """What :func:`score` measures over a submission (see its docstring)."""

    tasks: int
    eot_events: int
    holds: int
    eot_threshold: float | None
    eot_recall: float
    eot_false_positive_rate: float
    eot_median_latency_ms: float
    interruption_events: int
    interruption_threshold: float
    interruption_recall: float
    interruption_false_positives: int
    interruption_false_positives_per_min: float
    minutes: float
    sweep: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _first_crossing(scores: np.ndarray, lo: float, hi: float, threshold: float) -> float | None:
    a, b = max(0, int(math.floor(lo * FRAME_RATE_HZ))), min(len(scores), int(math.ceil(hi * FRAME_RATE_HZ)) + 1)
    above = np.nonzero(scores[a:b] > threshold)[0]
    return (a + int(above[0])) / FRAME_RATE_HZ if len(above) else None


def _false_alarms(scores: np.ndarray, windows: Sequence[tuple[float, float]], threshold: float) -> int:
    inside = np.zeros(len(scores), dtype=bool)
    for lo, hi in windows:
        inside[max(0, int(math.floor(lo * FRAME_RATE_HZ))): int(math.ceil(hi * FRAME_RATE_HZ)) + 1] = True
    spurious = np.nonzero((scores > threshold) & ~inside)[0]
    count, free_from = 0, -1
    for i in spurious:
        if i >= free_from:
            count += 1
            free_from = i + int(round(FP_REFRACTORY_S * FRAME_RATE_HZ))
    return count


def _eot_at(threshold: float, tasks: list[tuple[dict, dict]]) -> dict[str, float]:
    hits, latencies, fired, holds, events = 0, [], 0, 0, 0
    for traces, gold in tasks:
        for k in (1, 2):
            scores = traces[f"eot_score_speaker_{k}"]
            for t in gold["eot"][k]:
                events += 1
                when = _first_crossing(scores, t, t + EOT_WINDOW_S, threshold)
                if when is not None:
                    hits += 1
                    latencies.append((when - t) * 1000.0)
            for a, b in gold["holds"][k]:
                holds += 1
                fired += _first_crossing(scores, a, b, threshold) is not None
    return {"threshold": threshold, "recall": hits / events if events else math.nan,
            "false_positive_rate": fired / holds if holds else math.nan,
            "median_latency_ms": float(np.median(latencies)) if latencies else math.nan}


def score(submission: str | Path, annotations: str | Path, interruption_threshold: float = 0.5) -> TurnBenchScore:
    """Score a submission (:func:`export`'s layout) against ``annotations/<task_id>/speaker_K_annotation_*.srt``.

    EOT: a turn end (:func:`gold_events`) is detected when its speaker's EOT score exceeds the
    threshold within :data:`EOT_WINDOW_S` after it (latency: from the turn end); the false-positive
    rate is the share of holds in which it exceeds it. Over :data:`THRESHOLDS`, recall and median
    latency are read at the lowest threshold whose false-positive rate is at most
    :data:`MAX_EOT_FPR`. Interruption: an annotated interruption start is detected when the
    interrupter's score exceeds ``interruption_threshold`` within :data:`INTERRUPTION_WINDOW_S`;
    every crossing outside those windows is a false positive (once per :data:`FP_REFRACTORY_S`)."""
    root = Path(submission)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        rate = float(manifest["frame_rate_hz"])
        task_ids = list(manifest["task_ids"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise TurnBenchError(f"{root / 'manifest.json'}: not a TurnBench manifest ({err}); it needs frame_rate_hz and task_ids") from None
    if abs(rate - FRAME_RATE_HZ) > 1e-9:
        raise TurnBenchError(f"{root / 'manifest.json'}: frame_rate_hz {rate:g}; this scorer reads {FRAME_RATE_HZ:g} Hz traces")
    tasks, minutes = [], 0.0
    for task_id in task_ids:
        path = root / "traces" / f"{task_id}.npz"
        try:
            with np.load(path) as data:
                traces = {name: np.asarray(data[name], dtype=np.float64) for name in ARRAYS}
        except (OSError, KeyError, ValueError) as err:
            raise TurnBenchError(f"{path}: cannot read the four arrays {ARRAYS} ({err})") from None
        tasks.append((traces, gold_events(read_annotations(annotations, task_id))))
        minutes += len(traces[ARRAYS[0]]) / FRAME_RATE_HZ / 60.0
    sweep = [_eot_at(th, tasks) for th in THRESHOLDS]
    within = [row for row in sweep if row["false_positive_rate"] <= MAX_EOT_FPR]
    chosen = within[0] if within else {"threshold": None, "recall": 0.0, "false_positive_rate": math.nan, "median_latency_ms": math.nan}
    hits, events, false_alarms = 0, 0, 0
    lo_pad, hi_pad = INTERRUPTION_WINDOW_S
    for traces, gold in tasks:
        for k in (1, 2):
            scores = traces[f"interruption_score_speaker_{k}"]
            windows = [(t - lo_pad, t + hi_pad) for t in gold["interruption"][k]]
            events += len(windows)
            hits += sum(_first_crossing(scores, a, b, interruption_threshold) is not None for a, b in windows)
            false_alarms += _false_alarms(scores, windows, interruption_threshold)
    return TurnBenchScore(
        tasks=len(tasks), eot_events=sum(len(g["eot"][1]) + len(g["eot"][2]) for _, g in tasks),
        holds=sum(len(g["holds"][1]) + len(g["holds"][2]) for _, g in tasks), eot_threshold=chosen["threshold"],
        eot_recall=chosen["recall"], eot_false_positive_rate=chosen["false_positive_rate"], eot_median_latency_ms=chosen["median_latency_ms"],
        interruption_events=events, interruption_threshold=interruption_threshold,
        interruption_recall=hits / events if events else math.nan, interruption_false_positives=false_alarms,
        interruption_false_positives_per_min=false_alarms / minutes if minutes else math.nan, minutes=minutes, sweep=sweep)


__all__ = ["ARRAYS", "FRAME_RATE_HZ", "TurnBenchError", "TurnBenchScore", "conversations", "export", "gold_events",
           "judge_traces", "read_annotations", "read_srt", "score"]
