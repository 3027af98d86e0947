"""Real telephone calls for the benchmarks: the SpokenWOZ sample of ``../shared/real/spokenwoz``.

The folder (``--spokenwoz-root``, ``$TURNEVAL_SPOKENWOZ_ROOT``, default
``<repository>/../shared/real/spokenwoz``) holds ``audio/<call>.flac`` (stereo 8 kHz, channel 0
= speaker A, channel 1 = speaker B) and ``words/<call>.json`` (``[{"speaker": "A"/"B", "word",
"start", "end"}]``, seconds), some calls with words only. Licence CC BY-NC 4.0: the files never
enter the repository.

* :func:`load_calls`: the calls with audio, loaded as ``turneval score`` loads a stereo file
  (resampled to 16 kHz) with each channel's speech found by the same streamed Silero VAD pass,
  and the words attached (the perturbation edits need them for their text rules).
* :func:`word_time_calls`: every call with words, its speech segments from the word times alone
  (no audio: for voice-activity predictors).
"""
from __future__ import annotations

import os
from pathlib import Path

from _ami import merge


ENV_VAR = "TURNEVAL_SPOKENWOZ_ROOT"
SPEAKER_CHANNEL = {"A": 0, "B": 1}
WORD_JOIN_S = 0.2
"""Words of one speaker closer than this join into one speech segment (docs/events_and_labels.md: an IPU ends at
more than 200 ms of the speaker's silence)."""


class SpokenwozDataMissing(FileNotFoundError):
    """No SpokenWOZ calls where they were looked for; the message says where and how to point at them."""


def default_root() -> Path:
    """``$TURNEVAL_SPOKENWOZ_ROOT``, else ``<repository>/../shared/real/spokenwoz``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "real" / "spokenwoz"


def _hint() -> str:
    return f"pass --spokenwoz-root PATH or set ${ENV_VAR} to the folder of ../shared/real/spokenwoz"


def read_words(path: Path):
    """Per speaker (A, B), the words of one call's JSON as :class:`~turneval.dataset_scripts.dialogue.Word`.

    Raises DialogueError naming the file and the entry when an entry is malformed.
    """
    from turneval.dataset_scripts.dialogue import DialogueError, Word
    from turneval.dataset_scripts.files import read_json

    data = read_json(path, error=DialogueError)
    if not isinstance(data, list):
        raise DialogueError(f"{path}: expected a JSON list of words, got {type(data).__name__}")
    words: list[list[Word]] = [[], []]
    for i, entry in enumerate(data):
        try:
            channel = SPEAKER_CHANNEL[str(entry["speaker"])]
            start, end = float(entry["start"]), float(entry["end"])
            text = str(entry["word"])
        except (KeyError, TypeError, ValueError) as err:
            raise DialogueError(f"{path}: word {i} ({entry!r}) needs speaker A/B, word, start and end ({err})") from None
        if end < start:
            raise DialogueError(f"{path}: word {i} ({text!r}) ends before it starts ({start} > {end})")
        words[channel].append(Word(start, end, text))
    return words


def _speech_from_words(words) -> list[list[tuple[float, float]]]:
    out = []
    for spk in words:
        joined: list[tuple[float, float]] = []
        for s, e in merge([(w.start, w.end) for w in spk]):
            if joined and s - joined[-1][1] < WORD_JOIN_S:
                joined[-1] = (joined[-1][0], e)
            else:
                joined.append((s, e))
        out.append(joined)
    return out


def _word_files(root: Path) -> list[Path]:
    if not root.is_dir():
        raise SpokenwozDataMissing(f"no SpokenWOZ data: {root} is not a folder; {_hint()}")
    files = sorted((root / "words").glob("*.json")) if (root / "words").is_dir() else []
    if not files:
        raise SpokenwozDataMissing(f"no SpokenWOZ data: no words/*.json under {root}; {_hint()}")
    return files


def load_calls(root: str | os.PathLike | None = None, limit: int | None = None) -> list:
    """Every call with audio and words under ``root`` (in name order) as a Dialogue: 16 kHz
    stereo audio, Silero VAD segments per channel (the report's settings), the words.

    Raises SpokenwozDataMissing when the folder holds no call with both.
    """
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.reporting.inputs import vad_segments

    root = Path(root) if root is not None else default_root()
    calls = []
    for words_file in _word_files(root):
        audio_file = next((root / "audio" / f"{words_file.stem}{s}" for s in (".flac", ".wav") if (root / "audio" / f"{words_file.stem}{s}").is_file()), None)
        if audio_file is None:
            continue  # words only: see word_time_calls
        audio = load_stereo(audio_file)
        segments, _ = vad_segments(audio, None, progress=False)
        calls.append(Dialogue(words_file.stem, segments, words=read_words(words_file), audio=audio,
                              metadata={"corpus": "spokenwoz", "segments": "silero", "audio": str(audio_file)}))
        if limit and len(calls) >= limit:
            break
    if not calls:
        raise SpokenwozDataMissing(f"no SpokenWOZ data: no call under {root} has both audio/<call>.flac and words/<call>.json; {_hint()}")
    return calls


def word_time_calls(root: str | os.PathLike | None = None) -> list:
    """Every call with words under ``root`` as a Dialogue without audio: speech segments from the
    word times (words closer than :data:`WORD_JOIN_S` joined), the words attached."""
    from turneval.dataset_scripts.dialogue import Dialogue

    root = Path(root) if root is not None else default_root()
    out = []
    for words_file in _word_files(root):
        words = read_words(words_file)
        segments = _speech_from_words(words)
        end = max((e for spk in segments for _, e in spk), default=0.0)
        out.append(Dialogue(words_file.stem, segments, words=words, duration=end, metadata={"corpus": "spokenwoz", "segments": "word times"}))
    return out
