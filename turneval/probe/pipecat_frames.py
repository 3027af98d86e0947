"""Pipecat's WebSocket wire format: its ``ProtobufFrameSerializer`` frames, encoded by hand.

A Pipecat bot served with ``WebsocketServerTransport`` (or FastAPI's) and the default
``ProtobufFrameSerializer`` exchanges one protobuf ``pipecat.Frame`` per binary WebSocket
message (``pipecat/frames/frames.proto`` of pipecat-ai 1.14.0)::

    message Frame { oneof frame {
        TextFrame text = 1;                  // id=1 name=2 text=3
        AudioRawFrame audio = 2;             // id=1 name=2 audio=3 sample_rate=4 num_channels=5 pts=6
        TranscriptionFrame transcription = 3;
        MessageFrame message = 4;            // data=1 (JSON text)
        InterruptionFrame interruption = 5;  // id=1 name=2
    } }

The messages are five small structs, so a few lines of protobuf encoding (varints and
length-delimited fields) replace a dependency on pipecat's tree or on generated code; the
tests check the bytes against pipecat's own ``frames_pb2`` output.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


_TEXT, _AUDIO, _TRANSCRIPTION, _MESSAGE, _INTERRUPTION = 1, 2, 3, 4, 5
_KINDS = {_TEXT: "text", _AUDIO: "audio", _TRANSCRIPTION: "transcription", _MESSAGE: "message", _INTERRUPTION: "interruption"}
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


class PipecatWireError(ValueError):
    """Bytes that are not a Pipecat protobuf frame."""


@dataclass
class PipecatFrame:
    """One decoded frame: ``kind`` is text, audio, transcription, message or interruption."""

    kind: str
    audio: bytes = b""
    sample_rate: int = 0
    num_channels: int = 0
    text: str = ""
    message: Any = None
    fields: dict[int, Any] = field(default_factory=dict)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _key(number, _BYTES) + _varint(len(payload)) + payload


def _wrap(kind: int, inner: bytes) -> bytes:
    return _bytes_field(kind, inner)


def encode_audio(pcm: bytes, sample_rate: int, num_channels: int = 1) -> bytes:
    """An ``AudioRawFrame`` carrying 16-bit little-endian PCM (what the bot reads as ``InputAudioRawFrame``)."""
    inner = b""
    if pcm:  # proto3 leaves default values out, as pipecat's serializer does
        inner += _bytes_field(3, pcm)
    if sample_rate:
        inner += _key(4, _VARINT) + _varint(sample_rate)
    if num_channels:
        inner += _key(5, _VARINT) + _varint(num_channels)
    return _wrap(_AUDIO, inner)


def encode_message(data: Any) -> bytes:
    """A ``MessageFrame`` (an RTVI or app message; the bot sees an ``InputTransportMessageFrame``)."""
    return _wrap(_MESSAGE, _bytes_field(1, json.dumps(data).encode()))


def encode_interruption() -> bytes:
    return _wrap(_INTERRUPTION, b"")


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise PipecatWireError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> dict[int, Any]:
    """Field number -> value (ints for varints, bytes for length-delimited); the last one wins, as in protobuf."""
    out: dict[int, Any] = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            out[number], pos = _read_varint(data, pos)
        elif wire_type == _BYTES:
            length, pos = _read_varint(data, pos)
            if pos + length > len(data):
                raise PipecatWireError("truncated field")
            out[number] = data[pos : pos + length]
            pos += length
        elif wire_type in (_FIXED64, _FIXED32):
            size = 8 if wire_type == _FIXED64 else 4
            out[number] = int.from_bytes(data[pos : pos + size], "little")
            pos += size
        else:
            raise PipecatWireError(f"unsupported wire type {wire_type}")
    return out


def decode_frame(data: bytes) -> PipecatFrame:
    """Decode one binary WebSocket message sent by a Pipecat bot."""
    outer = _fields(bytes(data))
    known = [n for n in outer if n in _KINDS]
    if len(known) != 1 or not isinstance(outer[known[0]], bytes):
        raise PipecatWireError("not a pipecat.Frame (expected exactly one of text, audio, transcription, message, interruption)")
    number = known[0]
    inner = _fields(outer[number])
    frame = PipecatFrame(kind=_KINDS[number], fields=inner)
    if number == _AUDIO:
        frame.audio = bytes(inner.get(3, b""))
        frame.sample_rate = int(inner.get(4, 0))
        frame.num_channels = int(inner.get(5, 0))
    elif number in (_TEXT, _TRANSCRIPTION):
        frame.text = bytes(inner.get(3, b"")).decode("utf-8", "replace")
    elif number == _MESSAGE:
        raw = bytes(inner.get(1, b"")).decode("utf-8", "replace")
        try:
            frame.message = json.loads(raw)
        except ValueError:
            frame.message = raw
    return frame
