"""eSpeak NG through ctypes, using the shared library that the PyPI package ``espeakng-loader`` ships.

No system eSpeak is needed. The library is initialised in synchronous mode: ``espeak_Synth``
returns only once the whole text is spoken, and a callback collects the 22.05 kHz samples
and the word events (``espeakEVENT_WORD``), whose sample positions give ground-truth word
times.

eSpeak keeps its state in process-global (static) variables, and some of it carries over
from one call to the next: the pitch "flutter" phase never resets, so the same text spoken
twice comes out slightly different. To make each utterance depend only on its text and
voice (and so a dialogue only on its seed), every synthesis loads the library afresh and
unloads it afterwards (about 7 ms). One module-level lock serialises all of this across
threads; separate processes each have their own copy.
"""
from __future__ import annotations

import _ctypes
import ctypes
import os
import threading
import warnings
import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import soxr

from ..dialogue import Word
from ..grids import SAMPLE_RATE


# Constants from espeak-ng's speak_lib.h.
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_PARAM_RATE = 1
_PARAM_VOLUME = 2
_PARAM_PITCH = 3
_PARAM_RANGE = 4
_EE_OK = 0

_SILENCE_DB = -40.0
"""Frames quieter than this (relative to the utterance peak) count as silence when trimming."""
_TRIM_FRAME_S = 0.005
_SNAP_S = 0.04


class EspeakError(RuntimeError):
    """eSpeak NG could not be loaded or refused a request."""


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    """``espeak_EVENT``."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based character offset in the text
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),  # ms
        ("sample", ctypes.c_int),  # samples since the start of this synthesis call
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass(frozen=True)
class Voice:
    """An eSpeak voice: a language voice plus a variant (``en-us+f3``), and prosody settings.

    Attributes:
        name: eSpeak voice name, ``language+variant``.
        rate: speaking rate in words per minute (eSpeak default 175).
        pitch: base pitch, 0-100 (eSpeak default 50).
        pitch_range: pitch range, 0-100 (eSpeak default 50); larger is livelier intonation.
        gain: linear gain applied to the 16-bit output (so the two speakers differ in level).
    """

    name: str
    rate: int = 175
    pitch: int = 50
    pitch_range: int = 50
    gain: float = 0.8

    def to_dict(self) -> dict:
        return {"name": self.name, "rate": self.rate, "pitch": self.pitch, "pitch_range": self.pitch_range, "gain": self.gain}


@dataclass
class Utterance:
    """One synthesised stretch of speech at 16 kHz, trimmed of leading and trailing silence.

    ``words`` carry times in seconds relative to the start of ``audio``.
    """

    audio: np.ndarray
    words: list[Word]
    text: str

    @property
    def duration(self) -> float:
        return len(self.audio) / SAMPLE_RATE


class _Engine:
    """A freshly loaded library, its sample rate and the buffers the callback fills.

    Use it once and :meth:`close` it: closing unloads the library so the next engine starts
    from eSpeak's initial state.
    """

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as err:  # pragma: no cover - it is an install requirement
            raise EspeakError("the synthetic corpus needs the PyPI package 'espeakng-loader' (pip install espeakng-loader)") from err
        self.lib_path = espeakng_loader.get_library_path()
        try:
            self.lib = ctypes.CDLL(self.lib_path)
        except OSError as err:
            raise EspeakError(f"cannot load eSpeak NG from {self.lib_path}: {err}") from err
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.espeak_SetVoiceByName.restype = ctypes.c_int
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetParameter.restype = ctypes.c_int
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.espeak_ng_SetRandSeed.restype = None
        self.lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        self.lib.espeak_Synth.restype = ctypes.c_int
        self.lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
            ctypes.POINTER(ctypes.c_uint), ctypes.c_void_p,
        ]
        data_path = espeakng_loader.get_data_path().encode()
        rate = self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path, _INITIALIZE_DONT_EXIT)
        if rate <= 0:
            self.close()
            raise EspeakError(f"espeak_Initialize failed (returned {rate}) with data path {data_path.decode()}")
        self.sample_rate = rate
        self._chunks: list[np.ndarray] = []
        self._words: list[tuple[int, int]] = []  # (text_position, sample)
        # Keep a reference to the ctypes callback: if it were garbage-collected, eSpeak would call freed memory.
        self._callback = _CALLBACK(self._collect)
        self.lib.espeak_SetSynthCallback(self._callback)
        self._voice: Voice | None = None

    def close(self) -> None:
        """Terminate eSpeak and unload the library (its static state goes with it)."""
        self.lib.espeak_Terminate()
        handle = self.lib._handle
        del self.lib
        if hasattr(_ctypes, "dlclose"):
            _ctypes.dlclose(handle)
            _warn_if_still_loaded(self.lib_path)
        else:  # pragma: no cover - Windows
            _ctypes.FreeLibrary(handle)

    def _collect(self, wav, n_samples, events) -> int:
        if n_samples > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n_samples,)).copy())
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            if events[i].type == _EVENT_WORD:
                self._words.append((events[i].text_position, events[i].sample))
            i += 1
        return 0  # 0 = continue synthesis

    def set_voice(self, voice: Voice) -> None:
        if self.lib.espeak_SetVoiceByName(voice.name.encode()) != _EE_OK:
            raise EspeakError(f"eSpeak NG has no voice {voice.name!r} (use 'language+variant', e.g. 'en-us+f3')")
        for param, value in ((_PARAM_RATE, voice.rate), (_PARAM_PITCH, voice.pitch), (_PARAM_RANGE, voice.pitch_range), (_PARAM_VOLUME, 100)):
            self.lib.espeak_SetParameter(param, int(value), 0)
        self._voice = voice

    def synth(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Raw 16-bit samples at ``self.sample_rate`` and the word events (text position, sample)."""
        self._chunks, self._words = [], []
        # eSpeak seeds its noise generator (breathy voices) from the clock; seed it from the
        # text and voice instead, so the output is reproducible. Its Klatt voices' noise
        # (whispered variants such as "caleb") comes from the C library's rand(), whose state
        # is the process's: seed that too, or the same text differs with what ran before it.
        seed = zlib.crc32(f"{self._voice}|{text}".encode("utf-8"))
        self.lib.espeak_ng_SetRandSeed(seed)
        _seed_libc_rand(seed)
        data = text.encode("utf-8")
        buf = ctypes.create_string_buffer(data)
        err = self.lib.espeak_Synth(buf, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        if err != _EE_OK:
            raise EspeakError(f"espeak_Synth failed with error {err} on text {text!r}")
        audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, dtype=np.int16)
        return audio, list(self._words)


def _seed_libc_rand(seed: int) -> None:
    """``srand(seed)`` of the C library eSpeak links against (where it can be found)."""
    try:
        libc = ctypes.CDLL(None)
        libc.srand(ctypes.c_uint(seed & 0xFFFFFFFF))
    except (OSError, AttributeError):  # pragma: no cover - no C library handle (Windows)
        pass


_LOCK = threading.Lock()
_WARNED_SHARED = False


def _warn_if_still_loaded(lib_path: str) -> None:
    """Warn once when another part of the process keeps eSpeak loaded (its state then persists)."""
    global _WARNED_SHARED
    if _WARNED_SHARED or not hasattr(os, "RTLD_NOLOAD"):
        return
    try:
        loaded = ctypes.CDLL(lib_path, mode=os.RTLD_NOLOAD)
    except OSError:
        return  # unloaded, as intended
    _ctypes.dlclose(loaded._handle)
    _WARNED_SHARED = True
    warnings.warn(
        f"{lib_path} stays loaded by another module of this process, so eSpeak's state carries over "
        "between utterances and synthetic dialogues are no longer exactly reproducible from their seed",
        RuntimeWarning,
        stacklevel=3,
    )


def synthesize(tokens: Sequence[tuple[str, str]], voice: Voice) -> Utterance:
    """Speak one inter-pausal unit and return it at 16 kHz with its word times.

    Args:
        tokens: (transcript word, spoken text) pairs. The spoken text is what eSpeak reads
            (it may carry trailing punctuation, which sets the intonation: ',' continues,
            '.' falls, '?' rises); the transcript word is what the ground truth records.
        voice: the voice to speak with.

    Word times come from eSpeak's word events. eSpeak merges some function words into the
    next word's event ("that the weekend" gives events for "that" and "weekend" only); a
    token without its own event shares the span of the event before it, split in proportion
    to spelling length. Each word's span is then trimmed of silence.
    """
    if not tokens:
        raise ValueError("synthesize needs at least one token")
    spoken = []
    offsets = []  # 1-based character position of each token, as eSpeak reports it
    pos = 1
    for _, say in tokens:
        offsets.append(pos)
        spoken.append(say)
        pos += len(say) + 1
    text = " ".join(spoken)
    with _LOCK:
        engine = _Engine()
        try:
            engine.set_voice(voice)
            raw, events = engine.synth(text)
            source_rate = engine.sample_rate
        finally:
            engine.close()
    if raw.size == 0:
        raise EspeakError(f"eSpeak produced no audio for {text!r}")
    audio = soxr.resample(raw.astype(np.float32) / 32768.0, source_rate, SAMPLE_RATE)
    audio = np.asarray(audio, dtype=np.float32)
    peak = float(np.max(np.abs(audio)))
    if peak > 0:
        audio *= voice.gain / peak
    starts = _token_starts(offsets, [len(s) for s in spoken], events, len(raw))
    scale = SAMPLE_RATE / source_rate
    bounds = [int(round(s * scale)) for s in starts] + [len(audio)]
    loud = _loud_frames(audio)
    bounds = _snap_to_onsets(bounds, loud)
    words = []
    for i, (word, _) in enumerate(tokens):
        span = _trim_span(loud, bounds[i], bounds[i + 1])
        if span is not None:
            words.append(Word(span[0] / SAMPLE_RATE, span[1] / SAMPLE_RATE, word))
    if not words:
        raise EspeakError(f"eSpeak produced only silence for {text!r}")
    first, last = int(round(words[0].start * SAMPLE_RATE)), int(round(words[-1].end * SAMPLE_RATE))
    shift = first / SAMPLE_RATE
    words = [Word(round(w.start - shift, 4), round(w.end - shift, 4), w.text) for w in words]
    return Utterance(audio=audio[first:last].copy(), words=words, text=text)


def _token_starts(offsets: list[int], lengths: list[int], events: list[tuple[int, int]], n_samples: int) -> list[float]:
    """Start sample (source rate) of every token, from the word events."""
    # Which token each event belongs to: the last token starting at or before its text position.
    event_start: dict[int, int] = {}
    for text_pos, sample in events:
        idx = int(np.searchsorted(offsets, text_pos, side="right")) - 1
        if idx >= 0 and idx not in event_start:
            event_start[idx] = sample
    if 0 not in event_start:
        event_start[0] = 0
    anchors = sorted(event_start)
    starts: list[float] = [0.0] * len(offsets)
    for k, idx in enumerate(anchors):
        group_end_tok = anchors[k + 1] if k + 1 < len(anchors) else len(offsets)
        group_end = event_start[anchors[k + 1]] if k + 1 < len(anchors) else n_samples
        group = range(idx, group_end_tok)
        weights = np.array([lengths[t] for t in group], dtype=np.float64)
        cum = np.concatenate([[0.0], np.cumsum(weights)[:-1]]) / weights.sum()
        for t, frac in zip(group, cum):
            starts[t] = event_start[idx] + frac * (group_end - event_start[idx])
    return starts


def _loud_frames(audio: np.ndarray) -> np.ndarray:
    """Per-sample flag: the 5 ms frame around it is above the silence threshold."""
    hop = int(SAMPLE_RATE * _TRIM_FRAME_S)
    n = len(audio) // hop + 1
    padded = np.zeros(n * hop, dtype=np.float32)
    padded[: len(audio)] = audio
    rms = np.sqrt(np.mean(padded.reshape(n, hop) ** 2, axis=1) + 1e-12)
    loud = 20 * np.log10(rms / (rms.max() + 1e-12)) > _SILENCE_DB
    return np.repeat(loud, hop)[: len(audio)]


def _snap_to_onsets(bounds: list[int], loud: np.ndarray) -> list[int]:
    """Move each inner word boundary onto the nearest speech onset within 40 ms.

    eSpeak reports a word a few ms off its first sound; without this a word could start or
    end with a sliver of its neighbour. Boundaries inside continuous sound stay put.
    """
    onsets = np.flatnonzero(np.diff(loud.astype(np.int8)) == 1) + 1
    window = int(_SNAP_S * SAMPLE_RATE)
    snapped = list(bounds)
    for i in range(1, len(bounds) - 1):
        near = onsets[np.abs(onsets - bounds[i]) <= window]
        if near.size:
            best = int(near[np.argmin(np.abs(near - bounds[i]))])
            snapped[i] = min(max(best, snapped[i - 1]), bounds[i + 1])
    return snapped


def _trim_span(loud: np.ndarray, start: int, end: int) -> tuple[int, int] | None:
    """The loud part of [start, end) in samples, or None when it is all silence."""
    idx = np.flatnonzero(loud[start:end])
    if idx.size == 0:
        return None
    return start + int(idx[0]), start + int(idx[-1]) + 1
