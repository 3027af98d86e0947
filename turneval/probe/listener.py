"""The caller's ears: when the agent starts and stops speaking, found live in its audio as it arrives.

The probe places every chunk of the agent's audio on the call's clock where a player would play it
(:class:`turneval.probe.recorder.Recording`); this module keeps the loud 5 ms windows of those
chunks (the same rule as the probe's own timing, :mod:`turneval.probe.energy`: -42 dBFS) as runs,
so that a caller part can wait for the agent:

- the agent *starts* at the first loud window after at least ``hold`` seconds of its silence;
- it *ends* at the end of its last loud window once ``hold`` seconds have passed on the call's
  clock with no sound (known only then: the caller cannot tell a pause from an end sooner).

``hold`` defaults to the 0.2 s that bound an IPU (docs/events_and_labels.md), which is also the
bridge the probe's offline timing joins sound across, so the live events and the written
recording's speech spans agree to a 5 ms window. The report's Silero VAD decides per 32 ms frame
and holds its decision over a few frames: too coarse for a caller part placed to the 20 ms frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from turneval.probe.energy import BRIDGE_S, WINDOW_S, loud_windows


HOLD_S = BRIDGE_S
"""Default silence that separates two stretches of the agent's speech (an end is known this long after it)."""
_JOIN_S = WINDOW_S + 1e-6  # windows of one chunk and the next join when they touch


@dataclass
class AgentListener:
    """Loud runs of the agent's audio on the call's clock, and the starts and ends they imply."""

    sample_rate: int
    runs: list[list[float]] = field(default_factory=list)  # [start_s, end_s], sorted, disjoint
    # the caller asks up to three times per 20 ms frame and the runs grow all call: joined once per change
    _joined: dict[float, list[tuple[float, float]]] = field(default_factory=dict, init=False, repr=False)

    def add(self, samples: np.ndarray, placed_s: float) -> None:
        """A chunk of agent audio (int16) that plays from ``placed_s``."""
        loud = loud_windows(np.asarray(samples, dtype=np.float32) / 32768.0, self.sample_rate)
        if not loud.any():
            return
        self._joined.clear()
        duration = np.asarray(samples).size / self.sample_rate
        edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            start = placed_s + a * WINDOW_S
            end = placed_s + min(b * WINDOW_S, duration)
            if self.runs and start - self.runs[-1][1] <= _JOIN_S and start >= self.runs[-1][0]:
                self.runs[-1][1] = max(self.runs[-1][1], end)
            else:
                self.runs.append([start, end])

    def clear(self, at_s: float) -> None:
        """The agent dropped what it had queued after ``at_s`` (a clear): that sound is never played."""
        kept = []
        for start, end in self.runs:
            if start < at_s:
                kept.append([start, min(end, at_s)])
        self.runs = kept
        self._joined.clear()

    def _stretches(self, hold_s: float) -> list[tuple[float, float]]:
        if hold_s in self._joined:
            return self._joined[hold_s]
        out: list[list[float]] = []
        for start, end in self.runs:
            if out and start - out[-1][1] < hold_s:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
        self._joined[hold_s] = [(s, e) for s, e in out]
        return self._joined[hold_s]

    def start_after(self, t_s: float, hold_s: float = HOLD_S) -> float | None:
        """The first time the agent starts speaking at or after ``t_s`` (None: not yet)."""
        for start, _ in self._stretches(hold_s):
            if start >= t_s:
                return start
        return None

    def end_after(self, t_s: float, now_s: float, hold_s: float = HOLD_S) -> float | None:
        """The first end of the agent's speech at or after ``t_s`` that is known by ``now_s`` (None: not yet)."""
        stretches = self._stretches(hold_s)
        for i, (_, end) in enumerate(stretches):
            if end < t_s:
                continue
            if i + 1 < len(stretches) or now_s >= end + hold_s:
                return end
            return None
        return None

    def talking(self, now_s: float, hold_s: float = HOLD_S) -> bool:
        """The agent's current stretch of speech is still open at ``now_s`` (sound within the last ``hold_s``)."""
        return any(start <= now_s and now_s < end + hold_s for start, end in self._stretches(hold_s))
