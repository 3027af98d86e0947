"""VAP's zero-shot turn-taking events on 50 Hz voice activity (docs/naturalness.md; tests/golden/vap_events).

These are the frame regions on which VAP evaluates a model without training it for the
task (Ekstedt & Skantze): the probability ``p_now`` / ``p_future`` of
:mod:`turneval.dataset_scripts.vap_targets` is read inside each region.

- ``shift`` / ``hold``: the mutual silence after one speaker's turn, before the next
  speaker (shift) or the same speaker (hold) starts. ``[silence_start, onset, next_speaker]``.
- ``long``: the first frames of the next speaker's turn after a shift, when that turn is long.
- ``pred_shift`` / ``pred_hold``: the last frames of speech before a shift / hold silence.
- ``backchannel`` (VAP's "short"): a short isolated IPU. ``pred_backchannel``: the frames
  before it. ``pred_backchannel_neg_regions``: stretches where one speaker talks alone,
  from which negatives for backchannel prediction are drawn.

Every event is ``(start_frame, end_frame_exclusive, speaker)``. The speaker of shift, hold,
long, pred_shift and pred_hold is the *next* speaker; of backchannel events the
backchanneller; of negative regions the listener (the speaker who might backchannel).

:func:`turn_taking_events` is deterministic. :class:`BalancedEventSampler` is the separate,
seeded random step of VAP's ``TurnTakingEvents`` that balances holds against shifts and draws
negatives; with a fresh sampler and seed 0 it reproduces the reference's draw.

The rules reproduce VoiceActivityProjection's ``vap/events/events.py`` exactly, including its
edge behaviour (documented where it matters).
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from .grids import FRAME_HZ


STATE_ONLY_A = 0
STATE_SILENCE = 1
STATE_BOTH = 2
STATE_ONLY_B = 3
DIALOG_STATE_MEANING = "0=only A, 1=silence, 2=both, 3=only B"

# Island-state triads (previous, silence, next) that define the events; row i ends with
# speaker i, so a row index is the next speaker.
_TRIADS_SHIFT = np.array([[STATE_ONLY_B, STATE_SILENCE, STATE_ONLY_A], [STATE_ONLY_A, STATE_SILENCE, STATE_ONLY_B]])
_TRIADS_HOLD = np.array([[STATE_ONLY_A, STATE_SILENCE, STATE_ONLY_A], [STATE_ONLY_B, STATE_SILENCE, STATE_ONLY_B]])
_TRIAD_BACKCHANNEL = np.array([0, 1, 0])  # own silence, speech, own silence

Event = tuple[int, int, int]

DETERMINISTIC_KEYS = (
    "shift",
    "hold",
    "long",
    "pred_shift",
    "pred_hold",
    "backchannel",
    "pred_backchannel",
    "pred_backchannel_neg_regions",
)


@dataclass(frozen=True)
class EventConfig:
    """Parameters of VAP's ``EventConfig`` (seconds), with VAP's defaults.

    Seconds become frames by truncation, ``int(seconds * frame_hz)``, as in VAP.
    """

    min_context_time: float = 3
    metric_time: float = 0.2
    metric_pad_time: float = 0.05
    max_time: float = 20
    frame_hz: int = FRAME_HZ
    equal_hold_shift: bool = True
    prediction_region_time: float = 0.5

    # Shift / hold
    sh_pre_cond_time: float = 1.0
    sh_post_cond_time: float = 1.0
    sh_prediction_region_on_active: bool = True

    # Backchannel
    bc_pre_cond_time: float = 1.0
    bc_post_cond_time: float = 1.0
    bc_max_duration: float = 1.0
    bc_negative_pad_left_time: float = 1.0
    bc_negative_pad_right_time: float = 2.0

    # Long / short
    long_onset_region_time: float = 0.2
    long_onset_condition_time: float = 1.0

    def __post_init__(self) -> None:
        if not self.min_context_time < self.max_time:
            raise ValueError(f"min_context_time ({self.min_context_time}) must be below max_time ({self.max_time})")
        if self.prediction_region_time <= 0:
            raise ValueError(f"prediction_region_time must be positive, got {self.prediction_region_time}")
        if self.bc_negative_pad_left_time + self.bc_negative_pad_right_time >= self.max_time:
            raise ValueError("bc_negative_pad_left_time + bc_negative_pad_right_time must be below max_time")

    def frames(self, seconds: float) -> int:
        """Seconds to frames, truncated like VAP's ``time_to_frames``."""
        return int(seconds * self.frame_hz)

    @property
    def min_silence_frames(self) -> int:
        return self.frames(self.metric_time + self.metric_pad_time)

    @property
    def min_context_frames(self) -> int:
        return self.frames(self.min_context_time)

    @property
    def max_frame(self) -> int:
        return self.frames(self.max_time)

    @property
    def prediction_region_frames(self) -> int:
        return self.frames(self.prediction_region_time)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Islands:
    """Run-length encoding of a 1-D sequence: runs start at ``start`` for ``duration`` frames."""

    start: np.ndarray
    duration: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return int(self.value.shape[0])


def find_islands(x) -> Islands:
    """Runs of equal values in a 1-D sequence (VAP's ``find_island_idx_len``)."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"find_islands needs a 1-D sequence, got shape {x.shape}")
    if x.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Islands(empty, empty, empty)
    change = np.flatnonzero(x[1:] != x[:-1]) + 1
    start = np.concatenate([[0], change]).astype(np.int64)
    duration = np.diff(np.concatenate([start, [x.size]])).astype(np.int64)
    return Islands(start, duration, x[start].astype(np.int64))


def _check_va(va) -> np.ndarray:
    va = np.asarray(va)
    if va.ndim != 2 or va.shape[1] != 2:
        raise ValueError(f"voice activity must have shape [n_frames, 2], got {va.shape}")
    return (va > 0).astype(np.int8)


def dialog_states(va) -> np.ndarray:
    """Per-frame dialog state: 0 only A, 1 silence, 2 both, 3 only B."""
    va = _check_va(va).astype(np.int64)
    return 2 * va[:, 1] - va[:, 0] + 1


def vad_list_to_onehot(vad_list: Sequence[Sequence[Sequence[float]]], duration: float, frame_hz: float = FRAME_HZ) -> np.ndarray:
    """Speech segments in seconds to frame activity ``[T, 2]`` (int8), as VAP converts them.

    ``T = int(duration / hop)``, a segment (s, e) sets frames ``int(s / hop) .. int(e / hop) - 1``
    with ``hop = 1 / frame_hz``. The float division truncates, so 4.6 s is frame 229, not 230;
    this matches VAP's training data exactly. Segments past ``duration`` are cut off.
    """
    if len(vad_list) != 2:
        raise ValueError(f"vad_list needs one segment list per speaker (2), got {len(vad_list)}")
    hop = 1 / frame_hz
    n = int(duration / hop)
    va = np.zeros((n, 2), dtype=np.int8)
    for channel, segments in enumerate(vad_list):
        for i, seg in enumerate(segments):
            if len(seg) != 2:
                raise ValueError(f"speaker {channel} segment {i} must be (start, end), got {seg!r}")
            start, end = int(seg[0] / hop), int(seg[1] / hop)
            va[max(start, 0) : max(end, 0), channel] = 1
    return va


def fill_pauses(va, islands: Islands | None = None) -> np.ndarray:
    """Fill hold pauses: a silence between two islands of the same single speaker becomes speech.

    Args:
        va: voice activity ``[T, 2]``.
        islands: dialog-state islands of ``va`` when already computed.
    """
    va = _check_va(va)
    filled = va.copy()
    if islands is None:
        islands = find_islands(dialog_states(va))
    if len(islands) < 3:
        return filled
    triads = np.lib.stride_tricks.sliding_window_view(islands.value, 3)
    for speaker, template in enumerate(_TRIADS_HOLD):
        for step in np.flatnonzero((triads == template).all(axis=1)):
            silence = step + 1
            s = islands.start[silence]
            filled[s : s + islands.duration[silence], speaker] = 1
    return filled


def _hs_regions(
    triads: np.ndarray,
    templates: np.ndarray,
    filled: np.ndarray,
    islands: Islands,
    config: EventConfig,
    max_frame: int,
) -> tuple[list[Event], list[Event], list[Event]]:
    """Shift or hold regions (with their prediction and long-onset regions) for one template set."""
    is_hold = templates[0, 0] == templates[0, -1]
    pre_frames = config.frames(config.sh_pre_cond_time)
    post_frames = config.frames(config.sh_post_cond_time)
    pred_frames = config.prediction_region_frames
    long_cond_frames = config.frames(config.long_onset_condition_time)
    long_region_frames = config.frames(config.long_onset_region_time)
    regions: list[Event] = []
    predictions: list[Event] = []
    long_onsets: list[Event] = []
    # Grouped by next speaker (template row), then by time, as the reference lists them.
    for next_speaker, template in enumerate(templates):
        for last_onset in np.flatnonzero((triads == template).all(axis=1)):
            prev_speaker = next_speaker if is_hold else 1 - next_speaker
            silence, next_onset = last_onset + 1, last_onset + 2
            sil_start = int(islands.start[silence])
            if sil_start < config.min_context_frames or sil_start >= max_frame:
                continue
            if islands.duration[silence] < config.min_silence_frames:
                continue
            # Only the previous speaker for pre_frames before the silence. The window is
            # clipped at frame 0 but must still hold exactly pre_frames active frames.
            pre_start = max(sil_start - pre_frames, 0)
            if filled[pre_start:sil_start, prev_speaker].sum() != pre_frames:
                continue
            if filled[pre_start:sil_start, 1 - prev_speaker].sum() != 0:
                continue
            onset = int(islands.start[next_onset])
            if filled[onset : onset + post_frames, next_speaker].sum() != post_frames:
                continue
            if filled[onset : onset + post_frames, 1 - next_speaker].sum() != 0:
                continue
            regions.append((sil_start, onset, next_speaker))
            if not is_hold and islands.duration[next_onset] >= long_cond_frames:
                long_onsets.append((onset, onset + long_region_frames, next_speaker))
            if config.sh_prediction_region_on_active and islands.duration[last_onset] < pred_frames:
                continue
            pred_start = sil_start - pred_frames
            if pred_start < config.min_context_frames:
                continue
            predictions.append((pred_start, sil_start, next_speaker))
    return regions, predictions, long_onsets


def hold_shift_regions(va, config: EventConfig = EventConfig(), max_frame: int | None = None) -> dict[str, list[Event]]:
    """Shift, hold, long, pred_shift and pred_hold regions of one dialogue."""
    va = _check_va(va)
    max_frame = config.max_frame if max_frame is None else max_frame
    islands = find_islands(dialog_states(va))
    filled = fill_pauses(va, islands)
    if len(islands) < 3:
        return {"shift": [], "hold": [], "long": [], "pred_shift": [], "pred_hold": []}
    triads = np.lib.stride_tricks.sliding_window_view(islands.value, 3)
    shift, pred_shift, long = _hs_regions(triads, _TRIADS_SHIFT, filled, islands, config, max_frame)
    hold, pred_hold, _ = _hs_regions(triads, _TRIADS_HOLD, filled, islands, config, max_frame)
    return {"shift": shift, "hold": hold, "long": long, "pred_shift": pred_shift, "pred_hold": pred_hold}


def backchannel_regions(va, config: EventConfig = EventConfig(), max_frame: int | None = None) -> dict[str, list[Event]]:
    """Short isolated IPUs (VAP "backchannels") and the prediction regions before them.

    A backchannel is an island of at most ``bc_max_duration`` of one speaker (on the
    pause-filled activity) with at least ``bc_pre_cond_time`` / ``bc_post_cond_time`` of that
    speaker's own silence before / after it. The other speaker need not be active.
    """
    va = _check_va(va)
    max_frame = config.max_frame if max_frame is None else max_frame
    filled = fill_pauses(va)
    max_bc = config.frames(config.bc_max_duration)
    pre_frames = config.frames(config.bc_pre_cond_time)
    post_frames = config.frames(config.bc_post_cond_time)
    pred_frames = config.prediction_region_frames
    backchannel: list[Event] = []
    pred_backchannel: list[Event] = []
    for speaker in (0, 1):
        islands = find_islands(filled[:, speaker])
        if len(islands) < 3:
            continue
        triads = np.lib.stride_tricks.sliding_window_view(islands.value, 3)
        for pre_silence in np.flatnonzero((triads == _TRIAD_BACKCHANNEL).all(axis=1)):
            bc, post_silence = pre_silence + 1, pre_silence + 2
            bc_start = int(islands.start[bc])
            if bc_start < config.min_context_frames or bc_start >= max_frame:
                continue
            if islands.duration[bc] > max_bc:
                continue
            if islands.duration[pre_silence] < pre_frames or islands.duration[post_silence] < post_frames:
                continue
            backchannel.append((bc_start, int(islands.start[post_silence]), speaker))
            if bc_start - pred_frames >= config.min_context_frames:
                pred_backchannel.append((bc_start - pred_frames, bc_start, speaker))
    return {"backchannel": backchannel, "pred_backchannel": pred_backchannel}


def backchannel_negative_regions(va, config: EventConfig = EventConfig(), max_frame: int | None = None) -> list[Event]:
    """Regions where one speaker talks alone, from which backchannel-prediction negatives are drawn.

    Each pause-filled single-speaker island of at least ``pad_left + pad_right`` frames is
    trimmed by the pads, clamped to ``[min_context, max_frame]`` and kept if at least one
    prediction region fits. The speaker of a region is the listener.
    """
    va = _check_va(va)
    max_frame = config.max_frame if max_frame is None else max_frame
    pad_left = config.frames(config.bc_negative_pad_left_time)
    pad_right = config.frames(config.bc_negative_pad_right_time)
    min_region = config.prediction_region_frames
    islands = find_islands(dialog_states(fill_pauses(va)))
    regions: list[Event] = []
    for speaker, state in enumerate((STATE_ONLY_A, STATE_ONLY_B)):
        mask = islands.value == state
        for start, duration in zip(islands.start[mask], islands.duration[mask]):
            if duration < pad_left + pad_right:
                continue
            lo = max(int(start) + pad_left, config.min_context_frames)
            hi = min(int(start + duration) - pad_right, max_frame)
            if hi - lo < min_region:
                continue
            regions.append((lo, hi, 1 - speaker))
    return regions


def turn_taking_events(va, config: EventConfig = EventConfig(), max_time: float | None = None) -> dict[str, list[Event]]:
    """Every deterministic VAP event of one dialogue, before any random sub-sampling.

    Args:
        va: voice activity ``[T, 2]`` at ``config.frame_hz``.
        config: event parameters (VAP defaults).
        max_time: optional override of ``config.max_time`` (seconds) for every event type.
            (VAP's Backchannel converts an explicit max_time with the wrong rate; turneval
            converts it with ``frame_hz`` everywhere.)

    Returns:
        dict with the lists of :data:`DETERMINISTIC_KEYS`.
    """
    max_frame = config.max_frame if max_time is None else config.frames(max_time)
    events: dict[str, list[Event]] = {}
    events.update(hold_shift_regions(va, config, max_frame))
    events.update(backchannel_regions(va, config, max_frame))
    events["pred_backchannel_neg_regions"] = backchannel_negative_regions(va, config, max_frame)
    return {key: events[key] for key in DETERMINISTIC_KEYS}


@dataclass
class BalancedEventSampler:
    """VAP's random balancing of events (the second half of ``TurnTakingEvents.__call__``).

    - ``pred_shift_neg``: as many pred_hold regions as there are pred_shift regions;
    - ``pred_backchannel_neg``: a random prediction-length window inside as many negative
      regions as there are **pred_shift** regions (VAP counts pred_shift here, not
      pred_backchannel; kept for comparability, change ``bc_negatives_follow`` to
      ``"pred_backchannel"`` for the balanced variant);
    - ``hold``: as many holds as shifts when ``config.equal_hold_shift``.

    When too few candidates exist, the shortfall is remembered and made up in later calls
    (VAP's ``add_extra``), so use one sampler per pass over a data set.

    Attributes:
        config: event parameters.
        seed: seed of the private ``random.Random``; seed 0 on a fresh sampler reproduces
            the reference's ``random.seed(0)`` draw.
    """

    config: EventConfig = field(default_factory=EventConfig)
    seed: int | None = 0
    bc_negatives_follow: str = "pred_shift"
    carry_over: dict[str, int] = field(default_factory=lambda: {"shift": 0, "pred_shift": 0, "pred_backchannel": 0})

    def __post_init__(self) -> None:
        if self.bc_negatives_follow not in ("pred_shift", "pred_backchannel"):
            raise ValueError(f"bc_negatives_follow must be 'pred_shift' or 'pred_backchannel', got {self.bc_negatives_follow!r}")
        self._rng = random.Random(self.seed)

    def _sample(self, n_wanted: int, candidates: list[Event], memory_key: str) -> list[Event]:
        n_max = len(candidates)
        if n_max < n_wanted:
            self.carry_over[memory_key] += n_wanted - n_max
            n_wanted = n_max
        else:
            extra = min(n_max - n_wanted, self.carry_over[memory_key])
            n_wanted += extra
            self.carry_over[memory_key] -= extra
        return [candidates[i] for i in self._rng.sample(range(n_max), k=n_wanted)]

    def _window_in(self, region: Event) -> Event:
        start, end, speaker = region
        length = self.config.prediction_region_frames
        first = self._rng.randint(start, end - length)
        return (first, first + length, speaker)

    def __call__(self, events: dict[str, list[Event]]) -> dict[str, list[Event]]:
        """Balanced events from :func:`turn_taking_events` output.

        Returns the keys of VAP's ``TurnTakingEvents``: shift, hold, long, pred_shift,
        pred_shift_neg, short (the backchannels), pred_backchannel, pred_backchannel_neg.
        """
        # The draw order (pred_shift_neg, pred_backchannel_neg, hold) is the reference's.
        pred_shift_neg = self._sample(len(events["pred_shift"]), list(events["pred_hold"]), "pred_shift")
        regions = self._sample(len(events[self.bc_negatives_follow]), list(events["pred_backchannel_neg_regions"]), "pred_backchannel")
        pred_backchannel_neg = [self._window_in(r) for r in regions]
        hold = list(events["hold"])
        if self.config.equal_hold_shift:
            hold = self._sample(len(events["shift"]), hold, "shift")
        return {
            "shift": list(events["shift"]),
            "hold": hold,
            "long": list(events["long"]),
            "pred_shift": list(events["pred_shift"]),
            "pred_shift_neg": pred_shift_neg,
            "short": list(events["backchannel"]),
            "pred_backchannel": list(events["pred_backchannel"]),
            "pred_backchannel_neg": pred_backchannel_neg,
        }


__all__ = [
    "BalancedEventSampler",
    "DETERMINISTIC_KEYS",
    "DIALOG_STATE_MEANING",
    "EventConfig",
    "Islands",
    "backchannel_negative_regions",
    "backchannel_regions",
    "dialog_states",
    "fill_pauses",
    "find_islands",
    "hold_shift_regions",
    "turn_taking_events",
    "vad_list_to_onehot",
]
