"""The probe's runs: stream each sample to the agent in real time, record, write, go on.

Each call is one connection (:mod:`turneval.probe.call`): the caller's audio leaves in frames paced
to the clock (frame ``k`` when its last sample has been spoken), the agent's messages are taken as
they arrive and placed on the same clock (:mod:`turneval.probe.recorder`); a caller that reacts
(:mod:`turneval.probe.caller`) places its parts as it hears the agent. A run plays every sample
in turn, ``--repeat`` times, or by several callers at once (:func:`call_slots`). All loops are
bounded: the caller's script has an end, and after it the probe waits at most ``timeout_s`` for an
agent that has not sent anything yet. Before each call's clock starts, the probe waits on the new connection until
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
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from turneval.probe.call import AgentBusy, AgentStalled, Call, CallerSource, FixedCaller, ReactiveCaller
from turneval.probe.caller import LiveCaller, int16_pcm
from turneval.probe.energy import sound_spans
from turneval.probe.listener import AgentListener
from turneval.probe.recorder import Recording, timing, write_sample
from turneval.probe.scenarios import SAMPLE_RATE, Sample, mix_parts
from turneval.probe.summary import EXCLUDED
from turneval.probe.transport_registry import TRANSPORT_NAMES, make_transport, transport_class
from turneval.probe.transports import AgentDisconnected, AgentTransport, ProbeError


SETTLE_S = 2.0
"""Default agent silence required before a call's clock starts (see :mod:`turneval.probe.call`)."""
AGENT_TIMEOUT_S = 20.0
"""Default ``--agent-timeout``: how long the caller waits on an agent that sends nothing before giving the sample up."""


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
    agent_timeout_s: float = AGENT_TIMEOUT_S
    seed: int = 0  # the callers' draws (delay: human)

    def __post_init__(self) -> None:
        if self.sample_rate is None:
            self.sample_rate = transport_class(self.transport).default_rate
        if self.settle_s < 0:
            raise ProbeError(f"--settle must be 0 or more seconds, not {self.settle_s:g}")
        if self.agent_timeout_s <= 0:
            raise ProbeError(f"--agent-timeout must be more than 0 seconds, not {self.agent_timeout_s:g}")

    def make(self, url: str | None = None) -> AgentTransport:
        return make_transport(self.transport, url or self.agent, sample_rate=self.sample_rate, frame_ms=self.frame_ms,
                              **self.transport_options)


@dataclass
class SampleOutcome:
    """How one call went: ``status`` is ok, disconnected, timeout, stalled (the agent went quiet without closing),
    busy (the agent never fell silent before it) or agent_first (agent audio before the caller's first sound: kept
    out of the scores); ``detail`` says why. ``label`` tells repeats and simultaneous callers of one sample apart
    (``r2``: its second run, ``n4c3``: caller 3 of 4 at once); ``parts`` is the caller's parts' log and ``spans`` where
    each part played: (start_s, end_s, part index)."""

    sample: Sample
    status: str
    detail: str
    recording: Recording
    caller: np.ndarray
    folder: Path | None = None
    timing: dict[str, Any] = field(default_factory=dict)
    settle: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    reference_s: float | None = None
    event: tuple[float, float] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    parts: list[dict[str, Any]] = field(default_factory=list)
    spans: list[tuple[float, float, int]] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """The call's folder below RUN_DIR (the sample's, with ``-label`` for a repeat or a simultaneous caller)."""
        return self.sample.folder + (f"-{self.label}" if self.label else "")


SCORED = "ok"
FDB_AUDIO = ("input.wav", "output.wav")
CALL_AUDIO = ("caller.wav", "agent.wav")
"""turneval's own calls (calls/) name their audio for who speaks: they are not Full-Duplex-Bench sample folders, and
`turneval full-duplex-bench` leaves them alone."""


def _hint_wrong_wire(transport: AgentTransport, err: AgentDisconnected) -> str:
    return (f"{err}, before it sent anything; if it does so at once, check that --transport {transport.name} is the "
            f"wire format it speaks (one of {', '.join(TRANSPORT_NAMES)})")


def _status(call: Call, errors: list[BaseException | None], timeout_s: float) -> tuple[str, str]:
    """A call's status and why, from the errors of the side(s) that ended it (others propagate)."""
    status, detail = "ok", ""
    for err in errors:
        at = call.elapsed()
        if isinstance(err, AgentDisconnected):
            where = "into the sample" if call.t0 is not None else "after connecting, before the sample began"
            text = _hint_wrong_wire(call.transport, err) if not call.messages else str(err)
            status, detail = "disconnected", f"{text} ({at:.2f} s {where})"
        elif isinstance(err, AgentBusy):
            status, detail = "busy", f"{err}; nothing of this sample was played (raise --settle, or check the agent)"
        elif isinstance(err, AgentStalled):
            status, detail = "stalled", f"{err} ({at:.2f} s into the sample)"
        elif err is not None:
            raise err
    if status == "ok" and not call.rec.received_audio:
        status = "timeout"
        detail = (f"the agent at {call.transport.url} sent no audio during the sample nor in the {timeout_s:g} s after "
                  "the caller finished; check that it answers (raise --timeout for a slow agent)")
    return status, detail


async def _stream(transport: AgentTransport, caller: np.ndarray | CallerSource, timeout_s: float, settle_s: float = 0.0,
                  listener: AgentListener | None = None,
                  agent_timeout_s: float | None = None) -> tuple[Recording, str, str, dict[str, Any], int]:
    """Play ``caller`` (int16 at the transport's rate, or a caller that reacts) to the agent; record what comes back.

    Returns the recording, the status and why, the settling log and how many caller frames were sent
    (see :mod:`turneval.probe.call`)."""
    source = FixedCaller(caller, transport.frame_samples) if isinstance(caller, np.ndarray) else caller
    call = Call(transport, source, timeout_s, settle_s, listener=listener, agent_timeout_s=agent_timeout_s)
    errors = await call.run()
    status, detail = _status(call, errors, timeout_s)
    return call.rec, status, detail, call.settled(), call.frames_sent


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


def _live_caller(settings: ProbeSettings, sample: Sample, transport: AgentTransport, listener: AgentListener,
                 repeat: int, caller: int) -> LiveCaller:
    from turneval.probe.caller import call_rng

    rng = call_rng(settings.seed, sample.folder, repeat, caller)
    return LiveCaller(sample.parts, transport.sample_rate, transport.frame_samples, listener, rng,
                      timeout_s=settings.timeout_s, tail_s=sample.tail_s)


def _reactive_results(outcome: SampleOutcome, live: LiveCaller, n_samples: int) -> None:
    """The caller's track as played, where each part went, and the task's metadata from those places."""
    sample = outcome.sample
    outcome.caller = live.track(n_samples)
    outcome.spans = [(round(a, 4), round(b, 4), i) for a, b, i in live.spans()]
    outcome.parts = live.log()
    if not outcome.spans:
        return
    placed = [(a, sample.parts[i]) for a, _, i in outcome.spans]
    firsts = [i for _, _, i in outcome.spans]
    mark = firsts.index(sample.mark) if sample.mark in firsts else min(1, len(placed) - 1)
    end = max(b for _, b, _ in outcome.spans)
    tail = max(0.0, n_samples / live.sr - end)
    _, outcome.metadata, outcome.reference_s, outcome.event = mix_parts(placed, sample.task, mark, tail)


async def _run_sample(settings: ProbeSettings, url: str, sample: Sample, repeat: int = 0, caller_index: int = 0,
                      label: str = "") -> SampleOutcome:
    from turneval.dataset_scripts.audio import resample

    transport = settings.make(url)
    listener = AgentListener(transport.sample_rate)
    live = _live_caller(settings, sample, transport, listener, repeat, caller_index) if sample.reacts else None
    if live is None:
        caller = sample.audio if settings.sample_rate == SAMPLE_RATE else resample(sample.audio, SAMPLE_RATE, settings.sample_rate)
        source: CallerSource | np.ndarray = int16_pcm(caller)
    else:
        source = ReactiveCaller(live)
    await transport.open(settings.connect_timeout_s)
    try:
        rec, status, detail, settled, frames = await _stream(transport, source, settings.timeout_s, settings.settle_s,
                                                            listener, settings.agent_timeout_s)
    finally:
        await _close(transport, settings.agent_timeout_s)
    outcome = SampleOutcome(sample, status, detail, rec, np.zeros(0, dtype=np.float32), settle=settled, label=label)
    if live is None:
        outcome.caller = np.asarray(caller, dtype=np.float32)
        outcome.reference_s, outcome.event, outcome.metadata = sample.reference_s, sample.event, dict(sample.metadata)
        outcome.spans = [(a, b, i) for i, (a, b) in enumerate(sample.spans)]
        outcome.parts = [dict(entry) for entry in sample.plan]
    else:
        _reactive_results(outcome, live, frames * transport.frame_samples)
    waits_first = sample.reacts and sample.parts[0].reacts  # the caller waits for the agent to speak first
    if status == "ok" and not waits_first:
        early = early_agent_audio(outcome.caller, rec.agent_track(outcome.caller.size), rec.sample_rate)
        if early is not None:
            outcome.status, outcome.detail = "agent_first", early
    return outcome


async def _close(transport: AgentTransport, limit_s: float) -> None:
    """Close the connection, waiting at most ``limit_s`` for an agent that does not answer the close."""
    try:
        await asyncio.wait_for(transport.close(), timeout=limit_s)
    except asyncio.TimeoutError:
        pass


def write_outcome(out_dir: Path, outcome: SampleOutcome, transport: dict[str, Any]) -> Path:
    """Write a call's folder (under ``failed/`` when the agent broke it, ``excluded/`` when it is kept out of the
    scores) with its probe.json log: timing, the caller's parts (plan, the agent event each waited for, when it
    left), and for turneval's own calls the verdict."""
    from turneval.probe.verdicts import judge

    sample, rec, sr = outcome.sample, outcome.recording, outcome.recording.sample_rate
    agent = rec.agent_track(outcome.caller.size)
    ref = outcome.reference_s
    outcome.timing = timing(agent, sr, ref, outcome.event) if outcome.status == "ok" else {}
    if outcome.status == "ok":
        outcome.verdict = judge(outcome, agent, sr)
    lateness = rec.send_lateness_s or [0.0]
    log = {
        "task": sample.task, "sample": sample.sample_id, "call": outcome.label or None, "status": outcome.status,
        "detail": outcome.detail, "reference_s": ref, "event_s": list(outcome.event) if outcome.event else None,
        "expect": sample.expect, "timing": outcome.timing, "verdict": outcome.verdict or None,
        "parts": outcome.parts,
        "transport": transport, "settle": outcome.settle,
        "caller_send_lateness_ms": {"median": round(1000 * statistics.median(lateness), 3),
                                    "max": round(1000 * max(lateness), 3)},
        "agent_chunks": [[a, n, p] for a, n, p in rec.arrivals], "clears_s": rec.clears,
        "messages": [[t, m] for t, m in rec.messages][:200],  # the first 200: a chatty agent must not bloat the log
    }
    base = out_dir if outcome.status == SCORED else out_dir / ("excluded" if outcome.status in EXCLUDED else "failed")

    def write_metadata(folder: Path) -> None:
        for name, data in outcome.metadata.items():
            (folder / name).write_text(json.dumps(data, indent=1) + "\n")
        sample.write_metadata(folder, only_copies=True)

    from turneval.dataset_scripts.files import to_jsonable

    names = CALL_AUDIO if sample.version == "calls" else FDB_AUDIO
    outcome.folder = write_sample(base / outcome.path, outcome.caller, agent, sr, write_metadata, to_jsonable(log), names)
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
                rec = (await _stream(transport, int16_pcm(noise), timeout_s=1.0))[0]
            finally:
                await transport.close()
            return rec

        rec = asyncio.run(go())
    if settings.transport == "webrtc":  # frames are re-cut (Opus, 48 kHz) and the first ones may be lost
        delays = _delays_by_content(rec, int16_pcm(noise), settings.sample_rate)
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
        index.append({"folder": outcome.path, "start_s": round(at, 3), "duration_s": round(stereo.shape[1] / 16000, 3)})
        at += stereo.shape[1] / 16000 + gap_s
    if not pieces:
        return np.zeros((2, 0), dtype=np.float32), index
    return np.concatenate(pieces, axis=1), index


@dataclass(frozen=True)
class CallSlot:
    """One call of a run: which sample, its repeat, which of the simultaneous callers makes it, and its label."""

    sample: Sample
    repeat: int = 0
    caller: int = 0
    label: str = ""


def call_slots(samples: list[Sample], repeat: int = 1, callers: int = 1, levels: int = 1) -> list[list[CallSlot]]:
    """Per caller, the calls it makes in turn: every sample ``repeat`` times. Labels tell the calls apart:
    ``r2`` for a second run, ``n4c3`` for caller 3 of 4 at once (always, when a run has several levels)."""
    out = []
    for c in range(callers):
        slots = []
        for r in range(repeat):
            parts = ([f"n{callers}c{c + 1}"] if callers > 1 or levels > 1 else []) + ([f"r{r + 1}"] if repeat > 1 else [])
            slots += [CallSlot(sample, r, c, "-".join(parts)) for sample in samples]
        out.append(slots)
    return out


def play_sample(settings: ProbeSettings, url: str, sample: Sample, slot: CallSlot | None = None) -> SampleOutcome:
    """Stream one sample to the agent at ``url`` and return what was recorded."""
    slot = slot or CallSlot(sample)
    return asyncio.run(_run_sample(settings, url, sample, slot.repeat, slot.caller, slot.label))


async def _callers_at_once(settings: ProbeSettings, url: str, plan: list[list[CallSlot]], bar: Any) -> list[SampleOutcome]:
    """Every caller's calls in turn, the callers at the same time (each call its own connection, clock and
    recording); the outcomes in the order the calls ended (``bar`` counts them)."""
    done: list[SampleOutcome] = []

    async def one_caller(slots: list[CallSlot]) -> None:
        for slot in slots:
            done.append(await _run_sample(settings, url, slot.sample, slot.repeat, slot.caller, slot.label))
            bar.update(1)

    await asyncio.gather(*(one_caller(slots) for slots in plan))
    return done


def run_samples(samples: list[Sample], settings: ProbeSettings, out_dir: Path, url: str,
                on_sample: Callable[[SampleOutcome], None] | None = None, progress: bool = False,
                plan: list[list[CallSlot]] | None = None) -> list[SampleOutcome]:
    """Play every sample and write each call's folder; ``plan`` (:func:`call_slots`: repeats, callers at once)
    defaults to one caller playing each sample once.

    One caller: each call is written as soon as it is complete. Several: they are written when all
    the callers are done (writing files while other calls stream would delay their frames). A
    disconnect, a silent or stalled agent marks that call and the run goes on; an unreachable agent
    (the next connection refused) or a wrong audio format stops the run (ProbeError). Ctrl-C
    propagates after the calls already written; those in flight are not written.
    """
    from tqdm.auto import tqdm

    outcomes: list[SampleOutcome] = []
    described = {**settings.make(url).describe(), "agent": settings.agent}
    plan = plan or call_slots(samples)

    def keep(outcome: SampleOutcome) -> None:
        write_outcome(out_dir, outcome, described)
        outcomes.append(outcome)
        if on_sample is not None:
            on_sample(outcome)

    if len(plan) > 1:
        with tqdm(total=sum(map(len, plan)), desc=f"probe, {len(plan)} callers", unit="call", disable=not progress,
                  leave=False) as bar:
            finished = asyncio.run(_callers_at_once(settings, url, plan, bar))
        for outcome in finished:
            keep(outcome)
        return outcomes
    with tqdm(plan[0], desc="probe", unit="call", disable=not progress, leave=False) as bar:
        for slot in bar:
            bar.set_postfix_str(slot.sample.folder)
            keep(play_sample(settings, url, slot.sample, slot))
    return outcomes


def outcome_rows(outcomes: list[SampleOutcome]) -> list[dict[str, Any]]:
    """One JSON-ready row per sample for the run's probe.json."""
    rows = []
    for o in outcomes:
        rows.append({"folder": o.path, "task": o.sample.task, "status": o.status, "detail": o.detail,
                     "written_to": str(o.folder) if o.folder else None, "reference_s": o.reference_s,
                     "expect": o.sample.expect, **{k: o.timing.get(k) for k in ("response_latency_s", "stop_latency_s")},
                     "verdict": o.verdict or None})
    return rows


def settings_dict(settings: ProbeSettings) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(settings), default=str))
