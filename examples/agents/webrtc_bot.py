"""A Pipecat 1.14 bot behind SmallWebRTC: what `turneval probe --transport webrtc` reaches.

    python examples/agents/webrtc_bot.py --port 7860 --events runs/webrtc_events.jsonl
    turneval probe http://127.0.0.1:7860/api/offer --transport webrtc --scenarios fdb-v1 --out runs/webrtc-bot

``POST /api/offer`` takes the caller's SDP offer and answers it through Pipecat's
``SmallWebRTCRequestHandler``; each connection gets its own ``SmallWebRTCTransport`` and
pipeline (audio only, 16 kHz in and out; Opus on the wire). With ``--host`` a loopback address the
bot offers 127.0.0.1 as its only ICE candidate (aioice leaves loopback out by default), so a call
from this machine never leaves it.
"""
from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
from pathlib import Path


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
