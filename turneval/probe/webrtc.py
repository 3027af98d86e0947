"""``--transport webrtc``: a call to a Pipecat SmallWebRTC endpoint, as a browser (or Full-Duplex-Bench v2) makes it.

Signalling is one HTTP exchange, as Pipecat's ``SmallWebRTCRequestHandler`` serves it: the probe
POSTs its SDP offer as JSON (``{"sdp": ..., "type": "offer"}``) to the agent's URL (e.g.
``http://127.0.0.1:7860/api/offer``) and gets the answer (``{"sdp", "type", "pc_id"}``). Media
then flows over RTP through aiortc: the caller's audio is an Opus track fed one 20 ms frame at a
time by the probe's paced sender; the agent's track is decoded, made mono at the probe's rate,
and handed on as it arrives. A WebRTC track never stops, so frames of digital silence (what a
bot sends between answers) are dropped: the recording places each sound frame at its arrival.
There is no clear message on this wire: when the agent is interrupted its audio simply stops.

ICE gathers no candidates from STUN or TURN servers (none are given). aioice leaves the
loopback address out of its host candidates, so for an agent on this machine (a loopback URL)
the probe offers 127.0.0.1 alone: the call never leaves the machine.

aiortc, av and aiohttp are imported when a call opens (``pip install aiortc``; ``make install``
brings them), so importing this module stays light.
"""
from __future__ import annotations

import asyncio
import fractions
import ipaddress
import json
from typing import Any
from urllib.parse import urlparse

import numpy as np

from turneval.probe.transports import (
    AgentAudio,
    AgentDisconnected,
    AgentEvent,
    AgentMessage,
    AgentTransport,
    AgentUnreachable,
    ProbeError,
)


SILENT_PEAK = 8
"""A decoded frame whose samples all stay within this (about -72 dBFS) is the track's idle silence."""


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def offer_loopback_only() -> None:
    """Make aioice offer 127.0.0.1 as this process's only host candidate (it leaves loopback out by default)."""
    import aioice.ice

    aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=False: ["127.0.0.1"]


OPUS_RATE = 48000
"""Opus's own rate: aiortc's encoder resamples every frame to it and cuts 20 ms (960-sample) frames."""


def _caller_track_class():
    from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

    class CallerTrack(MediaStreamTrack):
        """The caller's microphone: frames the probe's paced sender hands over, in order, at 48 kHz.

        The probe resamples each frame to Opus's 48 kHz itself and hands aiortc whole frames. Given
        a 16 kHz frame, aiortc's encoder resampler keeps its last few output samples back until the
        next frame comes, so its 960-sample frame is never full and every packet waited for the
        next frame: 20 ms of the probe's own delay on the way in, none on the way back (measured
        with the echo: a round trip 20 ms longer, half of it wrongly counted on the way back). Here
        the resampler's hold (1 ms, 48 samples) becomes a fixed 1 ms delay at the start of the call.
        """

        kind = "audio"

        def __init__(self, sample_rate: int):
            super().__init__()
            self.sample_rate = sample_rate
            self.queue: asyncio.Queue = asyncio.Queue()
            self.pts = 0
            self._resampler: Any = None
            self._pending = np.zeros(0, dtype=np.int16)  # 48 kHz samples resampled but not yet handed over

        def _at_opus_rate(self, samples: np.ndarray) -> np.ndarray:
            """``samples`` as exactly as many 48 kHz samples, delayed by the resampler's constant hold."""
            import av

            want = samples.size * OPUS_RATE // self.sample_rate
            if self.sample_rate == OPUS_RATE:
                return samples
            if self._resampler is None:
                self._resampler = av.AudioResampler(format="s16", layout="mono", rate=OPUS_RATE)
            frame = av.AudioFrame.from_ndarray(samples[None, :], format="s16", layout="mono")
            frame.sample_rate = self.sample_rate
            frame.pts = self.pts * self.sample_rate // OPUS_RATE
            frame.time_base = fractions.Fraction(1, self.sample_rate)
            out = [self._pending, *(f.to_ndarray().reshape(-1).astype(np.int16) for f in self._resampler.resample(frame))]
            pending = np.concatenate(out)
            if pending.size < want:  # the first frame: the samples held back become silence ahead of the call
                pending = np.concatenate([np.zeros(want - pending.size, dtype=np.int16), pending])
            self._pending = pending[want:]
            return pending[:want]

        async def recv(self):
            import av

            samples = await self.queue.get()
            if samples is None:
                raise MediaStreamError
            pcm = self._at_opus_rate(np.asarray(samples, dtype=np.int16))
            frame = av.AudioFrame.from_ndarray(pcm[None, :], format="s16", layout="mono")
            frame.sample_rate = OPUS_RATE
            frame.pts = self.pts
            frame.time_base = fractions.Fraction(1, OPUS_RATE)
            self.pts += pcm.size
            return frame

    return CallerTrack


class SmallWebRTCTransport(AgentTransport):
    """A WebRTC call to a Pipecat SmallWebRTC endpoint (offer/answer over HTTP at the agent's URL)."""

    name = "webrtc"

    def __init__(self, url: str, sample_rate: int = 16000, frame_ms: int = 20, headers: dict[str, str] | None = None,
                 start_message: dict | None = None, end_message: dict | None = None):
        super().__init__(url, sample_rate, frame_ms)
        self.headers = dict(headers or {})
        self.start_message, self.end_message = start_message, end_message
        self._pc: Any = None
        self._caller: Any = None
        self._channel: Any = None
        self._events: asyncio.Queue = asyncio.Queue()
        self._reader: asyncio.Task | None = None
        self._closed_reason: str | None = None

    async def open(self, timeout_s: float = 5.0) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise AgentUnreachable(f"{self.url}: --transport webrtc takes the agent's SmallWebRTC offer URL "
                                   "(http://HOST:PORT/api/offer)")
        try:
            import aiohttp
            from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
        except ImportError as err:
            raise ProbeError(f"--transport webrtc needs aiortc and aiohttp ({err}); pip install aiortc aiohttp "
                             "(make install brings them)") from None
        if is_loopback(self.url):
            offer_loopback_only()
        self._pc = pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self._caller = _caller_track_class()(self.sample_rate)
        pc.addTransceiver(self._caller, direction="sendrecv")
        if self.start_message is not None or self.end_message is not None:
            self._channel = pc.createDataChannel("messages")

            @self._channel.on("message")
            def on_message(message: Any) -> None:
                self._events.put_nowait([AgentMessage(message)])

        @pc.on("track")
        def on_track(track: Any) -> None:
            if track.kind == "audio" and self._reader is None:
                self._reader = asyncio.ensure_future(self._read(track))

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState in ("failed", "closed"):
                self._closed_reason = f"the WebRTC connection {pc.connectionState}"
                self._events.put_nowait(None)

        await pc.setLocalDescription(await pc.createOffer())  # aiortc gathers its candidates here
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session:
                async with session.post(self.url, json={"sdp": pc.localDescription.sdp, "type": "offer"},
                                        headers=self.headers or None) as response:
                    body = await response.text()
                    if response.status != 200:
                        raise AgentUnreachable(f"the agent at {self.url} refused the WebRTC offer (HTTP {response.status}: "
                                               f"{body[:200]}); is it a SmallWebRTC endpoint, free for a new call?")
            answer = json.loads(body)
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))
            await asyncio.wait_for(self._connected(), timeout_s)
        except AgentUnreachable:
            await self.close()
            raise
        except (OSError, asyncio.TimeoutError, aiohttp.ClientError, ValueError, KeyError) as err:
            await self.close()
            reason = "connection refused" if isinstance(err, ConnectionRefusedError) else f"{type(err).__name__}: {err}"
            raise AgentUnreachable(
                f"cannot open a WebRTC call to the agent at {self.url} ({reason}); check that the agent is running and "
                "serves SmallWebRTC offers there, and that --transport webrtc is the wire format it speaks"
            ) from None
        if self.start_message is not None:
            await self._send_message(self.start_message)

    async def _connected(self) -> None:
        while self._pc.connectionState != "connected":
            if self._pc.connectionState in ("failed", "closed"):
                raise OSError(f"ICE {self._pc.connectionState}")
            await asyncio.sleep(0.01)

    async def _send_message(self, data: dict) -> None:
        for _ in range(100):  # the data channel opens just after the connection
            if self._channel.readyState == "open":
                self._channel.send(json.dumps(data))
                return
            await asyncio.sleep(0.01)

    async def _read(self, track: Any) -> None:
        """The agent's audio, mono at the probe's rate; idle silence dropped (see the module docstring)."""
        import av
        from aiortc.mediastreams import MediaStreamError

        resampler = av.AudioResampler(format="s16", layout="mono", rate=self.sample_rate)
        try:
            while True:
                frame = await track.recv()
                for out in resampler.resample(frame):
                    samples = out.to_ndarray().reshape(-1).astype(np.int16)
                    if samples.size and int(np.abs(samples).max()) > SILENT_PEAK:
                        self._events.put_nowait([AgentAudio(samples)])
        except MediaStreamError:
            self._closed_reason = self._closed_reason or "the agent's audio track ended"
            self._events.put_nowait(None)

    async def send_audio(self, samples: np.ndarray) -> None:
        if self._closed_reason is not None:
            raise AgentDisconnected(f"the agent at {self.url} closed the call ({self._closed_reason})")
        self._caller.queue.put_nowait(np.asarray(samples, dtype=np.int16))

    async def receive(self) -> list[AgentEvent]:
        events = await self._events.get()
        if events is None:
            raise AgentDisconnected(f"the agent at {self.url} closed the call ({self._closed_reason})")
        return events

    async def close(self) -> None:
        if self._pc is None:
            return
        try:
            if self.end_message is not None and self._channel is not None and self._channel.readyState == "open":
                self._channel.send(json.dumps(self.end_message))
            if self._caller is not None:
                self._caller.queue.put_nowait(None)
            await self._pc.close()
        finally:
            if self._reader is not None:
                self._reader.cancel()
                await asyncio.gather(self._reader, return_exceptions=True)
            self._pc = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "codec": "opus (WebRTC)", "signalling": "SmallWebRTC offer/answer over HTTP"}


class WebRTCEcho:
    """A loopback WebRTC endpoint that plays every caller frame straight back (the transport-delay measurement).

    It answers offers as a SmallWebRTC endpoint does (``POST /api/offer``), in a thread of its
    own; ``with WebRTCEcho() as url:`` serves it for the block.
    """

    def __init__(self):
        import threading

        self.url = ""
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    async def _serve(self) -> None:
        from aiohttp import web
        from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
        from aiortc.mediastreams import MediaStreamTrack

        offer_loopback_only()
        peers: set[Any] = set()

        class Echo(MediaStreamTrack):
            kind = "audio"

            def __init__(self, source: Any):
                super().__init__()
                self.source = source

            async def recv(self):
                return await self.source.recv()

        async def offer(request: Any) -> Any:
            body = await request.json()
            pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            peers.add(pc)

            @pc.on("track")
            def on_track(track: Any) -> None:
                for transceiver in pc.getTransceivers():
                    if transceiver.kind == "audio":
                        transceiver.sender.replaceTrack(Echo(track))

            await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type=body["type"]))
            for transceiver in pc.getTransceivers():
                transceiver.direction = "sendrecv"
            await pc.setLocalDescription(await pc.createAnswer())
            return web.json_response({"sdp": pc.localDescription.sdp, "type": pc.localDescription.type, "pc_id": "echo"})

        app = web.Application()
        app.router.add_post("/api/offer", offer)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/api/offer"
        self._stop = asyncio.Event()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await asyncio.gather(*(pc.close() for pc in peers), return_exceptions=True)
            await runner.cleanup()

    def _main(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as err:  # reported to the starting thread
            self._error = err
            self._ready.set()
        finally:
            self._loop.close()

    def __enter__(self) -> str:
        import threading

        self._thread = threading.Thread(target=self._main, name="webrtc-echo", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._error is not None:
            raise ProbeError(f"the loopback WebRTC echo endpoint did not start: {self._error}")
        return self.url

    def __exit__(self, *exc: Any) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=5)
