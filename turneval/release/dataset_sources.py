"""The conversations the released data sets are built from, each with the licence that lets it ship.

===============  ======================================================  ============
source           conversations                                          licence
===============  ======================================================  ============
synthetic        the bundled eSpeak NG examples (``examples/*.json``)   apache-2.0
harper_valley    6 real two-party bank calls (``real/harper_valley``)   cc-by-4.0
ami              AMI ES2004a, every pair of headset channels            cc-by-4.0
===============  ======================================================  ============

Only licences in :data:`SHIPPABLE_LICENCES` ship. SpokenWOZ (CC BY-NC 4.0) and Switchboard
(LDC) are named in :data:`NEVER_SHIPPED`, so asking for them fails with the reason. The real
recordings lie outside the repository: ``--real-root`` or ``$TURNEVAL_REAL_ROOT``, default
``<repository>/../shared/real``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from turneval.dataset_scripts.dialogue import Dialogue

from .plan import REPO_ROOT, ReleaseError


SHIPPABLE_LICENCES = ("apache-2.0", "cc-by-4.0")
NEVER_SHIPPED: dict[str, str] = {
    "spokenwoz": "SpokenWOZ is CC BY-NC 4.0 (non-commercial): it is never shipped",
    "switchboard": "Switchboard is licensed by the LDC: only models trained on its timing ship, never its data",
}
REAL_ROOT_ENV = "TURNEVAL_REAL_ROOT"


@dataclass(frozen=True)
class Source:
    """A group of conversations: its licence, the credit its licence asks for, and its reader."""

    name: str
    licence: str
    credit: str
    read: Callable[[Path, Path], list[Dialogue]]
    speech: str = "real"
    """What a listener hears: ``real`` (recorded people) or ``synthetic`` (eSpeak NG voices)."""
    """``read(real_root, scratch)``: the conversations; audio a source must assemble goes to ``scratch``."""


def real_root(path: str | os.PathLike | None = None) -> Path:
    """The folder of the real recordings: ``path``, else ``$TURNEVAL_REAL_ROOT``, else ``../shared/real``."""
    if path is not None:
        return Path(path)
    env = os.environ.get(REAL_ROOT_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "real"


def read_examples(_: Path, __: Path) -> list[Dialogue]:
    """The bundled synthetic conversations (``examples/NAME.json`` + ``NAME.wav``)."""
    from turneval.dataset_scripts.readers import read_annotations

    files = sorted((REPO_ROOT / "examples").glob("*.json"))
    if not files:
        raise ReleaseError(f"{REPO_ROOT / 'examples'}: no example conversations (NAME.json + NAME.wav); the release runs from a source checkout")
    return [read_annotations(path, load_audio=False, require_audio=True) for path in files]


def read_harper_valley(root: Path, _: Path) -> list[Dialogue]:
    """The Harper Valley Bank calls of ``<real root>/harper_valley`` (audio/SID.flac + transcript/SID.json;
    the reader is :func:`turneval.dataset_scripts.readers.read_harper_valley`)."""
    folder = root / "harper_valley"
    calls = sorted((folder / "audio").glob("*.flac"))
    if not calls:
        raise ReleaseError(
            f"{folder}/audio: no Harper Valley calls; pass --real-root (or set ${REAL_ROOT_ENV}) to the folder "
            "that holds harper_valley/, or build the data sets from --sources synthetic only"
        )
    from turneval.dataset_scripts.readers import read_harper_valley as read_call

    return [read_call(folder / "transcript" / f"{audio.stem}.json", audio, load_audio=False) for audio in calls]


def _ami_speaker_segments(rttm: Path) -> dict[str, list[tuple[float, float]]]:
    segments: dict[str, list[tuple[float, float]]] = {}
    for number, line in enumerate(rttm.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if fields[0] != "SPEAKER" or len(fields) < 8:
            raise ReleaseError(f"{rttm}:{number}: not an RTTM SPEAKER line")
        start, length = float(fields[3]), float(fields[4])
        segments.setdefault(fields[7], []).append((start, start + length))
    return segments


def read_ami(root: Path, scratch: Path) -> list[Dialogue]:
    """AMI ES2004a (60 s): every pair of its headset channels as a two-party recording, the
    speech of the two from the manual segments (``mixture.rttm``); the other two people in the
    room are heard faintly, as crosstalk. Each pair's stereo audio is written to ``scratch``."""
    import itertools

    import numpy as np
    import soundfile as sf

    folder = root / "ami" / "ES2004a_excerpt"
    speaker_map = folder / "SPEAKER_MAP_inferred.txt"
    if not speaker_map.is_file():
        raise ReleaseError(f"{speaker_map}: not found; pass --real-root (or set ${REAL_ROOT_ENV}) to the folder that holds ami/, "
                           "or leave ami out of --sources")
    channels = {}
    for line in speaker_map.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and fields[0].startswith("source"):
            channels[fields[1]] = folder / (Path(fields[0]).stem + ".flac")
    segments = _ami_speaker_segments(folder / "mixture.rttm")
    out = []
    for a, b in itertools.combinations(sorted(channels), 2):
        if not segments.get(a) or not segments.get(b):
            continue
        left, rate = sf.read(channels[a], dtype="int16")
        right, _ = sf.read(channels[b], dtype="int16")
        n = min(len(left), len(right))
        audio = scratch / f"ami_ES2004a_{a}_{b}.flac"
        sf.write(str(audio), np.stack([left[:n], right[:n]], axis=1), rate, format="FLAC", subtype="PCM_16")
        out.append(Dialogue(id=audio.stem, segments=[segments[a], segments[b]], audio_path=str(audio)))
    return out


SOURCES: dict[str, Source] = {
    "synthetic": Source("synthetic", "apache-2.0", "turneval's bundled eSpeak NG conversations", read_examples, "synthetic"),
    "harper_valley": Source(
        "harper_valley", "cc-by-4.0", "Gridspace-Stanford Harper Valley speech dataset, bank calls", read_harper_valley
    ),
    "ami": Source("ami", "cc-by-4.0", "AMI Meeting Corpus, ES2004a, 60 s (Carletta et al., 2005)", read_ami),
}
DEFAULT_SOURCES: tuple[str, ...] = ("synthetic", "harper_valley", "ami")


def check_sources(names: tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The source names to build from (default :data:`DEFAULT_SOURCES`); refuses unknown and unshippable ones."""
    names = tuple(names) if names else DEFAULT_SOURCES
    for name in names:
        if name in NEVER_SHIPPED:
            raise ReleaseError(f"--sources {name}: {NEVER_SHIPPED[name]}")
        if name not in SOURCES:
            raise ReleaseError(f"--sources {name}: unknown source; choose from {', '.join(SOURCES)}")
        if SOURCES[name].licence not in SHIPPABLE_LICENCES:
            raise ReleaseError(f"--sources {name}: licence {SOURCES[name].licence} does not allow shipping")
    return names


def source_licences(names: tuple[str, ...] | list[str]) -> list[str]:
    """The distinct licences of the sources ``names``, in the order of the sources (each split keeps its own)."""
    return list(dict.fromkeys(SOURCES[n].licence for n in names))


def dataset_licence(names: tuple[str, ...]) -> str:
    """The licence of a data set built from ``names``, as the plan prints it: each source's, joined."""
    return ", ".join(source_licences(names))
