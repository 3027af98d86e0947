"""Switchboard dialogue acts at the word level (SWDA tags on the ms98 word times).

The VAP project's ``swb_dialog_acts_words`` release (``swb_dialog_acts_words_VAP.tar.gz``)
holds, for 1,155 calls, one CSV per speaker side, ``swNNNN[AB]-word-da.csv``, a word per line::

    sw3524A-ms98-a-0004,8.454250,8.564250,oh,B,qy,u-3-1

(ms98 utterance id, start s, end s, word, B/I/O position in its dialogue act, the SWDA tag,
the act's id). The word times are the ms98 ones, so an act can be found for any word the
Switchboard reader returns by its start time. Tags: ``sd`` statement, ``qy`` yes-no question,
``qw`` wh-question, ``b`` backchannel, ``+`` the continuation of an act the other speaker cut
into, ``%`` abandoned; ``^`` marks modifiers (``qy^d`` declarative question). Non-speech tokens
(``[laughter]``) have the position ``O`` and no tag.

Re-voicing reads them to end each turn as the real utterance ends (statement, question,
backchannel): :mod:`turneval.dataset_scripts.synthetic.turn_prosody`.
"""
from __future__ import annotations

import csv
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..dialogue import DialogueError


ACTS_FILE_RE = re.compile(r"^sw0*(?P<conv>\d+)(?P<side>[AB])-word-da\.csv$")
"""``sw3524A-word-da.csv``: conversation number, side."""

ACTS_ARCHIVE_NAME = "swb_dialog_acts_words_VAP.tar.gz"


@dataclass(frozen=True)
class ActWord:
    """One word with its dialogue act: times (s), the word, and the SWDA tag ("" for none)."""

    start: float
    end: float
    word: str
    tag: str


CallActs = tuple[tuple[ActWord, ...], tuple[ActWord, ...]]
"""The act words of side A (channel 0) and side B (channel 1), in time order."""


def parse_act_lines(lines: Iterable[str], where: str) -> tuple[ActWord, ...]:
    """The words of one ``-word-da.csv`` file; ``where`` names it in errors (``file:line``)."""
    out = []
    # csv, not split(","): a few tags are quoted lists ("sd,o@")
    for number, fields in enumerate(csv.reader(lines), start=1):
        if not fields or not any(f.strip() for f in fields):
            continue
        if len(fields) != 7:
            raise DialogueError(f"{where}:{number}: expected 7 comma-separated fields (utterance,start,end,word,BIO,tag,act id), got {len(fields)}")
        try:
            start, end = float(fields[1]), float(fields[2])
        except ValueError as err:
            raise DialogueError(f"{where}:{number}: start and end must be seconds, got {fields[1]!r}, {fields[2]!r}") from err
        if end < start:
            raise DialogueError(f"{where}:{number}: word ends ({end}) before it starts ({start})")
        out.append(ActWord(start, end, fields[3], fields[5].split(",")[0].strip()))
    return tuple(sorted(out, key=lambda w: (w.start, w.end)))


def read_switchboard_acts(source: str | Path, calls: Iterable[str | int]) -> dict[str, CallActs]:
    """The act words of ``calls`` (conversation numbers, ``"3524"`` or ``"sw3524"``) found in ``source``.

    ``source`` is the extracted ``swb_dialog_acts_words`` folder (searched recursively) or the
    ``swb_dialog_acts_words_VAP.tar.gz`` archive (read once, only the wanted calls kept). A call
    is returned only when both of its sides are there; the release covers 1,155 of 2,438 calls.
    """
    root = Path(source)
    wanted = {str(c).strip().lower().removeprefix("sw").lstrip("0") for c in calls}
    sides: dict[str, dict[str, tuple[ActWord, ...]]] = {}
    if root.is_file():
        if not root.name.endswith((".tar.gz", ".tgz", ".tar")):
            raise DialogueError(f"{root}: not a dialogue-act archive (expected {ACTS_ARCHIVE_NAME} or the extracted folder)")
        with tarfile.open(root, "r:*") as archive:
            for member in archive:
                match = ACTS_FILE_RE.match(Path(member.name).name)
                if not member.isfile() or not match or match["conv"] not in wanted:
                    continue
                raw = archive.extractfile(member).read()  # type: ignore[union-attr]
                text = raw.decode("utf-8", errors="replace").splitlines()
                sides.setdefault(match["conv"], {})[match["side"]] = parse_act_lines(text, f"{root}:{member.name}")
    elif root.is_dir():
        for path in root.rglob("sw*-word-da.csv"):
            match = ACTS_FILE_RE.match(path.name)
            if match and match["conv"] in wanted:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                sides.setdefault(match["conv"], {})[match["side"]] = parse_act_lines(lines, str(path))
    else:
        raise FileNotFoundError(f"{root}: dialogue acts not found (give the extracted swb_dialog_acts_words folder or {ACTS_ARCHIVE_NAME})")
    return {conv: (s["A"], s["B"]) for conv, s in sides.items() if "A" in s and "B" in s}


__all__ = ["ACTS_ARCHIVE_NAME", "ActWord", "CallActs", "parse_act_lines", "read_switchboard_acts"]
