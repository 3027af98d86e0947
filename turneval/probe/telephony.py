"""Telephone providers' media streams, both ends: what the provider sends a voice agent, what the agent sends back.

A phone agent is reached the way its provider reaches it: a WebSocket that carries the call's
audio in the provider's own JSON (or binary) messages. Each :class:`ProviderWire` knows one
provider's messages as they are documented and as pipecat-ai 1.14's serializer for it reads and
writes them (``pipecat/serializers/<provider>.py``, the other end the probe must interoperate
with):

=========  ===================  =====================  =========================  ==========================
provider   caller audio         agent audio            agent's interrupt           the provider answers
=========  ===================  =====================  =========================  ==========================
twilio     media, mu-law 8 kHz  media, mu-law 8 kHz    ``{"event": "clear"}``      the marks still queued
telnyx     media, PCMU 8 kHz    media, PCMU 8 kHz      ``{"event": "clear"}``      the marks still queued
plivo      media, mu-law 8 kHz  playAudio (mu-law/L16) ``{"event": "clearAudio"}`` ``clearedAudio``
exotel     media, PCM16 8 kHz   media, PCM16 8 kHz     ``{"event": "clear"}``      the marks still queued
vonage     binary L16 16 kHz    binary L16             ``{"action": "clear"}``     ``websocket:cleared``
genesys    binary PCMU 8 kHz    binary PCMU            ``event`` ``barge_in``      (nothing)
=========  ===================  =====================  =========================  ==========================

The call opens with the provider's ``connected``/``start`` messages (ids made up per call, the
keys pipecat's runner reads to tell the provider apart and build its serializer), audio flows in
20 ms messages with the provider's sequence numbers and timestamps, and ends with ``stop``
(Vonage: the socket closes; Genesys AudioHook: ``open`` and ``close`` with positions). A mark the agent sends (Twilio/Telnyx/Exotel ``mark``, Plivo
``checkpoint``, Vonage ``notify``) is answered when the audio queued before it has played, as
the provider does; the runner plays the agent's audio and so decides when.

The agent-side half (``agent_*``) is what a bot sends; the loopback mock agents speak it.
Only numpy and json: importing this module stays light.
"""
from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np


# --------------------------------------------------------------------------- G.711 mu-law
_BIAS, _CLIP = 0x84, 32635
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF])


def ulaw_encode(pcm: np.ndarray) -> bytes:
    """16-bit linear PCM as G.711 mu-law bytes (ITU-T G.711; the 14-bit form of the reference g711.c)."""
    x = np.asarray(pcm, dtype=np.int32) >> 2  # 14 bits, rounded down as the reference does
    negative = x < 0
    magnitude = np.minimum(np.where(negative, -x, x), 8159) + (_BIAS >> 2)
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude)  # 0..7
    code = np.where(segment > 7, 0x7F, (segment << 4) | ((magnitude >> (segment + 1)) & 0x0F))  # past the top: full scale
    return (code ^ np.where(negative, 0x7F, 0xFF)).astype(np.uint8).tobytes()


def ulaw_decode(data: bytes) -> np.ndarray:
    """G.711 mu-law bytes as 16-bit linear PCM."""
    u = ~np.frombuffer(data, dtype=np.uint8).astype(np.int32) & 0xFF
    exponent, mantissa = (u >> 4) & 0x07, u & 0x0F
    magnitude = (((mantissa << 3) + _BIAS) << exponent) - _BIAS
    return np.where(u & 0x80, -magnitude, magnitude).astype(np.int16)


# --------------------------------------------------------------------------- what the wires carry
@dataclass
class WireAudio:
    """Agent audio taken off the wire: int16 mono at ``sample_rate`` (None: the wire's own rate)."""

    samples: np.ndarray
    sample_rate: int | None = None


@dataclass
class WireClear:
    """The agent's interrupt: drop its queued audio; ``reply`` is what the provider answers (or None)."""

    reply: str | None = None


@dataclass
class WireMark:
    """The agent asks to be told when the audio it sent before this has played; ``reply`` says so."""

    name: str
    reply: str


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _json(message: str | bytes) -> dict | None:
    try:
        data = json.loads(message)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


class ProviderWire:
    """One provider's media stream for one call. Subclasses fill in the provider's messages."""

    name = "abstract"
    rate = 8000
    codec = "mulaw"  # the payload's encoding both ways: mulaw or pcm16 (little-endian)
    clear_event = "clear"

    def __init__(self, sample_rate: int | None = None):
        self.sample_rate = int(sample_rate or self.rate)
        self.stream_id = f"MZ{uuid.uuid4().hex}"
        self.call_id = f"CA{uuid.uuid4().hex}"
        self.account_id = f"AC{uuid.uuid4().hex}"
        self.sequence = 0  # the provider's message counter
        self.chunk = 0  # media messages sent
        self.sent_samples = 0

    # ----- payloads
    def encode_payload(self, pcm: np.ndarray) -> bytes:
        pcm = np.asarray(pcm, dtype=np.int16)
        return ulaw_encode(pcm) if self.codec == "mulaw" else pcm.astype("<i2").tobytes()

    def decode_payload(self, data: bytes) -> np.ndarray:
        if self.codec == "mulaw":
            return ulaw_decode(data)
        if len(data) % 2:
            raise ValueError(f"{len(data)} bytes is not 16-bit PCM")
        return np.frombuffer(data, dtype="<i2").astype(np.int16)

    def _next(self) -> int:
        self.sequence += 1
        return self.sequence

    def _media_clock(self, pcm: np.ndarray) -> tuple[int, int]:
        """(chunk number from 1, the chunk's timestamp in ms since the stream began)."""
        self.chunk += 1
        stamp = 1000 * self.sent_samples // self.sample_rate
        self.sent_samples += int(np.asarray(pcm).size)
        return self.chunk, stamp

    # ----- the provider's end (what the probe sends and reads)
    def caller_open(self) -> list[str]:
        raise NotImplementedError

    def caller_media(self, pcm: np.ndarray) -> str | bytes:
        raise NotImplementedError

    def caller_close(self) -> list[str]:
        raise NotImplementedError

    def mark_reply(self, name: str) -> str:
        raise NotImplementedError

    def clear_reply(self) -> str | None:
        return None

    def parse_agent(self, message: str | bytes) -> list[Any]:
        """An agent message as WireAudio / WireClear / WireMark, or the decoded JSON (anything else)."""
        data = _json(message)
        if data is None:
            raise ValueError("not a JSON message")
        event = data.get("event")
        if event == self.clear_event:
            return [WireClear(self.clear_reply())]
        if event == "mark":
            name = str((data.get("mark") or {}).get("name", ""))
            return [WireMark(name, self.mark_reply(name))]
        if event == "media":
            payload = (data.get("media") or {}).get("payload")
            return [WireAudio(self.decode_payload(base64.b64decode(payload)))] if payload else []
        return [data]

    # ----- the agent's end (what a bot sends and reads: the loopback mock agents)
    def agent_media(self, pcm: np.ndarray) -> str | bytes:
        raise NotImplementedError

    def agent_clear(self) -> str:
        return json.dumps({"event": self.clear_event, "streamSid": self.stream_id})

    def parse_caller(self, message: str | bytes) -> np.ndarray | None:
        """The caller's audio in a provider message, or None for control messages."""
        data = _json(message)
        if not data or data.get("event") != "media":
            return None
        payload = (data.get("media") or {}).get("payload")
        return self.decode_payload(base64.b64decode(payload)) if payload else None


class TwilioWire(ProviderWire):
    """Twilio Media Streams (bidirectional ``<Connect><Stream>``): JSON messages, base64 mu-law at 8 kHz."""

    name = "twilio"

    def caller_open(self) -> list[str]:
        return [json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}),
                json.dumps({"event": "start", "sequenceNumber": str(self._next()), "streamSid": self.stream_id,
                            "start": {"accountSid": self.account_id, "streamSid": self.stream_id, "callSid": self.call_id,
                                      "tracks": ["inbound"], "customParameters": {},
                                      "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})]

    def caller_media(self, pcm: np.ndarray) -> str:
        chunk, stamp = self._media_clock(pcm)
        return json.dumps({"event": "media", "sequenceNumber": str(self._next()), "streamSid": self.stream_id,
                           "media": {"track": "inbound", "chunk": str(chunk), "timestamp": str(stamp),
                                     "payload": _b64(self.encode_payload(pcm))}})

    def caller_close(self) -> list[str]:
        return [json.dumps({"event": "stop", "sequenceNumber": str(self._next()), "streamSid": self.stream_id,
                            "stop": {"accountSid": self.account_id, "callSid": self.call_id}})]

    def mark_reply(self, name: str) -> str:
        return json.dumps({"event": "mark", "sequenceNumber": str(self._next()), "streamSid": self.stream_id,
                           "mark": {"name": name}})

    def agent_media(self, pcm: np.ndarray) -> str:
        return json.dumps({"event": "media", "streamSid": self.stream_id, "media": {"payload": _b64(self.encode_payload(pcm))}})


class TelnyxWire(ProviderWire):
    """Telnyx media streaming (bidirectional RTP mode): like Twilio's, snake_case, PCMU at 8 kHz."""

    name = "telnyx"

    def caller_open(self) -> list[str]:
        return [json.dumps({"event": "connected", "version": "1.0.0"}),
                json.dumps({"event": "start", "sequence_number": str(self._next()), "stream_id": self.stream_id,
                            "start": {"user_id": self.account_id, "call_control_id": self.call_id,
                                      "call_session_id": self.call_id, "client_state": None, "from": "+15550100",
                                      "to": "+15550199",
                                      "media_format": {"encoding": "PCMU", "sample_rate": 8000, "channels": 1}}})]

    def caller_media(self, pcm: np.ndarray) -> str:
        chunk, stamp = self._media_clock(pcm)
        return json.dumps({"event": "media", "sequence_number": str(self._next()), "stream_id": self.stream_id,
                           "media": {"track": "inbound", "chunk": str(chunk), "timestamp": str(stamp),
                                     "payload": _b64(self.encode_payload(pcm))}})

    def caller_close(self) -> list[str]:
        return [json.dumps({"event": "stop", "sequence_number": str(self._next()), "stream_id": self.stream_id,
                            "stop": {"user_id": self.account_id, "call_control_id": self.call_id}})]

    def mark_reply(self, name: str) -> str:
        return json.dumps({"event": "mark", "sequence_number": str(self._next()), "stream_id": self.stream_id,
                           "mark": {"name": name}})

    def agent_media(self, pcm: np.ndarray) -> str:
        return json.dumps({"event": "media", "media": {"payload": _b64(self.encode_payload(pcm))}})

    def agent_clear(self) -> str:
        return json.dumps({"event": "clear"})


class PlivoWire(ProviderWire):
    """Plivo audio streams (bidirectional): media in, ``playAudio`` out (mu-law or L16), ``clearAudio`` to interrupt."""

    name = "plivo"
    clear_event = "clearAudio"

    def caller_open(self) -> list[str]:
        return [json.dumps({"event": "start", "sequenceNumber": self._next(),
                            "start": {"callId": self.call_id, "streamId": self.stream_id, "accountId": self.account_id,
                                      "tracks": ["inbound"],
                                      "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000}},
                            "extra_headers": "{}"})]

    def caller_media(self, pcm: np.ndarray) -> str:
        chunk, stamp = self._media_clock(pcm)
        return json.dumps({"event": "media", "sequenceNumber": self._next(), "streamId": self.stream_id,
                           "media": {"track": "inbound", "timestamp": str(stamp), "chunk": chunk,
                                     "payload": _b64(self.encode_payload(pcm))}})

    def caller_close(self) -> list[str]:
        return [json.dumps({"event": "stop", "sequenceNumber": self._next(), "streamId": self.stream_id})]

    def mark_reply(self, name: str) -> str:
        return json.dumps({"event": "playedStream", "sequenceNumber": self._next(), "streamId": self.stream_id,
                           "name": name})

    def clear_reply(self) -> str:
        return json.dumps({"event": "clearedAudio", "sequenceNumber": self._next(), "streamId": self.stream_id})

    def parse_agent(self, message: str | bytes) -> list[Any]:
        data = _json(message)
        if data is None:
            raise ValueError("not a JSON message")
        event = data.get("event")
        if event == "playAudio":
            media = data.get("media") or {}
            raw = base64.b64decode(media.get("payload") or "")
            kind = str(media.get("contentType", "audio/x-mulaw"))
            rate = int(media.get("sampleRate") or 8000)
            if kind == "audio/x-l16":
                return [WireAudio(np.frombuffer(raw[: len(raw) // 2 * 2], dtype="<i2").astype(np.int16), rate)]
            return [WireAudio(ulaw_decode(raw), rate)]
        if event == "checkpoint":
            name = str(data.get("name", ""))
            return [WireMark(name, self.mark_reply(name))]
        if event == self.clear_event:
            return [WireClear(self.clear_reply())]
        return [data]

    def agent_media(self, pcm: np.ndarray) -> str:
        return json.dumps({"event": "playAudio", "streamId": self.stream_id,
                           "media": {"contentType": "audio/x-mulaw", "sampleRate": 8000,
                                     "payload": _b64(self.encode_payload(pcm))}})

    def agent_clear(self) -> str:
        return json.dumps({"event": "clearAudio", "streamId": self.stream_id})


class ExotelWire(ProviderWire):
    """Exotel's Voicebot applet stream: JSON messages, base64 16-bit PCM (little-endian) at 8 kHz."""

    name = "exotel"
    codec = "pcm16"

    def caller_open(self) -> list[str]:
        return [json.dumps({"event": "connected"}),
                json.dumps({"event": "start", "sequence_number": self._next(), "stream_sid": self.stream_id,
                            "start": {"stream_sid": self.stream_id, "call_sid": self.call_id,
                                      "account_sid": self.account_id, "from": "05550100", "to": "05550199",
                                      "custom_parameters": {},
                                      "media_format": {"encoding": "base64", "sample_rate": "8000",
                                                       "bit_rate": "128kbps"}}})]

    def caller_media(self, pcm: np.ndarray) -> str:
        chunk, stamp = self._media_clock(pcm)
        return json.dumps({"event": "media", "sequence_number": self._next(), "stream_sid": self.stream_id,
                           "media": {"chunk": chunk, "timestamp": str(stamp), "payload": _b64(self.encode_payload(pcm))}})

    def caller_close(self) -> list[str]:
        return [json.dumps({"event": "stop", "sequence_number": self._next(), "stream_sid": self.stream_id,
                            "stop": {"call_sid": self.call_id, "account_sid": self.account_id, "reason": "stopped"}})]

    def mark_reply(self, name: str) -> str:
        return json.dumps({"event": "mark", "sequence_number": self._next(), "stream_sid": self.stream_id,
                           "mark": {"name": name}})

    def agent_media(self, pcm: np.ndarray) -> str:
        return json.dumps({"event": "media", "stream_sid": self.stream_id, "media": {"payload": _b64(self.encode_payload(pcm))}})

    def agent_clear(self) -> str:
        return json.dumps({"event": "clear", "stream_sid": self.stream_id})


class VonageWire(ProviderWire):
    """Vonage Voice API WebSocket: binary 16-bit linear PCM both ways, JSON text for control.

    The call opens with ``websocket:connected`` (its ``content-type`` names the rate: 8, 16 or
    24 kHz), the agent interrupts with ``{"action": "clear"}`` (answered by
    ``websocket:cleared``) and asks to be notified with ``{"action": "notify"}``; the call ends
    when the socket closes.
    """

    name = "vonage"
    rate = 16000
    codec = "pcm16"
    RATES = (8000, 16000, 24000)

    def caller_open(self) -> list[str]:
        return [json.dumps({"event": "websocket:connected", "content-type": f"audio/l16;rate={self.sample_rate}"})]

    def caller_media(self, pcm: np.ndarray) -> bytes:
        self._media_clock(pcm)
        return self.encode_payload(pcm)

    def caller_close(self) -> list[str]:
        return []

    def mark_reply(self, name: str) -> str:
        return json.dumps({"event": "websocket:notify", "payload": json.loads(name) if name else {}})

    def clear_reply(self) -> str:
        return json.dumps({"event": "websocket:cleared"})

    def parse_agent(self, message: str | bytes) -> list[Any]:
        if isinstance(message, bytes):
            return [WireAudio(self.decode_payload(message))]
        data = _json(message)
        if data is None:
            raise ValueError("not a JSON message")
        action = data.get("action")
        if action == "clear":
            return [WireClear(self.clear_reply())]
        if action == "notify":
            return [WireMark(json.dumps(data.get("payload") or {}), self.mark_reply(json.dumps(data.get("payload") or {})))]
        return [data]

    def agent_media(self, pcm: np.ndarray) -> bytes:
        return self.encode_payload(pcm)

    def agent_clear(self) -> str:
        return json.dumps({"action": "clear"})

    def parse_caller(self, message: str | bytes) -> np.ndarray | None:
        return self.decode_payload(message) if isinstance(message, bytes) else None


class GenesysWire(ProviderWire):
    """Genesys Cloud AudioHook: JSON control messages (``open``/``opened``, ``close``/``closed``, ``ping``,
    ``event``) with sequence numbers and stream positions, and binary PCMU frames (the customer's
    ``external`` channel, 8 kHz). The agent's barge-in is an ``event`` whose entity is ``barge_in``."""

    name = "genesys"

    def __init__(self, sample_rate: int | None = None):
        super().__init__(sample_rate)
        self.session_id = str(uuid.uuid4())
        self.server_seq = 0  # the last seq the agent sent (AudioHook echoes it as serverseq)

    def _message(self, kind: str, parameters: dict | None = None) -> str:
        position = f"PT{self.sent_samples / self.sample_rate:.2f}S"
        return json.dumps({"version": "2", "type": kind, "seq": self._next(), "serverseq": self.server_seq,
                           "id": self.session_id, "position": position, "parameters": parameters or {}})

    def caller_open(self) -> list[str]:
        return [self._message("open", {
            "organizationId": str(uuid.uuid4()), "conversationId": str(uuid.uuid4()),
            "participant": {"id": str(uuid.uuid4()), "ani": "+15550100", "aniName": "Probe", "dnis": "+15550199"},
            "media": [{"type": "audio", "format": "PCMU", "channels": ["external"], "rate": 8000}],
            "language": "en-US"})]

    def caller_media(self, pcm: np.ndarray) -> bytes:
        self._media_clock(pcm)
        return self.encode_payload(pcm)

    def caller_close(self) -> list[str]:
        return [self._message("close", {"reason": "end"})]

    def mark_reply(self, name: str) -> str:
        return self._message("pong")  # AudioHook has no marks; never asked for

    def parse_agent(self, message: str | bytes) -> list[Any]:
        if isinstance(message, bytes):
            return [WireAudio(self.decode_payload(message))]
        data = _json(message)
        if data is None:
            raise ValueError("not a JSON message")
        self.server_seq = int(data.get("seq", self.server_seq) or 0)
        entities = (data.get("parameters") or {}).get("entities") or []
        if data.get("type") == "event" and any(e.get("type") == "barge_in" for e in entities if isinstance(e, dict)):
            return [WireClear()]
        return [data]

    def agent_media(self, pcm: np.ndarray) -> bytes:
        return self.encode_payload(pcm)

    def agent_clear(self) -> str:
        return json.dumps({"version": "2", "type": "event", "seq": 1, "clientseq": self.sequence, "id": self.session_id,
                           "parameters": {"entities": [{"type": "barge_in", "data": {}}]}})

    def parse_caller(self, message: str | bytes) -> np.ndarray | None:
        return self.decode_payload(message) if isinstance(message, bytes) else None


WIRES: dict[str, type[ProviderWire]] = {
    w.name: w for w in (TwilioWire, TelnyxWire, PlivoWire, ExotelWire, VonageWire, GenesysWire)}
"""Provider name (``--transport``) -> its wire."""
