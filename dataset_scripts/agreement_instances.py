"""Evaluation instances for the turn-taking agreement metrics (a)-(e) of Talking Turns §4.4-4.8.

A human-AI conversation is labelled on the 40 ms judge grid (one label per chunk from
``LABELS = ("NA", "BC", "I", "T", "C")``) and scored by the judge, which gives one
distribution over those labels per chunk. This module picks the chunks where one party made
a turn-taking *decision* and pairs each with the judge's distribution for that chunk; the
metric (``turneval.metrics.agreement``) then measures how often the judge's label agrees with
the decision that was actually taken.

Alignment of the judge probabilities
------------------------------------
``probs`` is ``[n_chunks, 5]`` (or ``[n_chunks - 1, 5]``) in ``LABELS`` order, and row ``t`` is
the judge's distribution for the label of chunk ``t + 1`` given the audio up to the *end of
chunk t*, i.e. up to ``0.04 (t + 1)`` s (docs/judge.md). An instance whose decision shows in chunk
``k`` therefore reads ``probs[k - 1]``: what the judge expected for chunk ``k`` from the audio
that precedes it. Chunk 0 has no prediction and is never an instance. ``time`` is the start
of chunk ``k`` (``0.04 k`` s), the moment the decision becomes audible.

Floor owner
-----------
Each rule needs who holds the floor *entering* a chunk: ``floor`` gives, per chunk, the owner
after it, either as 0 / 1 / -1 (nobody) or as the labeller's floor states
(``turneval.dataset_scripts.labels.FLOOR_STATES``: "NA", "A", "B", "AB" = A's floor with B
overlapping, "BA"). An overlap leaves the floor with the speaker who had it, so "AB" counts as
A's floor and "BA" as B's.

Instances (docs/agreement.md; "user" is the human, "system" the AI)
---------------------------------------------------------
(a) The user holds the floor, speaks alone, then a silence (``NA`` run) follows; the first
    chunk after the silence is ``T`` (the system speaks up) or ``C`` (the user resumes).
(b) Chunks of the user's turn that do not follow a ``BC`` chunk, labelled ``BC`` (the system
    starts a backchannel) or ``C`` (the user goes on alone, no backchannel).
(c) Chunks where only the user speaks (``T``/``C`` with the user on the floor) followed by
    ``I`` (the system starts talking over the user) or ``C`` (it does not).
(d) As (a) with the roles swapped: the system pauses and the *user* decides, so the decision
    reflects the cues in the system's speech.
(e) User interruptions of the system: an ``I`` run entered with the system on the floor,
    resolved by ``T`` (the user takes the floor) or ``C`` (the system keeps it). Runs that end
    in silence or a backchannel are not resolved either way and give no instance.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Sequence

import numpy as np

from .dialogue import Dialogue, DialogueError
from .grids import CHUNK_S
from .labels import LABELS, ChunkLabels, chunk_labels


METRIC_IDS = ("a", "b", "c", "d", "e")

METRIC_DECISIONS: dict[str, tuple[str, str]] = {
    "a": ("T", "C"),
    "b": ("BC", "C"),
    "c": ("I", "C"),
    "d": ("T", "C"),
    "e": ("T", "C"),
}
"""Per metric, (positive decision, negative decision). The positive one is the event the metric
is about (speak up, backchannel, interrupt, speak up, yield to the interrupter)."""

METRIC_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "a": {"title": "When user speaks: when should the system speak up?", "T": "system speaks up", "C": "system lets the user continue"},
    "b": {"title": "When user speaks: when should the system backchannel?", "BC": "system backchannels", "C": "system does not backchannel"},
    "c": {"title": "When user speaks: when should the system interrupt?", "I": "system interrupts", "C": "system does not interrupt"},
    "d": {"title": "When system speaks: does it convey when the user can speak up?", "T": "user speaks up", "C": "user lets the system continue"},
    "e": {"title": "When system speaks: does it handle user interruptions?", "T": "user's interruption takes the floor", "C": "system keeps the floor"},
}

NOBODY = -1

FLOOR_OWNER: dict[str, int] = {"NA": NOBODY, "A": 0, "B": 1, "AB": 0, "BA": 1}
"""Floor state of the labeller -> the speaker who holds the floor (an overlap keeps it)."""


@dataclass(frozen=True)
class AgreementInstance:
    """One turn-taking decision and the judge's view of it.

    Attributes:
        metric: "a".."e".
        decision: the label actually taken (see ``METRIC_DECISIONS``).
        probs: the judge's distribution over ``LABELS`` for the decision chunk.
        session: the conversation id (agreement is averaged over sessions).
        time: start of the decision chunk in seconds.
        chunk: index of the decision chunk.
    """

    metric: str
    decision: str
    probs: tuple[float, ...]
    session: str
    time: float
    chunk: int

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["probs"] = list(self.probs)
        return out


def floor_owners(floor: Sequence[int | str], session: str = "") -> np.ndarray:
    """Floor owner per chunk as 0, 1 or ``NOBODY``, from ints or labeller floor states."""
    owners = []
    for t, value in enumerate(floor):
        if isinstance(value, str):
            if value not in FLOOR_OWNER:
                raise DialogueError(f"session {session!r}: chunk {t} has unknown floor state {value!r}; expected one of {tuple(FLOOR_OWNER)}")
            owners.append(FLOOR_OWNER[value])
        else:
            if int(value) not in (NOBODY, 0, 1):
                raise DialogueError(f"session {session!r}: chunk {t} has floor owner {value!r}; expected 0, 1 or {NOBODY}")
            owners.append(int(value))
    return np.asarray(owners, dtype=np.int64)


def _validate(labels: Sequence[str], floor: np.ndarray, probs: np.ndarray | None, starts: np.ndarray, session: str) -> None:
    unknown = sorted({str(x) for x in labels} - set(LABELS))
    if unknown:
        raise DialogueError(f"session {session!r}: unknown chunk labels {unknown}; expected labels from {LABELS}")
    n = len(labels)
    if len(floor) != n:
        raise DialogueError(f"session {session!r}: floor has {len(floor)} entries for {n} chunk labels")
    if len(starts) != n:
        raise DialogueError(f"session {session!r}: chunk_starts has {len(starts)} entries for {n} chunk labels")
    if probs is None:
        return
    if probs.ndim != 2 or probs.shape[1] != len(LABELS):
        raise DialogueError(f"session {session!r}: probs must be [n_chunks, {len(LABELS)}] in {LABELS} order, got {probs.shape}")
    if n and probs.shape[0] not in (n, n - 1):
        raise DialogueError(
            f"session {session!r}: probs has {probs.shape[0]} rows for {n} chunks; row t must predict chunk t+1, "
            f"so give {n} or {n - 1} rows"
        )
    if not np.all(np.isfinite(probs)):
        raise DialogueError(f"session {session!r}: probs contain NaN or inf")


class _Builder:
    """The rules of the module docstring over one session's label sequence."""

    def __init__(self, labels: Sequence[str], floor: np.ndarray, probs: np.ndarray | None, starts: np.ndarray, system: int, session: str):
        self.labels = [str(x) for x in labels]
        self.floor = floor
        self.starts = starts
        self.probs = probs
        self.system = system
        self.user = 1 - system
        self.session = session

    def owner_entering(self, t: int) -> int:
        return int(self.floor[t - 1]) if t > 0 else NOBODY

    def make(self, metric: str, decision: str, chunk: int) -> AgreementInstance:
        return AgreementInstance(
            metric=metric,
            decision=decision,
            probs=() if self.probs is None else tuple(float(p) for p in self.probs[chunk - 1]),
            session=self.session,
            time=round(float(self.starts[chunk]), 6),
            chunk=chunk,
        )

    def solo(self, t: int, speaker: int) -> bool:
        """Chunk t has ``speaker`` alone on the floor and talking (``T``/``C`` owned by them)."""
        return self.labels[t] in ("T", "C") and int(self.floor[t]) == speaker

    def pause_decisions(self, metric: str, pauser: int) -> list[AgreementInstance]:
        """(a)/(d): ``pauser`` speaks alone, falls silent; what does the next non-NA chunk hold?"""
        out = []
        n = len(self.labels)
        t = 1
        while t < n:
            if self.labels[t] == "NA" and self.solo(t - 1, pauser):
                k = t
                while k < n and self.labels[k] == "NA":
                    k += 1
                if k < n and self.labels[k] in ("T", "C"):
                    out.append(self.make(metric, self.labels[k], k))
                t = k
            else:
                t += 1
        return out

    def backchannel_decisions(self) -> list[AgreementInstance]:
        """(b): chunks of the user's turn that start a system backchannel or go on without one."""
        return [
            self.make("b", self.labels[t], t)
            for t in range(1, len(self.labels))
            if self.labels[t] in ("BC", "C") and self.labels[t - 1] != "BC" and self.owner_entering(t) == self.user
            and (self.labels[t] == "BC" or int(self.floor[t]) == self.user)
        ]

    def interruption_decisions(self, speaker: int | None = None) -> list[AgreementInstance]:
        """(c): after a chunk where only ``speaker`` (default: the user) speaks, does the other
        party come in (I) or not (C)?"""
        speaker = self.user if speaker is None else speaker
        return [
            self.make("c", self.labels[t], t)
            for t in range(1, len(self.labels))
            if self.labels[t] in ("I", "C") and self.solo(t - 1, speaker)
            and (self.labels[t] == "I" or int(self.floor[t]) == speaker)
        ]

    def interruption_outcomes(self) -> list[AgreementInstance]:
        """(e): user interruptions of the system and how they resolve."""
        out = []
        n = len(self.labels)
        t = 1
        while t < n:
            if self.labels[t] == "I" and self.labels[t - 1] != "I" and self.owner_entering(t) == self.system:
                k = t
                while k < n and self.labels[k] == "I":
                    k += 1
                if k < n and self.labels[k] in ("T", "C"):
                    out.append(self.make("e", self.labels[k], k))
                t = k
            else:
                t += 1
        return out

    def build(self, metrics: Sequence[str]) -> list[AgreementInstance]:
        rules = {
            "a": lambda: self.pause_decisions("a", self.user),
            "b": self.backchannel_decisions,
            "c": self.interruption_decisions,
            "d": lambda: self.pause_decisions("d", self.system),
            "e": self.interruption_outcomes,
        }
        instances = [inst for metric in metrics for inst in rules[metric]()]
        return sorted(instances, key=lambda inst: (inst.chunk, METRIC_IDS.index(inst.metric)))


def build_agreement_instances(
    labels: Sequence[str],
    floor: Sequence[int | str],
    probs: np.ndarray | Sequence[Sequence[float]] | None,
    system_speaker: int,
    session: str,
    chunk_starts: Sequence[float] | None = None,
    metrics: Sequence[str] = METRIC_IDS,
) -> list[AgreementInstance]:
    """Instances (a)-(e) of one human-AI session (see the module docstring for the rules).

    Args:
        labels: one label from ``LABELS`` per 40 ms chunk.
        floor: per chunk, the floor owner after it (0 / 1 / -1, or "NA"/"A"/"B"/"AB"/"BA").
        probs: ``[n_chunks, 5]`` or ``[n_chunks - 1, 5]``; row t is the judge's distribution for
            chunk t+1 given the audio up to the end of chunk t. None: the decisions alone, each
            with empty ``probs`` (:func:`with_judge_probabilities` attaches them later).
        system_speaker: 0 or 1, which speaker is the AI system.
        session: the conversation id.
        chunk_starts: start time (s) of each chunk; default ``0.04 k`` (the 40 ms grid of dataset_scripts/grids.py).
        metrics: which of "a".."e" to build.

    Returns:
        The instances, in chunk order (metric order within a chunk).

    Example (the user A pauses, then the system B speaks up):

    >>> labels = ["NA", "T", "C", "NA", "NA", "T", "C"]
    >>> floor = ["NA", "A", "A", "A", "A", "B", "B"]
    >>> found = build_agreement_instances(labels, floor, [[0.2] * 5] * 7, system_speaker=1, session="s", metrics=("a",))
    >>> [(i.metric, i.decision, i.chunk, i.time) for i in found]
    [('a', 'T', 5, 0.2)]
    """
    if system_speaker not in (0, 1):
        raise DialogueError(f"session {session!r}: system_speaker must be 0 or 1, got {system_speaker!r}")
    bad = [m for m in metrics if m not in METRIC_IDS]
    if bad:
        raise ValueError(f"unknown agreement metrics {bad}; choose from {METRIC_IDS}")
    if probs is not None:
        probs = np.asarray(probs, dtype=np.float64)
        if probs.size == 0:
            probs = probs.reshape(0, len(LABELS))
    owners = floor_owners(floor, session)
    starts = np.arange(len(labels)) * CHUNK_S if chunk_starts is None else np.asarray(chunk_starts, dtype=np.float64)
    _validate(labels, owners, probs, starts, session)
    return _Builder(labels, owners, probs, starts, system_speaker, session).build(metrics)


def user_interruption_rate(
    labels: Sequence[str], floor: Sequence[int | str], system_speaker: int, session: str = "session"
) -> dict[str, Any]:
    """Table 2's "% Interruption" when the AI is the speaker: of the chunks that follow a chunk
    where only the system speaks, the share in which the user comes in (``I``), by the rule
    of (c) with the roles swapped. (The "% floor-taking" beside it is the (e) occurrence rate.)

    Returns ``{"count", "n_chunks", "rate"}`` (rate NaN when the system never speaks alone).
    """
    owners = floor_owners(floor, session)
    starts = np.arange(len(labels)) * CHUNK_S
    _validate(labels, owners, None, starts, session)
    decisions = _Builder(labels, owners, None, starts, system_speaker, session).interruption_decisions(system_speaker)
    count = sum(inst.decision == "I" for inst in decisions)
    return {"count": count, "n_chunks": len(decisions), "rate": count / len(decisions) if decisions else float("nan")}


def instances_from_chunk_labels(
    labels: ChunkLabels,
    probs: np.ndarray | Sequence[Sequence[float]] | None,
    system_speaker: int,
    session: str | None = None,
    metrics: Sequence[str] = METRIC_IDS,
) -> list[AgreementInstance]:
    """:func:`build_agreement_instances` on a labeller result (labels, floor and chunk times)."""
    name = session if session is not None else (labels.dialogue_id or "session")
    return build_agreement_instances(
        labels.labels, labels.floor, probs, system_speaker, name, chunk_starts=labels.chunk_starts, metrics=metrics
    )


def dialogue_agreement_instances(
    dialogue: Dialogue,
    probs: np.ndarray | Sequence[Sequence[float]],
    labels: ChunkLabels | None = None,
    metrics: Sequence[str] = METRIC_IDS,
    **label_kwargs: Any,
) -> list[AgreementInstance]:
    """Instances of a human-AI :class:`Dialogue` (``system_speaker`` must be set).

    ``labels`` defaults to ``chunk_labels(dialogue, **label_kwargs)`` on turneval's grid, so
    ``probs`` must be the judge's output on that grid (one row per chunk).
    """
    if dialogue.system_speaker is None:
        raise DialogueError(f"dialogue {dialogue.id!r}: set system_speaker (which channel is the AI) to build agreement instances")
    if labels is None:
        labels = chunk_labels(dialogue, **label_kwargs)
    return instances_from_chunk_labels(labels, probs, dialogue.system_speaker, dialogue.id, metrics)


def two_party_instances(
    dialogue: Dialogue,
    probs: np.ndarray | Sequence[Sequence[float]],
    labels: ChunkLabels | None = None,
    metrics: Sequence[str] = METRIC_IDS,
) -> list[AgreementInstance]:
    """Instances of a human-human conversation of two speakers, each speaker as the system in turn.

    This is how Talking Turns measures (and tunes) agreement on human-human data (§4.3): every
    decision either speaker took is one instance. Sessions are ``<id>/A`` and ``<id>/B``, after
    the speaker who takes the decisions.
    """
    if len(dialogue.segments) != 2:
        raise DialogueError(f"dialogue {dialogue.id!r} has {len(dialogue.segments)} speakers; two-party instances need 2")
    if labels is None:
        labels = chunk_labels(dialogue)
    return [
        inst
        for system, name in ((0, "A"), (1, "B"))
        for inst in instances_from_chunk_labels(labels, probs, system, f"{dialogue.id}/{name}", metrics)
    ]


PAUSE_METRICS = ("a", "d")
"""The metrics whose decision is taken at a pause (does the turn end here?)."""


def with_judge_probabilities(instances: Sequence[AgreementInstance], probs: np.ndarray) -> list[AgreementInstance]:
    """``instances`` (built without probabilities) with the judge's distribution for each
    decision chunk ``k``: row ``k - 1`` of ``probs`` (``[n_chunks, 5]``, row t predicts chunk t + 1)."""
    probs = np.asarray(probs, dtype=np.float64)
    return [replace(inst, probs=tuple(float(p) for p in probs[inst.chunk - 1])) for inst in instances]


def _with_head_probabilities(instances: Sequence[AgreementInstance], p_positive: dict[int, float], metrics: Sequence[str]) -> list[AgreementInstance]:
    # a T-vs-C probability p as the distribution (0, 0, 0, p, 1 - p): its score p_T - p_C is 2 p - 1
    out = []
    for inst in instances:
        p = p_positive.get(inst.chunk) if inst.metric in metrics else None
        out.append(inst if p is None else replace(inst, probs=(0.0, 0.0, 0.0, float(p), 1.0 - float(p))))
    return out


def with_pause_decision_probabilities(instances: Sequence[AgreementInstance],
                                     pause_decision_probabilities: dict[int, float]) -> list[AgreementInstance]:
    """(a)/(d) instances judged by the judge's pause decision: an instance whose chunk has a
    pause decision probability ``p`` (P(shift): the other party takes the turn) gets the
    distribution ``(0, 0, 0, p, 1 - p)``, so its score ``p_T - p_C`` is ``2 p - 1``; other
    instances are returned unchanged."""
    return _with_head_probabilities(instances, pause_decision_probabilities, PAUSE_METRICS)


def with_interruption_probabilities(instances: Sequence[AgreementInstance], p_floor_taken: dict[int, float]) -> list[AgreementInstance]:
    """(e) instances judged by an interruption head: an instance whose chunk has a probability
    ``p`` (that the interruption takes the floor) gets ``(0, 0, 0, p, 1 - p)``, score ``2 p - 1``;
    other instances are returned unchanged."""
    return _with_head_probabilities(instances, p_floor_taken, ("e",))


def system_decision_chunks(floor: Sequence[int | str], system_speaker: int) -> np.ndarray:
    """Chunks whose label is the system's decision: it is listening (the user holds the floor
    entering the chunk). Chunk 0 is excluded (no judge prediction). Used for the single-label
    confusion matrix (Talking Turns §4.9): compare ``labels[k]`` with ``probs[k - 1]``."""
    owners = floor_owners(floor)
    entering = np.concatenate([[NOBODY], owners[:-1]]) if len(owners) else owners
    return np.flatnonzero((entering == 1 - system_speaker) & (np.arange(len(owners)) > 0))
