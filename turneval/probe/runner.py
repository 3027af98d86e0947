"""The probe's loop: stream each sample to the agent in real time, record, write, go on.

Each sample is one connection: the caller's audio leaves in frames paced to the clock (frame
``k`` when its last sample has been spoken), the agent's messages are taken as they arrive and
placed on the same clock (:mod:`turneval.probe.recorder`). All loops are bounded: the caller's
audio has an end, and after it the probe waits at most ``timeout_s`` for an agent that has not
sent anything yet. Before each call's clock starts, the probe waits on the new connection until
the agent has been silent for ``settle_s`` (calls never bleed into each other), and a sample in
which the agent's sound still begins before the caller's is written under ``RUN_DIR/excluded/``
with a note. A sample the agent broke (it disconnected, stayed silent past the timeout, or
never fell silent before the call) is written under ``RUN_DIR/failed/`` with the reason, out of
the benchmark's folders, and the run goes on; an agent that cannot be reached, or sends audio at
another rate, stops the run with a message that says what to change.
"""
from __future__ import annotations

import asyncio
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from turneval.probe.energy import loud_windows, sound_spans
from turneval.probe.recorder import Recording, timing, write_sample
from turneval.probe.scenarios import Sample
from turneval.probe.summary import EXCLUDED
from turneval.probe.transports import (
    TRANSPORT_NAMES,
    AgentAudio,
    AgentClear,
    AgentDisconnected,
    AgentMark,
    AgentMessage,
    AgentTransport,
    ProbeError,
    make_transport,
    transport_class,
)


SETTLE_S = 2.0
"""Default agent silence required before a call's clock starts (see :func:`_stream`)."""
SETTLE_LIMIT_S = 30.0
"""How long the probe waits for a talking agent to fall silent before it gives that sample up."""


@dataclass
class ProbeSettings:
    """How to reach the agent and how long to wait for it.

    ``sample_rate`` None takes the transport's own (16 kHz; a telephone wire's provider rate).
    ``settle_s``: before each call's clock starts, the agent must have been silent this long on
    the new connection (a single-client server keeps its pipeline, so the end of the last
    call's answer, or a greeting, would otherwise land in this call).
    """

    agent: str
    transport: str = "raw"
    sample_rate: int | None = None
    frame_ms: int = 20
    timeout_s: float = 10.0
    connect_timeout_s: float = 5.0
    settle_s: float = SETTLE_S
    transport_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sample_rate is None:
            self.sample_rate = transport_class(self.transport).default_rate
        if self.settle_s < 0:
            raise ProbeError(f"--settle must be 0 or more seconds, not {self.settle_s:g}")

    def make(self, url: str | None = None) -> AgentTransport:
        return make_transport(self.transport, url or self.agent, sample_rate=self.sample_rate, frame_ms=self.frame_ms,
                              **self.transport_options)


@dataclass
class SampleOutcome:
    """How one sample went: ``status`` is ok, disconnected, timeout, busy (the agent never fell silent before it)
    or agent_first (agent audio before the caller's first sound: kept out of the scores); ``detail`` says why."""

    sample: Sample
    status: str
    detail: str
    recording: Recording
    caller: np.ndarray
    folder: Path | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    settle: dict[str, Any] = field(default_factory=dict)


SCORED = "ok"


def _int16(audio: np.ndarray) -> np.ndarray:
    return np.clip(np.round(np.asarray(audio, dtype=np.float32) * 32767), -32768, 32767).astype(np.int16)


def _loud(samples: np.ndarray, sample_rate: int) -> bool:
    return bool(loud_windows(np.asarray(samples, dtype=np.float32) / 32768.0, sample_rate).any())


class AgentBusy(ProbeError):
    """The agent went on sending sound and never fell silent before a call (it is scored as a failed sample)."""


def _hint_wrong_wire(transport: AgentTransport, err: AgentDisconnected) -> str:
    return (f"{err}, before it sent anything; if it does so at once, check that --transport {transport.name} is the "
            f"wire format it speaks (one of {', '.join(TRANSPORT_NAMES)})")


async def _stream(transport: AgentTransport, caller: np.ndarray, timeout_s: float, settle_s: float = 0.0,
                  settle_limit_s: float = SETTLE_LIMIT_S) -> tuple[Recording, str, str, dict[str, Any]]:
    """Play ``caller`` (int16 at the transport's rate) to the agent; record what comes back.

    First, with ``settle_s`` > 0, a quiet line (silent frames, as a phone line sends) until the
    agent has sent no sound for ``settle_s``; what it sends then is not recorded. The call's
    clock starts after that. A mark the agent sends is answered when the audio queued before
    it has played (on the player's clock), and at once when a clear drops that audio.
    """
    rec = Recording(transport.sample_rate)
    loop = asyncio.get_running_loop()
    frame = transport.frame_samples
    sr = transport.sample_rate
    step_s = frame / sr
    silence = np.zeros(frame, dtype=np.int16)
    opened = loop.time()
    state: dict[str, Any] = {"t0": None, "last_loud": None, "heard_s": 0.0, "messages": 0}
    marks: list[tuple[float, bytes | str]] = []  # (due on the call's clock, reply)

    async def answer_marks(now: float | None, flush: bool = False) -> None:
        while marks and (flush or (now is not None and marks[0][0] <= now)):
            await transport.send_reply(marks.pop(0)[1])

    async def settle() -> None:
        k = 0
        while True:
            quiet_since = state["last_loud"] if state["last_loud"] is not None else opened
            if loop.time() - quiet_since >= settle_s:
                return
            if loop.time() - opened > settle_limit_s:
                raise AgentBusy(f"the agent at {transport.url} kept sending sound for {settle_limit_s:g} s on a new "
                                f"connection and never fell silent for {settle_s:g} s before the call")
            delay = opened + (k + 1) * step_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await transport.send_audio(silence)
            k += 1

    async def sender() -> None:
        if settle_s > 0:
            await settle()
        t0 = state["t0"] = loop.time()
        n_frames = math.ceil(caller.size / frame)
        k = 0
        # after the caller's audio, a quiet line (as a microphone would send) while waiting for a silent agent
        limit = n_frames + int(math.ceil(timeout_s / step_s))
        while k < limit:
            if k >= n_frames and rec.received_audio:
                return
            due = t0 + (k + 1) * step_s
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            rec.send_lateness_s.append(max(0.0, loop.time() - due))
            chunk = caller[k * frame : (k + 1) * frame] if k < n_frames else silence
            if chunk.size < frame:
                chunk = np.concatenate([chunk, silence[: frame - chunk.size]])
            await transport.send_audio(chunk)
            await answer_marks(loop.time() - t0)
            k += 1

    async def receiver() -> None:
        while True:
            events = await transport.receive()
            state["messages"] += 1
            if state["t0"] is None:  # settling: not part of the call; only its sound counts
                for event in events:
                    if isinstance(event, AgentAudio) and _loud(event.samples, sr):
                        state["last_loud"] = loop.time()
                        state["heard_s"] += event.samples.size / sr
                    elif isinstance(event, AgentClear) and event.reply is not None:
                        await transport.send_reply(event.reply)
                    elif isinstance(event, AgentMark):
                        await transport.send_reply(event.reply)
                continue
            now = loop.time() - state["t0"]
            for event in events:
                if isinstance(event, AgentAudio):
                    rec.add_audio(event.samples, now)
                elif isinstance(event, AgentClear):
                    rec.clear(now)
                    if event.reply is not None:
                        await transport.send_reply(event.reply)
                    await answer_marks(None, flush=True)  # the provider answers every dropped mark at once
                elif isinstance(event, AgentMark):
                    marks.append((rec.cursor / sr, event.reply))
                    rec.messages.append((round(now, 6), {"mark": event.name}))
                elif isinstance(event, AgentMessage):
                    rec.messages.append((round(now, 6), event.data))

    send_task = asyncio.ensure_future(sender())
    recv_task = asyncio.ensure_future(receiver())
    status, detail = "ok", ""
    try:
        done, _ = await asyncio.wait({send_task, recv_task}, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            err = task.exception()
            at = loop.time() - (state["t0"] if state["t0"] is not None else opened)
            if isinstance(err, AgentDisconnected):
                where = "into the sample" if state["t0"] is not None else "after connecting, before the sample began"
                text = _hint_wrong_wire(transport, err) if not state["messages"] else str(err)
                status, detail = "disconnected", f"{text} ({at:.2f} s {where})"
            elif isinstance(err, AgentBusy):
                status, detail = "busy", f"{err}; nothing of this sample was played (raise --settle, or check the agent)"
            elif err is not None:
                raise err
        if status == "ok" and not rec.received_audio:
            status = "timeout"
            detail = (f"the agent at {transport.url} sent no audio during the sample nor in the {timeout_s:g} s after "
                      "the caller finished; check that it answers (raise --timeout for a slow agent)")
    finally:
        for task in (send_task, recv_task):
            task.cancel()
        await asyncio.gather(send_task, recv_task, return_exceptions=True)
    settled = {"settle_s": settle_s, "waited_s": round((state["t0"] or loop.time()) - opened, 3),
               "agent_sound_heard_s": round(state["heard_s"], 3),
               # the call's time 0 on the event loop's clock (time.monotonic: an agent's own log on this machine
               # reads the same clock)
               "call_start_monotonic": None if state["t0"] is None else round(state["t0"], 6)}
    return rec, status, detail, settled


def early_agent_audio(caller: np.ndarray, agent: np.ndarray, sample_rate: int) -> str | None:
    """Why a sample is kept out of the scores, when the agent's sound begins before the caller's first sound."""
    caller_spans = sound_spans(caller, sample_rate)
    agent_spans = sound_spans(agent, sample_rate)
    if not agent_spans:
        return None
    first_caller = caller_spans[0][0] if caller_spans else float("inf")
    if agent_spans[0][0] >= first_caller:
        return None
    return (f"the agent's audio began at {agent_spans[0][0]:.2f} s, before the caller's first sound at "
            f"{min(first_caller, caller.size / sample_rate):.2f} s: it belongs to something else (the rest of an earlier "
            "call on a single-client server, which keeps its pipeline between connections, or a greeting); kept out of "
            "the scores. Raise --settle to wait longer for the agent to fall silent between calls")


async def _run_sample(settings: ProbeSettings, url: str, sample: Sample) -> SampleOutcome:
    from turneval.dataset_scripts.audio import resample

    caller = sample.audio if settings.sample_rate == 16000 else resample(sample.audio, 16000, settings.sample_rate)
    transport = settings.make(url)
    await transport.open(settings.connect_timeout_s)
    try:
        rec, status, detail, settled = await _stream(transport, _int16(caller), settings.timeout_s, settings.settle_s)
    finally:
        await transport.close()
    caller = np.asarray(caller, dtype=np.float32)
    if status == "ok":
        early = early_agent_audio(caller, rec.agent_track(caller.size), rec.sample_rate)
        if early is not None:
            status, detail = "agent_first", early
    return SampleOutcome(sample, status, detail, rec, caller, settle=settled)


def play_sample(settings: ProbeSettings, url: str, sample: Sample) -> SampleOutcome:
    """Stream one sample to the agent at ``url`` and return what was recorded."""
    return asyncio.run(_run_sample(settings, url, sample))


def write_outcome(out_dir: Path, outcome: SampleOutcome, transport: dict[str, Any]) -> Path:
    """Write a sample folder (under ``failed/`` when the agent broke it, ``excluded/`` when it is kept out of the
    scores) with its probe.json log."""
    sample, rec, sr = outcome.sample, outcome.recording, outcome.recording.sample_rate
    agent = rec.agent_track(outcome.caller.size)
    ref = sample.reference_s
    outcome.timing = timing(agent, sr, ref, sample.event) if outcome.status == "ok" else {}
    lateness = rec.send_lateness_s or [0.0]
    log = {
        "task": sample.task, "sample": sample.sample_id, "status": outcome.status, "detail": outcome.detail,
        "reference_s": ref, "event_s": list(sample.event) if sample.event else None, "expect": sample.expect,
        "timing": outcome.timing, "transport": transport, "settle": outcome.settle,
        "caller_send_lateness_ms": {"median": round(1000 * statistics.median(lateness), 3),
                                    "max": round(1000 * max(lateness), 3)},
        "agent_chunks": [[a, n, p] for a, n, p in rec.arrivals], "clears_s": rec.clears,
        "messages": [[t, m] for t, m in rec.messages][:200],  # the first 200: a chatty agent must not bloat the log
    }
    base = out_dir if outcome.status == SCORED else out_dir / ("excluded" if outcome.status in EXCLUDED else "failed")
    outcome.folder = write_sample(base / sample.folder, outcome.caller, agent, sr, sample.write_metadata, log)
    return outcome.folder


def measure_transport_delay(settings: ProbeSettings, seconds: float = 2.0) -> dict[str, Any]:
    """Round trip of the probe's own transport stack through a loopback echo agent (same wire format).

    Every caller frame comes straight back; its delay is its arrival less the time it was due
    to leave. This is the part of a measured latency that belongs to the socket, the wire
    format and the probe's own loop, not to the agent (it does not include the network between
    the probe and a remote agent).
    """
    from turneval.probe.mock_agents import MockAgent

    rng = np.random.default_rng(0)
    noise = (0.1 * rng.standard_normal(int(seconds * settings.sample_rate))).astype(np.float32)
    if settings.transport == "webrtc":
        from turneval.probe.webrtc import WebRTCEcho

        echo = WebRTCEcho()
    else:
        echo = MockAgent("echo", wire=settings.transport, sample_rate=settings.sample_rate)
    with echo as url:
        transport = settings.make(url)

        async def go() -> Recording:
            await transport.open(settings.connect_timeout_s)
            try:
                rec, _, _, _ = await _stream(transport, _int16(noise), timeout_s=1.0)
            finally:
                await transport.close()
            return rec

        rec = asyncio.run(go())
    if settings.transport == "webrtc":  # frames are re-cut (Opus, 48 kHz) and the first ones may be lost
        delays = _delays_by_content(rec, _int16(noise), settings.sample_rate)
    else:
        step = transport.frame_samples / settings.sample_rate
        delays = [arrival - (i + 1) * step for i, (arrival, _, _) in enumerate(rec.arrivals)]
    if not delays:
        raise ProbeError("the loopback echo agent sent nothing back; the transport delay cannot be measured")
    delays_ms = sorted(1000 * d for d in delays)
    return {"median_ms": round(statistics.median(delays_ms), 3),
            "p95_ms": round(delays_ms[min(len(delays_ms) - 1, int(0.95 * len(delays_ms)))], 3),
            "max_ms": round(delays_ms[-1], 3), "frames": len(delays_ms),
            "what": "round trip of a 20 ms frame through a loopback echo agent with the same transport"}


def _delays_by_content(rec: Recording, sent: np.ndarray, sample_rate: int) -> list[float]:
    """Each echoed chunk's delay: its arrival less the time its last sample was sent, found by where it matches
    the sent noise (cross-correlation), so lost or re-cut frames do not shift the rest."""
    delays = []
    ref = sent.astype(np.float64)
    n_fft = 1 << int(np.ceil(np.log2(ref.size * 2)))
    spectrum = np.fft.rfft(ref, n_fft)
    for (arrival, _, _), (_, chunk) in zip(rec.arrivals, rec.chunks):
        if chunk.size < 64:
            continue
        piece = chunk.astype(np.float64)
        corr = np.fft.irfft(spectrum * np.conj(np.fft.rfft(piece, n_fft)), n_fft)[: ref.size - piece.size + 1]
        end = (int(np.argmax(corr)) + piece.size) / sample_rate
        delays.append(arrival - end)
    return delays


def concatenate(outcomes: list[SampleOutcome], gap_s: float = 1.0) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """The stereo recording of the whole run (caller left, agent right), samples 1 s apart, and where each lies."""
    pieces, index, at = [], [], 0.0
    for outcome in outcomes:
        if outcome.folder is None or outcome.status != "ok":
            continue
        sr = outcome.recording.sample_rate
        stereo = np.stack([outcome.caller, outcome.recording.agent_track(outcome.caller.size)])
        if sr != 16000:
            from turneval.dataset_scripts.audio import resample

            stereo = np.stack([resample(ch, sr, 16000) for ch in stereo])
        pieces += [stereo, np.zeros((2, int(gap_s * 16000)), dtype=np.float32)]
        index.append({"folder": outcome.sample.folder, "start_s": round(at, 3), "duration_s": round(stereo.shape[1] / 16000, 3)})
        at += stereo.shape[1] / 16000 + gap_s
    if not pieces:
        return np.zeros((2, 0), dtype=np.float32), index
    return np.concatenate(pieces, axis=1), index


def run_samples(samples: list[Sample], settings: ProbeSettings, out_dir: Path, url: str,
                on_sample: Callable[[SampleOutcome], None] | None = None, progress: bool = False) -> list[SampleOutcome]:
    """Play every sample in turn and write its folder as soon as it is complete.

    A disconnect or a silent agent marks that sample and the run goes on; an unreachable agent
    (the next connection refused) or a wrong audio format stops the run (ProbeError). Ctrl-C
    propagates after the samples already written; the one in flight is not written.
    """
    from tqdm.auto import tqdm

    outcomes: list[SampleOutcome] = []
    described = {**settings.make(url).describe(), "agent": settings.agent}
    with tqdm(samples, desc="probe", unit="sample", disable=not progress, leave=False) as bar:
        for sample in bar:
            bar.set_postfix_str(sample.folder)
            outcome = play_sample(settings, url, sample)
            write_outcome(out_dir, outcome, described)
            outcomes.append(outcome)
            if on_sample is not None:
                on_sample(outcome)
    return outcomes


def outcome_rows(outcomes: list[SampleOutcome]) -> list[dict[str, Any]]:
    """One JSON-ready row per sample for the run's probe.json."""
    rows = []
    for o in outcomes:
        rows.append({"folder": o.sample.folder, "task": o.sample.task, "status": o.status, "detail": o.detail,
                     "written_to": str(o.folder) if o.folder else None, "reference_s": o.sample.reference_s,
                     "expect": o.sample.expect, **{k: o.timing.get(k) for k in ("response_latency_s", "stop_latency_s")}})
    return rows


def settings_dict(settings: ProbeSettings) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(settings), default=str))
