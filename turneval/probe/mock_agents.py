"""Mock voice agents on loopback, for the tests, the benchmark and the docs.

Each mock is a WebSocket server on 127.0.0.1 that speaks the raw PCM, the Pipecat or a telephone
provider's wire format (the agent's end of :mod:`turneval.probe.telephony`) and behaves by a few numbers (:class:`MockBehaviour`), so the probe's figures can be
checked against what the mock was told to do:

- ``cascaded``: waits for ``silence_s`` of caller silence, answers ``delay_s`` later, never
  backchannels, and does not listen while it talks (no barge-in);
- ``eager``: the same with a short silence: it answers at every pause;
- ``duplex``: answers after a silence, says "yeah" every ``backchannel_after_s`` of caller
  speech, and stops ``yield_after_s`` after the caller starts talking over it;
- ``polite``: answers 1.1 s after the caller's last sound (an 8 s answer) and stops 0.3 s into
  any overlap, backchannels included;
- ``steady``: as ``polite``, but talks on through caller sound shorter than 0.6 s (backchannels);
- ``variable``: draws each reply's latency, uniform 1.1 +- 0.2 s;
- ``echo``: sends every caller frame straight back (the transport-delay measurement).

With ``announce=True`` (raw wire) a mock sends its own log of each reply as a text message
(``{"type": "mock_reply", "latency_s": ...}``), which the probe keeps in the call's log: the
agent's own figure beside the probe's.

The answer starts ``silence_s + delay_s`` after the caller's last sound, placed on the
caller's own clock (the arrival of the frame that carried it, less how far into the frame the
sound ended), so the configured latency is exact to the timer, not to a 20 ms frame. Audio
is sent in real-time paced 20 ms frames, as Pipecat's output transport does.

``single_client=True`` makes it behave as a single-client server does (Pipecat's
``SingleClientWebsocketServerTransport``): one pipeline for every connection, so an answer still
playing when a call hangs up goes on, and its rest reaches the next connection.

Serve one from a shell: ``python -m turneval.probe.mock_agents duplex --port 8765``.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import threading
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from turneval.probe import pipecat_frames, telephony
from turneval.probe.energy import WINDOW_S, loud_windows


WIRES = ("raw", "pipecat", *telephony.WIRES)


@dataclass(frozen=True)
class MockBehaviour:
    """How a mock agent takes turns. Times in seconds, on the caller's clock."""

    name: str
    silence_s: float = 0.8
    delay_s: float = 0.4
    yields: bool = False
    yield_after_s: float = 0.2
    backchannel_after_s: float | None = None
    answer: str = "Sure the pharmacy opens at nine tomorrow morning and closes at six"
    backchannel: str = "yeah"
    echo: bool = False
    talks_through_s: float | None = None  # a yielding agent talks on through caller sound shorter than this
    delay_spread_s: float = 0.0  # each reply's delay drawn around delay_s: normal (this sd) or uniform (+- this)
    delay_distribution: str = "normal"

    @property
    def latency_s(self) -> float:
        """From the caller's last sound to the first sound of the answer (the middle of the draws, when drawn)."""
        return self.silence_s + self.delay_s

    @property
    def yield_at_s(self) -> float:
        """How far into the caller's overlapping speech a yielding agent stops."""
        return max(self.yield_after_s, self.talks_through_s or 0.0)

    def draw_latency(self, rng: np.random.Generator) -> float:
        if self.delay_spread_s <= 0:
            return self.latency_s
        if self.delay_distribution == "uniform":
            delay = rng.uniform(self.delay_s - self.delay_spread_s, self.delay_s + self.delay_spread_s)
        else:
            delay = rng.normal(self.delay_s, self.delay_spread_s)
        return self.silence_s + max(0.0, float(delay))


LONG_ANSWER = ("Sure the pharmacy on the main street opens at nine tomorrow morning and it closes at six in the "
               "evening but on sunday it opens at ten and closes at four")
"""An answer long enough (about 8 s) to be talked over or backchannelled 2 s and more into it."""
MOCK_BEHAVIOURS: dict[str, MockBehaviour] = {
    "cascaded": MockBehaviour("cascaded", silence_s=0.8, delay_s=0.4),
    "eager": MockBehaviour("eager", silence_s=0.3, delay_s=0.1),
    "duplex": MockBehaviour("duplex", silence_s=0.5, delay_s=0.1, yields=True, yield_after_s=0.2, backchannel_after_s=3.0),
    "echo": MockBehaviour("echo", echo=True),
    # the calls' agents (barge-in, backchannel, dialogue suites; benchmarks/validation/probe_calls.py)
    "polite": MockBehaviour("polite", silence_s=0.8, delay_s=0.3, yields=True, yield_after_s=0.3, answer=LONG_ANSWER),
    "steady": MockBehaviour("steady", silence_s=0.8, delay_s=0.3, yields=True, yield_after_s=0.3, talks_through_s=0.6,
                            answer=LONG_ANSWER),
    "variable": MockBehaviour("variable", silence_s=0.6, delay_s=0.5, delay_spread_s=0.2, delay_distribution="uniform"),
}


@functools.lru_cache(maxsize=8)
def _speech(text: str, sample_rate: int) -> np.ndarray:
    """The mock's voice (eSpeak NG, as the synthetic corpus) as int16 at ``sample_rate``."""
    from turneval.dataset_scripts.audio import resample
    from turneval.dataset_scripts.grids import SAMPLE_RATE
    from turneval.dataset_scripts.synthetic.espeak import Voice, synthesize
    from turneval.dataset_scripts.synthetic.material import text_to_tokens

    audio = synthesize(text_to_tokens(text, "."), Voice("en-us+f3", rate=175, pitch=60)).audio
    if sample_rate != SAMPLE_RATE:
        audio = resample(audio, SAMPLE_RATE, sample_rate)
    return np.clip(np.round(audio * 32767), -32768, 32767).astype(np.int16)


class _Session:
    """One caller connection: reads the caller's audio, decides, talks."""

    def __init__(self, agent: "MockAgent", ws: Any, breaks: bool = False):
        self.agent, self.ws, self.b = agent, ws, agent.behaviour
        self.breaks = breaks and agent.disconnect_after_s is not None
        self.sr = agent.sample_rate
        self.phone = telephony.WIRES[agent.wire](agent.sample_rate) if agent.wire in telephony.WIRES else None
        self.loop = asyncio.get_running_loop()
        self.received = 0  # caller samples so far: the caller's clock
        self.last_sound = None  # caller time of the end of the last loud window
        self.run_start = None  # caller time the current stretch of speech began
        self.pending = False  # the caller said something not yet answered
        self.talk: asyncio.Task | None = None
        self.talk_kind = ""
        self.talk_started = 0.0  # caller time
        self.talk_wall = 0.0
        self.last_backchannel = -1e9
        self.rng = np.random.default_rng([agent.seed, agent.sessions])  # each reply's latency, when drawn
        self.replies: list[dict[str, Any]] = []

    def wall(self, caller_t: float, arrival: float) -> float:
        """Wall time of a caller instant, from the arrival of the frame that ended at ``self.received``."""
        return arrival - (self.received / self.sr - caller_t)

    async def send_pcm(self, pcm: np.ndarray) -> None:
        if self.phone is not None:
            await self.ws.send(self.phone.agent_media(pcm))
        elif self.agent.wire == "pipecat":
            await self.ws.send(pipecat_frames.encode_audio(pcm.tobytes(), self.agent.wire_rate or self.sr, 1))
        else:
            await self.ws.send(pcm.astype("<i2").tobytes())

    async def send_clear(self) -> None:
        if self.phone is not None:
            await self.ws.send(self.phone.agent_clear())
        elif self.agent.wire == "pipecat":
            await self.ws.send(pipecat_frames.encode_interruption())
        else:
            await self.ws.send(json.dumps({"type": "clear"}))

    def decode(self, message: bytes | str) -> np.ndarray | None:
        if self.phone is not None:
            return self.phone.parse_caller(message)
        if isinstance(message, str):
            return None  # control messages (start/end) carry nothing the mock acts on
        if self.agent.wire == "pipecat":
            frame = pipecat_frames.decode_frame(message)
            return np.frombuffer(frame.audio, dtype="<i2") if frame.kind == "audio" else None
        return np.frombuffer(message, dtype="<i2")

    async def _play(self, pcm: np.ndarray, start_wall: float, note: dict[str, Any] | None = None) -> None:
        """Send ``pcm`` in 20 ms frames, frame i at ``start_wall + i * 20 ms`` (real-time pacing); ``note`` (the
        mock's own log of a reply) goes just before the first frame, so a reply cancelled before it began has none.

        A frame due while no caller is connected is dropped and playing goes on, as a single-client
        server's output does; a later connection hears the rest."""
        from websockets.exceptions import ConnectionClosed

        step = self.sr // 50
        for i in range(0, pcm.size, step):
            delay = start_wall + (i / self.sr) - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                if note is not None and i == 0:
                    self.replies.append(note)
                    await self.ws.send(json.dumps(note))
                await self.send_pcm(pcm[i : i + step])
            except ConnectionClosed:
                if not self.agent.single_client:
                    return

    def start_talking(self, kind: str, pcm: np.ndarray, start_wall: float, caller_t: float,
                      note: dict[str, Any] | None = None) -> None:
        self.talk_kind, self.talk_started, self.talk_wall = kind, caller_t, start_wall
        self.talk = asyncio.ensure_future(self._play(pcm, start_wall, note))

    def talking(self) -> bool:
        return self.talk is not None and not self.talk.done()

    async def on_frame(self, samples: np.ndarray, arrival: float) -> None:
        frame_start = self.received / self.sr
        self.received += samples.size
        now = self.received / self.sr
        loud = loud_windows(samples.astype(np.float32) / 32768.0, self.sr)
        if loud.any():
            onset = frame_start + float(np.argmax(loud)) * WINDOW_S
            end = frame_start + min((int(np.flatnonzero(loud)[-1]) + 1) * WINDOW_S, samples.size / self.sr)
            if self.last_sound is None or onset - self.last_sound >= self.b.silence_s:
                self.run_start = onset  # a new stretch of the caller's speech
            self.last_sound = end
            if self.talking() and self.talk_kind == "answer":
                if self.b.yields:
                    barge = max(self.run_start, self.talk_started)
                    if now - barge >= self.b.yield_at_s:  # the caller kept talking over it: stop
                        await asyncio.sleep(max(0.0, self.wall(barge + self.b.yield_at_s, arrival) - self.loop.time()))
                        self.talk.cancel()
                        await self.send_clear()
                        self.pending = True
                    return
                return  # half-duplex: not listening while it talks
            if self.talk_kind == "answer_pending" and self.b.yields:
                if self.talk is not None:
                    self.talk.cancel()  # the caller went on before the answer began: a duplex agent holds back
                self.talk, self.talk_kind = None, ""
            self.pending = True
            after = self.b.backchannel_after_s
            if after is not None and not self.talking() and now - max(self.run_start, self.last_backchannel) >= after:
                self.last_backchannel = now
                self.start_talking("backchannel", _speech(self.b.backchannel, self.sr), arrival, now)
            return
        if self.pending and not self.talking() and now - self.last_sound >= self.b.silence_s:
            self.pending = False
            latency = self.b.draw_latency(self.rng)
            begin = self.last_sound + latency
            note = None
            if self.agent.announce:  # the agent's own log of this reply, on the caller's clock (raw wire: a text message)
                note = {"type": "mock_reply", "caller_sound_end_s": round(self.last_sound, 6),
                        "answer_start_s": round(begin, 6), "latency_s": round(latency, 6)}
            self.start_talking("answer", _speech(self.b.answer, self.sr), self.wall(begin, arrival), begin, note)
            if self.b.yields:
                self.talk_kind = "answer_pending" if begin > now else "answer"

    async def run(self) -> None:
        from websockets.exceptions import ConnectionClosed

        agent = self.agent
        if agent.wire == "raw" and agent.wire_rate:
            await self.ws.send(json.dumps({"type": "config", "sample_rate": agent.wire_rate}))
        try:
            async for message in self.ws:
                arrival = self.loop.time()
                samples = self.decode(message)
                if samples is None:
                    continue
                if self.breaks and self.received / self.sr >= agent.disconnect_after_s:
                    await self.ws.close(code=1011, reason="mock agent told to fail")
                    return
                if agent.silent:
                    self.received += samples.size
                    continue
                if self.b.echo:
                    await self.send_pcm(samples.astype(np.int16))
                    continue
                if self.talk_kind == "answer_pending" and self.talking() and arrival >= self.talk_wall:
                    self.talk_kind = "answer"
                await self.on_frame(samples, arrival)
        except ConnectionClosed:
            pass
        finally:
            if self.talk is not None and not self.agent.single_client:
                self.talk.cancel()


@dataclass(frozen=True)
class MockFaults:
    """What makes a mock a bad agent (the tests'): ``wire_rate`` claims another sample rate,
    ``silent`` never answers, ``disconnect_after_s`` drops the first ``disconnect_sessions``
    connections after that much caller audio."""

    wire_rate: int | None = None
    silent: bool = False
    disconnect_after_s: float | None = None
    disconnect_sessions: int = 1


class MockAgent:
    """A mock agent served on 127.0.0.1 in a thread of its own (its own event loop).

    ``with MockAgent("duplex") as url:`` serves it for the block. ``wire`` is raw or pipecat;
    ``faults`` (:class:`MockFaults`) make it a bad agent; ``single_client`` keeps one session (its
    clock, its answer in flight) across connections, as a single-client server does.
    """

    def __init__(self, behaviour: str | MockBehaviour = "duplex", *, wire: str = "raw", sample_rate: int | None = None,
                 port: int = 0, faults: MockFaults = MockFaults(), single_client: bool = False,
                 announce: bool = False, seed: int = 0, **overrides: Any):
        base = MOCK_BEHAVIOURS[behaviour] if isinstance(behaviour, str) else behaviour
        self.behaviour = replace(base, **overrides) if overrides else base
        if wire not in WIRES:
            raise ValueError(f"wire must be one of {', '.join(WIRES)}, not {wire!r}")
        if sample_rate is None:
            sample_rate = telephony.WIRES[wire].rate if wire in telephony.WIRES else 16000
        self.wire, self.sample_rate, self.port = wire, int(sample_rate), port
        self.wire_rate, self.silent, self.disconnect_after_s = faults.wire_rate, faults.silent, faults.disconnect_after_s
        self.disconnect_sessions = faults.disconnect_sessions
        self.single_client = single_client
        if announce and wire != "raw":
            raise ValueError("announce (the mock's own log of each reply as a text message) needs the raw wire")
        self.announce, self.seed = announce, seed
        self._shared: _Session | None = None
        self.sessions = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self.behaviour), "latency_s": self.behaviour.latency_s, "wire": self.wire,
                "sample_rate": self.sample_rate}

    async def _handler(self, ws: Any) -> None:
        self.sessions += 1
        if self.single_client and self._shared is not None:
            self._shared.ws = ws  # the same pipeline, a new caller
            await self._shared.run()
            return
        session = _Session(self, ws, breaks=self.sessions <= self.disconnect_sessions)
        if self.single_client:
            self._shared = session
        await session.run()

    async def _serve(self) -> None:
        from websockets.asyncio.server import serve

        self._stop = asyncio.Event()
        async with serve(self._handler, "127.0.0.1", self.port, compression=None, max_size=None, ping_interval=None) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    def _main(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as err:  # reported to the starting thread
            self._error = err
            self._ready.set()
        finally:
            self._loop.close()

    def start(self) -> str:
        if not self.behaviour.echo and not self.silent:
            _speech(self.behaviour.answer, self.sample_rate)  # synthesised before the first caller, not during a sample
            if self.behaviour.backchannel_after_s is not None:
                _speech(self.behaviour.backchannel, self.sample_rate)
        self._thread = threading.Thread(target=self._main, name=f"mock-agent-{self.behaviour.name}", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._error is not None:
            raise RuntimeError(f"mock agent {self.behaviour.name} did not start on 127.0.0.1:{self.port}: {self._error}")
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m turneval.probe.mock_agents",
                                     description="Serve a mock voice agent on 127.0.0.1 until Ctrl-C.")
    parser.add_argument("behaviour", choices=sorted(MOCK_BEHAVIOURS))
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--wire", choices=WIRES, default="raw")
    parser.add_argument("--single-client", action="store_true",
                        help="one session for every connection, as a single-client server")
    parser.add_argument("--sample-rate", type=int, default=None, help="default: 16000, a telephone wire's own rate")
    args = parser.parse_args(argv)
    agent = MockAgent(args.behaviour, wire=args.wire, sample_rate=args.sample_rate, port=args.port,
                      single_client=args.single_client)
    url = agent.start()
    print(f"mock agent {args.behaviour} ({args.wire}) on {url}: {json.dumps(agent.describe())}", flush=True)
    try:
        while agent._thread is not None and agent._thread.is_alive():
            agent._thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
