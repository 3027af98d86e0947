"""The part every example bot shares: a Pipecat processor that answers after the caller stops, yields when
talked over, and logs its own timing.

A real bot has STT, an LLM and TTS between VAD and the output; this one has a recorded answer,
streamed to the output in real time as a TTS service streams it, so its timing is exactly its turn-taking: Silero VAD decides the caller has stopped (``stop_secs``
after the last speech), the answer starts ``reply_delay_s`` later, and a caller who speaks over
the answer for VAD's ``start_secs`` makes the bot stop with ``broadcast_interruption()`` (Pipecat's
barge-in: the output transport drops its queued audio and sends its wire's clear message).

Each event goes to a JSON-lines log on ``time.monotonic()`` (the clock the probe's benchmark
reads too): ``vad_stop`` and ``vad_start`` (with the caller's sound edges as the bot received
them), ``first_audio_out`` with the bot's own ``response_latency_s`` (first answer audio handed
to the output transport, less the end of the caller's last sound), ``interrupted`` with its
``stop_latency_s`` (the barge-in's onset to the interruption), ``bot_stopped``, and, where the
transport has a serializer (:func:`log_wire`), ``first_audio_sent`` and ``clear_sent``: the same
two moments when the bytes leave for the socket, and ``audio_after_clear`` for answer audio that
still leaves after the clear (frames already in the pipeline, which the interruption, a
SystemFrame, overtook). WebRTC has no serializer and no clear message: there
(:meth:`ScriptedReplies.on_track_audio`, fed by webrtc_bot.py's hook on the output track and its
RTP sender: each 10 ms chunk as the Opus packet carrying it is sent) ``first_audio_sent`` is when
the first answer audio leaves and ``last_audio_sent`` is when an interrupted answer's sound ends
as it left: the end of its last loud chunk, which includes the audio the output transport had
already handed to the track.

Pipecat 1.14 puts VAD in the pipeline (``VADProcessor``) or in the user aggregator
(``LLMUserAggregatorParams(vad_analyzer=...)``); transport params no longer take a
``vad_analyzer`` (pydantic drops the field without a word, and the bot then has no VAD).
"""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    AudioRawFrame,
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor


SAMPLE_RATE = 16000
ANSWER = "Sure, the pharmacy opens at nine tomorrow morning and closes at six in the evening."
LOUD_DBFS = -42.0  # a 5 ms window louder than this holds sound (the probe's own threshold)
TTS_LEAD_S = 0.2  # the answer reaches the output this far ahead of playback, as a streaming TTS's does
TRACK_QUIET_S = 0.3  # an interrupted answer has stopped leaving the WebRTC track after this much silence


def answer_audio(text: str = ANSWER, sample_rate: int = SAMPLE_RATE) -> bytes:
    """The recorded answer: eSpeak NG through turneval's synthesizer, 16-bit mono PCM."""
    from turneval.dataset_scripts.synthetic.espeak import Voice, synthesize
    from turneval.dataset_scripts.synthetic.material import text_to_tokens

    audio = synthesize(text_to_tokens(text, "."), Voice("en-us+f3", rate=175, pitch=60)).audio
    if sample_rate != SAMPLE_RATE:
        from turneval.dataset_scripts.audio import resample

        audio = resample(audio, SAMPLE_RATE, sample_rate)
    return np.clip(np.round(audio * 32767), -32768, 32767).astype("<i2").tobytes()


def vad_processor(stop_secs: float = 0.8, start_secs: float = 0.2) -> VADProcessor:
    """Silero VAD as Pipecat 1.14 places it: a processor right after the transport's input."""
    return VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=stop_secs, start_secs=start_secs)))


class EventLog:
    """JSON lines on time.monotonic(), appended to ``path`` (or only logged)."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None

    def write(self, event: str, at: float | None = None, **fields: Any) -> None:
        """Log ``event`` now, or at ``at`` (a monotonic time already past: an event known only afterwards)."""
        record = {"t": round(time.monotonic() if at is None else at, 6), "event": event, **fields}
        logger.info(f"event {json.dumps(record)}")
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")


class ScriptedReplies(FrameProcessor):
    """Answer ``reply_delay_s`` after each VAD stop; yield (broadcast an interruption) when talked over."""

    def __init__(self, log: EventLog, answer: bytes, reply_delay_s: float = 0.5, sample_rate: int = SAMPLE_RATE,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.log, self.answer, self.reply_delay_s, self.sample_rate = log, answer, reply_delay_s, sample_rate
        self._reply: asyncio.Task | None = None
        self._speaking = False  # answer audio handed to the output and not interrupted
        self._awaiting_first_audio = False
        self._sound_end: float | None = None  # monotonic end of the caller's last loud 5 ms window
        self._sound_start: float | None = None  # onset of the caller's current stretch of sound
        self._reply_for: float | None = None  # the caller sound end the answer in flight replies to
        self._awaiting_wire_audio = False
        self._barge_onset: float | None = None  # the barge-in whose clear message is not on the wire yet
        self._cleared = False  # the answer on the wire was cleared
        self._track_sound_end: float | None = None  # monotonic end of the last loud chunk the WebRTC track sent
        self._track_stop: dict[str, float | None] | None = None  # an interruption whose audio may still be leaving

    def _caller_audio(self, frame: InputAudioRawFrame) -> None:
        """Where the caller's sound starts and ends, from the frame's arrival (its last sample is now)."""
        now = time.monotonic()
        pcm = np.frombuffer(frame.audio, dtype="<i2").astype(np.float32) / 32768.0
        hop = max(1, frame.sample_rate // 200)
        n = pcm.size // hop
        if n == 0:
            return
        rms = np.sqrt(np.mean(pcm[: n * hop].reshape(n, hop) ** 2, axis=1))
        loud = np.flatnonzero(rms > 10 ** (LOUD_DBFS / 20))
        duration = pcm.size / frame.sample_rate
        if loud.size:
            onset = now - duration + loud[0] * hop / frame.sample_rate
            if self._sound_end is None or onset - self._sound_end > 0.2:
                self._sound_start = onset
            self._sound_end = now - duration + (loud[-1] + 1) * hop / frame.sample_rate

    async def _speak(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._speaking, self._awaiting_first_audio, self._awaiting_wire_audio = True, True, True
        await self.push_frame(TTSStartedFrame())
        step = self.sample_rate // 50 * 2  # 20 ms of 16-bit audio
        start = time.monotonic()
        for i in range(0, len(self.answer), step):
            # streamed as a TTS service streams: in real time, a little ahead of playback
            ahead = start + (i / 2) / self.sample_rate - TTS_LEAD_S - time.monotonic()
            if ahead > 0:
                await asyncio.sleep(ahead)
            await self.push_frame(TTSAudioRawFrame(audio=self.answer[i : i + step], sample_rate=self.sample_rate,
                                                   num_channels=1))
        await self.push_frame(TTSStoppedFrame())

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self._caller_audio(frame)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self.log.write("vad_stop", caller_sound_end=self._sound_end)
            if not self._speaking:
                self._reply_for = self._sound_end
                self._reply = self.create_task(self._speak(self.reply_delay_s))
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self.log.write("vad_start", caller_sound_start=self._sound_start)
            if self._reply is not None and not self._speaking:  # the caller went on before the answer began
                await self.cancel_task(self._reply)
                self._reply = None
            elif self._speaking:
                onset = self._barge_onset = self._sound_start
                self._track_stop = {"onset": onset, "interrupted": time.monotonic()}
                await self._stop_answer()
                await self.broadcast_interruption()
                now = time.monotonic()
                self.log.write("interrupted", barge_in_onset=onset,
                               stop_latency_s=None if onset is None else round(now - onset, 4))
        elif isinstance(frame, BotStartedSpeakingFrame) and self._awaiting_first_audio:
            self._awaiting_first_audio = False
            now = time.monotonic()
            self.log.write("first_audio_out", caller_sound_end=self._reply_for,
                           response_latency_s=None if self._reply_for is None else round(now - self._reply_for, 4))
        elif isinstance(frame, BotStoppedSpeakingFrame):
            self._speaking = False
            self.log.write("bot_stopped")
        elif isinstance(frame, InterruptionFrame):
            self._speaking = False
        await self.push_frame(frame, direction)

    def on_wire(self, frame: Frame) -> None:
        """A frame the transport's serializer just put on the wire (see :func:`log_wire`)."""
        now = time.monotonic()
        if isinstance(frame, InterruptionFrame) and self._barge_onset is not None:
            self.log.write("clear_sent", barge_in_onset=self._barge_onset,
                           stop_latency_s=round(now - self._barge_onset, 4))
            self._barge_onset, self._cleared = None, True
        elif isinstance(frame, AudioRawFrame):
            pcm = np.frombuffer(frame.audio, dtype="<i2")
            if not (pcm.size and np.abs(pcm).max() > 32768 * 10 ** (LOUD_DBFS / 20)):
                return
            if self._awaiting_wire_audio:
                self._awaiting_wire_audio, self._cleared = False, False
                self.log.write("first_audio_sent", caller_sound_end=self._reply_for,
                               response_latency_s=None if self._reply_for is None else round(now - self._reply_for, 4))
            elif self._cleared:
                # answer audio that was already on its way through the pipeline when the interruption overtook it
                # (a SystemFrame): it leaves after the clear, and the caller hears it
                self.log.write("audio_after_clear", duration_s=round(pcm.size / frame.sample_rate, 4))

    def on_track_audio(self, pcm: np.ndarray, sample_rate: int, sent_at: float) -> None:
        """A chunk of the WebRTC output track whose audio leaves from ``sent_at`` (see webrtc_bot.log_track).

        The track is paced in real time (pipecat's ``RawAudioTrack``: one 10 ms chunk when its time
        comes, digital silence when nothing is queued), so a chunk sent at ``t`` is the bot's audio
        from ``t`` to ``t`` plus its duration. After an interruption the answer's audio stops leaving at
        the end of its last loud chunk; that is known once ``TRACK_QUIET_S`` of silence has followed,
        and logged then as ``last_audio_sent`` at that end."""
        loud = bool(pcm.size) and int(np.abs(pcm.astype(np.int32)).max()) > 32768 * 10 ** (LOUD_DBFS / 20)
        if loud:
            self._track_sound_end = sent_at + pcm.size / sample_rate
            if self._awaiting_wire_audio:
                self._awaiting_wire_audio = False
                self.log.write("first_audio_sent", at=sent_at, caller_sound_end=self._reply_for,
                               response_latency_s=None if self._reply_for is None else round(sent_at - self._reply_for, 4))
            return
        stop = self._track_stop
        end = self._track_sound_end
        if stop is None or end is None or sent_at - end < TRACK_QUIET_S:
            return
        self._track_stop = None
        onset = stop["onset"]
        self.log.write("last_audio_sent", at=end, barge_in_onset=onset,
                       stop_latency_s=None if onset is None else round(end - onset, 4),
                       after_interrupted_s=round(end - stop["interrupted"], 4))

    async def _stop_answer(self) -> None:
        if self._reply is not None:
            await self.cancel_task(self._reply)
            self._reply = None
        self._speaking = False

    def reset_call(self) -> None:
        """A new caller on a server that keeps this pipeline: forget the last caller's sound (not the answer)."""
        self._sound_end = self._sound_start = None


def log_wire(serializer: Any, bot: ScriptedReplies) -> Any:
    """Have ``bot`` log when its first answer audio and its clear message actually leave through ``serializer``.

    The frame-level events (``first_audio_out``, ``interrupted``) are when the pipeline decides;
    these (``first_audio_sent``, ``clear_sent``) are when the bytes go to the socket, after the
    output transport's own buffering: what a caller can hear."""
    serialize = serializer.serialize

    async def serialize_and_log(frame: Frame) -> Any:
        data = await serialize(frame)
        if data:
            bot.on_wire(frame)
        return data

    serializer.serialize = serialize_and_log
    return serializer
