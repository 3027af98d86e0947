# A copy of turneval.dataset_scripts.labels for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""40 ms turn-taking labels NA / BC / I / T / C and the floor owner per chunk (docs/events_and_labels.md).

This is the labelling of Talking Turns §4.1 as the ESPnet recipe computes it
(``egs2/swbd/slu1/local/create_switchboard_data_2channels.py`` followed by
``create_switchboard_data_2channels_mono.py``), rule for rule:

1. **Two-channel rows.** Each speaker's channel gets ``NA``, ``IPU`` or ``BC`` per chunk.
   The rule is applied separately to the speaker's backchannel intervals and to their other
   (non-backchannel) word intervals; ``BC`` wins over ``IPU``. A chunk ``[s, e)`` looks at the
   first interval that is not finished yet: when ``e >= interval_end`` it moves on to the next
   interval (so the chunk holding an interval's end takes the *next* interval's label, and the
   last chunk of speech is usually ``NA``); otherwise it is active iff
   ``e + lookahead >= interval_start`` (a one-chunk look-ahead: the chunk just before speech is
   already labelled). Intervals that end before the first chunk starts are skipped.
2. **Mono labels.** A state machine over the two channel labels with the floor state
   ``NA`` (nobody holds the floor yet), ``A``, ``B``, ``AB`` (A had the floor, B came in) and
   ``BA`` (B had it, A came in); see :func:`floor_labels`. Its raw output has two extra labels:
   ``BC_1`` (a backchannel while the backchanneller's partner does not hold the floor, e.g.
   before anyone spoke) and ``BC_2`` (both speakers backchannel in the same chunk).

**Training labels.** :attr:`ChunkLabels.labels` maps ``BC_1`` and ``BC_2`` to ``BC`` (both are
listener feedback); the reference's subsampler instead drops those chunks, which
:meth:`ChunkLabels.label_ids` reproduces with ``unclear_backchannel="ignore"`` (they get
``ignore_index``).

**Grids.** The recipe's chunks start at 0.2 s (:data:`RECIPE_START_S`) and their number is
``int((round(duration, 2) - 0.2) / 0.04)`` (:func:`recipe_chunk_count`). turneval's own grid
(dataset_scripts/grids.py) is the default of :func:`chunk_labels`: ``start_s=0.0``, chunk i covers
``[0.04 i, 0.04 (i + 1))`` and there are ``floor(duration / 0.04)`` chunks. Pass
``start_s=RECIPE_START_S, n_chunks=recipe_chunk_count(duration)`` for the recipe's grid.

Two entry points share the rules above:

- :func:`chunk_labels` labels any :class:`~turneval.dataset_scripts.dialogue.Dialogue`; its
  backchannels come from :func:`~turneval.dataset_scripts.events.extract_events` unless given.
- :func:`recipe_labels_from_ms98` runs the recipe on MS-State (ms98) word-alignment lines and
  the rows of a ``backchannels.csv`` (VoiceActivityProjection ``dataset_swb`` layout), with the
  recipe's own way of removing backchannel words from the word list.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np

from .turneval_dialogue import Dialogue
from .turneval_events import TurnTakingEvents, extract_events
from .turneval_grids import CHUNK_S, true_runs
from .turneval_vocabulary import is_speech_word


LABELS: tuple[str, ...] = ("NA", "BC", "I", "T", "C")
"""The five judge classes, in class-index order."""

RECIPE_LABELS: tuple[str, ...] = ("NA", "BC", "BC_1", "BC_2", "I", "T", "C")
"""The mono labels the recipe writes; ``BC_1`` and ``BC_2`` are folded into ``BC`` for training."""

CHANNEL_LABELS: tuple[str, ...] = ("NA", "IPU", "BC")
"""Per-speaker labels of the two-channel rows."""

FLOOR_STATES: tuple[str, ...] = ("NA", "A", "B", "AB", "BA")
"""Floor owner: nobody yet, A, B, A-then-B (B came in on A's floor), B-then-A."""

FLOOR_NAMES: Mapping[str, str] = {"NA": "none", "A": "A", "B": "B", "AB": "A-then-B", "BA": "B-then-A"}

RECIPE_START_S = 0.2
"""The recipe's first chunk starts at 0.2 s."""

RECIPE_TO_LABEL: Mapping[str, str] = {"BC_1": "BC", "BC_2": "BC"}

Interval = tuple[float, float]


class LabelError(ValueError):
    """Labelling input is inconsistent; the message says what to fix."""


# ---------------------------------------------------------------------------------------
# The chunk grid and the per-channel activity rule
# ---------------------------------------------------------------------------------------


def recipe_chunk_count(duration_s: float, start_s: float = RECIPE_START_S, chunk_s: float = CHUNK_S) -> int:
    """Number of chunks the recipe writes: ``int((round2(duration) - round2(start)) / chunk_s)``.

    The division truncates in float arithmetic: 2.4 s gives 54 chunks, not 55, because
    ``(2.4 - 0.2) / 0.04`` is 54.99999999999999.
    """
    start = float(f"{start_s:.2f}")
    end = float(f"{duration_s:.2f}")
    return max(0, int((end - start) / chunk_s))


def chunk_bounds(count: int, start_s: float = 0.0, chunk_s: float = CHUNK_S) -> tuple[list[float], list[float]]:
    """Start and end (s) of ``count`` chunks: chunk i is ``[start + i c, start + (i + 1) c)``.

    Computed exactly as the recipe does (one multiplication and one addition per bound), so
    the float comparisons of :func:`channel_activity` see the recipe's values.
    """
    starts = [start_s + i * chunk_s for i in range(count)]
    ends = [start_s + (i + 1) * chunk_s for i in range(count)]
    return starts, ends


def channel_activity(
    intervals: Sequence[Interval],
    starts: Sequence[float],
    ends: Sequence[float],
    *,
    lookahead_s: float = CHUNK_S,
    strict: bool = False,
) -> list[bool]:
    """Which chunks a list of intervals makes active, by the recipe's rule (module docstring).

    Args:
        intervals: ``(start, end)`` pairs in the order the recipe walks them (time order).
        starts, ends: the chunk bounds (:func:`chunk_bounds`).
        lookahead_s: a chunk is active when ``end + lookahead_s >= interval_start``.
        strict: raise :class:`LabelError` where the recipe aborts: an interval that ended
            before a later (not the first) chunk started, which only happens when the
            intervals are out of order. Otherwise such intervals are skipped.
    """
    active: list[bool] = []
    idx = 0
    for i, (chunk_start, chunk_end) in enumerate(zip(starts, ends)):
        label = False
        while idx < len(intervals):
            iv_start, iv_end = intervals[idx]
            if chunk_start >= iv_end:
                if strict and i > 0:
                    raise LabelError(
                        f"interval {idx} ({iv_start}, {iv_end}) ends before chunk {i} "
                        f"starts at {chunk_start}: intervals must be in time order"
                    )
                idx += 1
                continue
            if chunk_end >= iv_end:
                idx += 1
                continue
            label = chunk_end + lookahead_s >= iv_start
            break
        active.append(label)
    return active


def channel_labels(
    speech: Sequence[Interval],
    backchannels: Sequence[Interval],
    starts: Sequence[float],
    ends: Sequence[float],
    *,
    lookahead_s: float = CHUNK_S,
    strict: bool = False,
) -> list[str]:
    """One speaker's ``NA`` / ``IPU`` / ``BC`` per chunk; ``BC`` takes precedence over ``IPU``.

    ``speech`` holds the speaker's non-backchannel intervals (words, or VAD segments).
    """
    bc = channel_activity(backchannels, starts, ends, lookahead_s=lookahead_s, strict=strict)
    ipu = channel_activity(speech, starts, ends, lookahead_s=lookahead_s, strict=strict)
    return ["BC" if b else "IPU" if s else "NA" for b, s in zip(bc, ipu)]


# ---------------------------------------------------------------------------------------
# The mono state machine
# ---------------------------------------------------------------------------------------


def _next_state(label_a: str, label_b: str, floor: str) -> tuple[str, str]:
    """(mono label, new floor state) for one chunk; the recipe's table (golden README §4)."""
    if label_a == "NA" and label_b == "NA":
        return "NA", floor
    if label_a == "IPU" and label_b == "NA":
        return ("C" if floor in ("A", "AB") else "T"), "A"
    if label_a == "NA" and label_b == "IPU":
        return ("C" if floor in ("B", "BA") else "T"), "B"
    if label_a == "IPU" and label_b == "IPU":
        if floor in ("AB", "BA"):
            return "I", floor
        return "I", ("AB" if floor == "A" else "BA")
    if label_a == "BC" and label_b == "BC":
        return "BC_2", floor
    if label_a == "BC":
        return ("BC" if floor in ("B", "BA") else "BC_1"), floor
    if label_b == "BC":
        return ("BC" if floor in ("A", "AB") else "BC_1"), floor
    raise LabelError(f"unknown channel labels {label_a!r}, {label_b!r}; expected one of {CHANNEL_LABELS}")


def floor_labels(labels_a: Sequence[str], labels_b: Sequence[str], initial_floor: str = "NA") -> tuple[list[str], list[str], list[str]]:
    """Run the recipe's mono state machine over two channel-label sequences.

    Returns ``(mono_labels, floor_before, floor_after)``: the raw mono label per chunk
    (:data:`RECIPE_LABELS`), the floor state before the chunk (the recipe's
    ``prev_speaker`` column) and after it.

    A floor-taking interruption reads ``I ... T C C`` (the interrupter is alone after the
    overlap: a new turn), a butting-in one ``I ... C C`` (the first speaker continues).
    """
    if len(labels_a) != len(labels_b):
        raise LabelError(f"channel label sequences differ in length: {len(labels_a)} vs {len(labels_b)}")
    if initial_floor not in FLOOR_STATES:
        raise LabelError(f"initial_floor must be one of {FLOOR_STATES}, got {initial_floor!r}")
    floor = initial_floor
    mono, before, after = [], [], []
    for label_a, label_b in zip(labels_a, labels_b):
        before.append(floor)
        label, floor = _next_state(label_a, label_b, floor)
        mono.append(label)
        after.append(floor)
    return mono, before, after


# ---------------------------------------------------------------------------------------
# The result type
# ---------------------------------------------------------------------------------------


def _recipe_time(value: float) -> str:
    """A chunk bound as the recipe's CSV writes it: rounded to 2 decimals, then ``str(float)``."""
    return str(float(f"{value:.2f}"))


@dataclass(frozen=True, eq=False)
class ChunkLabels:
    """Labels of every chunk of one dialogue.

    Attributes:
        chunk_starts, chunk_ends: chunk bounds in seconds (float64 arrays).
        channel_labels: per speaker (A, B) the two-channel labels ``NA`` / ``IPU`` / ``BC``.
        recipe_labels: the raw mono labels, including ``BC_1`` / ``BC_2`` (:data:`RECIPE_LABELS`).
        floor_before: floor state before each chunk (the recipe's ``prev_speaker`` column).
        floor: floor state after each chunk, i.e. who holds the floor once the chunk is
            labelled (:data:`FLOOR_STATES`; :data:`FLOOR_NAMES` spells them out).
        dialogue_id: the dialogue the labels belong to, when known.
    """

    chunk_starts: np.ndarray
    chunk_ends: np.ndarray
    channel_labels: tuple[tuple[str, ...], tuple[str, ...]]
    recipe_labels: tuple[str, ...]
    floor_before: tuple[str, ...]
    floor: tuple[str, ...]
    dialogue_id: str | None = None

    def __len__(self) -> int:
        return len(self.recipe_labels)

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """The five-class labels (:data:`LABELS`); ``BC_1`` and ``BC_2`` become ``BC``. Made once:
        a report reads them a few hundred times, and a 5-minute call has 7,500 chunks."""
        return tuple(RECIPE_TO_LABEL.get(label, label) for label in self.recipe_labels)

    def label_ids(self, *, unclear_backchannel: str = "bc", ignore_index: int = -100) -> np.ndarray:
        """Class indices into :data:`LABELS` (int64).

        Args:
            unclear_backchannel: ``"bc"`` maps ``BC_1`` / ``BC_2`` to BC; ``"ignore"`` gives
                them ``ignore_index``, as the reference subsampler drops those chunks.
            ignore_index: the index for ignored chunks.
        """
        if unclear_backchannel not in ("bc", "ignore"):
            raise ValueError(f"unclear_backchannel must be 'bc' or 'ignore', got {unclear_backchannel!r}")
        index = {label: i for i, label in enumerate(LABELS)}
        ids = []
        for label in self.recipe_labels:
            if label in RECIPE_TO_LABEL and unclear_backchannel == "ignore":
                ids.append(ignore_index)
            else:
                ids.append(index[RECIPE_TO_LABEL.get(label, label)])
        return np.asarray(ids, dtype=np.int64)

    def floor_ids(self) -> np.ndarray:
        """Floor state after each chunk as indices into :data:`FLOOR_STATES` (int64)."""
        index = {state: i for i, state in enumerate(FLOOR_STATES)}
        return np.asarray([index[s] for s in self.floor], dtype=np.int64)

    def two_channel_rows(self) -> list[list[str]]:
        """``[chunk_start, chunk_end, label_A, label_B]`` as the recipe's CSV writes them."""
        return [
            [_recipe_time(s), _recipe_time(e), a, b]
            for s, e, a, b in zip(self.chunk_starts, self.chunk_ends, *self.channel_labels)
        ]

    def mono_rows(self) -> list[list[str]]:
        """``[chunk_start, chunk_end, label, prev_speaker]`` as the recipe's mono CSV writes them."""
        return [
            [_recipe_time(s), _recipe_time(e), label, before]
            for s, e, label, before in zip(self.chunk_starts, self.chunk_ends, self.recipe_labels, self.floor_before)
        ]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists of floats and strings)."""
        return {
            "dialogue_id": self.dialogue_id,
            "chunk_starts": [float(x) for x in self.chunk_starts],
            "chunk_ends": [float(x) for x in self.chunk_ends],
            "labels": list(self.labels),
            "recipe_labels": list(self.recipe_labels),
            "floor": list(self.floor),
            "channel_labels": [list(c) for c in self.channel_labels],
        }


def label_chunks(
    speech: Sequence[Sequence[Interval]],
    backchannels: Sequence[Sequence[Interval]],
    count: int,
    *,
    start_s: float = 0.0,
    chunk_s: float = CHUNK_S,
    lookahead_s: float | None = None,
    strict: bool = False,
    dialogue_id: str | None = None,
) -> ChunkLabels:
    """Label ``count`` chunks from per-speaker speech and backchannel intervals.

    Args:
        speech: per speaker (A, B), the non-backchannel speech intervals in time order.
        backchannels: per speaker, the backchannel intervals in time order.
        count: number of chunks; chunk i is ``[start_s + i chunk_s, start_s + (i + 1) chunk_s)``.
        lookahead_s: the activity look-ahead; defaults to one chunk, as the recipe.
        strict: abort on out-of-order intervals as the recipe does (:func:`channel_activity`).
    """
    if len(speech) != 2 or len(backchannels) != 2:
        raise LabelError("need speech and backchannel intervals for exactly 2 speakers")
    lookahead = chunk_s if lookahead_s is None else lookahead_s
    starts, ends = chunk_bounds(count, start_s, chunk_s)
    per_channel = tuple(
        tuple(channel_labels(speech[k], backchannels[k], starts, ends, lookahead_s=lookahead, strict=strict))
        for k in range(2)
    )
    mono, before, after = floor_labels(*per_channel)
    return ChunkLabels(
        chunk_starts=np.asarray(starts, dtype=np.float64),
        chunk_ends=np.asarray(ends, dtype=np.float64),
        channel_labels=per_channel,  # type: ignore[arg-type]
        recipe_labels=tuple(mono),
        floor_before=tuple(before),
        floor=tuple(after),
        dialogue_id=dialogue_id,
    )


# ---------------------------------------------------------------------------------------
# Labels of a Dialogue
# ---------------------------------------------------------------------------------------


def _inside_any(start: float, end: float, intervals: Sequence[Interval]) -> bool:
    return any(s <= start and end <= e for s, e in intervals)


def chunk_labels(
    dialogue: Dialogue,
    *,
    backchannel_intervals: Sequence[Sequence[Interval]] | None = None,
    events: TurnTakingEvents | None = None,
    use_words: bool | None = None,
    start_s: float = 0.0,
    n_chunks: int | None = None,
    chunk_s: float = CHUNK_S,
    lookahead_s: float | None = None,
    **event_kwargs: Any,
) -> ChunkLabels:
    """The 40 ms labels and floor owner of a dialogue.

    Each speaker's speech intervals are their words (when the dialogue has words for that
    speaker and ``use_words`` is not False) or their voice-activity segments. Words or
    segments lying inside one of the speaker's backchannel intervals are removed from the
    speech list, and the backchannel intervals are labelled ``BC``, as in the recipe.

    Args:
        dialogue: the conversation.
        backchannel_intervals: per speaker, ``(start, end)`` of each backchannel. When None
            they are the backchannels of ``events``, or of
            :func:`~turneval.dataset_scripts.events.extract_events` (by words when the
            dialogue has words, else by the duration proxy).
        events: the dialogue's already extracted
            :class:`~turneval.dataset_scripts.events.TurnTakingEvents` (saves extracting them
            again); ignored when ``backchannel_intervals`` is given.
        use_words: use word times (True), segments (False), or words where present (None).
        start_s: time of the first chunk; 0.0 is turneval's grid, :data:`RECIPE_START_S` the
            recipe's.
        n_chunks: number of chunks; default ``floor((duration - start_s) / chunk_s)``.
            The recipe's count is :func:`recipe_chunk_count`.
        chunk_s: chunk length (default 40 ms).
        lookahead_s: activity look-ahead (default one chunk, as the recipe).
        **event_kwargs: passed on to ``extract_events`` when it runs, e.g. ``backchannel_words``
            (the phrase list of that detection) or ``max_backchannel_s``.
    """
    if backchannel_intervals is None:
        if events is None:
            events = extract_events(dialogue, use_words=use_words, **event_kwargs)
        backchannel_intervals = [
            [(bc.start, bc.end) for bc in events.backchannels if bc.speaker == k] for k in range(2)
        ]
    if len(backchannel_intervals) != 2:
        raise LabelError(f"dialogue {dialogue.id!r}: backchannel_intervals needs one list per speaker")
    bc = [sorted((float(s), float(e)) for s, e in spk) for spk in backchannel_intervals]

    speech: list[list[Interval]] = []
    for k in range(2):
        words = dialogue.words[k] if dialogue.words is not None else []
        from_words = bool(words) if use_words is None else use_words
        if from_words:
            pieces = [(w.start, w.end) for w in words if is_speech_word(w.text)]
        else:
            pieces = list(dialogue.segments[k])
        speech.append([(s, e) for s, e in pieces if not _inside_any(s, e, bc[k])])

    duration = float(dialogue.duration or 0.0)
    count = max(0, int(math.floor((duration - start_s) / chunk_s + 1e-9))) if n_chunks is None else int(n_chunks)
    return label_chunks(
        speech, bc, count, start_s=start_s, chunk_s=chunk_s, lookahead_s=lookahead_s, dialogue_id=dialogue.id
    )


# ---------------------------------------------------------------------------------------
# Who speaks next: the T-versus-C question inside a pause
# ---------------------------------------------------------------------------------------

NEXT_SPEAKER_SHIFT, NEXT_SPEAKER_HOLD = 1, 0
"""Values of :func:`next_speaker_targets`: the partner takes the turn / the speaker goes on."""


def next_speaker_targets(label_ids: Sequence[int] | np.ndarray, ignore_index: int = -100) -> np.ndarray:
    """For every silent chunk of a pause after speech, whether the turn changes hands next.

    The labels of :data:`LABELS` answer "what happens in the next 40 ms"; in a pause that is
    almost always NA, and the sparse T or C at the end of the pause is the only chunk that
    says *who* goes on. Yet metric (a) reads the judge's ``p_T - p_C`` 200 ms into the pause.
    This target carries the answer back over the whole pause: chunk c gets
    :data:`NEXT_SPEAKER_SHIFT` when it is NA, the run of NA chunks holding it follows speech
    (C, T, I or BC) and ends in T; :data:`NEXT_SPEAKER_HOLD` when that run ends in C; otherwise
    ``ignore_index`` (speech chunks, silence before anyone spoke, a pause that ends in a
    backchannel, an interruption or the end of the conversation). It conditions the judge's
    own distribution on "someone starts": ``p_T / (p_T + p_C)``, which is what a judge trained
    with it learns (``train_judge_cached --next_speaker_weight``).

    >>> ids = [LABELS.index(x) for x in "C C NA NA T C NA NA C NA".split()]
    >>> next_speaker_targets(ids).tolist()
    [-100, -100, 1, 1, -100, -100, 0, 0, -100, -100]
    """
    ids = np.asarray(label_ids, dtype=np.int64)
    na, t, c = LABELS.index("NA"), LABELS.index("T"), LABELS.index("C")
    out = np.full(len(ids), ignore_index, dtype=np.int64)
    for i, j in true_runs(ids == na):
        after_speech = i > 0 and ids[i - 1] >= 0
        if after_speech and j < len(ids) and ids[j] in (t, c):
            out[i:j] = NEXT_SPEAKER_SHIFT if ids[j] == t else NEXT_SPEAKER_HOLD
    return out
