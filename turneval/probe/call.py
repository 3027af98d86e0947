"""One call on one open connection: the caller's frames out, the agent's messages in, on one clock.

First, with ``settle_s`` > 0, a quiet line (silent frames, as a phone line sends) until the agent
has sent no sound for ``settle_s``; what it sends then is not recorded. The call's clock starts
after that. Caller frame ``k`` leaves when its last sample has been spoken, ``(k + 1)`` frames
after the start; the agent's audio is placed where a player would play it
(:class:`~turneval.probe.recorder.Recording`) and heard by the caller's
:class:`~turneval.probe.listener.AgentListener`, so a caller that reacts
(:class:`~turneval.probe.caller.LiveCaller`) can place its next part. A mark the agent sends is
answered when the audio queued before it has played (on the player's clock), and at once when a
clear drops that audio.

Every wait is bounded: the caller's script has an end (each part that waits for the agent has a
timeout), after it the probe waits at most ``timeout_s`` for an agent that has sent no audio,
and an agent that sends nothing at all for ``agent_timeout_s`` while the caller waits on it
(it stopped without closing) ends the call as ``stalled``.
"""
from __future__ import annotations

import asyncio
import math
from typing import Any, Protocol

import numpy as np

from turneval.probe.caller import LiveCaller
from turneval.probe.energy import loud_windows
from turneval.probe.listener import AgentListener
from turneval.probe.recorder import Recording
from turneval.probe.transports import (
    AgentAudio,
    AgentClear,
    AgentMark,
    AgentMessage,
    AgentTransport,
    ProbeError,
)


SETTLE_LIMIT_S = 30.0
"""How long the probe waits for a talking agent to fall silent before it gives that sample up."""


class AgentBusy(ProbeError):
    """The agent went on sending sound and never fell silent before a call (it is scored as a failed sample)."""


class AgentStalled(ProbeError):
    """The agent sent nothing for ``--agent-timeout`` s while the caller waited on it, and kept the line open."""


class CallerSource(Protocol):
    """What the call loop asks of the caller: its frames, and when it has nothing more to say."""

    def frame(self, k: int, now_s: float) -> np.ndarray: ...

    def note_sent(self, k: int, sent_s: float) -> None: ...

    def end_frame(self) -> int | None: ...

    def waiting_on_agent(self) -> bool: ...


class FixedCaller:
    """A caller whose whole audio is known before the call (int16 at the transport's rate)."""

    def __init__(self, pcm: np.ndarray, frame: int):
        self.pcm, self.frame_n = pcm, frame
        self.silence = np.zeros(frame, dtype=np.int16)

    def frame(self, k: int, now_s: float) -> np.ndarray:
        chunk = self.pcm[k * self.frame_n : (k + 1) * self.frame_n]
        if chunk.size < self.frame_n:
            chunk = np.concatenate([chunk, self.silence[: self.frame_n - chunk.size]])
        return chunk

    def note_sent(self, k: int, sent_s: float) -> None:
        return None

    def end_frame(self) -> int:
        return math.ceil(self.pcm.size / self.frame_n)

    def waiting_on_agent(self) -> bool:
        return False


class ReactiveCaller:
    """A :class:`LiveCaller` as the call loop sees it."""

    def __init__(self, live: LiveCaller):
        self.live = live

    def frame(self, k: int, now_s: float) -> np.ndarray:
        return self.live.frame(k, now_s)

    def note_sent(self, k: int, sent_s: float) -> None:
        self.live.note_sent(k, sent_s)

    def end_frame(self) -> int | None:
        end = self.live.end_s()
        return None if end is None else math.ceil(end * self.live.sr / self.live.frame_n)

    def waiting_on_agent(self) -> bool:
        return self.live.waiting_on_agent()


def _loud(samples: np.ndarray, sample_rate: int) -> bool:
    return bool(loud_windows(np.asarray(samples, dtype=np.float32) / 32768.0, sample_rate).any())


class Call:
    """Play a caller to an agent over an open transport and record what comes back (see the module docstring)."""

    def __init__(self, transport: AgentTransport, caller: CallerSource, timeout_s: float, settle_s: float = 0.0,
                 listener: AgentListener | None = None, agent_timeout_s: float | None = None,
                 settle_limit_s: float = SETTLE_LIMIT_S):
        self.transport, self.caller, self.timeout_s = transport, caller, timeout_s
        self.settle_s, self.settle_limit_s, self.agent_timeout_s = settle_s, settle_limit_s, agent_timeout_s
        self.sr, self.frame_n = transport.sample_rate, transport.frame_samples
        self.step_s = self.frame_n / self.sr
        self.rec = Recording(self.sr)
        self.listener = listener or AgentListener(self.sr)
        self.loop = asyncio.get_running_loop()
        self.opened = self.loop.time()
        self.t0: float | None = None
        self.last_loud: float | None = None
        self.last_message: float | None = None  # the agent's last message since the call's clock started
        self.heard_s = 0.0
        self.messages = 0
        self.frames_sent = 0
        self.marks: list[tuple[float, bytes | str]] = []  # (due on the call's clock, reply)

    async def _answer_marks(self, now: float | None, flush: bool = False) -> None:
        while self.marks and (flush or (now is not None and self.marks[0][0] <= now)):
            await self.transport.send_reply(self.marks.pop(0)[1])

    async def _settle(self) -> None:
        silence = np.zeros(self.frame_n, dtype=np.int16)
        k = 0
        while True:
            quiet_since = self.last_loud if self.last_loud is not None else self.opened
            if self.loop.time() - quiet_since >= self.settle_s:
                return
            if self.loop.time() - self.opened > self.settle_limit_s:
                raise AgentBusy(f"the agent at {self.transport.url} kept sending sound for {self.settle_limit_s:g} s on a "
                                f"new connection and never fell silent for {self.settle_s:g} s before the call")
            delay = self.opened + (k + 1) * self.step_s - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.transport.send_audio(silence)
            k += 1

    def _check_stalled(self, now: float) -> None:
        if self.agent_timeout_s is None or self.last_message is None or now - self.last_message < self.agent_timeout_s:
            return  # an agent that never sent anything is the --timeout's case
        raise AgentStalled(f"the agent at {self.transport.url} sent nothing for {self.agent_timeout_s:g} s while the "
                           "caller waited on it, and kept the connection open; given up (raise --agent-timeout for an "
                           "agent that thinks longer)")

    async def _send(self) -> None:
        if self.settle_s > 0:
            await self._settle()
        t0 = self.t0 = self.loop.time()
        timeout_frames = int(math.ceil(self.timeout_s / self.step_s))
        k = 0
        while True:
            end = self.caller.end_frame()
            if end is not None and k >= end and (self.rec.received_audio or k >= end + timeout_frames):
                return
            due = t0 + (k + 1) * self.step_s
            delay = due - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now = self.loop.time()
            if (end is None and self.caller.waiting_on_agent()) or (end is not None and k >= end):
                self._check_stalled(now)
            self.rec.send_lateness_s.append(max(0.0, now - due))
            await self.transport.send_audio(self.caller.frame(k, now - t0))
            self.caller.note_sent(k, self.loop.time() - t0)
            self.frames_sent = k + 1
            await self._answer_marks(self.loop.time() - t0)
            k += 1

    async def _heard_while_settling(self, events: list[Any]) -> None:
        """Before the call's clock starts only the agent's sound counts (it is not recorded)."""
        for event in events:
            if isinstance(event, AgentAudio) and _loud(event.samples, self.sr):
                self.last_loud = self.loop.time()
                self.heard_s += event.samples.size / self.sr
            elif isinstance(event, AgentClear) and event.reply is not None:
                await self.transport.send_reply(event.reply)
            elif isinstance(event, AgentMark):
                await self.transport.send_reply(event.reply)

    async def _heard(self, events: list[Any], now: float) -> None:
        for event in events:
            if isinstance(event, AgentAudio):
                self.rec.add_audio(event.samples, now)
                self.listener.add(event.samples, self.rec.arrivals[-1][2])
            elif isinstance(event, AgentClear):
                self.rec.clear(now)
                self.listener.clear(now)
                if event.reply is not None:
                    await self.transport.send_reply(event.reply)
                await self._answer_marks(None, flush=True)  # the provider answers every dropped mark at once
            elif isinstance(event, AgentMark):
                self.marks.append((self.rec.cursor / self.sr, event.reply))
                self.rec.messages.append((round(now, 6), {"mark": event.name}))
            elif isinstance(event, AgentMessage):
                self.rec.messages.append((round(now, 6), event.data))

    async def _receive(self) -> None:
        while True:
            events = await self.transport.receive()
            self.messages += 1
            if self.t0 is None:
                await self._heard_while_settling(events)
            else:
                self.last_message = self.loop.time()
                await self._heard(events, self.last_message - self.t0)

    def settled(self) -> dict[str, Any]:
        return {"settle_s": self.settle_s, "waited_s": round((self.t0 or self.loop.time()) - self.opened, 3),
                "agent_sound_heard_s": round(self.heard_s, 3),
                # the call's time 0 on the event loop's clock (time.monotonic: an agent's own log on this machine
                # reads the same clock)
                "call_start_monotonic": None if self.t0 is None else round(self.t0, 6)}

    async def run(self) -> list[BaseException | None]:
        """Send and receive until the caller is done or either side fails; the errors of the side(s) that ended."""
        send_task = asyncio.ensure_future(self._send())
        recv_task = asyncio.ensure_future(self._receive())
        try:
            done, _ = await asyncio.wait({send_task, recv_task}, return_when=asyncio.FIRST_COMPLETED)
            return [task.exception() for task in done]
        finally:
            for task in (send_task, recv_task):
                task.cancel()
            await asyncio.gather(send_task, recv_task, return_exceptions=True)

    def elapsed(self) -> float:
        return self.loop.time() - (self.t0 if self.t0 is not None else self.opened)
