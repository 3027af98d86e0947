"""Which calls a batch holds: every input of ``turneval batch`` made into a list of :class:`Call`.

=====================================  =====================================================
input                                  calls
=====================================  =====================================================
a folder                               every audio file under it (recursive): stereo files,
                                       and ``X<user suffix>`` / ``X<system suffix>`` mono
                                       pairs (default ``X_user.wav`` + ``X_system.wav``)
a glob (quoted: ``'calls/*.wav'``)     the files it matches, read as below
an audio file                          one stereo call (or one side of a mono pair)
an annotation JSON                     one call: its segments (and words) instead of VAD, its
                                       ``audio_path`` as the audio
a manifest ``.csv`` / ``.jsonl``       one call per row: ``path`` (stereo audio or annotation
                                       JSON) or ``user`` + ``system`` (mono files), optional
                                       ``id``, ``system_channel``, ``annotations``; every
                                       other column is metadata (``agent_version``, ``date``)
a ``.parquet`` data set                one call per row with the audio as bytes (``audio``:
                                       ``{"bytes", "path"}``, as the project's builders write
                                       it) or an ``audio_path``; other scalar columns are
                                       metadata
=====================================  =====================================================

Paths in a manifest are relative to the manifest. Audio bytes of a parquet row are written
once to ``OUT/inputs/<id>.<ext>`` (kept, so a resumed run reads the same file). A call's id
is its file's stem (``id`` column where given), made unique by the folders above it; a mono
file whose partner is missing becomes a call that fails with that reason, so nothing is
dropped without a word.
"""
from __future__ import annotations

import csv
import glob
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from turneval.dataset_scripts.files import atomic_write_bytes


AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".mp3")
"""The audio files a folder is searched for (what libsndfile reads)."""

MANIFEST_SUFFIXES = (".csv", ".jsonl")
DEFAULT_PAIR_SUFFIXES = ("_user", "_system")
"""Mono pairs by name: ``call7_user.wav`` and ``call7_system.wav`` are the call ``call7``."""

_RESERVED_COLUMNS = {"id", "path", "audio", "audio_path", "user", "system", "system_channel", "annotations"}
_ID_COLUMNS = ("id", "conversation_id", "item_id")


class DiscoveryError(ValueError):
    """An input names nothing usable (no such file, an unreadable manifest); the message says what to fix."""


@dataclass(frozen=True)
class Call:
    """One conversation of a batch: where its audio is, which channel is the system, its metadata.

    ``audio`` is a stereo file or an annotation JSON; ``user_audio`` + ``system_audio`` are
    two mono files instead. ``problem`` is set when discovery already knows the call cannot be
    evaluated (a mono file without its partner): the call then fails with that reason.
    """

    id: str
    audio: str | None = None
    user_audio: str | None = None
    system_audio: str | None = None
    annotations: str | None = None
    system_channel: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None

    @property
    def source(self) -> str:
        """The input as one string, for tables and error lines."""
        if self.audio is not None:
            return self.audio
        return f"{self.user_audio} + {self.system_audio}"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != {}}


def _expand(item: str) -> list[Path]:
    if any(ch in item for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(item, recursive=True))
        if not matches:
            raise DiscoveryError(f"{item}: the pattern matches no file")
        return matches
    path = Path(item)
    if not path.exists():
        raise DiscoveryError(f"{item}: no such file or folder")
    return [path]


def _folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)


def _pair_audio(files: Sequence[Path], suffixes: tuple[str, str]) -> list[Call]:
    """Stereo calls, and mono pairs joined by their names (a lone side: a call with a problem)."""
    user_suffix, system_suffix = suffixes
    sides: dict[tuple[Path, str], dict[str, Path]] = {}
    calls = []
    for path in files:
        stem = path.stem
        for role, suffix in (("user", user_suffix), ("system", system_suffix)):
            if suffix and stem.endswith(suffix) and len(stem) > len(suffix):
                sides.setdefault((path.parent, stem[: -len(suffix)] + path.suffix.lower()), {})[role] = path
                break
        else:
            calls.append(Call(id=stem, audio=str(path)))
    for (parent, key), pair in sides.items():
        base = Path(key).stem
        if set(pair) == {"user", "system"}:
            calls.append(Call(id=base, user_audio=str(pair["user"]), system_audio=str(pair["system"])))
        else:
            have, missing = next(iter(pair.items()))
            want = system_suffix if have == "user" else user_suffix
            calls.append(Call(id=base, audio=str(missing),
                              problem=f"{missing}: a mono {have} file without its {'system' if have == 'user' else 'user'} "
                                      f"partner ({parent / (base + want + missing.suffix)}); add it, or rename the file if it is a stereo call"))
    return calls


def _resolve(base: Path, value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
        return None
    path = Path(str(value))
    return str(path if path.is_absolute() else base / path)


def _channel(value: Any, where: str) -> int | None:
    if value is None or str(value).strip() in ("", "nan", "None"):
        return None
    try:
        channel = int(float(value))
    except ValueError:
        channel = -1
    if channel not in (0, 1):
        raise DiscoveryError(f"{where}: system_channel must be 0 or 1, got {value!r}")
    return channel


def _manifest_rows(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix.lower() == ".csv":
            with path.open(newline="", encoding="utf-8") as handle:
                return list(csv.DictReader(handle))
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise DiscoveryError(f"{path}:{number}: a manifest line must be a JSON object")
                rows.append(row)
        return rows
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error) as err:
        raise DiscoveryError(f"{path}: not a readable manifest ({err})") from None


def _manifest_calls(path: Path) -> list[Call]:
    calls = []
    base = path.parent
    for number, row in enumerate(_manifest_rows(path), 2 if path.suffix.lower() == ".csv" else 1):
        where = f"{path}:{number}"
        audio = _resolve(base, row.get("path") or row.get("audio_path") or row.get("audio"))
        user, system = _resolve(base, row.get("user")), _resolve(base, row.get("system"))
        if audio is None and (user is None or system is None):
            raise DiscoveryError(f"{where}: a row needs a 'path' (stereo audio or annotation JSON), or 'user' and 'system' mono files")
        name = row.get("id") or Path(audio or system).stem
        metadata = {k: v for k, v in row.items() if k not in _RESERVED_COLUMNS}
        calls.append(Call(id=str(name), audio=audio, user_audio=user if audio is None else None,
                          system_audio=system if audio is None else None, annotations=_resolve(base, row.get("annotations")),
                          system_channel=_channel(row.get("system_channel"), where), metadata=metadata))
    return calls


def _parquet_calls(path: Path, spool: Path | None) -> list[Call]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises several types for a file that is not parquet
        raise DiscoveryError(f"{path}: not a readable parquet file ({err})") from None
    columns = table.column_names
    id_column = next((c for c in _ID_COLUMNS if c in columns), None)
    if "audio" not in columns and "audio_path" not in columns:
        raise DiscoveryError(f"{path}: no 'audio' (bytes) or 'audio_path' column; write it with the turneval builders")
    scalar = [c for c in columns if c not in _RESERVED_COLUMNS and c != id_column
              and not (table.schema.field(c).type.num_fields or str(table.schema.field(c).type).startswith(("list", "binary", "large")))]
    calls = []
    for index, row in enumerate(table.to_pylist()):
        name = str(row[id_column]) if id_column else f"{path.stem}-{index:05d}"
        audio = row.get("audio") if isinstance(row.get("audio"), dict) else None
        metadata = {c: row[c] for c in scalar}
        channel = _channel(row.get("system_channel"), f"{path} row {index}")
        if audio and audio.get("bytes"):
            if spool is None:
                raise DiscoveryError(f"{path}: rows with audio bytes need an output folder to hold them")
            suffix = Path(audio.get("path") or "x.wav").suffix or ".wav"
            target = spool / f"{_safe(name)}{suffix}"
            if not target.is_file():  # written once: a resumed run reads the same file
                atomic_write_bytes(target, audio["bytes"])
            calls.append(Call(id=name, audio=str(target), system_channel=channel, metadata=metadata))
        else:
            reference = (audio or {}).get("path") or row.get("audio_path")
            if not reference:
                calls.append(Call(id=name, audio=str(path), metadata=metadata,
                                  problem=f"{path} row {index}: no audio bytes and no audio path"))
                continue
            calls.append(Call(id=name, audio=_resolve(path.parent, reference), system_channel=channel, metadata=metadata))
    return calls


def _safe(name: str) -> str:
    """An id as a folder name: letters, digits and ``._-``; anything else becomes ``_``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned or "call"


def _unique_ids(calls: list[Call]) -> list[Call]:
    """Ids made safe as folder names and unique: a clash takes the parent folder's name, then a counter."""
    counts: dict[str, int] = {}
    for call in calls:
        counts[_safe(call.id)] = counts.get(_safe(call.id), 0) + 1
    seen: set[str] = set()
    out = []
    for call in calls:
        name = _safe(call.id)
        if counts[name] > 1:
            parent = Path(call.audio or call.system_audio or "").parent.name
            name = _safe(f"{parent}__{name}") if parent else name
        unique, n = name, 1
        while unique in seen:
            n += 1
            unique = f"{name}-{n}"
        seen.add(unique)
        out.append(Call(**{**call.__dict__, "id": unique}))
    return out


def discover_calls(inputs: Iterable[str], *, pair_suffixes: tuple[str, str] = DEFAULT_PAIR_SUFFIXES,
                   system_channel: int | None = None, spool: str | Path | None = None) -> list[Call]:
    """Every call the inputs name, in id order (see the module docstring).

    Args:
        inputs: folders, globs, audio files, annotation JSONs, manifests, parquet files.
        pair_suffixes: the stem endings of a mono pair's user and system files.
        system_channel: the system's channel for calls whose input does not name one.
        spool: where audio bytes from a parquet data set are written (``OUT/inputs``).

    Raises:
        DiscoveryError: an input that does not exist, a glob that matches nothing, an
            unreadable manifest or parquet file, or no call at all.
    """
    audio_files: list[Path] = []
    calls: list[Call] = []
    spool_dir = None if spool is None else Path(spool)
    for item in inputs:
        for path in _expand(str(item)):
            suffix = path.suffix.lower()
            if path.is_dir():
                audio_files += _folder_files(path)
            elif suffix in AUDIO_SUFFIXES:
                audio_files.append(path)
            elif suffix == ".json":
                calls.append(Call(id=path.stem, audio=str(path)))
            elif suffix in MANIFEST_SUFFIXES:
                calls += _manifest_calls(path)
            elif suffix == ".parquet":
                calls += _parquet_calls(path, spool_dir)
            else:
                raise DiscoveryError(f"{path}: not audio ({', '.join(AUDIO_SUFFIXES)}), an annotation .json, a manifest "
                                     "(.csv, .jsonl) or a .parquet data set")
    calls += _pair_audio(list(dict.fromkeys(audio_files)), pair_suffixes)
    if not calls:
        raise DiscoveryError(f"no calls found in {', '.join(map(str, inputs))}: give folders or globs of audio, annotation JSONs, "
                             "a manifest (.csv, .jsonl) or a .parquet data set")
    if system_channel is not None:
        calls = [c if c.system_channel is not None else Call(**{**c.__dict__, "system_channel": system_channel}) for c in calls]
    return sorted(_unique_ids(calls), key=lambda c: c.id)
