"""A caller that listens: parts placed on the call's clock as the agent starts and stops speaking.

A scenario part (:mod:`turneval.probe.scenarios`) starts either at a set time (``at``, ``after``
the previous part) or when the agent does something, heard live
(:class:`~turneval.probe.listener.AgentListener`):

- ``on: agent_start`` with ``delay: S``: S seconds after the agent starts speaking (the first
  start after the previous part ended): a barge-in S seconds into its reply;
- ``on: agent_end`` with ``delay: S`` or ``delay: human``: S seconds after the agent's speech
  ends (the first end after the previous part ended); ``human`` draws the gap from people's
  gaps between turns in Switchboard (:func:`human_gap`);
- ``during: agent_speech`` with ``every: S``: the part again and again, S seconds apart (the first
  ``delay`` after the agent starts, default S), while the agent is still talking, at most ``max``
  times (default 10); done when the agent's speech ends;
- ``timeout: S`` (default: the run's ``--timeout``): the agent never did it; the part plays at
  the previous part's end plus S anyway, and its log says so. An ``agent_end`` part waits out a
  reply still under way then, up to :data:`MAX_TURN_S`.

``hold`` (default 0.2 s) is the silence after which the agent's sound counts as ended. A part
is never placed in the past: if it was due before the frame now being sent, it starts with that
frame, and its log shows how late it left. Every part's log records its plan, the agent event it
waited for and when it actually left (:meth:`LiveCaller.log`).
"""
from __future__ import annotations

import functools
import json
import zlib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from turneval.probe.listener import HOLD_S, AgentListener


EVENTS = ("agent_start", "agent_end")
DURING = ("agent_speech",)
MAX_REPEATS = 10
MAX_TURN_S = 60.0
"""The longest an ``on: agent_end`` part waits out a reply under way past its timeout (an agent that never stops)."""


@dataclass
class ScriptPart:
    """One part of a caller's script: its audio (float32, 16 kHz), its words and what starts it."""

    audio: np.ndarray
    words: list[tuple[float, float, str]]
    text: str
    at: float | None = None  # seconds into the call
    after: float | None = None  # seconds after the previous part ends (the default: 0)
    on: str | None = None  # agent_start | agent_end
    during: str | None = None  # agent_speech
    delay: float | str = 0.0  # seconds after the event, or "human"
    every: float | None = None
    max_count: int = MAX_REPEATS
    timeout_s: float | None = None
    hold_s: float = HOLD_S
    mark: bool = False

    @property
    def reacts(self) -> bool:
        return self.on is not None or self.during is not None

    def spec(self) -> dict[str, Any]:
        """The part's plan as written in the scenario (for the sample's log)."""
        keys = ("at", "after", "on", "during", "delay", "every", "timeout_s", "hold_s")
        out = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        if self.during is not None:
            out["max"] = self.max_count
        if not self.reacts:
            out.pop("hold_s", None)
            out.pop("delay", None)
        return out


@functools.lru_cache(maxsize=1)
def _switchboard_gaps() -> tuple[np.ndarray, np.ndarray, str]:
    """The histogram of gaps between turns in Switchboard (bin edges, counts) from human_ranges.json."""
    with resources.as_file(resources.files("turneval") / "data" / "human_ranges.json") as path:
        data = json.loads(path.read_text())
    gaps = data["response_gaps"]["segments"]
    return np.asarray(gaps["bin_edges_s"], float), np.asarray(gaps["counts"], float), gaps.get("note", "")


def human_gap(rng: np.random.Generator, at_least_s: float = 0.0) -> float:
    """A gap between turns as people leave them: drawn from Switchboard's gaps (84,704 speaker changes of 2438
    calls, turneval/data/human_ranges.json, ``response_gaps.segments``), uniform inside its 100 ms bin.

    Gaps under ``at_least_s`` are left out (the caller cannot answer before it can tell the agent stopped:
    the listener's ``hold``); the rest keep Switchboard's shape. The last bin (3 s and more) is drawn as 3 s."""
    edges, counts = _switchboard_gaps()[:2]
    lows, highs = edges[:-1].copy(), edges[1:].copy()
    keep = highs > at_least_s
    weights = counts * keep * np.clip((highs - np.maximum(lows, at_least_s)) / (highs - lows), 0, 1)
    i = int(rng.choice(len(weights), p=weights / weights.sum()))
    low = max(lows[i], at_least_s)
    return round(float(rng.uniform(low, highs[i])) if i < len(weights) - 1 else float(edges[-2]), 4)


def call_rng(seed: int, key: str, repeat: int = 0, caller: int = 0) -> np.random.Generator:
    """The random stream of one call: the same seed, sample, repeat and caller give the same draws."""
    return np.random.default_rng([int(seed), zlib.crc32(key.encode()), int(repeat), int(caller)])


@dataclass
class _Placed:
    part: int
    start: int  # sample on the call's clock
    pcm: np.ndarray

    @property
    def end(self) -> int:
        return self.start + self.pcm.size


@dataclass
class _PartState:
    """Where one part stands in a call."""

    armed_s: float | None = None  # the time from which the part waits (the previous part's end)
    gap_s: float | None = None  # the drawn delay (delay: human) or the set one
    event_s: float | None = None  # the agent event it waited for (agent_start / agent_end), once heard
    occurrences: list[dict[str, Any]] = field(default_factory=list)
    done_s: float | None = None
    timed_out: bool = False


class LiveCaller:
    """Plays a script of parts, deciding each reactive part's start from what the agent has done so far.

    ``frame(k, now_s)`` gives frame ``k`` of the caller's audio (int16 at ``sample_rate``), about to
    be sent at ``now_s`` on the call's clock; every part due in it is placed first.
    """

    def __init__(self, parts: list[ScriptPart], sample_rate: int, frame: int, listener: AgentListener,
                 rng: np.random.Generator, timeout_s: float, tail_s: float, lead_s: float = 0.3):
        from turneval.dataset_scripts.audio import resample

        self.parts, self.sr, self.frame_n, self.listener = parts, sample_rate, frame, listener
        self.timeout_s, self.tail_s, self.lead_s = timeout_s, tail_s, lead_s
        self.pcm = [int16_pcm(p.audio if sample_rate == 16000 else resample(p.audio, 16000, sample_rate)) for p in parts]
        self.state = [_PartState() for _ in parts]
        for part, state in zip(parts, self.state):
            if part.delay == "human":
                state.gap_s = human_gap(rng, part.hold_s)
            elif part.reacts:
                state.gap_s = float(part.delay)
        self.placed: list[_Placed] = []
        self.current = 0  # the part now waiting to be placed (len(parts): all placed)
        self.state[0].armed_s = 0.0 if parts[0].reacts else None

    # ------------------------------------------------------------------ placing parts
    def _place(self, index: int, at_s: float, now_sample: int, **log: Any) -> float:
        start = max(int(round(at_s * self.sr)), now_sample)
        self.placed.append(_Placed(index, start, self.pcm[index]))
        entry = {"planned_s": round(at_s, 4), "left_s": round(start / self.sr, 4), **log}
        self.state[index].occurrences.append(entry)
        return (start + self.pcm[index].size) / self.sr

    def _finish(self, index: int, done_s: float) -> None:
        self.state[index].done_s = done_s
        self.current = index + 1
        if self.current < len(self.parts):
            self.state[self.current].armed_s = done_s

    def _step_fixed(self, index: int, part: ScriptPart, now_sample: int) -> bool:
        previous = self.state[index - 1].done_s if index else None
        if part.at is not None:
            at = float(part.at)
        else:
            at = self.lead_s if previous is None else previous + float(part.after or 0.0)
        if int(round(at * self.sr)) >= now_sample + self.frame_n:
            return False  # not due in this frame yet
        self._finish(index, self._place(index, at, now_sample))
        return True

    def _step_on(self, index: int, part: ScriptPart, now_s: float, now_sample: int) -> bool:
        state = self.state[index]
        if state.event_s is None:
            if part.on == "agent_start":
                state.event_s = self.listener.start_after(state.armed_s, part.hold_s)
            else:
                state.event_s = self.listener.end_after(state.armed_s, now_s, part.hold_s)
        deadline = state.armed_s + (part.timeout_s if part.timeout_s is not None else self.timeout_s)
        if state.event_s is None:
            if now_s + self.frame_n / self.sr < deadline:
                return False
            if part.on == "agent_end" and self.listener.talking(now_s, part.hold_s) and now_s < state.armed_s + MAX_TURN_S:
                return False  # a reply under way is waited out: its end is what this part waits for
            state.timed_out = True
            self._finish(index, self._place(index, deadline, now_sample, event=None, timed_out=True))
            return True
        at = state.event_s + state.gap_s
        if int(round(at * self.sr)) >= now_sample + self.frame_n:
            return False
        self._finish(index, self._place(index, at, now_sample, event={"name": part.on, "at_s": round(state.event_s, 4)}))
        return True

    def _step_during(self, index: int, part: ScriptPart, now_s: float, now_sample: int) -> bool:
        state = self.state[index]
        if state.event_s is None:
            state.event_s = self.listener.start_after(state.armed_s, part.hold_s)
            if state.event_s is None:
                deadline = state.armed_s + (part.timeout_s if part.timeout_s is not None else self.timeout_s)
                if now_s + self.frame_n / self.sr < deadline:
                    return False
                state.timed_out = True
                self._finish(index, self._place(index, deadline, now_sample, event=None, timed_out=True))
                return True
        end = self.listener.end_after(state.event_s, now_s, part.hold_s)
        first = state.event_s + (state.gap_s if part.delay not in (0.0, None) else float(part.every))
        n = len(state.occurrences)
        due = first + n * float(part.every)
        if n:
            due = max(due, state.occurrences[-1]["left_s"] + self.pcm[index].size / self.sr)
        if end is not None or n >= part.max_count:
            # done when the agent's speech ends (what follows answers that end), or after the last repeat
            last = state.occurrences[-1]["left_s"] + self.pcm[index].size / self.sr if n else state.event_s
            self._finish(index, end if end is not None else last)
            return True
        if int(round(due * self.sr)) >= now_sample + self.frame_n:
            return False
        if not self.listener.talking(now_s, part.hold_s):
            return False  # its end is not known yet, but it is quiet: wait for the end (or its sound again)
        self._place(index, due, now_sample, event={"name": "agent_start", "at_s": round(state.event_s, 4)})
        return False

    def _advance(self, now_s: float, now_sample: int) -> None:
        while self.current < len(self.parts):
            index, part = self.current, self.parts[self.current]
            if part.on is not None:
                moved = self._step_on(index, part, now_s, now_sample)
            elif part.during is not None:
                moved = self._step_during(index, part, now_s, now_sample)
            else:
                moved = self._step_fixed(index, part, now_sample)
            if not moved:
                return

    # ------------------------------------------------------------------ the stream
    def frame(self, k: int, now_s: float) -> np.ndarray:
        """Caller frame ``k`` (int16), placing first every part that starts in it."""
        begin = k * self.frame_n
        self._advance(now_s, begin)
        out = np.zeros(self.frame_n, dtype=np.int32)
        for placed in self.placed:
            a, b = max(begin, placed.start), min(begin + self.frame_n, placed.end)
            if a < b:
                out[a - begin : b - begin] += placed.pcm[a - placed.start : b - placed.start]
        return np.clip(out, -32768, 32767).astype(np.int16)

    def note_sent(self, k: int, sent_s: float) -> None:
        """Frame ``k`` left at ``sent_s``: the parts whose first sample it carried left then."""
        begin, end = k * self.frame_n, (k + 1) * self.frame_n
        for placed in self.placed:
            if begin <= placed.start < end:
                for entry in self.state[placed.part].occurrences:
                    if entry["left_s"] == round(placed.start / self.sr, 4) and "sent_s" not in entry:
                        entry["sent_s"] = round(sent_s, 4)

    @property
    def all_placed(self) -> bool:
        return self.current >= len(self.parts)

    def end_s(self) -> float | None:
        """When the call may end: ``tail_s`` after the caller's last sound (None while parts wait)."""
        if not self.all_placed:
            return None
        return max(p.end for p in self.placed) / self.sr + self.tail_s

    def waiting_on_agent(self) -> bool:
        return not self.all_placed and self.parts[self.current].reacts

    def track(self, n_samples: int | None = None) -> np.ndarray:
        """The caller's audio as played (float32 at ``sample_rate``)."""
        n = n_samples if n_samples is not None else max((p.end for p in self.placed), default=0)
        out = np.zeros(n, dtype=np.float32)
        for placed in self.placed:
            piece = placed.pcm[: max(0, n - placed.start)].astype(np.float32) / 32768.0
            out[placed.start : placed.start + piece.size] += piece
        return out

    def spans(self) -> list[tuple[float, float, int]]:
        """Every placed part: (start_s, end_s, part index), in order of start."""
        return sorted((p.start / self.sr, p.end / self.sr, p.part) for p in self.placed)

    def log(self) -> list[dict[str, Any]]:
        """Per part: its text, its plan, the agent event it waited for, each time it left."""
        out = []
        for i, (part, state) in enumerate(zip(self.parts, self.state)):
            out.append({"part": i + 1, "text": part.text, "plan": part.spec(),
                        "gap_s": state.gap_s, "waited_from_s": None if state.armed_s is None else round(state.armed_s, 4),
                        "timed_out": state.timed_out, "left": state.occurrences,
                        "done_s": None if state.done_s is None else round(state.done_s, 4)})
        return out


def int16_pcm(audio: np.ndarray) -> np.ndarray:
    """Float audio (-1..1) as 16-bit PCM samples, clipped."""
    return np.clip(np.round(np.asarray(audio, dtype=np.float32) * 32767), -32768, 32767).astype(np.int16)
