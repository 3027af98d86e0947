"""How the probe talks to an agent: one small class per wire format.

A transport opens a connection, sends the caller's audio one frame at a time, and hands back
what the agent sent as events (:class:`AgentAudio`, :class:`AgentClear`, :class:`AgentMessage`).
It knows nothing about scenarios, timing or recording, so a LiveKit or SIP transport later is
one more subclass of :class:`AgentTransport` and a line in
:data:`turneval.probe.transport_registry.TRANSPORTS`.

- ``raw`` (:class:`RawPCMTransport`): binary WebSocket messages of 16-bit little-endian mono
  PCM both ways, at ``sample_rate``; text messages are JSON control messages. The probe can
  send a start message on connect and an end message before closing; a text message from the
  agent whose ``type`` is ``clear`` (configurable) drops the agent audio not yet played, and
  one that carries ``sample_rate`` is checked against the probe's rate.
- ``pipecat`` (:class:`PipecatTransport`): Pipecat's ``ProtobufFrameSerializer`` frames
  (:mod:`turneval.probe.pipecat_frames`); an ``InterruptionFrame`` drops the queued audio, as
  Pipecat's own clients do; start and end messages travel as ``MessageFrame`` (RTVI).
- ``twilio``, ``telnyx``, ``plivo``, ``exotel``, ``vonage`` (:class:`TelephonyTransport`): the
  provider's media stream as the provider sends it (:mod:`turneval.probe.telephony`).
- ``webrtc``: a Pipecat SmallWebRTC call (:mod:`turneval.probe.webrtc`, imported on demand by
  :mod:`turneval.probe.transport_registry`, which maps each ``--transport`` name to its class).

``websockets`` is imported when a connection opens, so importing this module stays light.
"""
from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from turneval.probe import pipecat_frames, telephony


class ProbeError(Exception):
    """A problem the user can fix; the message names the agent or file, the problem and what to do."""


class AgentUnreachable(ProbeError):
    """The connection could not be opened (refused, wrong URL, handshake failed)."""


class AgentFormatError(ProbeError):
    """The agent's audio is not what the probe was told to expect (sample rate, sample format)."""


class AgentDisconnected(ProbeError):
    """The agent closed the connection while a sample was running."""


@dataclass
class AgentAudio:
    """Agent speech: int16 mono samples at the transport's rate."""

    samples: np.ndarray


@dataclass
class AgentClear:
    """The agent asks the player to drop what it has queued (it was interrupted); ``reply``: the wire's answer."""

    reply: bytes | str | None = None


@dataclass
class AgentMark:
    """The agent asks to hear ``reply`` once the audio it queued before this has played (a telephone mark)."""

    name: str
    reply: bytes | str


@dataclass
class AgentMessage:
    """Anything else the agent sent (JSON control, text or transcription frames): kept in the sample's log."""

    data: Any


AgentEvent = AgentAudio | AgentClear | AgentMark | AgentMessage


class AgentTransport(ABC):
    """One connection to an agent for one sample. Subclasses define the wire format."""

    name = "abstract"
    default_rate = 16000
    """The rate a run uses when --sample-rate is not given (a telephone wire: its provider's)."""

    def __init__(self, url: str, sample_rate: int = 16000, frame_ms: int = 20):
        if sample_rate <= 0 or frame_ms <= 0:
            raise ValueError("sample_rate and frame_ms must be positive")
        self.url = url
        self.sample_rate = int(sample_rate)
        self.frame_ms = int(frame_ms)

    @property
    def frame_samples(self) -> int:
        return self.sample_rate * self.frame_ms // 1000

    @abstractmethod
    async def open(self, timeout_s: float = 5.0) -> None:
        """Connect; raise :class:`AgentUnreachable` naming the URL and what to check."""

    @abstractmethod
    async def send_audio(self, samples: np.ndarray) -> None:
        """Send one frame of int16 mono caller audio; raise :class:`AgentDisconnected` if the agent left."""

    @abstractmethod
    async def receive(self) -> list[AgentEvent]:
        """Wait for the agent's next message; raise :class:`AgentDisconnected` when it closes."""

    async def send_reply(self, message: bytes | str) -> None:
        """Send a wire-level answer (a played mark, a cleared buffer); raise :class:`AgentDisconnected` if the agent left."""
        raise NotImplementedError(f"the {self.name} transport sends no replies")

    @abstractmethod
    async def close(self) -> None:
        """End the session politely; never raises for an agent that already left."""

    def describe(self) -> dict[str, Any]:
        return {"transport": self.name, "url": self.url, "sample_rate": self.sample_rate, "frame_ms": self.frame_ms}


class WebSocketTransport(AgentTransport):
    """The connection handling every WebSocket wire format shares; subclasses encode and decode."""

    def __init__(self, url: str, sample_rate: int = 16000, frame_ms: int = 20, headers: dict[str, str] | None = None,
                 start_message: dict | None = None, end_message: dict | None = None):
        super().__init__(url, sample_rate, frame_ms)
        self.headers = dict(headers or {})
        self.start_message = start_message
        self.end_message = end_message
        self._ws: Any = None

    def encode_message(self, data: dict) -> bytes | str:
        """A JSON control message as this wire format carries it."""
        return json.dumps(data)

    def start_messages(self) -> list[bytes | str]:
        return [self.encode_message(self.start_message)] if self.start_message is not None else []

    def end_messages(self) -> list[bytes | str]:
        return [self.encode_message(self.end_message)] if self.end_message is not None else []

    @abstractmethod
    def encode_audio(self, samples: np.ndarray) -> bytes | str:
        """One caller frame as a WebSocket message."""

    @abstractmethod
    def decode(self, message: bytes | str) -> list[AgentEvent]:
        """One WebSocket message from the agent as events."""

    async def open(self, timeout_s: float = 5.0) -> None:
        if not self.url.startswith(("ws://", "wss://")):
            raise AgentUnreachable(f"{self.url}: not a WebSocket URL; give ws://HOST:PORT/PATH (or wss://)"
                                   + (" or --transport webrtc for a SmallWebRTC offer URL" if self.url.startswith("http") else ""))
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidURI

        try:
            # no per-message compression (audio does not compress, and it costs latency); no proxy from the
            # environment: the timing must be the agent's, not a proxy's
            self._ws = await connect(self.url, open_timeout=timeout_s, compression=None, proxy=None,
                                     additional_headers=self.headers or None, max_size=None, ping_interval=None)
        except InvalidURI:
            raise AgentUnreachable(f"{self.url}: not a WebSocket URL; give ws://HOST:PORT/PATH (or wss://)") from None
        except (OSError, asyncio.TimeoutError, InvalidHandshake) as err:
            reason = "connection refused" if isinstance(err, ConnectionRefusedError) else f"{type(err).__name__}: {err}"
            raise AgentUnreachable(
                f"cannot connect to the agent at {self.url} ({reason}); check that the agent is running and listens "
                f"there, and that --transport {self.name} is the wire format it speaks"
            ) from None
        for message in self.start_messages():
            await self._send(message)

    async def _send(self, message: bytes | str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._ws.send(message)
        except ConnectionClosed as err:
            raise AgentDisconnected(f"the agent at {self.url} closed the connection ({_close_reason(err)})") from None

    async def send_audio(self, samples: np.ndarray) -> None:
        await self._send(self.encode_audio(samples))

    async def send_reply(self, message: bytes | str) -> None:
        await self._send(message)

    async def receive(self) -> list[AgentEvent]:
        from websockets.exceptions import ConnectionClosed

        try:
            message = await self._ws.recv()
        except ConnectionClosed as err:
            raise AgentDisconnected(f"the agent at {self.url} closed the connection ({_close_reason(err)})") from None
        return self.decode(message)

    async def close(self) -> None:
        if self._ws is None:
            return
        from websockets.exceptions import ConnectionClosed

        try:
            for message in self.end_messages():
                await self._ws.send(message)
            await self._ws.close()
        except (ConnectionClosed, OSError):
            pass  # the agent already left; nothing to tidy
        self._ws = None


def _close_reason(err: Exception) -> str:
    rcvd = getattr(err, "rcvd", None)
    if rcvd is None:
        return "no close frame: the connection dropped"
    return f"close code {rcvd.code}{': ' + rcvd.reason if rcvd.reason else ''}"


def _int16(samples: np.ndarray) -> np.ndarray:
    return np.asarray(samples, dtype="<i2")


class RawPCMTransport(WebSocketTransport):
    """16-bit little-endian mono PCM in binary messages both ways; JSON control in text messages."""

    name = "raw"

    def __init__(self, url: str, sample_rate: int = 16000, frame_ms: int = 20, headers: dict[str, str] | None = None,
                 start_message: dict | None = None, end_message: dict | None = None, clear_type: str = "clear"):
        super().__init__(url, sample_rate, frame_ms, headers, start_message, end_message)
        self.clear_type = clear_type

    def encode_audio(self, samples: np.ndarray) -> bytes:
        return _int16(samples).tobytes()

    def decode(self, message: bytes | str) -> list[AgentEvent]:
        if isinstance(message, str):
            try:
                data = json.loads(message)
            except ValueError:
                return [AgentMessage(message)]
            if isinstance(data, dict):
                rate = data.get("sample_rate")
                if rate is not None and int(rate) != self.sample_rate:
                    raise AgentFormatError(
                        f"the agent at {self.url} says it sends {rate} Hz audio but the probe runs at {self.sample_rate} Hz; "
                        f"rerun with --sample-rate {rate} (or configure the agent for {self.sample_rate} Hz)"
                    )
                if self.clear_type in (data.get("type"), data.get("action")):  # Vonage-style agents say "action"
                    return [AgentClear()]
            return [AgentMessage(data)]
        if len(message) % 2:
            raise AgentFormatError(
                f"the agent at {self.url} sent a binary message of {len(message)} bytes, which is not 16-bit PCM; "
                "the raw transport expects 16-bit little-endian mono PCM (give --transport pipecat for a Pipecat bot)"
            )
        return [AgentAudio(np.frombuffer(message, dtype="<i2").astype(np.int16))]


class PipecatTransport(WebSocketTransport):
    """Pipecat's ``ProtobufFrameSerializer`` over WebSocket."""

    name = "pipecat"

    def encode_message(self, data: dict) -> bytes:
        """A ``MessageFrame`` (e.g. RTVI's ``client-ready``); the bot sees an ``InputTransportMessageFrame``."""
        return pipecat_frames.encode_message(data)

    def encode_audio(self, samples: np.ndarray) -> bytes:
        return pipecat_frames.encode_audio(_int16(samples).tobytes(), self.sample_rate, 1)

    def decode(self, message: bytes | str) -> list[AgentEvent]:
        if isinstance(message, str):
            return [AgentMessage(message)]
        try:
            frame = pipecat_frames.decode_frame(message)
        except pipecat_frames.PipecatWireError as err:
            raise AgentFormatError(
                f"the agent at {self.url} sent a message that is not a Pipecat protobuf frame ({err}); is it a Pipecat bot "
                "with ProtobufFrameSerializer? For raw PCM give --transport raw"
            ) from None
        if frame.kind == "interruption":
            return [AgentClear()]
        if frame.kind != "audio":
            return [AgentMessage({"kind": frame.kind, "text": frame.text, "message": frame.message})]
        if frame.sample_rate and frame.sample_rate != self.sample_rate:
            raise AgentFormatError(
                f"the agent at {self.url} sends {frame.sample_rate} Hz audio but the probe runs at {self.sample_rate} Hz; "
                f"rerun with --sample-rate {frame.sample_rate} (or set audio_out_sample_rate={self.sample_rate} in the bot's "
                "transport params)"
            )
        if frame.num_channels > 1:
            raise AgentFormatError(
                f"the agent at {self.url} sends {frame.num_channels}-channel audio; the probe records a mono agent "
                "(set audio_out_channels=1 in the bot's transport params)"
            )
        return [AgentAudio(np.frombuffer(frame.audio, dtype="<i2").astype(np.int16))]


class TelephonyTransport(WebSocketTransport):
    """A telephone provider's media stream (:mod:`turneval.probe.telephony`): the probe plays the provider's side.

    The provider's ``start`` messages go first (then ``--start-message``, if given), caller audio
    leaves in the provider's media messages at its rate and codec, and its ``stop`` ends the
    call. The agent's interrupt message (``clear``, ``clearAudio``, Vonage's ``{"action":
    "clear"}``) drops the queued audio and is answered as the provider answers it; its marks are
    answered when the audio before them has played.
    """

    wire_class: type[telephony.ProviderWire] = telephony.ProviderWire

    def __init__(self, url: str, sample_rate: int | None = None, frame_ms: int = 20, headers: dict[str, str] | None = None,
                 start_message: dict | None = None, end_message: dict | None = None):
        rate = int(sample_rate or self.wire_class.rate)
        allowed = getattr(self.wire_class, "RATES", (self.wire_class.rate,))
        if rate not in allowed:
            raise ProbeError(f"--transport {self.name} carries audio at {' or '.join(str(r) for r in allowed)} Hz, not "
                             f"{rate} Hz; leave --sample-rate out (the provider's rate is used)")
        super().__init__(url, rate, frame_ms, headers, start_message, end_message)
        self.wire = self.wire_class(rate)

    def start_messages(self) -> list[bytes | str]:
        return list(self.wire.caller_open()) + super().start_messages()

    def end_messages(self) -> list[bytes | str]:
        return super().end_messages() + list(self.wire.caller_close())

    def encode_audio(self, samples: np.ndarray) -> bytes | str:
        return self.wire.caller_media(_int16(samples))

    def decode(self, message: bytes | str) -> list[AgentEvent]:
        try:
            items = self.wire.parse_agent(message)
        except (ValueError, TypeError) as err:
            kind = f"a binary message of {len(message)} bytes" if isinstance(message, bytes) else "a text message"
            raise AgentFormatError(
                f"the agent at {self.url} sent {kind} that is not {self.name} media ({err}); check that --transport "
                f"{self.name} is the wire format it speaks (a Pipecat bot: the serializer its transport uses)"
            ) from None
        events: list[AgentEvent] = []
        for item in items:
            if isinstance(item, telephony.WireAudio):
                if item.sample_rate is not None and item.sample_rate != self.sample_rate:
                    raise AgentFormatError(
                        f"the agent at {self.url} plays {item.sample_rate} Hz audio on a {self.sample_rate} Hz {self.name} "
                        f"call; set the bot's serializer to {self.sample_rate} Hz"
                    )
                events.append(AgentAudio(item.samples))
            elif isinstance(item, telephony.WireClear):
                events.append(AgentClear(item.reply))
            elif isinstance(item, telephony.WireMark):
                events.append(AgentMark(item.name, item.reply))
            else:
                events.append(AgentMessage(item))
        return events


def _telephony_transport(wire: type[telephony.ProviderWire]) -> type[TelephonyTransport]:
    return type(f"{wire.name.capitalize()}Transport", (TelephonyTransport,),
                {"name": wire.name, "wire_class": wire, "default_rate": wire.rate, "__doc__": wire.__doc__,
                 "__module__": __name__})


TELEPHONY_TRANSPORTS: dict[str, type[TelephonyTransport]] = {
    name: _telephony_transport(wire) for name, wire in telephony.WIRES.items()}
