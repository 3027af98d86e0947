"""A Pipecat 1.14 bot behind SmallWebRTC: what `turneval probe --transport webrtc` reaches.

    python examples/agents/webrtc_bot.py --port 7860 --events runs/webrtc_events.jsonl
    turneval probe http://127.0.0.1:7860/api/offer --transport webrtc --scenarios fdb-v1 --out runs/webrtc-bot

``POST /api/offer`` takes the caller's SDP offer and answers it through Pipecat's
``SmallWebRTCRequestHandler``; each connection gets its own ``SmallWebRTCTransport`` and
pipeline (audio only, 16 kHz in and out; Opus on the wire). With ``--host`` a loopback address the
bot offers 127.0.0.1 as its only ICE candidate (aioice leaves loopback out by default), so a call
from this machine never leaves it.

SmallWebRTC has no serializer, so the bot's wire events come from its output track and the RTP
sender that reads it (:func:`log_track`): each chunk aiortc pulls from the track's ``recv()`` is
dated when the Opus packet carrying it is sent, and ``first_audio_sent`` and ``last_audio_sent``
(the end of an interrupted answer's last sound) are read there. The pipeline's own
``interrupted`` comes earlier: the interruption still has to reach the output transport, which
lets the audio write under way finish (up to 40 ms, ``audio_out_10ms_chunks``), WebRTC has no
clear message for what the track holds, and the encoder sends each chunk 10 to 20 ms after it
leaves the track.
"""
from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from fastapi import FastAPI, Request  # noqa: E402
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineParams, PipelineTask  # noqa: E402
from pipecat.transports.base_transport import TransportParams  # noqa: E402
from pipecat.transports.smallwebrtc.request_handler import SmallWebRTCRequest, SmallWebRTCRequestHandler  # noqa: E402
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport  # noqa: E402
from scripted_bot import SAMPLE_RATE, EventLog, ScriptedReplies, answer_audio, vad_processor  # noqa: E402


def log_track(track: Any, sender: Any, bot: ScriptedReplies) -> Any:
    """Have ``bot`` see each chunk of ``track`` (pipecat's output ``RawAudioTrack``) as the packet carrying it leaves.

    aiortc's sender pulls a 10 ms chunk from the track's ``recv()``, resamples it to 48 kHz and
    encodes 20 ms Opus packets; its resampler holds a few samples back, so the packet with track
    audio ``[20j, 20j + 20)`` ms leaves with the third chunk pulled after its start, 10 to 20 ms
    after its chunks left the track. Each chunk is handed to the bot when its packet is sent, at the
    time its audio starts there (the packet's send time plus the chunk's place in it): what the
    caller's end plays from the packet's arrival.
    """
    recv, next_encoded = track.recv, sender._next_encoded_frame
    pulled: deque = deque()  # (first track sample, samples, rate) of chunks pulled and not yet sent
    count = {"pulled": 0, "sent": 0}

    async def recv_and_keep() -> Any:
        frame = await recv()
        pcm = frame.to_ndarray().reshape(-1)
        pulled.append((count["pulled"], pcm, frame.sample_rate))
        count["pulled"] += pcm.size
        return frame

    async def encode_and_log(codec: Any) -> Any:
        encoded = await next_encoded(codec)
        if encoded is not None and encoded.payloads and pulled:
            now, rate = time.monotonic(), pulled[0][2]
            first = count["sent"]
            count["sent"] += len(encoded.payloads) * rate // 50  # one payload per 20 ms Opus frame
            while pulled and pulled[0][0] < count["sent"]:
                start, pcm, rate = pulled.popleft()
                bot.on_track_audio(pcm, rate, now + (start - first) / rate)
        return encoded

    track.recv, sender._next_encoded_frame = recv_and_keep, encode_and_log
    return track


def make_app(args: argparse.Namespace) -> FastAPI:
    if ipaddress.ip_address(args.host).is_loopback:
        import aioice.ice

        aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=False: ["127.0.0.1"]
    app = FastAPI()
    log = EventLog(args.events)
    answer = answer_audio()
    handler = SmallWebRTCRequestHandler()
    calls: set[asyncio.Task] = set()

    async def run_bot(connection) -> None:
        transport = SmallWebRTCTransport(webrtc_connection=connection, params=TransportParams(
            audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=SAMPLE_RATE,
            audio_out_sample_rate=SAMPLE_RATE))
        bot = ScriptedReplies(log, answer, reply_delay_s=args.reply_delay)
        replace_audio_track = connection.replace_audio_track  # the transport hands its output track over here
        connection.replace_audio_track = lambda track: replace_audio_track(
            log_track(track, connection.pc.getTransceivers()[0].sender, bot))
        task = PipelineTask(Pipeline([transport.input(), vad_processor(args.stop_secs), bot, transport.output()]),
                            params=PipelineParams(audio_in_sample_rate=SAMPLE_RATE, audio_out_sample_rate=SAMPLE_RATE),
                            idle_timeout_secs=None)

        @transport.event_handler("on_client_connected")
        async def on_client_connected(_transport, _client):
            log.write("call_start")

        @transport.event_handler("on_client_disconnected")
        async def on_client_disconnected(_transport, _client):
            log.write("call_end")
            await task.cancel()

        await PipelineRunner(handle_sigint=False).run(task)

    async def start_call(connection) -> None:
        call = asyncio.create_task(run_bot(connection))
        calls.add(call)
        call.add_done_callback(calls.discard)

    @app.post("/api/offer")
    async def offer(request: Request) -> dict:
        return await handler.handle_web_request(SmallWebRTCRequest.from_dict(await request.json()), start_call)

    return app


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7860)
    parser.add_argument("--events", default=None, help="append the bot's events (JSON lines) to this file")
    parser.add_argument("--stop-secs", type=float, default=0.8, help="Silero VAD stop_secs (default 0.8)")
    parser.add_argument("--reply-delay", type=float, default=0.5, help="seconds from VAD stop to the answer (default 0.5)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    uvicorn.run(make_app(arguments), host=arguments.host, port=arguments.port, log_level="warning")
