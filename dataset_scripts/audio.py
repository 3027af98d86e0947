"""Audio in and out: load, check, resample to 16 kHz, stream long files, write atomically.

Every array that leaves this module is float32 shaped ``[channels, n_samples]`` at the rate
it says (16 kHz unless asked otherwise; docs/formats.md, "Audio"). Bad input (unreadable, empty, NaN/inf,
too long, wrong channel count) raises :class:`AudioError` naming the file and what to fix
(docs/inputs.md); ``AudioError`` is a :class:`DialogueError`, so the CLI prints it without a
traceback.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import numpy as np
import soundfile as sf
import soxr

from .dialogue import DialogueError
from .files import atomic_path
from .grids import SAMPLE_RATE


PathLike = str | Path

# soxr's "high quality" preset: the same choice for whole-file and streamed resampling.
_SOXR_QUALITY = "HQ"


READABLE_FORMATS = "wav, flac, ogg, opus or mp3"
"""What libsndfile (1.1 and later) reads, as error messages name it."""


class AudioError(DialogueError):
    """An audio file cannot be used; the message names the file and the problem."""


class AudioBlock(NamedTuple):
    """One block of a streamed file: where it starts and its samples ``[channels, n]``."""

    start_s: float
    audio: np.ndarray


def _info(path: PathLike) -> Any:
    """soundfile's header info, or an AudioError saying why the file cannot be read."""
    path = Path(path)
    if not path.exists():
        raise AudioError(f"{path}: audio file not found")
    if path.is_dir():
        raise AudioError(f"{path}: is a folder, expected an audio file ({READABLE_FORMATS})")
    try:
        return sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError, TypeError) as err:
        raise AudioError(f"{path}: not a readable audio file, or it is damaged ({_reason(err)}); use {READABLE_FORMATS}") from err


def _check_header(path: PathLike, info: Any, channels: int | None, max_seconds: float | None) -> None:
    if info.frames <= 0 or info.samplerate <= 0:
        raise AudioError(f"{path}: audio is empty (0 samples)")
    if channels is not None and info.channels != channels:
        raise AudioError(f"{path}: expected {channels} channel(s), found {info.channels}{_channel_hint(channels, info.channels)}")
    duration = info.frames / info.samplerate
    if max_seconds is not None and duration > max_seconds:
        raise AudioError(
            f"{path}: audio is {duration:.1f} s long, more than the limit of {max_seconds:g} s; "
            "cut the recording or raise the limit"
        )


def _reason(err: Exception) -> str:
    """libsndfile's reason without the repeated file name ("Error opening 'x': Format not recognised.")."""
    text = str(err)
    return text.split(": ", 1)[1].rstrip(".") if text.startswith("Error opening") and ": " in text else text


def _channel_hint(expected: int, found: int) -> str:
    """What to do about a wrong channel count (a stereo file is one speaker per channel)."""
    if expected != 2:
        return ""
    if found == 1:
        return "; one speaker per channel is needed (a mono file has both speakers mixed)"
    return (
        "; turneval needs the two speakers on two channels: extract them first, e.g. "
        "ffmpeg -i IN -af \"pan=stereo|c0=c0|c1=c1\" OUT.wav (pick the speakers' channel numbers)"
    )


def _check_samples(path: PathLike, audio: np.ndarray, allow_silent: bool) -> None:
    if not np.isfinite(audio).all():
        bad = np.argwhere(~np.isfinite(audio))[0]
        raise AudioError(f"{path}: audio holds NaN or infinite samples (first at channel {bad[0]}, sample {bad[1]})")
    if not allow_silent and not np.any(audio):
        raise AudioError(f"{path}: audio is silent (every sample is 0)")


def resample(audio: np.ndarray, orig_sr: int, target_sr: int = SAMPLE_RATE) -> np.ndarray:
    """Resample ``[channels, n]`` (or 1-D) float audio from ``orig_sr`` to ``target_sr`` with soxr."""
    audio = np.asarray(audio, dtype=np.float32)
    if orig_sr == target_sr:
        return audio
    if orig_sr <= 0 or target_sr <= 0:
        raise ValueError(f"sample rates must be positive, got {orig_sr} -> {target_sr}")
    if audio.ndim == 1:
        return soxr.resample(audio, orig_sr, target_sr, quality=_SOXR_QUALITY).astype(np.float32)
    # soxr wants [n, channels]
    out = soxr.resample(np.ascontiguousarray(audio.T), orig_sr, target_sr, quality=_SOXR_QUALITY)
    return np.ascontiguousarray(out.T, dtype=np.float32)


TELEPHONE_RATE = 8000
"""The telephone band's sample rate: audio resampled through it keeps nothing above 4 kHz."""


def telephone_band(audio: np.ndarray) -> np.ndarray:
    """``[channels, n]`` (or 1-D) 16 kHz audio low-passed to the telephone band (via 8 kHz), same length.

    A 16 kHz recording and its 8 kHz version (as loaded, resampled to 16 kHz) agree after this,
    so anything computed from its output does not depend on which of the two it was given.
    """
    audio = np.asarray(audio, dtype=np.float32)
    return _fit_length(resample(resample(audio, SAMPLE_RATE, TELEPHONE_RATE), TELEPHONE_RATE, SAMPLE_RATE), audio.shape[-1])


def _fit_length(audio: np.ndarray, n: int) -> np.ndarray:
    """``audio`` cut or zero-padded along its last axis to ``n`` samples (a resampled round trip
    can differ from the input's length by a sample)."""
    if audio.shape[-1] < n:
        audio = np.pad(audio, [(0, 0)] * (audio.ndim - 1) + [(0, n - audio.shape[-1])])
    return np.ascontiguousarray(audio[..., :n], dtype=np.float32)


class TelephoneBandStream:
    """:func:`telephone_band` of one channel that arrives in blocks: the concatenated output is
    bit-identical to the whole-signal result for any block sizes (soxr's streams carry their
    filter state), and lags the input by the filters' delay until :meth:`finish`."""

    def __init__(self) -> None:
        self._down = soxr.ResampleStream(SAMPLE_RATE, TELEPHONE_RATE, 1, dtype="float32", quality=_SOXR_QUALITY)
        self._up = soxr.ResampleStream(TELEPHONE_RATE, SAMPLE_RATE, 1, dtype="float32", quality=_SOXR_QUALITY)
        self.n_in = 0
        self.n_out = 0

    def accept(self, block: np.ndarray) -> np.ndarray:
        """The next samples (1-D, 16 kHz); returns the band-limited samples that are ready."""
        block = np.asarray(block, dtype=np.float32).reshape(-1)
        self.n_in += block.size
        return self._emit(self._up.resample_chunk(self._down.resample_chunk(block)))

    def finish(self) -> np.ndarray:
        """End of the signal: the remaining samples, so that the output is as long as the input."""
        empty = np.zeros(0, dtype=np.float32)
        tail = self._up.resample_chunk(self._down.resample_chunk(empty, last=True), last=True)
        tail = self._emit(tail)
        return np.concatenate([tail, np.zeros(self.n_in - self.n_out, dtype=np.float32)]) if self.n_out < self.n_in else tail

    def _emit(self, out: np.ndarray) -> np.ndarray:
        out = np.asarray(out, dtype=np.float32).reshape(-1)[: max(self.n_in - self.n_out, 0)]
        self.n_out += out.size
        return out


def load_audio(
    path: PathLike,
    *,
    target_sr: int | None = SAMPLE_RATE,
    max_seconds: float | None = None,
    channels: int | None = None,
    allow_silent: bool = True,
) -> tuple[np.ndarray, int]:
    """Read an audio file (wav, flac, ogg: whatever libsndfile reads) as float32 ``[channels, n]``.

    Args:
        path: the file.
        target_sr: resample to this rate (default 16 kHz); ``None`` keeps the file's rate.
        max_seconds: refuse files longer than this (checked from the header, before reading).
        channels: require exactly this many channels.
        allow_silent: if False, refuse a file whose samples are all 0.

    Returns:
        ``(audio, sample_rate)``.

    Raises:
        AudioError: unreadable, empty, too long, wrong channel count, NaN/inf samples.
    """
    info = _info(path)
    _check_header(path, info, channels, max_seconds)
    try:
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as err:
        raise AudioError(f"{path}: cannot decode audio ({err})") from err
    audio = np.ascontiguousarray(data.T)
    if audio.shape[1] == 0:
        raise AudioError(f"{path}: audio is empty (0 samples)")
    _check_samples(path, audio, allow_silent)
    if target_sr is not None and sr != target_sr:
        audio, sr = resample(audio, sr, target_sr), target_sr
    return audio, sr


def load_stereo(path: PathLike, *, max_seconds: float | None = None, allow_silent: bool = True) -> np.ndarray:
    """A two-channel file (one speaker per channel) as float32 ``[2, n]`` at 16 kHz."""
    audio, _ = load_audio(path, max_seconds=max_seconds, channels=2, allow_silent=allow_silent)
    return audio


def load_two_mono(
    user_path: PathLike,
    system_path: PathLike,
    system_channel: int = 1,
    *,
    max_seconds: float | None = None,
) -> np.ndarray:
    """Two mono files (the user's side and the system's side) as one ``[2, n]`` array at 16 kHz.

    ``system_channel`` (0 or 1) says which channel the system's file goes to. The shorter
    file is padded with zeros at the end, so both sides keep their common start.
    """
    if system_channel not in (0, 1):
        raise ValueError(f"system_channel must be 0 or 1, got {system_channel!r}")
    user, _ = load_audio(user_path, max_seconds=max_seconds, channels=1)
    system, _ = load_audio(system_path, max_seconds=max_seconds, channels=1)
    n = max(user.shape[1], system.shape[1])
    out = np.zeros((2, n), dtype=np.float32)
    out[1 - system_channel, : user.shape[1]] = user[0]
    out[system_channel, : system.shape[1]] = system[0]
    return out


def mono_mix(audio: np.ndarray) -> np.ndarray:
    """The mean of the channels of ``[channels, n]`` audio (1-D input is returned as is)."""
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim == 1:
        return audio
    if audio.ndim != 2:
        raise ValueError(f"audio must be [channels, n] or [n], got shape {audio.shape}")
    return audio.mean(axis=0, dtype=np.float32)


def write_audio(path: PathLike, audio: np.ndarray, sr: int = SAMPLE_RATE, *, subtype: str | None = None) -> None:
    """Write ``[channels, n]`` (or 1-D) float audio atomically; the format follows the suffix.

    Samples outside [-1, 1] are written as they are for float subtypes and clipped by
    libsndfile for integer ones (wav defaults to 16-bit PCM).
    """
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim == 1:
        audio = audio[None]
    if audio.ndim != 2:
        raise ValueError(f"audio must be [channels, n] or [n], got shape {audio.shape}")
    if not np.isfinite(audio).all():
        raise ValueError(f"refusing to write {path}: audio holds NaN or infinite samples")
    path = Path(path)
    fmt = path.suffix.lstrip(".").upper()
    if fmt not in sf.available_formats():
        raise ValueError(f"cannot write {path}: unknown audio format {path.suffix!r} (use .wav, .flac or .ogg)")
    with atomic_path(path) as tmp:
        # The temp file has a .tmp suffix, so the format must be named explicitly.
        sf.write(str(tmp), audio.T, sr, subtype=subtype, format=fmt)


def wav_bytes(audio: np.ndarray, sr: int = SAMPLE_RATE, *, subtype: str = "PCM_16") -> bytes:
    """``[channels, n]`` (or 1-D) float audio as the bytes of a WAV file (e.g. for a dataset row)."""
    audio = np.asarray(audio, dtype=np.float32)
    buffer = io.BytesIO()
    sf.write(buffer, audio.T, sr, subtype=subtype, format="WAV")
    return buffer.getvalue()


def read_wav_bytes(data: bytes) -> np.ndarray:
    """The samples of in-memory audio file bytes as float32 ``[channels, n]`` (rate as stored)."""
    samples, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return np.ascontiguousarray(samples.T)


def iter_audio_blocks(
    path: PathLike,
    block_s: float,
    hop_s: float | None = None,
    *,
    target_sr: int = SAMPLE_RATE,
    read_s: float = 10.0,
) -> Iterator[AudioBlock]:
    """Stream a long file as (possibly overlapping) blocks at ``target_sr``; memory stays flat.

    Block k starts at ``k * hop_s`` seconds and holds ``block_s`` seconds (the last block
    may be shorter). ``hop_s`` defaults to ``block_s`` (no overlap). The file is read
    ``read_s`` seconds at a time and resampled with a streaming soxr resampler (same filter as
    :func:`load_audio`; the tests find the concatenated blocks equal to its output).
    """
    hop_s = block_s if hop_s is None else hop_s
    if block_s <= 0 or hop_s <= 0:
        raise ValueError(f"block_s and hop_s must be positive, got {block_s}, {hop_s}")
    info = _info(path)
    _check_header(path, info, None, None)
    block_n = int(round(block_s * target_sr))
    hop_n = int(round(hop_s * target_sr))
    if block_n <= 0 or hop_n <= 0:
        raise ValueError(f"block_s and hop_s must each cover at least one sample at {target_sr} Hz")
    stream = None
    if info.samplerate != target_sr:
        stream = soxr.ResampleStream(info.samplerate, target_sr, info.channels, dtype="float32", quality=_SOXR_QUALITY)
    buffer = np.zeros((info.channels, 0), dtype=np.float32)
    buffer_start = 0  # index (at target_sr) of buffer[:, 0]
    next_block = 0  # index of the next block's first sample
    covered = 0  # end of the last block emitted
    offset = 0  # native samples read so far, to name where bad samples are
    read_frames = max(1, int(read_s * info.samplerate))
    with sf.SoundFile(str(path)) as handle:
        while True:
            data = handle.read(read_frames, dtype="float32", always_2d=True)
            last = data.shape[0] < read_frames
            if not np.isfinite(data).all():
                bad = np.argwhere(~np.isfinite(data))[0]
                raise AudioError(
                    f"{path}: audio holds NaN or infinite samples (first at channel {bad[1]}, sample {offset + bad[0]})"
                )
            offset += data.shape[0]
            if stream is not None:
                data = stream.resample_chunk(data, last=last)
            buffer = np.concatenate([buffer, np.ascontiguousarray(data.T)], axis=1)
            end = buffer_start + buffer.shape[1]
            # Emit every complete block; at the end, one short block unless the file end is covered.
            while next_block + block_n <= end or (last and covered < end and next_block < end):
                lo = next_block - buffer_start
                yield AudioBlock(next_block / target_sr, buffer[:, lo : lo + block_n].copy())
                covered = next_block + block_n
                next_block += hop_n
            if last:
                return
            keep_from = min(next_block, end) - buffer_start
            buffer = buffer[:, keep_from:]
            buffer_start += keep_from


def audio_duration(path: PathLike, *, channels: int | None = None, max_seconds: float | None = None) -> float:
    """The length of an audio file in seconds, from its header.

    Raises AudioError when the file is unreadable or empty, has another channel count than
    ``channels`` (if given), or is longer than ``max_seconds`` (if given).
    """
    info = _info(path)
    _check_header(path, info, channels, max_seconds)
    return info.frames / info.samplerate
