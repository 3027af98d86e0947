# A copy of turneval.dataset_scripts.vocabulary for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""The words turn-taking rules look at: transcript markers that are not speech, and backchannels.

Shared by the readers (which drop non-speech tokens when they build IPUs from words) and by the
events (which find backchannels by their words), so it sits below both.

    >>> is_speech_word("[noise]"), is_speech_word("[laughter]")
    (False, True)
    >>> normalize_phrase("Uh-huh."), is_backchannel_text(["yeah", "yeah"]), is_backchannel_text(["I", "see", "why"])
    ('uh huh', True, False)
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from .turneval_dialogue import DialogueError


NON_SPEECH_TOKENS = frozenset(
    {"[silence]", "[noise]", "[vocalized-noise]", "<sil>", "sil", "<s>", "</s>", "[pause]", "<noise>", "<unk>"}
)
"""Word tokens that are not speech (transcript markers); ``[laughter]`` is speech."""


SWITCHBOARD_BACKCHANNELS: tuple[str, ...] = (
    "uh-huh", "um-hum", "uh-hum", "mm-hmm", "mhm", "mm", "hm", "hmm", "huh",
    "yeah", "yes", "yep", "yup", "right", "oh", "okay", "ok", "sure",
    "really", "exactly", "true", "wow", "gosh", "i see", "oh really", "oh yeah", "oh okay",
    "oh right", "oh sure", "oh wow", "oh gosh", "oh no", "oh my", "oh boy", "oh uh-huh", "oh um-hum",
    "yeah yeah", "yeah right", "yeah sure", "yes yes", "right right", "uh-huh uh-huh", "um-hum um-hum", "that's right", "that's true",
    "all right", "alright", "okay okay", "i know", "i bet", "sure sure",
)
"""The default backchannel phrases: the common isolated one- and two-word listener responses of
Switchboard (Godfrey et al., 1992), as used for the Talking Turns labels (Arora et al., 2025,
§4.1, following Wang et al., 2024), whose annotations come from the VoiceActivityProjection
dataset_swb backchannels.csv (utterances tagged as backchannel / acknowledgement, dialogue act
"b", in the Switchboard Dialog Act corpus). Spellings follow the MS-State (ms98) transcripts,
plus common ASR spellings of the same tokens. Kept in Python, not a data file, so that the
copies of this module beside the ``evaluate`` modules (``metrics/<name>/``) carry it."""


def normalize_phrase(text: str) -> str:
    """Lowercase, hyphens to spaces, punctuation dropped, whitespace collapsed.

    ``"Uh-huh."`` and ``"uh huh"`` both become ``"uh huh"``; apostrophes are kept (``that's``).
    """
    text = text.lower().replace("-", " ")
    text = re.sub(r"[^\w\s']", " ", text)
    return " ".join(text.split())


def load_backchannel_words(path: str | Path | None = None) -> frozenset[str]:
    """The backchannel phrases, normalised with :func:`normalize_phrase`.

    Args:
        path: a text file with one phrase per line (``#`` starts a comment line). Default: the
            Switchboard list :data:`SWITCHBOARD_BACKCHANNELS`.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DialogueError: the file holds no phrase.
    """
    if path is None:
        return _default_backchannel_words()
    return _read_phrases(Path(path).read_text(encoding="utf-8"), str(path))


@lru_cache(maxsize=1)
def _default_backchannel_words() -> frozenset[str]:
    return frozenset(normalize_phrase(p) for p in SWITCHBOARD_BACKCHANNELS)


def _read_phrases(text: str, source: str) -> frozenset[str]:
    phrases = set()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            phrases.add(normalize_phrase(line))
    phrases.discard("")
    if not phrases:
        raise DialogueError(f"{source}: no backchannel phrase found (one phrase per line, '#' for comments)")
    return frozenset(phrases)


def as_phrase_set(backchannel_words: Iterable[str] | None) -> frozenset[str]:
    """Normalised phrases from a collection of phrases (None: the shipped list)."""
    if backchannel_words is None:
        return load_backchannel_words()
    if isinstance(backchannel_words, (str, Path)):
        raise TypeError("backchannel_words must be a collection of phrases; use load_backchannel_words(path) for a file")
    return frozenset(normalize_phrase(w) for w in backchannel_words if normalize_phrase(w))


def is_speech_word(text: str) -> bool:
    """False for empty tokens and transcript markers such as ``[silence]`` or ``[noise]``."""
    token = text.strip().lower()
    return bool(token) and token not in NON_SPEECH_TOKENS


def is_backchannel_text(words: Sequence[str], backchannel_words: Iterable[str] | None = None) -> bool:
    """True when the words form a backchannel: the whole phrase is in the list, or every
    word is a one-word backchannel (``"yeah yeah"``, ``"oh okay"``)."""
    phrases = as_phrase_set(backchannel_words)
    text = normalize_phrase(" ".join(words))
    if not text:
        return False
    if text in phrases:
        return True
    return all(normalize_phrase(w) in phrases for w in words if normalize_phrase(w))
