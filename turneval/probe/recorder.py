"""Both sides of a call on one clock, and the sample folders written from them.

The caller's audio is exact by construction: frame ``k`` is sent when its last sample has been
"spoken" (``(k + 1) * 20 ms`` after the start), so the caller track is the scenario's audio
itself. The agent's audio is placed as a player would play it: a chunk starts when it arrives
or when the chunk before it has finished playing, whichever is later; a clear (an
interruption frame) drops what was queued but not yet played. Each chunk's arrival time is
kept, so the log shows jitter and bursts.

A sample folder is written under a hidden temporary name and renamed when complete, so an
interrupted run leaves complete samples only (``turneval full-duplex-bench`` ignores hidden folders).
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from turneval.probe.energy import sound_spans


@dataclass
class Recording:
    """The agent's side of one sample at ``sample_rate``, with every chunk's arrival."""

    sample_rate: int
    chunks: list[list[Any]] = field(default_factory=list)  # [start_sample, int16 array]
    arrivals: list[tuple[float, int, float]] = field(default_factory=list)  # (arrival_s, n_samples, placed_s)
    clears: list[float] = field(default_factory=list)
    messages: list[tuple[float, Any]] = field(default_factory=list)
    send_lateness_s: list[float] = field(default_factory=list)  # how late each caller frame left
    cursor: int = 0  # the sample where the player's queue ends

    def add_audio(self, samples: np.ndarray, arrival_s: float) -> None:
        start = max(int(round(arrival_s * self.sample_rate)), self.cursor)
        self.chunks.append([start, np.asarray(samples, dtype=np.int16)])
        self.cursor = start + samples.size
        self.arrivals.append((round(arrival_s, 6), int(samples.size), round(start / self.sample_rate, 6)))

    def clear(self, arrival_s: float) -> None:
        """Drop the audio queued after ``arrival_s`` (the agent was interrupted)."""
        cut = int(round(arrival_s * self.sample_rate))
        kept = []
        for start, audio in self.chunks:
            if start >= cut:
                continue
            kept.append([start, audio[: cut - start]])
        self.chunks = kept
        self.cursor = min(self.cursor, cut)
        self.clears.append(round(arrival_s, 6))

    @property
    def received_audio(self) -> bool:
        return bool(self.arrivals)

    def agent_track(self, n_samples: int) -> np.ndarray:
        """The agent's audio as float32, ``n_samples`` long (played audio past the end is cut)."""
        track = np.zeros(n_samples, dtype=np.float32)
        for start, audio in self.chunks:
            if start >= n_samples:
                continue
            piece = audio[: n_samples - start].astype(np.float32) / 32768.0
            track[start : start + piece.size] = piece
        return track


def timing(agent: np.ndarray, sample_rate: int, reference_s: float | None, event: tuple[float, float] | None) -> dict:
    """The probe's own timing of one sample, from the agent track placed at arrival.

    ``response_latency_s``: start of the first agent speech that begins at or after the
    reference (the caller's turn end, the pause's start, the interruption's end) minus the
    reference. ``talking_at_reference``: the agent was already speaking then (talking over the
    caller; a backchannel counts too). ``stop_latency_s``: when the agent was talking as the
    marked event began, how long it went on after the event's start.
    """
    spans = sound_spans(agent, sample_rate)
    out: dict[str, Any] = {"agent_speech": [list(s) for s in spans], "response_latency_s": None,
                           "talking_at_reference": None, "stop_latency_s": None}
    if reference_s is not None:
        out["talking_at_reference"] = any(s[0] < reference_s < s[1] for s in spans)
        after = [s for s in spans if s[0] >= reference_s]
        if after:
            out["response_latency_s"] = round(after[0][0] - reference_s, 4)
    if event is not None:
        talking = [s for s in spans if s[0] <= event[0] < s[1]]
        if talking:
            out["stop_latency_s"] = round(talking[0][1] - event[0], 4)
    return out


def _write_wav(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    from turneval.dataset_scripts.audio import resample, write_audio

    audio = np.asarray(audio, dtype=np.float32)
    if sample_rate != 16000:  # the files turneval writes are 16 kHz (docs/formats.md, "Audio")
        audio = np.stack([resample(ch, sample_rate, 16000) for ch in np.atleast_2d(audio)])
    write_audio(path, audio, 16000)


def write_sample(folder: Path, caller: np.ndarray, agent: np.ndarray, sample_rate: int, metadata_writer: Any,
                 log: dict[str, Any], names: tuple[str, str] = ("input.wav", "output.wav")) -> Path:
    """Write one sample folder atomically: input.wav, output.wav (or ``names``), stereo.wav, the task's metadata,
    probe.json."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.partial"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        _write_wav(tmp / names[0], caller, sample_rate)
        _write_wav(tmp / names[1], agent, sample_rate)
        _write_wav(tmp / "stereo.wav", np.stack([caller, agent]), sample_rate)
        metadata_writer(tmp)
        (tmp / "probe.json").write_text(json.dumps(log, indent=1) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
