"""Speak a whole turn as one utterance and cut it back into its IPUs (Flite, Festival).

Flite and Festival's HTS voice give byte-identical audio whatever punctuation ends a text
(measured: ``"... home"``, ``"... home,"``, ``"... home."`` and ``"... home?"``), and Festival's
diphone voices treat a final "," as no punctuation: spoken one IPU at a time, every IPU ends
as a finished sentence. Inside an utterance, though, a comma is a phrase break with
continuation intonation. So for these engines a turn's IPUs are spoken as one utterance,
``"so i went there, and then, we came home."``, and cut at the engine's own times: the end
of each IPU's last word and the start of the next one's first. The pause the engine puts at
each comma falls between the cuts and is dropped; each piece is then fitted to its real IPU
span as in the per-IPU path (``revoice.render_channel``), so the real timing is kept.

Where the times come from:

- **Flite** prints its phone segments with their end times (``-psdur``). Each IPU's phones are
  counted by speaking its text alone with ``-ps`` (Flite's post-lexical rules change a phone's
  identity in context, e.g. "the" before a vowel, never the count); the turn's non-pause phones
  are then dealt out in order.
- **SVOX Pico** reports no times, so the turn is cut at silences, one per comma (the pause it
  speaks there): among its silences of at least :data:`PICO_MIN_PAUSE_S`, those whose pieces
  come closest to the units' durations spoken alone. A turn without that many silences is a
  :class:`SynthesisError`, and the caller speaks its units alone.
- **Festival** prints, per token of the text (our whitespace-separated words), the start of
  its first segment and the end of its last (a Scheme walk of the Token, Word, SylStructure
  relations), from the same process that saves the audio.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from ..grids import SAMPLE_RATE
from .engines import (
    FESTIVAL_VOICES,
    EngineVoice,
    SynthesisError,
    _duration_stretch,
    _read_16k,
    _scheme_string,
    run_flite,
)
from .stretch import trim_silence


WHOLE_TURN_ENGINES = ("festival", "flite", "pico")
"""Engines that ignore the punctuation ending a text, so turns are spoken whole and cut. SVOX
Pico does tell "?" from "." but ends "," with the same fall as "." (measured: the F0 slope over
the last 300 ms of "... went home," and "... went home." is -11 st/s for both)."""

PICO_MIN_PAUSE_S = 0.08
"""Pico puts 125-320 ms of silence at a comma inside an utterance (measured, both voices);
plosive closures are shorter. A cut needs a silence at least this long."""

Span = tuple[float, float]


def cut_pieces(audio: np.ndarray, spans: Sequence[Span]) -> list[np.ndarray]:
    """``audio`` cut at ``spans`` (s), each piece trimmed of silence (kept whole if that empties it)."""
    pieces = []
    for start, end in spans:
        lo = max(0, int(round(start * SAMPLE_RATE)))
        hi = min(len(audio), max(lo + 1, int(round(end * SAMPLE_RATE))))
        piece = np.asarray(audio[lo:hi], dtype=np.float32)
        trimmed = trim_silence(piece)
        pieces.append(trimmed if trimmed.size else piece)
    return pieces


def join_turn(texts: Sequence[str]) -> str:
    """The one utterance a turn is spoken as (each text already carries its own ending)."""
    return " ".join(t.strip() for t in texts)


# ---------------------------------------------------------------------------------------
# Flite
# ---------------------------------------------------------------------------------------


def parse_flite_segments(printed: str) -> list[tuple[str, float]]:
    """``pau:0.224 w:0.269 ...`` (Flite's ``-psdur``) -> [(phone, end s), ...]."""
    out = []
    for item in printed.split():
        phone, sep, end = item.rpartition(":")
        if not sep:
            continue
        try:
            out.append((phone, float(end)))
        except ValueError:
            continue
    return out


def unit_spans_from_phones(segments: Sequence[tuple[str, float]], counts: Sequence[int]) -> list[Span]:
    """Each unit's (start, end) in the turn, dealing the non-pause phones out by ``counts``."""
    speech = []  # (start, end) of every non-pause phone
    previous_end = 0.0
    for phone, end in segments:
        if phone != "pau":
            speech.append((previous_end, end))
        previous_end = end
    if sum(counts) != len(speech) or any(c <= 0 for c in counts):
        raise SynthesisError(f"flite: the turn has {len(speech)} phones but its units alone have {list(counts)}; cannot cut it")
    spans, k = [], 0
    for c in counts:
        spans.append((speech[k][0], speech[k + c - 1][1]))
        k += c
    return spans


def _flite_phone_count(text: str, voice: EngineVoice) -> int:
    proc = subprocess.run(["flite", "-voice", voice.name, "-ps", "-t", text, "none"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise SynthesisError(f"flite ({voice.name}) failed on {text!r}: {proc.stderr.strip()[-400:]}")
    return sum(1 for p in proc.stdout.split() if p != "pau")


def flite_turn(texts: Sequence[str], voice: EngineVoice, rate: float = 1.0) -> list[np.ndarray]:
    """The pieces of one turn spoken whole by Flite: one per text, 16 kHz, trimmed."""
    audio, printed = run_flite(join_turn(texts), voice, rate, ["-psdur"])
    counts = [_flite_phone_count(t, voice) for t in texts]
    return cut_pieces(audio, unit_spans_from_phones(parse_flite_segments(printed), counts))


# ---------------------------------------------------------------------------------------
# Festival
# ---------------------------------------------------------------------------------------

_FESTIVAL_TOKEN_TIMES = """
(define (turneval_word_span w)
  (let ((s (item.relation w 'SylStructure)))
    (if (and s (item.daughter1 s) (item.daughter1 (item.daughter1 s)))
        (list (item.feat (item.daughter1 (item.daughter1 s)) "segment_start")
              (item.feat (item.daughtern (item.daughtern s)) "segment_end"))
        nil)))
(define (turneval_tokens tok)
  (if tok
      (begin
        (format t "TOK %s" (item.name tok))
        (mapcar (lambda (w) (let ((sp (turneval_word_span w))) (if sp (format t " %f %f" (car sp) (car (cdr sp))))))
                (item.daughters tok))
        (format t "\\n")
        (turneval_tokens (item.next tok)))))
"""
"""Scheme: one ``TOK name start end [start end ...]`` line per token (a span per word it became)."""


def parse_festival_tokens(printed: str) -> dict[int, list[list[Span]]]:
    """Festival's ``UTT i`` / ``TOK ...`` lines -> per utterance, per token, its words' spans."""
    out: dict[int, list[list[Span]]] = {}
    current: list[list[Span]] | None = None
    for line in printed.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "UTT":
            current = out.setdefault(int(parts[1]), [])
        elif parts and parts[0] == "TOK" and current is not None:
            times = [float(x) for x in parts[2:]]
            current.append(list(zip(times[::2], times[1::2])))
    return out


def unit_spans_from_tokens(tokens: Sequence[Sequence[Span]], counts: Sequence[int]) -> list[Span]:
    """Each unit's (start, end) from its tokens' word spans (``counts`` tokens per unit)."""
    if sum(counts) != len(tokens):
        raise SynthesisError(f"festival: the turn has {len(tokens)} tokens but its units have {list(counts)}; cannot cut it")
    spans, k = [], 0
    for c in counts:
        words = [span for tok in tokens[k : k + c] for span in tok]
        if not words:
            raise SynthesisError(f"festival: a unit's {c} token(s) produced no words; cannot cut the turn")
        spans.append((words[0][0], words[-1][1]))
        k += c
    return spans


def festival_turns(turns: Sequence[Sequence[str]], voice: EngineVoice, rates: Sequence[float] | None = None) -> list[list[np.ndarray]]:
    """Every turn spoken whole by Festival in one process; per turn, one piece per text."""
    if voice.name not in FESTIVAL_VOICES:
        raise SynthesisError(f"unknown Festival voice {voice.name!r}; choose from {', '.join(FESTIVAL_VOICES)}")
    rates = [1.0] * len(turns) if rates is None else list(rates)
    with tempfile.TemporaryDirectory(prefix="revoice_festival_turns_") as tmp:
        tmpdir = Path(tmp)
        lines = [f"(voice_{FESTIVAL_VOICES[voice.name]})", _FESTIVAL_TOKEN_TIMES]
        for i, (texts, rate) in enumerate(zip(turns, rates)):
            out = tmpdir / f"{i}.wav"
            lines.append(f"(Parameter.set 'Duration_Stretch {_duration_stretch(voice, rate):.3f})")
            # one failing turn must not stop the batch: its missing UTT line is reported below
            lines.append(
                f"(unwind-protect (let ((u (utt.synth (Utterance Text {_scheme_string(join_turn(texts))})))) "
                f"(utt.save.wave u {_scheme_string(str(out))} 'riff) (format t \"UTT {i}\\n\") "
                f"(turneval_tokens (utt.relation.first u 'Token))) nil)"
            )
        script = tmpdir / "turns.scm"
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        proc = subprocess.run(["festival", "-b", str(script)], capture_output=True, text=True, timeout=600)
        tokens = parse_festival_tokens(proc.stdout)
        results = []
        for i, texts in enumerate(turns):
            wav = tmpdir / f"{i}.wav"
            if i not in tokens or not wav.is_file():
                raise SynthesisError(f"Festival ({voice.name}) did not speak the turn {join_turn(texts)!r}: {proc.stderr.strip()[-400:]}")
            counts = [len(t.split()) for t in texts]
            results.append(cut_pieces(_read_16k(wav), unit_spans_from_tokens(tokens[i], counts)))
        return results


# ---------------------------------------------------------------------------------------
# SVOX Pico
# ---------------------------------------------------------------------------------------


def silences(audio: np.ndarray, min_s: float, threshold_db: float = -40.0, frame_s: float = 0.005) -> list[Span]:
    """Stretches (s) of at least ``min_s`` quieter than ``threshold_db`` re the loudest 5 ms frame."""
    hop = int(round(frame_s * SAMPLE_RATE))
    n = len(audio) // hop
    if n == 0:
        return []
    rms = np.sqrt(np.mean(np.asarray(audio[: n * hop], dtype=np.float64).reshape(n, hop) ** 2, axis=1)) + 1e-12
    quiet = np.r_[False, 20 * np.log10(rms / rms.max()) < threshold_db, False]
    edges = np.flatnonzero(np.diff(quiet.astype(np.int8)))
    runs = [(a * frame_s, b * frame_s) for a, b in zip(edges[::2], edges[1::2])]
    return [(a, b) for a, b in runs if b - a >= min_s - 1e-9]


def spans_at_pauses(audio: np.ndarray, n_units: int, min_pause_s: float, expected_s: Sequence[float] | None = None) -> list[Span]:
    """Cut a turn at ``n_units - 1`` of its inner silences (speech edges excluded); the pieces
    are the speech between them.

    Without ``expected_s``, the longest silences. With it (each unit's duration spoken alone),
    the silences whose pieces come closest to those durations (least squared log ratio, a
    dynamic programme over the candidates in order): a comma pause is not always the longest
    silence (a short "yeah," gets a short pause, a stop closure can last 100 ms).
    """
    duration = len(audio) / SAMPLE_RATE
    inner = [(a, b) for a, b in silences(audio, min_pause_s) if a > 0 and b < duration]
    n_cuts = n_units - 1
    if len(inner) < n_cuts:
        raise SynthesisError(f"pico: {n_cuts} comma pause(s) expected, {len(inner)} silence(s) of {min_pause_s * 1000:.0f} ms or more found")
    if n_cuts <= 0:
        return [(0.0, duration)]
    if expected_s is None:
        cuts = sorted(sorted(inner, key=lambda r: r[1] - r[0], reverse=True)[:n_cuts])
    else:
        cuts = [inner[j] for j in _best_cuts(inner, list(expected_s), duration)]
    edges = [0.0] + [x for cut in cuts for x in cut] + [duration]
    return list(zip(edges[::2], edges[1::2]))


def _best_cuts(inner: Sequence[Span], expected: Sequence[float], duration: float) -> list[int]:
    """Indices of ``len(expected) - 1`` silences in order whose pieces best match ``expected``."""
    def cost(start: float, end: float, k: int) -> float:
        return float(np.log(max(end - start, 1e-3) / max(expected[k], 1e-3)) ** 2)

    n_cuts, m = len(expected) - 1, len(inner)
    best = np.full((n_cuts, m), np.inf)  # best[k, j]: pieces 0..k with cut k at silence j
    back = np.zeros((n_cuts, m), dtype=int)
    for j in range(m):
        best[0, j] = cost(0.0, inner[j][0], 0)
    for k in range(1, n_cuts):
        for j in range(k, m):
            options = [best[k - 1, i] + cost(inner[i][1], inner[j][0], k) for i in range(k - 1, j)]
            back[k, j] = int(np.argmin(options)) + k - 1
            best[k, j] = min(options)
    last = [best[n_cuts - 1, j] + cost(inner[j][1], duration, n_cuts) for j in range(m)]
    j = int(np.argmin(last))
    chosen = [j]
    for k in range(n_cuts - 1, 0, -1):
        j = int(back[k, j])
        chosen.append(j)
    return chosen[::-1]


def pico_turn(texts: Sequence[str], voice: EngineVoice, rate: float = 1.0) -> list[np.ndarray]:
    """The pieces of one turn spoken whole by Pico: one per text, 16 kHz, trimmed. Each text is
    also spoken alone (Pico is fast) to tell which silences are the comma pauses."""
    from .engines import _pico

    audio = trim_silence(_pico(join_turn(texts), voice, rate))
    expected = [len(trim_silence(_pico(t, voice, rate))) / SAMPLE_RATE for t in texts] if len(texts) > 1 else None
    return cut_pieces(audio, spans_at_pauses(audio, len(texts), PICO_MIN_PAUSE_S, expected))


def speak_turns(turns: Sequence[Sequence[str]], voice: EngineVoice, rates: Sequence[float] | None = None) -> list[list[np.ndarray]]:
    """Per turn (its units' texts, each with its ending), the units' audio spoken as one utterance.

    16 kHz float32 pieces, trimmed of silence, the pitch/formant shift not yet applied (as
    ``engines.synthesize_batch``). ``rates``: per turn, a duration factor on the voice's own.
    """
    rates = [1.0] * len(turns) if rates is None else list(rates)
    if voice.engine == "flite":
        return [flite_turn(texts, voice, r) for texts, r in zip(turns, rates)]
    if voice.engine == "festival":
        return festival_turns(turns, voice, rates)
    if voice.engine == "pico":
        return [pico_turn(texts, voice, r) for texts, r in zip(turns, rates)]
    raise SynthesisError(f"{voice.engine} is not spoken turn by turn (only {', '.join(WHOLE_TURN_ENGINES)})")


__all__ = [
    "WHOLE_TURN_ENGINES",
    "cut_pieces",
    "festival_turns",
    "flite_turn",
    "join_turn",
    "parse_festival_tokens",
    "parse_flite_segments",
    "pico_turn",
    "silences",
    "spans_at_pauses",
    "speak_turns",
    "unit_spans_from_phones",
    "unit_spans_from_tokens",
]
