"""FD-Bench timing metrics for full-duplex spoken dialogue systems.

FD-Bench (Peng et al., 2025) plays scripted multi-round user speech to a system and judges
its turn-taking from the voice-activity segments of the two sides. Rates and delays follow
the benchmark's own ``benchmarking.py`` (``analyze_VAD_interruption_new2`` and
``analyze_VAD_marks(type="interruption")``), quirks included:

* **SRR** success response rate: responses to ordinary rounds / rounds.
* **SIR** success interrupt rate: interruptions the system yielded to / user interruptions.
* **SRIR** success response rate to interruption: responses after a yielded interruption /
  yielded interruptions.
* **EIR** early interrupt rate: system starts more than 0.5 s before the user ends / rounds.
* **NIR** noise interrupt rate: short system segments that end in a user gap at least 2.5 s
  before the next user turn / gaps (can exceed 100 %: several segments per gap count).
* **FSED** first-speech emission delay, **ERT** early response time, **EIT** early interrupt
  time and **IRD** interruption response delay, in ms: the median of the positive values
  after ``int(samples / 16)`` truncation (0 when there are none).

All times are integer sample indices at ``sample_rate`` (16 kHz in FD-Bench); use
:func:`seconds_to_samples` for segments in seconds. Every comparison is strict except
``system end <= user end`` when a system segment that started before the user is cut by
the user. A zero delay is stored as 1 so that it counts as present.

Example:

    >>> from turneval.metrics.fd_bench_rounds import FDBenchConversation, evaluate_fd_bench
    >>> conv = FDBenchConversation(
    ...     user_segments=[(0, 32000), (80000, 112000)],
    ...     system_segments=[(40000, 96000), (121600, 160000)],
    ...     round_types=["First Inquiry", "Topic Shift"],
    ... )
    >>> result = evaluate_fd_bench([conv]).result
    >>> result.srr, result.sir, result.srir, result.fsed_ms, result.ird_ms
    (0.5, 1.0, 1.0, 550.0, 1000)
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from turneval.dataset_scripts.grids import SAMPLE_RATE


__all__ = [
    "FD_BENCH_CATEGORIES",
    "FIRST_ROUND_TYPE",
    "FDBenchThresholds",
    "FDBenchConversation",
    "ConversationMarks",
    "FDBenchResult",
    "FDBenchReport",
    "seconds_to_samples",
    "round_types_from_rounds",
    "analyze_conversation",
    "aggregate_marks",
    "evaluate_fd_bench",
    "transcript_error_rate",
]

FD_BENCH_CATEGORIES: tuple[str, ...] = (
    "Further Inquiry",
    "Topic Shift",
    "Affirmative Acknowledgment",
    "Third-Party Noise",
    "Denial and Discontent",
)
"""The interruption categories FD-Bench reports, in its order."""

FIRST_ROUND_TYPE = "First Inquiry"
"""Type of the first round (not an interruption, so it is not counted in any category)."""

_COMBINED_TYPE_SEPARATOR = " + "


@dataclass(frozen=True)
class FDBenchThresholds:
    """FD-Bench's fixed thresholds, in samples at ``sample_rate``.

    Attributes:
        wrong_interrupt_lead: a system start more than this before the user's end is an
            early (wrong) interrupt (8000 = 0.5 s).
        noise_min_silence: a system segment ending at least this long before the next user
            turn may be a noise interrupt (40000 = 2.5 s) ...
        noise_max_segment: ... if it is shorter than this (88000 = 5.5 s).
        sample_rate: rate of the sample indices; delays are reported in ms.
    """

    wrong_interrupt_lead: int = 8000
    noise_min_silence: int = 40000
    noise_max_segment: int = 88000
    sample_rate: int = SAMPLE_RATE

    @classmethod
    def for_sample_rate(cls, sample_rate: int) -> "FDBenchThresholds":
        """FD-Bench's thresholds (0.5 s, 2.5 s, 5.5 s) in samples at ``sample_rate``."""
        scale = sample_rate / SAMPLE_RATE
        return cls(round(8000 * scale), round(40000 * scale), round(88000 * scale), sample_rate)


@dataclass(frozen=True)
class FDBenchConversation:
    """One benchmark conversation.

    Attributes:
        user_segments: the user's speech, ``(start, end)`` sample indices, one per round.
        system_segments: the system's speech segments, ``(start, end)`` sample indices.
        round_types: the scenario of each user round: ``"First Inquiry"`` for round 1, then
            the interruption type that round k-1 announced (an FD-Bench category, a
            combination such as ``"Affirmative Acknowledgment + Topic Shift"``, or None).
        conversation_id: a name for reports.
    """

    user_segments: Sequence[tuple[int, int]]
    system_segments: Sequence[tuple[int, int]]
    round_types: Sequence[str | None]
    conversation_id: str = ""


def seconds_to_samples(segments: Iterable[tuple[float, float]], sample_rate: int = SAMPLE_RATE) -> list[tuple[int, int]]:
    """Convert ``(start_s, end_s)`` segments to rounded integer sample indices."""
    return [(int(round(start * sample_rate)), int(round(end * sample_rate))) for start, end in segments]


def round_types_from_rounds(rounds: Mapping[str, Mapping[str, object]]) -> list[str | None]:
    """Round types from FD-Bench ground truth ``{"round-k": {"user": ..., "interruption": ...}}``.

    Round 1 is ``"First Inquiry"``; round k >= 2 takes the ``interruption`` of round k-1.
    """
    try:
        ordered = sorted(rounds.items(), key=lambda item: int(str(item[0]).rsplit("-", 1)[1]))
    except (IndexError, ValueError) as err:
        raise ValueError(f"round keys must look like 'round-<k>', got {list(rounds)}") from err
    announced = [round_info.get("interruption") for _, round_info in ordered]
    return [FIRST_ROUND_TYPE] + announced[:-1] if ordered else []  # type: ignore[return-value]


def _categories(round_type: str | None) -> list[str]:
    """FD-Bench categories named by a (possibly combined) round type."""
    if not round_type:
        return []
    parts = [part.strip() for part in str(round_type).split(_COMBINED_TYPE_SEPARATOR)]
    return [part for part in parts if part in FD_BENCH_CATEGORIES]


def _check_segments(segments: Iterable[Sequence[int]], name: str) -> list[tuple[int, int]]:
    checked = []
    for k, segment in enumerate(segments):
        if len(segment) != 2:
            raise ValueError(f"{name}[{k}] must be a (start, end) pair, got {segment!r}")
        start, end = segment
        if int(start) != start or int(end) != end:
            raise ValueError(f"{name}[{k}] must hold integer sample indices, got {segment!r} (see seconds_to_samples)")
        if end < start:
            raise ValueError(f"{name}[{k}] ends before it starts: {segment!r}")
        checked.append((int(start), int(end)))
    return checked


def _n_positive(values: Iterable[int]) -> int:
    return sum(1 for value in values if value > 0)


@dataclass
class ConversationMarks:
    """Per-conversation counters and per-round delays (samples), as FD-Bench's ``VAD_marks``.

    Per-round lists hold 0 where a round has no such event.
    """

    conversation_id: str
    n_rounds: int
    n_gaps: int
    n_interrupts: int = 0
    success_responses: int = 0
    success_responses_to_interruption: int = 0
    success_interrupts: int = 0
    wrong_interrupts: int = 0
    noise_interrupts: int = 0
    response_delay: list[int] = field(default_factory=list)
    response_delay_to_interruption: list[int] = field(default_factory=list)
    interrupt_delay: list[int] = field(default_factory=list)
    lead_times: list[int] = field(default_factory=list)
    lead_times_to_interruption: list[int] = field(default_factory=list)
    wrong_interrupt_leads: list[list[int]] = field(default_factory=list)
    interruptions_by_category: Counter = field(default_factory=Counter)
    interrupt_successes_by_category: Counter = field(default_factory=Counter)
    response_successes_by_category: Counter = field(default_factory=Counter)

    @property
    def consistent(self) -> bool:
        """FD-Bench's internal consistency checks (the reference only prints failures)."""
        n_responses = sum(
            _n_positive(values)
            for values in (self.lead_times, self.lead_times_to_interruption, self.response_delay, self.response_delay_to_interruption)
        )
        return (
            self.wrong_interrupts == _n_positive(v for leads in self.wrong_interrupt_leads for v in leads)
            and self.success_interrupts == _n_positive(self.interrupt_delay)
            and self.success_responses + self.success_responses_to_interruption == n_responses
            and self.success_responses_to_interruption <= self.success_interrupts
        )

    def to_reference_dict(self) -> dict[str, object]:
        """The reference ``VAD_marks`` entry (several early-interrupt leads become a list)."""
        leads = [0 if not values else values[0] if len(values) == 1 else list(values) for values in self.wrong_interrupt_leads]
        return {
            "Number Round": self.n_rounds,
            "Success Response": self.success_responses,
            "Success Response to Interruptions": self.success_responses_to_interruption,
            "Number Interrupt": self.n_interrupts,
            "Number Gaps": self.n_gaps,
            "Success Interrupt": self.success_interrupts,
            "Wrong Interrupt": self.wrong_interrupts,
            "Noise Interrupt": self.noise_interrupts,
            "Response Delay": list(self.response_delay),
            "Response Delay to Interruption": list(self.response_delay_to_interruption),
            "Interrupt Delay": list(self.interrupt_delay),
            "Lead Times": list(self.lead_times),
            "Lead Times to Interruption": list(self.lead_times_to_interruption),
            "Lead Times Interrupt": leads,
        }


class _RoundTracker:
    """Bookkeeping of one user round while the system segments are scanned."""

    def __init__(self, marks: ConversationMarks, index: int, round_type: str | None):
        self.marks = marks
        self.i = index
        self.categories = _categories(round_type)
        self.interrupted = False

    def interruption(self) -> None:
        self.marks.n_interrupts += 1
        self.marks.interruptions_by_category.update(self.categories)
        self.interrupted = True

    def interrupt_yielded(self, delay: int) -> None:
        """The system stopped for the user's interruption (first time per round only)."""
        if self.marks.interrupt_delay[self.i] == 0:
            self.marks.success_interrupts += 1
            self.marks.interrupt_delay[self.i] = delay or 1
            self.marks.interrupt_successes_by_category.update(self.categories)

    def responded_to_interruption(self) -> bool:
        return bool(self.marks.lead_times_to_interruption[self.i] or self.marks.response_delay_to_interruption[self.i])

    def response_to_interruption(self, delays: list[int], value: int, interrupt_delay: int) -> None:
        self.marks.success_responses_to_interruption += 1
        self.marks.response_successes_by_category.update(self.categories)
        delays[self.i] = value or 1
        self.interrupted = False
        self.interrupt_yielded(interrupt_delay)


def analyze_conversation(
    user_segments: Sequence[tuple[int, int]],
    system_segments: Sequence[tuple[int, int]],
    round_types: Sequence[str | None],
    conversation_id: str = "",
    drop_first_system_segment: bool = False,
    thresholds: FDBenchThresholds = FDBenchThresholds(),
) -> ConversationMarks:
    """Classify the system's behaviour round by round (FD-Bench ``analyze_VAD_interruption_new2``).

    Args:
        user_segments: one ``(start, end)`` per user round, in samples, in time order.
        system_segments: the system's speech segments, in samples, in time order.
        round_types: the type of each user round (see :class:`FDBenchConversation`).
        conversation_id: a name for reports.
        drop_first_system_segment: ignore the system's first segment (FD-Bench does this
            for Moshi, whose output starts with a greeting preamble).
        thresholds: FD-Bench's thresholds.

    Raises:
        ValueError: when the number of round types differs from the number of user segments,
            or a segment is malformed.
    """
    user = _check_segments(user_segments, "user_segments")
    system = _check_segments(system_segments, "system_segments")
    if len(round_types) != len(user):
        raise ValueError(
            f"{conversation_id or 'conversation'}: {len(user)} user segments but {len(round_types)} round types; "
            "FD-Bench needs one user segment per round"
        )
    if drop_first_system_segment:
        system = system[1:]
    n = len(user)
    marks = _empty_marks(conversation_id, n)
    early_margin = thresholds.wrong_interrupt_lead
    for i, (u_start, u_end) in enumerate(user):
        is_last = i == n - 1
        next_start = math.inf if is_last else user[i + 1][0]
        state = _RoundTracker(marks, i, round_types[i])
        for s_start, s_end in system:
            if s_start < u_start < s_end:
                # the user starts speaking while the system talks: an interruption
                state.interruption()
            if u_start < s_start < u_end - early_margin:
                # the system starts well before the user is done: an early (wrong) interrupt
                marks.wrong_interrupts += 1
                marks.wrong_interrupt_leads[i].append(u_end - s_start)
                if s_end < u_end and marks.interrupt_delay[i] == 0:
                    # ... that also ends inside the user turn: FD-Bench books it as a yielded
                    # interruption of this round, timed from the system's own start
                    state.interruption()
                    state.interrupt_yielded(s_end - s_start)
                continue
            if u_start < s_start < u_end:
                # an early reply within the user's last half second
                if not state.interrupted:
                    marks.success_responses += 1
                    marks.lead_times[i] = u_end - s_start
                elif not state.responded_to_interruption():
                    state.response_to_interruption(marks.lead_times_to_interruption, u_end - s_start, s_end - u_start)
                continue
            if s_start < u_start:
                # a segment that began before this round: did it stop inside the user turn?
                stops_in_turn = u_start < s_end if is_last else u_start < s_end <= u_end
                if stops_in_turn and state.interrupted:
                    state.interrupt_yielded(s_end - u_start)
                continue
            if u_end < s_start < next_start:
                # a reply after the user's end
                if not state.interrupted:
                    if marks.response_delay[i] == 0:
                        marks.success_responses += 1
                        marks.response_delay[i] = s_start - u_end
                elif not state.responded_to_interruption():
                    state.response_to_interruption(marks.response_delay_to_interruption, s_start - u_end, s_end - u_start)
    marks.noise_interrupts += _noise_interrupts(user, system, thresholds)
    return marks


def _empty_marks(conversation_id: str, n: int) -> ConversationMarks:
    """The marks of a conversation of ``n`` user rounds before any round is read."""
    return ConversationMarks(
        conversation_id=conversation_id,
        n_rounds=n,
        n_gaps=n - 1,
        response_delay=[0] * n,
        response_delay_to_interruption=[0] * n,
        interrupt_delay=[0] * n,
        lead_times=[0] * n,
        lead_times_to_interruption=[0] * n,
        wrong_interrupt_leads=[[] for _ in range(n)],
    )


def _noise_interrupts(user: list[tuple[int, int]], system: list[tuple[int, int]], thresholds: FDBenchThresholds) -> int:
    """System segments that end long before the next user turn and are short: talk over noise
    (counted once per user gap they fall in, as FD-Bench does)."""
    count = 0
    for s_start, s_end in system:
        for (_, u_end), (next_start, _) in zip(user[:-1], user[1:]):
            if (
                u_end < s_end < next_start
                and next_start - s_end >= thresholds.noise_min_silence
                and s_end - s_start < thresholds.noise_max_segment
            ):
                count += 1
    return count


@dataclass(frozen=True)
class FDBenchResult:
    """Benchmark-level FD-Bench metrics (rates are fractions, times in ms).

    ``response_delay_to_interruption_ms`` and ``lead_time_to_interruption_ms`` are the
    reference's extra medians over responses after interruptions only.
    """

    srr: float
    sir: float
    eir: float
    nir: float
    srir: float
    fsed_ms: float
    ert_ms: float
    eit_ms: float
    ird_ms: float
    response_delay_to_interruption_ms: float
    lead_time_to_interruption_ms: float
    interruptions_by_category: dict[str, int]
    interrupt_successes_by_category: dict[str, int]
    response_successes_by_category: dict[str, int]

    def to_dict(self) -> dict[str, object]:
        """Plain summary (the ``full_duplex_timing`` evaluate module returns this)."""
        return {
            "srr": self.srr,
            "sir": self.sir,
            "srir": self.srir,
            "eir": self.eir,
            "nir": self.nir,
            "fsed_ms": self.fsed_ms,
            "ert_ms": self.ert_ms,
            "eit_ms": self.eit_ms,
            "ird_ms": self.ird_ms,
            "interruptions_by_category": dict(self.interruptions_by_category),
            "interrupt_successes_by_category": dict(self.interrupt_successes_by_category),
            "response_successes_by_category": dict(self.response_successes_by_category),
        }

    def to_scores(self) -> dict[str, str | int]:
        """FD-Bench's ``metrics.scores`` layout: percentages and ms as 2-decimal strings."""
        scores: dict[str, str | int] = {
            "SRR(%)": format(self.srr * 100, ".2f"),
            "SIR(%)": format(self.sir * 100, ".2f"),
            "EIR(%)": format(self.eir * 100, ".2f"),
            "NIR(%)": format(self.nir * 100, ".2f"),
            "SRIR(%)": format(self.srir * 100, ".2f"),
            "FSED(ms)": format(self.fsed_ms, ".2f"),
            "ERT(ms)": format(self.ert_ms, ".2f"),
            "EIT(ms)": format(self.eit_ms, ".2f"),
            "IRD(ms)": format(self.ird_ms, ".2f"),
        }
        for name in FD_BENCH_CATEGORIES:
            scores[f"{name}-all"] = self.interruptions_by_category[name]
            scores[f"{name}-int-suc"] = self.interrupt_successes_by_category[name]
            scores[f"{name}-res-suc"] = self.response_successes_by_category[name]
        return scores


def _ratio(numerator: int, denominator: int) -> float:
    """FD-Bench reports 0 for an empty denominator."""
    return numerator / denominator if denominator else 0


def _median_ms(values: Iterable[int], sample_rate: int) -> float:
    """Median of the positive delays, each truncated to whole ms; 0 when there are none."""
    samples_per_ms = sample_rate / 1000
    ms = [int(value / samples_per_ms) for value in values if value > 0]
    return statistics.median(ms) if ms else 0


def aggregate_marks(marks: Sequence[ConversationMarks], sample_rate: int = SAMPLE_RATE) -> FDBenchResult:
    """Pool per-conversation marks into the benchmark metrics (``analyze_VAD_marks``)."""
    used = [m for m in marks if m.n_rounds > 0]

    def total(attribute: str) -> int:
        return sum(getattr(m, attribute) for m in used)

    def pooled(attribute: str) -> list[int]:
        return [v for m in used for v in getattr(m, attribute)]

    def by_category(attribute: str) -> dict[str, int]:
        counts: Counter = Counter()
        for m in used:
            counts.update(getattr(m, attribute))
        return {name: counts[name] for name in FD_BENCH_CATEGORIES}

    successes = total("success_interrupts")
    return FDBenchResult(
        srr=_ratio(total("success_responses"), total("n_rounds")),
        sir=_ratio(successes, total("n_interrupts")),
        eir=_ratio(total("wrong_interrupts"), total("n_rounds")),
        nir=_ratio(total("noise_interrupts"), total("n_gaps")),
        srir=_ratio(total("success_responses_to_interruption"), successes),
        # FSED pools the delays of ordinary responses with those of responses to interruptions
        fsed_ms=_median_ms(pooled("response_delay") + pooled("response_delay_to_interruption"), sample_rate),
        ert_ms=_median_ms(pooled("lead_times") + pooled("lead_times_to_interruption"), sample_rate),
        eit_ms=_median_ms([v for m in used for leads in m.wrong_interrupt_leads for v in leads], sample_rate),
        ird_ms=_median_ms(pooled("interrupt_delay"), sample_rate),
        response_delay_to_interruption_ms=_median_ms(pooled("response_delay_to_interruption"), sample_rate),
        lead_time_to_interruption_ms=_median_ms(pooled("lead_times_to_interruption"), sample_rate),
        interruptions_by_category=by_category("interruptions_by_category"),
        interrupt_successes_by_category=by_category("interrupt_successes_by_category"),
        response_successes_by_category=by_category("response_successes_by_category"),
    )


@dataclass(frozen=True)
class FDBenchReport:
    """Benchmark metrics plus the per-conversation marks they were pooled from."""

    result: FDBenchResult
    marks: list[ConversationMarks]

    @property
    def inconsistent_conversations(self) -> list[str]:
        """Conversations that fail FD-Bench's internal consistency checks."""
        return [m.conversation_id for m in self.marks if not m.consistent]


def evaluate_fd_bench(
    conversations: Sequence[FDBenchConversation],
    drop_first_system_segment: bool = False,
    thresholds: FDBenchThresholds = FDBenchThresholds(),
) -> FDBenchReport:
    """Analyse every conversation and pool the FD-Bench metrics."""
    marks = [
        analyze_conversation(
            conv.user_segments,
            conv.system_segments,
            conv.round_types,
            conversation_id=conv.conversation_id or f"conversation_{k + 1}",
            drop_first_system_segment=drop_first_system_segment,
            thresholds=thresholds,
        )
        for k, conv in enumerate(conversations)
    ]
    return FDBenchReport(aggregate_marks(marks, thresholds.sample_rate), marks)


def transcript_error_rate(references: Sequence[str], hypotheses: Sequence[str], unit: str = "word") -> float:
    """Error rate of the system's recognised speech against its intended text (jiwer).

    ``unit="word"`` gives WER, ``unit="char"`` CER (FD-Bench scores Moshi by characters).
    """
    import jiwer

    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    if not references:
        raise ValueError("transcript_error_rate needs at least one reference")
    if unit == "word":
        return float(jiwer.wer(list(references), list(hypotheses)))
    if unit == "char":
        return float(jiwer.cer(list(references), list(hypotheses)))
    raise ValueError(f"unit must be 'word' or 'char', got {unit!r}")
