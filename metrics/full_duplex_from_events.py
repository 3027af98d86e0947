"""FD-Bench and Full-Duplex-Bench figures derived from the events of a free conversation.

The benchmarks script their user side (FD-Bench's rounds and interruptions, Full-Duplex-Bench's
task samples); a recording of a free conversation has no script, so :func:`full_duplex_timing`
reads the scenarios off the turn-taking events (:data:`FULL_DUPLEX_DERIVATION` says how, and
every report carries that text). The rules themselves are the benchmarks' own, in
:mod:`turneval.metrics.fd_bench_rounds` and :mod:`turneval.metrics.full_duplex_bench_tasks`.
"""
from __future__ import annotations

from typing import Any, Sequence

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.events import TurnTakingEvents

from . import fd_bench_rounds as fdbench
from . import full_duplex_bench_tasks as fdb
from .full_duplex_bench_tasks import WordChunk
from .intervals import mean_interval


def _turns_of(events: TurnTakingEvents, speaker: int) -> list:
    return [t for t in events.turns if t.speaker == speaker]


def _system_word_chunks(dialogue: Dialogue, events: TurnTakingEvents) -> tuple[list, str]:
    """The system's words as Full-Duplex-Bench word chunks; without a transcript one chunk per IPU."""
    system = dialogue.system_speaker
    if dialogue.words is not None and dialogue.words[system]:
        return [WordChunk(w.text, w.start, w.end) for w in dialogue.words[system]], "words"
    return [WordChunk("<ipu>", u.start, u.end) for u in events.of_speaker("ipus", system)], "ipus"


def _chunks_between(chunks: Sequence, start: float, end: float) -> list:
    return [c for c in chunks if c.start is not None and start <= c.start < end]


FULL_DUPLEX_DERIVATION = (
    "The benchmarks script the user side; here the scenarios are derived from this conversation's events. "
    "FD-Bench: each user turn is a round (round 1 'First Inquiry', later rounds of unknown interruption type), "
    "the system's IPUs are its segments; as in FD-Bench, a user turn that starts while the system is still speaking "
    "(even a brief overlap at a turn change) counts as an interruption. Full-Duplex-Bench: smooth turn-taking samples are the user's turn ends "
    "(latency from the turn end), pause-handling samples the user's pauses inside a turn (taking over is wrong), "
    "user-interruption samples the user's interruptions of the system (latency from the end of the interrupting IPU); "
    "the system's reply in a sample is its words (without a transcript: its IPUs, one 'word' each, so a reply takes "
    "the turn when it lasts at least 1 s) that start before the user speaks again. The v1.5 timing intervals use the "
    "merged speech segments."
)


def full_duplex_timing(dialogue: Dialogue, events: TurnTakingEvents) -> dict[str, Any]:
    """FD-Bench and Full-Duplex-Bench figures on scenarios derived from a free conversation.

    The benchmarks script their user side; here the scenarios are read off the events:
    FD-Bench rounds are the user's turns (round 1 "First Inquiry", later rounds of unknown
    interruption type) and the system's segments its IPUs. Full-Duplex-Bench samples are
    the user's turn ends (smooth turn-taking: latency from the turn end), the user's pauses
    inside a turn (pause handling: should not take over) and the user's interruptions of the
    system (user interruption: latency from the end of the interrupting IPU). The system's
    reply in each sample is its words (or, without a transcript, its IPUs as one "word"
    each, so a reply takes the turn when it lasts at least 1 s) that start before the user
    speaks again. The v1.5 timing intervals use the segments directly.
    """
    user, system = dialogue.user_speaker, dialogue.system_speaker
    user_turns = _turns_of(events, user)
    user_ipus = events.of_speaker("ipus", user)
    system_ipus = events.of_speaker("ipus", system)
    out: dict[str, Any] = {
        "derived_from": FULL_DUPLEX_DERIVATION,
    }
    if user_turns:
        marks = fdbench.analyze_conversation(
            fdbench.seconds_to_samples([(t.start, t.end) for t in user_turns]),
            fdbench.seconds_to_samples([(u.start, u.end) for u in system_ipus]),
            [fdbench.FIRST_ROUND_TYPE] + [None] * (len(user_turns) - 1),
            conversation_id=dialogue.id,
        )
        result = fdbench.aggregate_marks([marks]).to_dict()
        out["fdbench"] = {k: v for k, v in result.items() if not k.endswith("_by_category")}
        out["fdbench"].update(n_rounds=marks.n_rounds, n_interrupts=marks.n_interrupts, consistent=marks.consistent)
    else:
        out["fdbench"] = None

    chunks, chunk_source = _system_word_chunks(dialogue, events)
    out["system_reply_unit"] = chunk_source
    user_starts = sorted(u.start for u in user_ipus)

    def next_user_start(after: float) -> float:
        return next((s for s in user_starts if s > after + 1e-9), dialogue.duration)

    smooth = {f"turn_{k}@{t.end:.2f}": (_chunks_between(chunks, t.end, next_user_start(t.end)), t.end) for k, t in enumerate(user_turns)}
    interruptions = {}
    for k, iv in enumerate(e for e in events.interruptions if e.speaker == user):
        end = events.ipus[iv.ipu].end
        interruptions[f"interruption_{k}@{iv.start:.2f}"] = (_chunks_between(chunks, end, next_user_start(end)), end)
    pauses = {f"pause_{k}@{p.start:.2f}": _chunks_between(chunks, p.start, p.end) for k, p in enumerate(events.of_speaker("pauses", user))}
    fdb_out: dict[str, Any] = {}
    for task, result in (
        ("smooth_turn_taking", fdb.smooth_turn_taking(smooth)),
        ("user_interruption", fdb.user_interruption(interruptions)),
        ("pause_handling", fdb.pause_handling(pauses)),
    ):
        fdb_out[task] = {
            "n_samples": len(result.samples),
            "take_over_rate": result.take_over_rate,
            "mean_latency_s": None if task == "pause_handling" else result.mean_latency,
            "samples": [{"id": key, "tor": s.tor, "latency_s": s.latency} for key, s in result.samples.items()],
        }
    merged_user = fdb.merge_segments([(u.start, u.end) for u in user_ipus], fdb.USER_MERGE_GAP_S)
    merged_system = fdb.merge_segments([(u.start, u.end) for u in system_ipus], fdb.MODEL_MERGE_GAP_S)
    stops = fdb.stop_latency_intervals(merged_user, merged_system)
    gaps = fdb.response_gap_intervals(merged_user, merged_system)
    fdb_out["timing"] = {
        "stop_latency": {"intervals": stops, **mean_interval([e - s for s, e in stops]).to_dict()},
        "response_gap": {"intervals": gaps, **mean_interval([e - s for s, e in gaps]).to_dict()},
    }
    out["full_duplex_bench"] = fdb_out
    return out
