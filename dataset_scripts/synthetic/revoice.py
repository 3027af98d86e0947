"""Re-voiced Switchboard: real words at their real times, spoken by speech synthesizers.

The Switchboard ms98 alignments hold every word of 2,438 real telephone conversations with
its time, but no sound. Re-voicing gives them sound: each speaker's inter-pausal units
(IPUs: runs of words with no silence between them, as the reader's segments) are spoken by a
synthesizer and time-stretched (WSOLA, pitch kept) to exactly the real IPU start and end, on
that speaker's channel. The timing, backchannels, overlaps, disfluencies and words are real;
the voices, prosody and acoustics are synthetic. The labels come from the real word times
(the Dialogue built here from the alignments), never from the synthesized audio. By default
each IPU is spoken as a stand-alone sentence; ``--prosody turns`` ends each as in its turn
(continuation inside a turn; statement, question or backchannel at its end, from the dialogue
acts given with ``--dialog-acts`` or from the words): :mod:`.turn_prosody`, :mod:`.turn_synthesis`.

    python -m turneval.dataset_scripts.synthetic.revoice --swb-root PATH --split train \\
        --splits-dir PATH/splits --engines espeak,festival --out DIR --max-calls 200 --excerpt-s 90

writes ``DIR/<split>/audio/<id>.flac`` (augmented, what the judge trains on),
``DIR/<split>/clean/<id>.flac`` (before augmentation), ``DIR/<split>/rows/<id>.json`` (one per
finished excerpt: the run resumes by skipping these), ``DIR/<split>/manifest.jsonl`` (the
dialogue manifest the TurnTakingChunks builder reads) and ``DIR/STATUS.md``. See
docs/revoicing.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import soundfile as sf

from ..dialogue import Dialogue, DialogueError
from ..grids import SAMPLE_RATE
from ..readers.switchboard import read_switchboard
from ..readers.switchboard_acts import CallActs, read_switchboard_acts
from ..vocabulary import NON_SPEECH_TOKENS
from .augment import Augmentation, apply_augmentation, draw_augmentation
from .engines import ENGINES, EngineVoice, SynthesisError, check_engines, draw_voice, synthesize_batch
from .stretch import fit_to_length, shift_pitch_formants
from .turn_prosody import UnitEnding, plan_endings
from .turn_synthesis import WHOLE_TURN_ENGINES, speak_turns


GENERATOR_VERSION = "1"
LAUGH_TEXT = "ha ha"
"""What a ``[laughter]`` token is spoken as (the labels count laughter as speech)."""

RETRY_BOUNDS = (0.67, 1.5)
"""A unit whose real duration / synthesized duration falls outside these is spoken again with
the engine's own rate set to that ratio (clipped to :data:`RATE_LIMITS`) before WSOLA fits it."""
RATE_LIMITS = (0.5, 2.0)
STRETCH_BOUNDS = (0.5, 2.0)
"""WSOLA factors inside these sound acceptable. Units still outside after the engine-rate retry
are fitted all the same (the real timing wins over the sound) and counted as ``beyond_bound``."""

EXCERPT_MIN_GAP_S = 0.3
"""Excerpts start and end in the middle of a silence of both speakers at least this long."""

PROSODY_MODES = ("units", "turns")
"""``units`` (the default, as the corpora built so far): every IPU spoken as a stand-alone
sentence. ``turns``: every IPU ends as in its turn (docs/revoicing.md, :mod:`.turn_prosody`)."""

SPLIT_NAMES = {"train": "train", "val": "validation", "validation": "validation", "test": "test"}
"""Folder/CLI split -> the split name in the manifest (the judge's training reads "validation")."""


# ---------------------------------------------------------------------------------------
# What is spoken
# ---------------------------------------------------------------------------------------


def speakable(token: str) -> str | None:
    """The text a synthesizer should say for one ms98 token, or None for nothing.

    ``[laughter]`` -> "ha ha"; ``[laughter-yes]`` -> "yes" (a laughed word); ``th[e]-`` ->
    "the" (a cut-off word is spoken whole and compressed to its real, short span);
    ``[ananimous/unanimous]`` -> "unanimous"; ``them_1`` -> "them"; ``{alrighty}`` ->
    "alrighty"; ``<b_aside>`` and non-speech markers -> None.
    """
    t = token.strip()
    if not t or t.lower() in NON_SPEECH_TOKENS or t.startswith("<"):
        return None
    if t.lower() == "[laughter]":
        return LAUGH_TEXT
    m = re.fullmatch(r"\[laughter-(.*)\]", t, flags=re.IGNORECASE)
    if m:
        t = m.group(1)
    m = re.fullmatch(r"\[(.*)/(.*)\]", t)
    if m:
        t = m.group(2)
    t = re.sub(r"_\d+$", "", t)
    t = t.replace("[", "").replace("]", "").replace("{", "").replace("}", "")
    t = re.sub(r"[^A-Za-z0-9' -]", " ", t).strip(" -'")
    return t or None


@dataclass(frozen=True)
class Unit:
    """One IPU to speak: its speaker (channel), real start and end (s) and text.

    With turn prosody, ``ending`` is the punctuation spoken after the text ("," continues,
    "." falls, "?" rises) and ``turn`` the index of its turn (engines that ignore a final
    punctuation speak a turn's units as one utterance); "" and -1 speak it alone, as a sentence.
    """

    speaker: int
    start: float
    end: float
    text: str
    ending: str = ""
    turn: int = -1


def dialogue_units(dialogue: Dialogue) -> tuple[list[Unit], int]:
    """The IPUs (the dialogue's segments) with the words inside them; and how many have no text."""
    units, unspoken = [], 0
    for k in range(2):
        words = sorted((dialogue.words or [[], []])[k], key=lambda w: w.start)
        for s, e in dialogue.segments[k]:
            if e - s <= 0:
                continue
            texts = [speakable(w.text) for w in words if w.start >= s - 1e-6 and w.end <= e + 1e-6]
            text = " ".join(t for t in texts if t)
            if text:
                units.append(Unit(k, s, e, text))
            else:
                unspoken += 1
    return units, unspoken


def unit_plans(
    dialogue: Dialogue, acts: CallActs | None = None, context: Dialogue | None = None, offset: float = 0.0
) -> list[tuple[Unit, UnitEnding]]:
    """Every spoken unit of ``dialogue`` (:func:`dialogue_units`) with its planned ending (:mod:`.turn_prosody`).

    Args:
        dialogue: what is re-voiced (an excerpt, or a whole call).
        acts: the call's dialogue-act words (times of ``context``), or None (endings from words).
        context: the whole call the excerpt was cut from, so a turn that goes on after the
            excerpt ends is not taken as ended (default: ``dialogue`` itself).
        offset: where ``dialogue`` starts in ``context`` (s).
    """
    units = dialogue_units(dialogue)[0]
    context_units = dialogue_units(context)[0] if context is not None else units
    plans = {(p.speaker, round(p.start, 3)): p for p in plan_endings(context if context is not None else dialogue, context_units, acts)}
    out = []
    for unit in units:
        plan = plans.get((unit.speaker, round(unit.start + offset, 3)))
        if plan is None:
            raise DialogueError(f"{dialogue.id}: unit at {unit.start:.3f} s of speaker {unit.speaker} is not in the call it was cut from")
        out.append((replace(unit, ending=plan.punctuation, turn=plan.turn), plan))
    return out


def turn_units(
    dialogue: Dialogue, acts: CallActs | None = None, context: Dialogue | None = None, offset: float = 0.0
) -> tuple[list[Unit], int, dict[str, int]]:
    """:func:`dialogue_units` with each unit's ending and turn set (arguments as :func:`unit_plans`).

    Returns the units, how many IPUs have no text, and counts of the planned endings
    (``"final statement (acts)"``, ``"internal continue (role)"``, ...).
    """
    pairs = unit_plans(dialogue, acts, context, offset)
    counts: dict[str, int] = {}
    for _, plan in pairs:
        key = f"{plan.role} {plan.act} ({plan.source})"
        counts[key] = counts.get(key, 0) + 1
    return [unit for unit, _ in pairs], dialogue_units(dialogue)[1], dict(sorted(counts.items()))


# ---------------------------------------------------------------------------------------
# Speaking and fitting
# ---------------------------------------------------------------------------------------


def _set_level(audio: np.ndarray, level_db: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) if audio.size else 0.0
    if rms <= 0:
        return audio
    y = audio * (10 ** (level_db / 20) / rms)
    peak = float(np.max(np.abs(y)))
    return (y * (0.95 / peak) if peak > 0.95 else y).astype(np.float32)


def _speak_units(units: Sequence[Unit], voice: EngineVoice, targets: Sequence[int]) -> tuple[list[np.ndarray], int, int]:
    """Every unit spoken alone (its ending appended), again with the engine's rate where far off."""
    texts = [u.text + u.ending for u in units]
    spoken = [shift_pitch_formants(a, voice.shift) for a in synthesize_batch(texts, voice)]
    ratios = [t / max(1, len(a)) for t, a in zip(targets, spoken)]
    redo = [i for i, r in enumerate(ratios) if not RETRY_BOUNDS[0] <= r <= RETRY_BOUNDS[1]]
    if redo:
        rates = [float(np.clip(ratios[i], *RATE_LIMITS)) for i in redo]
        again = synthesize_batch([texts[i] for i in redo], voice, rates)
        for i, a in zip(redo, again):
            spoken[i] = shift_pitch_formants(a, voice.shift)
    return spoken, len(redo), 0


def _turn_pieces(turn_texts: Sequence[Sequence[str]], voice: EngineVoice, rates: Sequence[float] | None = None) -> tuple[list[list[np.ndarray]], int]:
    """:func:`speak_turns`, and where a turn cannot be cut (the engine's times or pauses do not
    match its units), that turn's units spoken alone; returns the pieces and how many units
    were spoken alone."""
    try:
        return speak_turns(turn_texts, voice, rates), 0
    except SynthesisError:
        pass
    out, alone = [], 0
    for k, texts in enumerate(turn_texts):
        rate = None if rates is None else [rates[k]]
        try:
            out.append(speak_turns([texts], voice, rate)[0])
        except SynthesisError:
            out.append(synthesize_batch(texts, voice, None if rate is None else rate * len(texts)))
            alone += len(texts)
    return out, alone


def _speak_whole_turns(units: Sequence[Unit], voice: EngineVoice, targets: Sequence[int]) -> tuple[list[np.ndarray], int, int]:
    """Every turn spoken as one utterance and cut into its units (:mod:`.turn_synthesis`); a turn
    whose pieces are together far off their real length is spoken again at the engine rate
    that fits (one rate per turn: the engine's duration model keeps the turn's rhythm).
    Returns the pieces, the units spoken again, and the units spoken alone (turn not cut)."""
    order = list(dict.fromkeys(u.turn for u in units))
    members = {t: [i for i, u in enumerate(units) if u.turn == t] for t in order}
    turn_texts = [[units[i].text + units[i].ending for i in members[t]] for t in order]
    spoken: list[np.ndarray] = [np.zeros(0, np.float32)] * len(units)

    def place(turn_ids: Sequence[int], pieces: Sequence[Sequence[np.ndarray]]) -> None:
        for t, turn_pieces in zip(turn_ids, pieces):
            for i, a in zip(members[t], turn_pieces):
                spoken[i] = shift_pitch_formants(a, voice.shift)

    pieces, alone = _turn_pieces(turn_texts, voice)
    place(order, pieces)
    ratios = {t: sum(targets[i] for i in members[t]) / max(1, sum(len(spoken[i]) for i in members[t])) for t in order}
    redo = [k for k, t in enumerate(order) if not RETRY_BOUNDS[0] <= ratios[t] <= RETRY_BOUNDS[1]]
    if redo:
        rates = [float(np.clip(ratios[order[k]], *RATE_LIMITS)) for k in redo]
        pieces, alone_again = _turn_pieces([turn_texts[k] for k in redo], voice, rates)
        place([order[k] for k in redo], pieces)
        alone += alone_again
    return spoken, sum(len(members[order[k]]) for k in redo), alone


def render_channel(units: Sequence[Unit], voice: EngineVoice, n_samples: int) -> tuple[np.ndarray, dict[str, Any]]:
    """One speaker's channel: every unit spoken by ``voice`` and fitted to its real span.

    Units with a planned turn (:func:`turn_units`) are spoken turn by turn where the engine
    ignores final punctuation or a final "," (Flite, Festival, Pico); otherwise each unit alone, its ending appended.
    Returns the channel and fit statistics (WSOLA factors, retries, units beyond the bounds).
    """
    channel = np.zeros(n_samples, dtype=np.float32)
    if not units:
        return channel, {"units": 0, "retried": 0, "beyond_bound": 0, "factors": []}
    targets = [int(round(u.end * SAMPLE_RATE)) - int(round(u.start * SAMPLE_RATE)) for u in units]
    whole_turns = voice.engine in WHOLE_TURN_ENGINES and all(u.turn >= 0 for u in units)
    spoken, retried, alone = (_speak_whole_turns if whole_turns else _speak_units)(units, voice, targets)
    factors = []
    for unit, target, audio in zip(units, targets, spoken):
        if target <= 0:
            continue
        factors.append(target / max(1, len(audio)))
        fitted = _set_level(fit_to_length(audio, target), voice.level_db)
        start = int(round(unit.start * SAMPLE_RATE))
        stop = min(n_samples, start + target)
        channel[start:stop] += fitted[: stop - start]
    beyond = sum(1 for f in factors if not STRETCH_BOUNDS[0] <= f <= STRETCH_BOUNDS[1])
    stats = {"units": len(units), "retried": retried, "beyond_bound": beyond, "factors": factors}
    if whole_turns:
        stats["spoken_alone"] = alone
    return channel, stats


def draw_speaker_voices(
    engines: Sequence[str], rng: np.random.Generator, voice_names: dict[str, list[str]] | None = None
) -> tuple[EngineVoice, EngineVoice]:
    """One voice per speaker: engine drawn from ``engines``, then a voice of it; the two differ."""
    voice_names = voice_names or {}
    engine = str(rng.choice(list(engines)))
    first = draw_voice(engine, rng, voice_names.get(engine))
    for _ in range(20):
        engine = str(rng.choice(list(engines)))
        second = draw_voice(engine, rng, voice_names.get(engine))
        if (second.engine, second.name) != (first.engine, first.name):
            break
    return first, second


def revoice_dialogue(
    dialogue: Dialogue,
    voices: tuple[EngineVoice, EngineVoice],
    *,
    prosody: str = "units",
    acts: CallActs | None = None,
    context: Dialogue | None = None,
    offset: float = 0.0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The clean [2, n] re-voiced audio of ``dialogue`` (n = its duration) and fit statistics.

    ``prosody`` is one of :data:`PROSODY_MODES`; with ``"turns"``, ``acts``, ``context`` and
    ``offset`` are as :func:`turn_units` takes them, and the statistics add ``"endings"``.
    """
    if prosody not in PROSODY_MODES:
        raise ValueError(f"prosody must be one of {', '.join(PROSODY_MODES)}, got {prosody!r}")
    n = int(round(float(dialogue.duration) * SAMPLE_RATE))
    endings: dict[str, int] | None = None
    if prosody == "turns":
        units, unspoken, endings = turn_units(dialogue, acts, context, offset)
    else:
        units, unspoken = dialogue_units(dialogue)
    channels, stats = [], []
    for k in range(2):
        ch, st = render_channel([u for u in units if u.speaker == k], voices[k], n)
        channels.append(ch)
        stats.append(st)
    factors = np.array(stats[0]["factors"] + stats[1]["factors"], dtype=np.float64)
    fit = {
        "units": stats[0]["units"] + stats[1]["units"],
        "units_without_text": unspoken,
        "retried_with_engine_rate": stats[0]["retried"] + stats[1]["retried"],
        "beyond_bound": stats[0]["beyond_bound"] + stats[1]["beyond_bound"],
        "stretch_quantiles": [round(float(q), 3) for q in np.quantile(factors, [0.05, 0.5, 0.95])] if factors.size else [],
    }
    if endings is not None:
        fit["endings"] = endings
        fit["units_spoken_alone"] = sum(st.get("spoken_alone", 0) for st in stats)
    return np.stack(channels), fit


# ---------------------------------------------------------------------------------------
# Conversations, excerpts, splits
# ---------------------------------------------------------------------------------------


def find_conversations(swb_root: str | Path) -> dict[str, Path]:
    """Conversation number (``"2001"``) -> its side-A word file, for every call under ``swb_root``."""
    root = Path(swb_root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: Switchboard ms98 folder not found (give --swb-root, the extracted swb_ms98_transcriptions)")
    found = {}
    for path in root.rglob("sw*A-ms98-a-word.text"):
        m = re.match(r"sw0*(\d+)A-ms98-a-word\.text$", path.name)
        if m:
            found[m.group(1)] = path
    if not found:
        raise FileNotFoundError(f"{root}: no sw####A-ms98-a-word.text files below it")
    return found


def split_ids(split: str, splits_dir: str | Path | None, available: dict[str, Path]) -> list[str]:
    """The conversation numbers of ``split`` (from ``<splits_dir>/<split>.txt``, or all found)."""
    if splits_dir is None:
        return sorted(available, key=int)
    path = Path(splits_dir) / f"{'val' if split == 'validation' else split}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: split list not found (a text file with one conversation number per line)")
    ids = [line.strip().lstrip("sw").lstrip("0") for line in path.read_text().splitlines() if line.strip()]
    missing = [i for i in ids if i not in available]
    if len(missing) == len(ids):
        raise FileNotFoundError(f"{path}: none of its conversations are under the Switchboard folder")
    return [i for i in ids if i in available]


def excerpt_bounds(dialogue: Dialogue, excerpt_s: float, rng: np.random.Generator) -> tuple[float, float] | None:
    """A window of about ``excerpt_s`` whose ends lie in silences of both speakers (None: none fits).

    The start is drawn uniformly over the call, then moved to the next mid-silence (the last
    one that leaves room for half an excerpt, near the end of a call); the end is the
    mid-silence nearest to start + ``excerpt_s``. No IPU is cut.
    """
    duration = float(dialogue.duration)
    if excerpt_s <= 0 or excerpt_s >= duration:
        return 0.0, duration
    merged: list[list[float]] = []
    for s, e in sorted(seg for spk in dialogue.segments for seg in spk):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    edges = [0.0] + [x for m in merged for x in m] + [duration]
    cuts = np.array([(a + b) / 2 for a, b in zip(edges[::2], edges[1::2]) if b - a >= EXCERPT_MIN_GAP_S])
    if cuts.size < 2:
        return None
    t = rng.uniform(0, duration - excerpt_s)
    starts = cuts[cuts <= cuts[-1] - 0.5 * excerpt_s]  # those with an end at least half an excerpt later
    if not starts.size:
        return None
    after = starts[starts >= t]
    start = float(after[0]) if after.size else float(starts[-1])
    later = cuts[cuts >= start + 0.5 * excerpt_s]
    end = float(later[np.argmin(np.abs(later - (start + excerpt_s)))])
    return start, end


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@dataclass(frozen=True)
class RevoiceOptions:
    """How each call of a split is re-voiced.

    Attributes:
        excerpt_s: excerpt length in s (0: whole calls).
        seed: the call order, each call's excerpt, voices and augmentation.
        voice_names: engine -> the voices it may draw (None: every voice; :func:`parse_voice_names`).
        augment: store augmented audio as the training audio (False: the clean audio).
        prosody: :data:`PROSODY_MODES`, as :func:`revoice_dialogue`.
        dialog_acts: the ``swb_dialog_acts_words`` folder or archive (``prosody="turns"`` only;
            calls without acts take their endings from the words).
    """

    excerpt_s: float = 90.0
    seed: int = 0
    voice_names: dict[str, list[str]] | None = None
    augment: bool = True
    prosody: str = "units"
    dialog_acts: str | Path | None = None


@dataclass(frozen=True)
class CallSelection:
    """Which calls of a split are re-voiced: the split lists (``splits_dir``: train.txt/val.txt/
    test.txt; None: every call found), shuffled by the seed, then calls
    ``[first_call, first_call + max_calls)`` of that order (``max_calls`` None: all)."""

    max_calls: int | None = None
    first_call: int = 0
    splits_dir: str | Path | None = None


def revoice_conversation(
    conv: str,
    word_file: Path,
    *,
    engines: Sequence[str],
    split_dir: Path,
    split_name: str,
    options: RevoiceOptions,
    acts: CallActs | None = None,
) -> dict[str, Any] | None:
    """Re-voice one excerpt of a call; write its audio and row; return the row (None: skipped).

    ``prosody="turns"`` plans each IPU's ending on the whole call (``acts``: its dialogue acts, if any)."""
    excerpt_s, seed, prosody = options.excerpt_s, options.seed, options.prosody
    rng = np.random.default_rng([seed, int(conv)])
    full = read_switchboard(word_file, load_audio=False)
    bounds = excerpt_bounds(full, excerpt_s, rng)
    if bounds is None:
        return None
    start, end = bounds
    ex_id = f"sw{int(conv):04d}_{int(round(start * 100)):06d}"
    excerpt = full.crop(start, end, new_id=ex_id)
    if not any(excerpt.segments[0]) or not any(excerpt.segments[1]):
        return None  # one side silent in this window: no turn-taking to learn
    voices = draw_speaker_voices(engines, rng, options.voice_names)
    cpu0, wall0 = _cpu_seconds(), time.time()
    clean, fit = revoice_dialogue(excerpt, voices, prosody=prosody, acts=acts, context=full, offset=start)
    aug = draw_augmentation(rng) if options.augment else Augmentation()
    audio = apply_augmentation(clean, excerpt.segments, aug, rng)
    cpu = _cpu_seconds() - cpu0
    for sub, data in (("clean", clean), ("audio", audio)):
        target = split_dir / sub / f"{ex_id}.flac"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp.flac")
        sf.write(str(tmp), data.T, SAMPLE_RATE, subtype="PCM_16", format="FLAC")
        os.replace(tmp, target)
    row = excerpt.to_dict()
    row["audio_path"] = str((split_dir / "audio" / f"{ex_id}.flac").resolve())
    row["split"] = split_name
    row["metadata"] = {
        "format": "revoiced_switchboard",
        "generator_version": GENERATOR_VERSION,
        "source": "Switchboard-1 ms98 word alignments (real words and times; synthetic sound)",
        "conversation": f"sw{int(conv):04d}",
        "excerpt": [round(start, 4), round(end, 4)],
        "seed": seed,
        "voices": [v.to_dict() for v in voices],
        "augmentation": aug.to_dict(),
        "clean_audio_path": str((split_dir / "clean" / f"{ex_id}.flac").resolve()),
        "fit": fit,
        "synthesis_cpu_s": round(cpu, 3),
        "synthesis_wall_s": round(time.time() - wall0, 3),
    }
    if prosody != "units":  # rows of the default mode stay as the corpora built before the option
        row["metadata"]["prosody"] = {"mode": prosody, "dialogue_acts": acts is not None}
    rows_dir = split_dir / "rows"
    rows_dir.mkdir(parents=True, exist_ok=True)
    tmp = rows_dir / f".{ex_id}.json.tmp"
    tmp.write_text(json.dumps(row), encoding="utf-8")
    os.replace(tmp, rows_dir / f"{ex_id}.json")
    return row


def write_manifest(split_dir: Path) -> Path:
    """``manifest.jsonl`` from every finished row of the split (atomically)."""
    rows = sorted((split_dir / "rows").glob("sw*.json"))
    lines = [json.dumps(json.loads(p.read_text(encoding="utf-8"))) for p in rows]
    target = split_dir / "manifest.jsonl"
    tmp = split_dir / ".manifest.jsonl.tmp"
    tmp.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    os.replace(tmp, target)
    return target


def split_summary(split_dir: Path) -> dict[str, Any]:
    """Counts, hours, engines, voices and speed of a split folder's finished rows."""
    rows = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((split_dir / "rows").glob("sw*.json"))]
    hours = sum(r["duration"] for r in rows) / 3600
    cpu = sum(r["metadata"]["synthesis_cpu_s"] for r in rows)
    engines: dict[str, float] = {}
    voices: dict[str, int] = {}
    for r in rows:
        for v in r["metadata"]["voices"]:
            engines[v["engine"]] = engines.get(v["engine"], 0.0) + r["duration"] / 3600
            key = f"{v['engine']}:{v['name'].split('+')[-1] if v['engine'] == 'espeak' else v['name']}"
            voices[key] = voices.get(key, 0) + 1
    units = sum(r["metadata"]["fit"]["units"] for r in rows)
    beyond = sum(r["metadata"]["fit"]["beyond_bound"] for r in rows)
    return {
        "excerpts": len(rows),
        "conversations": len({r["metadata"]["conversation"] for r in rows}),
        "hours": hours,
        "speaker_hours_by_engine": engines,
        "distinct_voices": len(voices),
        "voices": voices,
        "units": units,
        "beyond_bound": beyond,
        "cpu_s": cpu,
        "x_real_time": (hours * 3600 / cpu) if cpu else float("nan"),
    }


def write_status(out_root: Path, note: str = "") -> Path:
    """``STATUS.md`` at the corpus root: what each split holds right now."""
    lines = ["# Re-voiced Switchboard: status", "", f"Updated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.", ""]
    if note:
        lines += [note, ""]
    lines += ["| split | excerpts | calls | hours | speaker-hours by engine | voices | units | beyond stretch bound | synthesis x real time (CPU) | state |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for split_dir in sorted(p for p in out_root.iterdir() if p.is_dir() and (p / "rows").is_dir()):
        s = split_summary(split_dir)
        state_file = split_dir / "STATE"
        state = state_file.read_text().strip() if state_file.is_file() else "?"
        engines = ", ".join(f"{k} {v:.2f}" for k, v in sorted(s["speaker_hours_by_engine"].items()))
        lines.append(
            f"| {split_dir.name} | {s['excerpts']} | {s['conversations']} | {s['hours']:.2f} | {engines} | {s['distinct_voices']} | "
            f"{s['units']} | {s['beyond_bound']} ({100 * s['beyond_bound'] / max(1, s['units']):.1f} %) | {s['x_real_time']:.1f} | {state} |"
        )
    lines += [
        "",
        "Each split folder: `manifest.jsonl` (dialogue manifest; `training.judge_data.load_chunk_rows(DIR/<split>, SPLIT)` with",
        "SPLIT = train / validation / test), `audio/*.flac` (augmented, 2 channels, 16 kHz), `clean/*.flac`, `rows/*.json`.",
        "The manifest is rewritten after every finished excerpt, so a partial split is usable at any time.",
        "Method: docs/revoicing.md. Real: words, word times, IPU timing, overlaps. Synthetic: voices, prosody, acoustics.",
    ]
    target = out_root / "STATUS.md"
    tmp = out_root / ".STATUS.md.tmp"
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


def parse_voice_names(spec: str | None) -> dict[str, list[str]] | None:
    """``"flite:awb,rms;festival:slt_hts"`` -> {"flite": ["awb", "rms"], "festival": ["slt_hts"]}."""
    if not spec:
        return None
    out: dict[str, list[str]] = {}
    for part in spec.split(";"):
        engine, _, names = part.partition(":")
        if engine.strip() not in ENGINES or not names.strip():
            raise ValueError(f"--voices: expected 'engine:name,name;engine:...', got {part!r}")
        out[engine.strip()] = [n.strip() for n in names.split(",") if n.strip()]
    return out


def _check_split_options(split: str, engines: Sequence[str], options: RevoiceOptions, calls: CallSelection) -> None:
    check_engines(engines)
    if options.prosody not in PROSODY_MODES:
        raise ValueError(f"prosody must be one of {', '.join(PROSODY_MODES)}, got {options.prosody!r}")
    if options.dialog_acts is not None and options.prosody != "turns":
        raise ValueError("dialogue acts only shape the turn prosody: give --prosody turns with --dialog-acts")
    if split not in SPLIT_NAMES:
        raise ValueError(f"unknown split {split!r}; use train, val or test")
    if calls.first_call < 0:
        raise ValueError(f"first_call must be >= 0, got {calls.first_call}")


def _print_progress(split: str, made: int, target: int, row: dict[str, Any]) -> None:
    meta = row["metadata"]
    print(f"revoice {split} {made}/{target} {row['id']} {row['duration']:.1f}s cpu {meta['synthesis_cpu_s']:.1f}s "
          f"{'/'.join(v['engine'] + ':' + v['name'] for v in meta['voices'])}", file=sys.stderr, flush=True)


def revoice_split(
    swb_root: str | Path,
    split: str,
    engines: Sequence[str],
    out: str | Path,
    *,
    options: RevoiceOptions = RevoiceOptions(),
    calls: CallSelection = CallSelection(),
    deadline: float | None = None,
    progress: bool = True,
) -> Path:
    """Re-voice the calls ``calls`` picks of a split (one excerpt each); resumable; returns the manifest.

    Calls are taken in a seeded random order of the split list; finished excerpts (their
    ``rows/<id>.json``) are skipped, so running again continues, and a larger ``max_calls``
    extends the same corpus. ``first_call`` skips that many calls of the order, so a corpus can
    grow with calls an earlier one (same seed) never used, and two processes can build disjoint
    parts side by side. ``deadline`` (a ``time.time()`` value) stops cleanly before it.
    """
    _check_split_options(split, engines, options, calls)
    out_root = Path(out)
    split_dir = out_root / split
    split_dir.mkdir(parents=True, exist_ok=True)
    available = find_conversations(swb_root)
    ids = split_ids(split, calls.splits_dir, available)
    order = np.random.default_rng([options.seed, 7]).permutation(len(ids))
    ids = [ids[i] for i in order][calls.first_call:]
    done = {p.stem.split("_")[0] for p in (split_dir / "rows").glob("sw*.json")}
    all_acts = read_switchboard_acts(options.dialog_acts, ids) if options.dialog_acts is not None else {}
    target = len(ids) if calls.max_calls is None else min(calls.max_calls, len(ids))
    (split_dir / "STATE").write_text("running\n")
    made = len(done)
    for conv in ids:
        if made >= target:
            break
        if deadline is not None and time.time() > deadline:
            print(f"revoice {split}: deadline reached after {made} excerpts", file=sys.stderr)
            break
        if f"sw{int(conv):04d}" in done:
            continue
        try:
            row = revoice_conversation(conv, available[conv], engines=engines, split_dir=split_dir,
                                       split_name=SPLIT_NAMES[split], options=options, acts=all_acts.get(conv))
        except (SynthesisError, DialogueError) as err:  # one bad call must not stop a long run: log it, go on
            with open(split_dir / "failures.txt", "a", encoding="utf-8") as log:
                log.write(f"sw{int(conv):04d}\t{err}\n")
            print(f"revoice {split}: sw{int(conv):04d} skipped: {err}", file=sys.stderr)
            continue
        if row is None:
            continue
        made += 1
        write_manifest(split_dir)
        if progress:
            _print_progress(split, made, target, row)
        if made % 5 == 0:
            write_status(out_root)
    manifest = write_manifest(split_dir)
    (split_dir / "STATE").write_text("complete\n" if made >= target else f"partial ({made}/{target})\n")
    write_status(out_root)
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m turneval.dataset_scripts.synthetic.revoice", description=__doc__.split("\n\n")[0])
    parser.add_argument("--swb-root", required=True, help="extracted Switchboard ms98 word alignments (swb_ms98_transcriptions)")
    parser.add_argument("--split", required=True, choices=["train", "val", "test"])
    parser.add_argument("--splits-dir", default=None, help="folder with train.txt/val.txt/test.txt (default: every call found)")
    parser.add_argument("--engines", default="espeak", help="comma-separated: espeak, festival, flite, pico")
    parser.add_argument("--voices", default=None, help="restrict voices, e.g. 'flite:awb,rms;festival:slt_hts'")
    parser.add_argument("--out", required=True, help="corpus root; the split goes to OUT/<split>/")
    parser.add_argument("--max-calls", type=int, default=None, help="calls to re-voice (one excerpt each)")
    parser.add_argument("--first-call", type=int, default=0,
                        help="skip this many calls of the seeded order (extend a corpus with calls it never used)")
    parser.add_argument("--excerpt-s", type=float, default=90.0, help="excerpt length in s (0: whole calls)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-augment", action="store_true", help="store the clean audio as the training audio")
    parser.add_argument("--prosody", choices=PROSODY_MODES, default="units",
                        help="units: each IPU a stand-alone sentence (as the corpora built so far); turns: IPUs end as in their turn")
    parser.add_argument("--dialog-acts", default=None,
                        help="with --prosody turns: swb_dialog_acts_words folder or swb_dialog_acts_words_VAP.tar.gz (default: endings from the words)")
    parser.add_argument("--stop-at", type=float, default=None, help="stop cleanly after this many seconds")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    deadline = time.time() + args.stop_at if args.stop_at else None
    options = RevoiceOptions(excerpt_s=args.excerpt_s, seed=args.seed, voice_names=parse_voice_names(args.voices),
                             augment=not args.no_augment, prosody=args.prosody, dialog_acts=args.dialog_acts)
    calls = CallSelection(max_calls=args.max_calls, first_call=args.first_call, splits_dir=args.splits_dir)
    manifest = revoice_split(args.swb_root, args.split, engines, args.out, options=options, calls=calls,
                             deadline=deadline, progress=not args.quiet)
    print(manifest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
