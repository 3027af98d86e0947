"""A Pipecat 1.14 phone bot: a telephone provider's media stream on a FastAPI WebSocket, with pipecat's serializer.

    python examples/agents/phone_bot.py --provider twilio --port 8765 --events runs/phone_events.jsonl
    turneval probe ws://127.0.0.1:8765/ws --transport twilio --scenarios fdb-v1 --out runs/phone-bot

``--provider`` picks the serializer (twilio, telnyx, plivo, exotel: pipecat's
``parse_telephony_websocket`` reads the provider's start message and the call's ids; vonage:
``VonageFrameSerializer``, 16 kHz linear PCM; genesys: ``GenesysAudioHookSerializer``, which
answers AudioHook's open itself). Hang-up through the provider's REST API is off
(``auto_hang_up=False``): a bot under test calls no one. Each connection gets its own pipeline, as
a phone bot's server does (one call, one pipeline), so calls cannot bleed here.

The pipeline runs at the provider's own rate (8 kHz; Vonage 16 kHz) unless ``--pipeline-rate``
says otherwise: a 16 kHz pipeline on an 8 kHz wire passes every frame through the serializer's
stream resamplers both ways, which the caller hears as extra latency that the bot's own log
does not see (docs/probe.md gives the figure).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from fastapi import FastAPI, WebSocket  # noqa: E402
from loguru import logger  # noqa: E402
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineParams, PipelineTask  # noqa: E402
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport  # noqa: E402
from scripted_bot import EventLog, ScriptedReplies, answer_audio, log_wire, vad_processor  # noqa: E402


PROVIDERS = ("twilio", "telnyx", "plivo", "exotel", "vonage", "genesys")
WIRE_RATES = {"twilio": 8000, "telnyx": 8000, "plivo": 8000, "exotel": 8000, "vonage": 16000, "genesys": 8000}


async def serializer_for(provider: str, websocket: WebSocket):
    """Pipecat's serializer for the provider, built from the call's own start message."""
    if provider == "vonage":  # Vonage opens with websocket:connected, read by the serializer itself
        from pipecat.serializers.vonage import VonageFrameSerializer

        return VonageFrameSerializer()
    if provider == "genesys":  # AudioHook's open message is answered (opened) by the serializer itself
        from pipecat.serializers.genesys import GenesysAudioHookSerializer

        return GenesysAudioHookSerializer()
    from pipecat.runner.utils import parse_telephony_websocket

    detected, call = await parse_telephony_websocket(websocket)
    if detected != provider:
        raise ValueError(f"this bot serves {provider} but the call opened as {detected}")
    if provider == "twilio":
        from pipecat.serializers.twilio import TwilioFrameSerializer

        return TwilioFrameSerializer(stream_sid=call["stream_id"], call_sid=call["call_id"],
                                     params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
    if provider == "telnyx":
        from pipecat.serializers.telnyx import TelnyxFrameSerializer

        return TelnyxFrameSerializer(stream_id=call["stream_id"], call_control_id=call["call_id"],
                                     outbound_encoding=call["outbound_encoding"], inbound_encoding="PCMU",
                                     params=TelnyxFrameSerializer.InputParams(auto_hang_up=False))
    if provider == "plivo":
        from pipecat.serializers.plivo import PlivoFrameSerializer

        return PlivoFrameSerializer(stream_id=call["stream_id"], call_id=call["call_id"],
                                    params=PlivoFrameSerializer.InputParams(auto_hang_up=False))
    from pipecat.serializers.exotel import ExotelFrameSerializer

    return ExotelFrameSerializer(stream_sid=call["stream_id"], call_sid=call["call_id"])


def make_app(args: argparse.Namespace) -> FastAPI:
    app = FastAPI()
    log = EventLog(args.events)
    rate = args.pipeline_rate or WIRE_RATES[args.provider]
    answer = answer_audio(sample_rate=rate)

    @app.websocket("/ws")
    async def call(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            serializer = await serializer_for(args.provider, websocket)
        except ValueError as err:
            logger.error(f"refusing the call: {err}")
            await websocket.close(code=1008, reason=str(err)[:120])
            return
        bot = ScriptedReplies(log, answer, reply_delay_s=args.reply_delay, sample_rate=rate)
        transport = FastAPIWebsocketTransport(websocket, FastAPIWebsocketParams(
            audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=log_wire(serializer, bot)))
        task = PipelineTask(Pipeline([transport.input(), vad_processor(args.stop_secs), bot, transport.output()]),
                            params=PipelineParams(audio_in_sample_rate=rate, audio_out_sample_rate=rate),
                            idle_timeout_secs=None)

        @transport.event_handler("on_client_disconnected")
        async def on_client_disconnected(_transport, _client):
            log.write("call_end", provider=args.provider)
            await task.cancel()

        log.write("call_start", provider=args.provider)
        await PipelineRunner(handle_sigint=False).run(task)

    return app


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=PROVIDERS, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--events", default=None, help="append the bot's events (JSON lines) to this file")
    parser.add_argument("--stop-secs", type=float, default=0.8, help="Silero VAD stop_secs (default 0.8)")
    parser.add_argument("--pipeline-rate", type=int, default=None,
                        help="the pipeline's audio rate (default: the provider's, so the serializer resamples nothing)")
    parser.add_argument("--reply-delay", type=float, default=0.5, help="seconds from VAD stop to the answer (default 0.5)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    uvicorn.run(make_app(arguments), host=arguments.host, port=arguments.port, log_level="warning")
