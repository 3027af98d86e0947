"""Listening-test answers: a small SQLite store and the statistics shown on the Space.

Two tests write here:

- the naturalness test (TurnNat-style natural vs perturbed pairs): per answer the rater,
  the pair, which clip was played as A, the preferred clip and a 5-point naturalness rating
  of each clip;
- the switching backchannel test (SWOZ, Poppe et al.): per session the stimulus and its
  source schedule (human / algorithm intervals), per 'not human' (yuck) press its time and
  the source that was playing then.

Statistics:

- preference rate for the natural clip with a Wilson interval
  (:func:`turneval.metrics.intervals.wilson_interval`);
- majority agreement: for every pair answered by at least two raters, the share of raters
  who agree with that pair's majority choice, averaged over those pairs (0.5 is chance for
  two raters, 1.0 unanimous);
- Krippendorff's alpha (ordinal) of the 1-5 ratings, raters x clips (each pair has two
  clips: natural and perturbed);
- yuck presses per minute of exposure to each source.

Each rater's latest answer per pair counts (a rater may revisit a pair).
The database path comes from ``$TURNEVAL_SPACE_DB``; by default it lives under the system's
temp folder (on a Space with persistent storage point it at ``/data/...``).
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from turneval.metrics.intervals import wilson_interval


DB_ENV_VAR = "TURNEVAL_SPACE_DB"
RATING_LEVELS = (1, 2, 3, 4, 5)
SOURCES = ("human", "algorithm")
ALL_TYPES = "all"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pair_answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    rater TEXT NOT NULL,
    session TEXT NOT NULL,
    pair_id TEXT NOT NULL,
    perturbation_type TEXT NOT NULL,
    natural_position TEXT NOT NULL CHECK (natural_position IN ('A', 'B')),
    choice TEXT NOT NULL CHECK (choice IN ('A', 'B')),
    rating_a INTEGER NOT NULL CHECK (rating_a BETWEEN 1 AND 5),
    rating_b INTEGER NOT NULL CHECK (rating_b BETWEEN 1 AND 5)
);
CREATE TABLE IF NOT EXISTS swoz_sessions (
    session TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    rater TEXT NOT NULL,
    stimulus_id TEXT NOT NULL,
    duration_s REAL NOT NULL,
    schedule TEXT NOT NULL,
    listened_s REAL
);
CREATE TABLE IF NOT EXISTS yuck_presses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    session TEXT NOT NULL REFERENCES swoz_sessions(session),
    time_s REAL NOT NULL,
    source TEXT NOT NULL
);
"""


class ListeningError(ValueError):
    """An answer cannot be stored; the message says what is missing or wrong."""


def default_db_path() -> Path:
    """``$TURNEVAL_SPACE_DB``, else ``<temp>/turneval_space/listening.sqlite3``."""
    override = os.environ.get(DB_ENV_VAR)
    if override:
        return Path(override)
    return Path(tempfile.gettempdir()) / "turneval_space" / "listening.sqlite3"


@dataclass(frozen=True)
class PairAnswer:
    """One rater's answer to one natural/perturbed pair played as clips A and B."""

    rater: str
    session: str
    pair_id: str
    perturbation_type: str
    natural_position: str
    choice: str
    rating_a: int
    rating_b: int
    created_at: float = 0.0

    def __post_init__(self) -> None:
        if not str(self.rater).strip():
            raise ListeningError("enter a rater name (any nickname) before answering")
        for name in ("natural_position", "choice"):
            if getattr(self, name) not in ("A", "B"):
                raise ListeningError(f"{name} must be 'A' or 'B', got {getattr(self, name)!r}")
        for name in ("rating_a", "rating_b"):
            value = getattr(self, name)
            if value is None or int(value) not in RATING_LEVELS:
                raise ListeningError(f"rate clip {name[-1].upper()} on the 1-5 scale (got {value!r})")

    @property
    def prefers_natural(self) -> bool:
        return self.choice == self.natural_position

    @property
    def rating_natural(self) -> int:
        return int(self.rating_a if self.natural_position == "A" else self.rating_b)

    @property
    def rating_perturbed(self) -> int:
        return int(self.rating_b if self.natural_position == "A" else self.rating_a)


@dataclass(frozen=True)
class SourceSegment:
    """``[start, end)`` seconds of a stimulus during which ``source`` drives the listener."""

    start: float
    end: float
    source: str


def source_at(schedule: Sequence[SourceSegment], time_s: float) -> str:
    """The source playing at ``time_s`` (the last segment's source past the end)."""
    if not schedule:
        raise ListeningError("empty source schedule")
    for segment in schedule:
        if segment.start <= time_s < segment.end:
            return segment.source
    return schedule[0].source if time_s < schedule[0].start else schedule[-1].source


class ListeningStore:
    """SQLite store of listening-test answers (one short connection per call, so Gradio's
    worker threads can share one store)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn, conn:
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30)
        conn.row_factory = sqlite3.Row
        return conn

    # -- naturalness pairs ---------------------------------------------------------------
    def add_pair_answer(self, answer: PairAnswer) -> int:
        """Store one answer; returns its row id."""
        row = asdict(answer)
        row["created_at"] = answer.created_at or time.time()
        row["rating_a"], row["rating_b"] = int(answer.rating_a), int(answer.rating_b)
        with closing(self._connect()) as conn, conn:
            cur = conn.execute(
                "INSERT INTO pair_answers (created_at, rater, session, pair_id, perturbation_type, natural_position, choice, rating_a, rating_b)"
                " VALUES (:created_at, :rater, :session, :pair_id, :perturbation_type, :natural_position, :choice, :rating_a, :rating_b)",
                row,
            )
            return int(cur.lastrowid)

    def pair_answers(self) -> list[PairAnswer]:
        """Every stored answer, oldest first."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT * FROM pair_answers ORDER BY created_at, id").fetchall()
        return [PairAnswer(**{k: row[k] for k in row.keys() if k != "id"}) for row in rows]

    def answered_pairs(self, rater: str) -> set[str]:
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT DISTINCT pair_id FROM pair_answers WHERE rater = ?", (rater,)).fetchall()
        return {row[0] for row in rows}

    # -- switching backchannel test ------------------------------------------------------
    def start_swoz_session(self, session: str, rater: str, stimulus_id: str, duration_s: float, schedule: Sequence[SourceSegment]) -> None:
        """Register a listening session with its source schedule (before any yuck press)."""
        if not str(rater).strip():
            raise ListeningError("enter a rater name (any nickname) before starting the test")
        payload = json.dumps([asdict(s) for s in schedule])
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT INTO swoz_sessions (session, created_at, rater, stimulus_id, duration_s, schedule) VALUES (?, ?, ?, ?, ?, ?)",
                (session, time.time(), rater, stimulus_id, float(duration_s), payload),
            )

    def _schedule(self, conn: sqlite3.Connection, session: str) -> tuple[list[SourceSegment], float]:
        row = conn.execute("SELECT schedule, duration_s FROM swoz_sessions WHERE session = ?", (session,)).fetchone()
        if row is None:
            raise ListeningError("press 'Start' first: this listening session is not registered")
        return [SourceSegment(**s) for s in json.loads(row["schedule"])], float(row["duration_s"])

    def add_yuck(self, session: str, time_s: float) -> str:
        """Store a 'not human' press at ``time_s`` of the stimulus; returns the source then playing."""
        if time_s is None or not math.isfinite(float(time_s)) or time_s < 0:
            raise ListeningError(f"the press has no valid playback time ({time_s!r}); start the audio first")
        with closing(self._connect()) as conn, conn:
            schedule, _ = self._schedule(conn, session)
            source = source_at(schedule, float(time_s))
            conn.execute(
                "INSERT INTO yuck_presses (created_at, session, time_s, source) VALUES (?, ?, ?, ?)",
                (time.time(), session, float(time_s), source),
            )
        return source

    def finish_swoz_session(self, session: str, listened_s: float) -> None:
        """Record how far the participant listened (exposure for the yuck rates)."""
        with closing(self._connect()) as conn, conn:
            _, duration = self._schedule(conn, session)
            conn.execute("UPDATE swoz_sessions SET listened_s = ? WHERE session = ?", (min(max(float(listened_s), 0.0), duration), session))

    def swoz_sessions(self) -> list[dict[str, Any]]:
        """Sessions with their schedules (``listened_s`` None: not finished)."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT * FROM swoz_sessions ORDER BY created_at").fetchall()
        out = []
        for row in rows:
            entry = dict(row)
            entry["schedule"] = [SourceSegment(**s) for s in json.loads(entry["schedule"])]
            out.append(entry)
        return out

    def yuck_presses(self) -> list[dict[str, Any]]:
        with closing(self._connect()) as conn:
            return [dict(row) for row in conn.execute("SELECT * FROM yuck_presses ORDER BY created_at, id").fetchall()]


    # -- export ------------------------------------------------------------------------------
    def export_csv(self, out_dir: str | Path) -> list[Path]:
        """Every table as ``<table>.csv`` in ``out_dir`` (each written atomically), for analysis
        elsewhere; returns the paths."""
        import csv
        import io

        from turneval.dataset_scripts.files import atomic_write_text

        out_dir = Path(out_dir)
        written = []
        with closing(self._connect()) as conn:
            for table in ("pair_answers", "swoz_sessions", "yuck_presses"):
                cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")  # table names are ours, not user input
                buffer = io.StringIO()
                writer = csv.writer(buffer)
                writer.writerow([column[0] for column in cursor.description])
                writer.writerows(cursor.fetchall())
                atomic_write_text(out_dir / f"{table}.csv", buffer.getvalue())
                written.append(out_dir / f"{table}.csv")
        return written


# ---------------------------------------------------------------------------------------
# Naturalness-test statistics
# ---------------------------------------------------------------------------------------


def latest_answers(answers: Iterable[PairAnswer]) -> list[PairAnswer]:
    """Each rater's last answer per pair (answers in the order they were given)."""
    latest: dict[tuple[str, str], PairAnswer] = {}
    for answer in answers:
        latest[(answer.rater, answer.pair_id)] = answer
    return list(latest.values())


def majority_agreement(answers: Iterable[PairAnswer]) -> tuple[float, int]:
    """Mean share of raters agreeing with their pair's majority choice, over pairs with at
    least two raters; returns ``(agreement, n_pairs)`` (NaN, 0 when no pair qualifies)."""
    by_pair: dict[str, list[bool]] = defaultdict(list)
    for answer in latest_answers(answers):
        by_pair[answer.pair_id].append(answer.prefers_natural)
    shares = [max(Counter(votes).values()) / len(votes) for votes in by_pair.values() if len(votes) >= 2]
    return (float(np.mean(shares)) if shares else math.nan), len(shares)


def rating_matrix(answers: Iterable[PairAnswer]) -> tuple[np.ndarray, list[str], list[tuple[str, str]]]:
    """Reliability data for Krippendorff's alpha: raters x clips, NaN where a rater did not
    rate a clip. Clips are ``(pair_id, "natural" | "perturbed")``."""
    latest = latest_answers(answers)
    raters = sorted({a.rater for a in latest})
    units = sorted({(a.pair_id, kind) for a in latest for kind in ("natural", "perturbed")})
    r_index = {r: i for i, r in enumerate(raters)}
    u_index = {u: j for j, u in enumerate(units)}
    matrix = np.full((len(raters), len(units)), np.nan)
    for a in latest:
        matrix[r_index[a.rater], u_index[(a.pair_id, "natural")]] = a.rating_natural
        matrix[r_index[a.rater], u_index[(a.pair_id, "perturbed")]] = a.rating_perturbed
    return matrix, raters, units


def rating_alpha(answers: Iterable[PairAnswer]) -> float:
    """Krippendorff's alpha (ordinal, levels 1-5) of the clip ratings; NaN when it is not
    defined (fewer than two raters on any clip, or no variation at all)."""
    import krippendorff

    matrix, raters, _ = rating_matrix(answers)
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2) if matrix.size else np.array([], dtype=bool)
    if len(raters) < 2 or not pairable.any():
        return math.nan
    values = matrix[:, pairable]
    if np.unique(values[~np.isnan(values)]).size < 2:
        return math.nan  # every rating equal: expected disagreement is 0, alpha undefined
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement="ordinal", value_domain=list(RATING_LEVELS)))


def _group_summary(answers: list[PairAnswer], confidence: float) -> dict[str, Any]:
    latest = latest_answers(answers)
    n = len(latest)
    wins = sum(a.prefers_natural for a in latest)
    low, high = wilson_interval(wins, n, confidence=confidence)
    agreement, n_multi = majority_agreement(latest)
    return {
        "n_answers": n,
        "n_pairs": len({a.pair_id for a in latest}),
        "n_raters": len({a.rater for a in latest}),
        "natural_preferred": wins,
        "preference_rate": wins / n if n else math.nan,
        "ci_low": low,
        "ci_high": high,
        "majority_agreement": agreement,
        "n_pairs_with_2plus_raters": n_multi,
        "krippendorff_alpha": rating_alpha(latest),
        "mean_rating_natural": float(np.mean([a.rating_natural for a in latest])) if n else math.nan,
        "mean_rating_perturbed": float(np.mean([a.rating_perturbed for a in latest])) if n else math.nan,
    }


def preference_summary(answers: Iterable[PairAnswer], confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """Per perturbation type (and ``"all"``): preference rate for the natural clip with its
    Wilson interval, majority agreement, Krippendorff's alpha and mean ratings."""
    answers = list(answers)
    by_type: dict[str, list[PairAnswer]] = defaultdict(list)
    for answer in answers:
        by_type[answer.perturbation_type].append(answer)
    out = {kind: _group_summary(group, confidence) for kind, group in sorted(by_type.items())}
    out[ALL_TYPES] = _group_summary(answers, confidence)
    return out


# ---------------------------------------------------------------------------------------
# Switching backchannel test statistics
# ---------------------------------------------------------------------------------------


def exposure_by_source(schedule: Sequence[SourceSegment], listened_s: float) -> dict[str, float]:
    """Seconds of each source within the first ``listened_s`` seconds."""
    out = dict.fromkeys(SOURCES, 0.0)
    for segment in schedule:
        seconds = max(0.0, min(segment.end, listened_s) - segment.start)
        out[segment.source] = out.get(segment.source, 0.0) + seconds
    return out


def yuck_rates(sessions: Iterable[dict[str, Any]], presses: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Yuck presses per minute of exposure, per source.

    A session's exposure runs to ``listened_s`` when it was finished, else to its last press
    (a participant who left early was listening at least that long).
    """
    presses = list(presses)
    last_press: dict[str, float] = {}
    for press in presses:
        last_press[press["session"]] = max(last_press.get(press["session"], 0.0), float(press["time_s"]))
    seconds = dict.fromkeys(SOURCES, 0.0)
    for session in sessions:
        listened = session.get("listened_s")
        if listened is None:
            listened = last_press.get(session["session"], 0.0)
        for source, value in exposure_by_source(session["schedule"], float(listened)).items():
            seconds[source] = seconds.get(source, 0.0) + value
    counts = Counter(press["source"] for press in presses)
    return {
        source: {
            "n_yucks": int(counts.get(source, 0)),
            "minutes": seconds[source] / 60.0,
            "yucks_per_minute": counts.get(source, 0) / (seconds[source] / 60.0) if seconds[source] > 0 else math.nan,
        }
        for source in seconds
    }


__all__ = [
    "DB_ENV_VAR",
    "ListeningError",
    "ListeningStore",
    "PairAnswer",
    "SourceSegment",
    "default_db_path",
    "exposure_by_source",
    "latest_answers",
    "majority_agreement",
    "preference_summary",
    "rating_alpha",
    "rating_matrix",
    "source_at",
    "yuck_rates",
]
