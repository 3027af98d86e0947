"""Keep voice activity and words in step with the audio when an edit inserts or deletes time.

A :class:`Timeline` records the edit's insertions and deletions (seconds, edited clock) so
that a crop of the edited conversation can be mapped back onto the natural one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dialogue import Word


Span = tuple[float, float]

EPS = 1e-6
"""Sample positions round to 1/16000 s; a segment starting within EPS of a splice is "after" it."""


def insert_time(segments: list[Span], words: list[Word], at: float, dur: float) -> tuple[list[Span], list[Word]]:
    """Open a gap of ``dur`` seconds at ``at``: later speech moves, a segment across ``at`` splits."""
    segs: list[Span] = []
    for s, e in segments:
        if s >= at - EPS:
            segs.append((s + dur, e + dur))
        elif e > at + EPS:
            segs += [(s, at), (at + dur, e + dur)]
        else:
            segs.append((s, e))
    moved = [Word(w.start + dur, w.end + dur, w.text) if w.start >= at - EPS else w for w in words]
    return segs, moved


def delete_time(segments: list[Span], words: list[Word], start: float, dur: float) -> tuple[list[Span], list[Word]]:
    """Remove ``[start, start + dur)``: later speech moves earlier, speech inside is dropped."""
    end = start + dur

    def move(t: float) -> float:
        return t if t <= start else (start if t <= end else t - dur)

    segs = [(move(s), move(e)) for s, e in segments]
    kept = [Word(move(w.start), move(w.end), w.text) for w in words if not (w.start >= start and w.end <= end)]
    return [(s, e) for s, e in segs if e > s], [w for w in kept if w.end > w.start]


def remove_speech(segments: list[Span], words: list[Word], start: float, end: float) -> tuple[list[Span], list[Word]]:
    """Silence ``[start, end)`` without moving anything: speech there is cut out."""
    segs: list[Span] = []
    for s, e in segments:
        if e <= start or s >= end:
            segs.append((s, e))
            continue
        if s < start:
            segs.append((s, start))
        if e > end:
            segs.append((end, e))
    kept = [w for w in words if w.end <= start or w.start >= end]
    return segs, kept


@dataclass
class Timeline:
    """Insertions (+) and deletions (-) applied to both channels, in application order.

    Each entry is ``(at_s, delta_s)`` on the clock of the audio as it was when applied.
    Channel-local shifts (late response, early entry) are recorded at the earlier of their
    two positions, which is the conservative choice for mapping crop bounds.
    """

    ops: list[tuple[float, float]] = field(default_factory=list)

    def insert(self, at: float, dur: float) -> None:
        self.ops.append((at, dur))

    def delete(self, at: float, dur: float) -> None:
        self.ops.append((at, -dur))

    def to_source(self, t: float) -> float:
        """The natural-clock time of edited time ``t`` (inside an insertion: its start)."""
        for at, delta in reversed(self.ops):
            if delta > 0:
                t = t if t <= at else (at if t <= at + delta else t - delta)
            else:
                t = t if t <= at else t - delta
        return t
