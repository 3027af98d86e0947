"""A Pipecat 1.14 bot on a WebSocket with Pipecat's protobuf frames: what `turneval probe --transport pipecat` reaches.

    python examples/agents/websocket_bot.py --port 8765 --events runs/bot_events.jsonl
    turneval probe ws://127.0.0.1:8765 --transport pipecat --scenarios fdb-v1 --out runs/bot

It serves ``SingleClientWebsocketServerTransport``: one pipeline for every connection, as most
Pipecat WebSocket examples do. That is what makes calls bleed into each other: when a caller hangs
up while the bot is answering, the pipeline goes on, and the rest of the answer (and VAD's state)
reaches the next connection. ``turneval probe`` waits for the bot to fall silent before each
call (``--settle``) and keeps out any call that still hears the bot first.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineParams, PipelineTask  # noqa: E402
from pipecat.serializers.protobuf import ProtobufFrameSerializer  # noqa: E402
from pipecat.transports.websocket.server import (  # noqa: E402
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from scripted_bot import SAMPLE_RATE, EventLog, ScriptedReplies, answer_audio, log_wire, vad_processor  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    log = EventLog(args.events)
    bot = ScriptedReplies(log, answer_audio(), reply_delay_s=args.reply_delay)
    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(audio_in_enabled=True, audio_out_enabled=True,
                                                 serializer=log_wire(ProtobufFrameSerializer(), bot)),
        host=args.host, port=args.port)
    pipeline = Pipeline([transport.input(), vad_processor(args.stop_secs), bot, transport.output()])
    task = PipelineTask(pipeline, params=PipelineParams(audio_in_sample_rate=SAMPLE_RATE, audio_out_sample_rate=SAMPLE_RATE),
                        idle_timeout_secs=None)

    @transport.event_handler("on_client_connected")
    async def on_client_connected(_transport, _client):
        bot.reset_call()
        log.write("call_start")

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(_transport, _client):
        log.write("call_end")

    await PipelineRunner(handle_sigint=True).run(task)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--events", default=None, help="append the bot's events (JSON lines) to this file")
    parser.add_argument("--stop-secs", type=float, default=0.8, help="Silero VAD stop_secs (default 0.8)")
    parser.add_argument("--reply-delay", type=float, default=0.5, help="seconds from VAD stop to the answer (default 0.5)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
