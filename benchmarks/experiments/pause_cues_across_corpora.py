"""Which cues of a pause carry from one real corpus to another? Prosody, timing, and Whisper's window.

    python benchmarks/experiments/pause_cues_across_corpora.py              # prosody and timing only (a minute)
    python benchmarks/experiments/pause_cues_across_corpora.py --whisper    # plus Whisper's cue in 2 windows (~15 min)
    ... --whisper --cache cues.npz    # keep the table (and Whisper's cues) for the next run

Every (a)/(d) pause decision of the real dev corpora (SpokenWOZ, Harper Valley, the AMI channel
pairs; speech by VAD, as the report reads them; ``$TURNEVAL_REAL_ROOT`` or ../shared/real). For
each candidate cue added to the inputs of the rule of 2026-11-26 (turn_complete_p, log_silence_s), the rule
is fitted leaving one corpus out (``training/fit_pause_decision.leave_one_corpus_out``) and its
held-out ROC-AUC is compared with the silence length's on the corpus left out. The cues, each
causal to the decision (the pauser's channel up to the end of its speech, the segments up to
the decision):

* timing: the turn's and the last IPU's length, the time since the other party last spoke;
* prosody at the IPU end: the F0 slope over the last voiced 100 ms (semitones/s), the final F0
  against the speaker's median over the previous 20 s, the energy of the last 200 ms against the
  IPU's, the share of voiced frames at the end (autocorrelation pitch, 10 ms frames);
* agreement at a threshold chosen on the other two corpora (the one whose worse direction,
  speaks up or lets continue, is best on the worse of them), for the shipped inputs and, with
  ``--whisper``, with Whisper's cue: do the (a)/(d) thresholds carry to a corpus left out?
* ``--whisper``: Whisper tiny.en's punctuation cue (``turneval.whisper_completion``) on the last
  8 s of the clip in its full 30 s window, and with the encoder cut to an 8 s window (400
  positions, the way smart-turn runs its Whisper encoder), with its CPU cost per decision.

Measured 2026-11-27 on the 248 decisions (gain over the silence length on the corpus left out,
AMI / Harper Valley / SpokenWOZ; shared 2-core machine): the shipped inputs -0.008 / +0.027 /
+0.048. Every timing and prosody cue adds nothing or loses on two corpora: its direction turns
between corpora (the F0 slope alone: ROC-AUC 0.79 on AMI, 0.58 on Harper Valley, 0.40 on
SpokenWOZ). Whisper's cue on the clip's last 8 s in its 30 s window: +0.064 / +0.075 / +0.158
(0.57 CPU s a decision; as good as the whole clip); with the encoder cut to 8 s: +0.004 / -0.045 /
+0.139, at the same cost. At 0.25-0.31 decisions per audio second on these calls, the cue costs
about three times the whole report. Agreement at a threshold chosen on the other two corpora,
speaks up / lets continue: shipped inputs AMI 80 (n = 5) / 62 %, Harper Valley 95 / 51 %,
SpokenWOZ 13 / 94 %; with Whisper's cue 60 / 85 %, 95 / 55 %, 90 / 68 %. ("Shipped inputs" here
are the cue and the plain log silence, the rule of 2026-11-26.)

``--call_tempo_grid`` (2026-11-27): the silence measured against the call's own earlier silences
(``log_silence_vs_call``, the judge's ``call_tempo``, shipped since) in place of the plain log
silence. Over silences counted from 0.04, 0.1, 0.2 or 0.3 s and a prior worth 0.5, 1 or 2
silences, the gains (AMI / Harper Valley / SpokenWOZ) stay within +0.000-0.030 /
+0.016-0.032 / +0.115-0.150, against -0.008 / +0.027 / +0.048 with the plain log: every cell
lifts AMI and SpokenWOZ; Harper Valley stays where it was. The shipped numbers (0.2 s, the pause
stop time; weight 0.5, chosen like C by the worst corpus left out) give +0.019 / +0.029 / +0.142
and agreement, speaks up / lets continue, AMI 80 (n = 5) / 79 %, Harper Valley 90 / 74 %,
SpokenWOZ 73 / 90 %: every direction of every corpus at 65 % or more. The agreement is the
fragile part: the lowest direction over the grid is 58-74 %, at 65 % or more in 4 of 12 cells.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))

SAMPLE_RATE = 16000
PROSODY_CUES = ("log_turn_s", "log_ipu_s", "log_since_other_s", "f0_slope", "f0_final", "energy_tail_db", "voiced_end")
WHISPER_TAIL_S = 8.0
BASE_FEATURES = ("turn_complete_p", "log_silence_s")
"""What each cue is added to: the cue and the plain log silence (the rule of 2026-11-26)."""
CALL_TEMPO_MIN_SILENCES_S = (0.04, 0.1, 0.2, 0.3)
CALL_TEMPO_PRIOR_WEIGHTS = (0.5, 1.0, 2.0)


def f0_track(x: np.ndarray, hop_s: float = 0.01, win_s: float = 0.04, fmin: float = 70.0, fmax: float = 400.0) -> np.ndarray:
    """F0 (Hz) per frame by normalised autocorrelation; NaN where unvoiced (peak below 0.45)."""
    n, hop = int(win_s * SAMPLE_RATE), int(hop_s * SAMPLE_RATE)
    lo, hi = int(SAMPLE_RATE / fmax), int(SAMPLE_RATE / fmin)
    out = []
    for start in range(0, max(0, len(x) - n), hop):
        frame = x[start:start + n] - x[start:start + n].mean()
        ac = np.correlate(frame, frame, "full")[n - 1:]
        if ac[0] < 1e-6:
            out.append(np.nan)
            continue
        k = lo + int(np.argmax(ac[lo:hi]))
        out.append(SAMPLE_RATE / k if ac[k] / ac[0] > 0.45 else np.nan)
    return np.asarray(out)


def prosody_cues(dialogue: Any, reading: Any) -> dict[str, float]:
    """The timing and prosody cues of one pause (see the module docstring)."""
    audio = np.asarray(dialogue.audio)
    own = [s for s in dialogue.segments[reading.pauser] if s[0] <= reading.speech_end + 0.05 and s[1] >= reading.speech_end - 0.25]
    ipu_start = min(s[0] for s in own) if own else reading.speech_end - 0.5
    ipu_end = min(max(s[1] for s in own), reading.speech_end) if own else reading.speech_end
    x = audio[reading.pauser, int(max(0.0, ipu_end - 1.0) * SAMPLE_RATE): int(ipu_end * SAMPLE_RATE)].astype(np.float64)
    f0 = f0_track(x)
    voiced = np.isfinite(f0)
    semitones = 12 * np.log2(np.where(voiced, f0, 1.0) / 100.0)
    before = audio[reading.pauser, int(max(0.0, ipu_end - 20.0) * SAMPLE_RATE): int(ipu_end * SAMPLE_RATE)].astype(np.float64)
    reference = f0_track(before, hop_s=0.05)
    median = float(np.nanmedian(reference)) if np.isfinite(reference).any() else float("nan")
    last = semitones[voiced][-10:]
    slope = float(np.polyfit(np.arange(len(last)) * 0.01, last, 1)[0]) if len(last) >= 3 else 0.0
    final = float(last[-3:].mean() - 12 * np.log2(median / 100.0)) if len(last) >= 3 and np.isfinite(median) else 0.0
    energy = x ** 2
    tail = (10 * np.log10(energy[-int(0.2 * SAMPLE_RATE):].mean() + 1e-10) - 10 * np.log10(energy.mean() + 1e-10)
            if len(energy) > 0.3 * SAMPLE_RATE else 0.0)
    other_ends = [e for _, e in dialogue.segments[1 - reading.pauser] if e <= reading.time]
    return {"log_turn_s": float(np.log(max(0.2, reading.speech_end - reading.turn_start))),
            "log_ipu_s": float(np.log(max(0.1, ipu_end - ipu_start))),
            "log_since_other_s": float(np.log(max(0.1, reading.time - max(other_ends)))) if other_ends else float(np.log(30.0)),
            "f0_slope": float(np.clip(slope, -60, 60)), "f0_final": float(np.clip(final, -12, 12)),
            "energy_tail_db": float(np.clip(tail, -30, 10)), "voiced_end": float(voiced[-10:].mean()) if len(voiced) else 0.0}


class _Capture:
    """Stands in for Whisper's cue in the decision table and keeps the clips it is asked about."""

    def __init__(self) -> None:
        self.clips: list[np.ndarray] = []

    def logits(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        self.clips += [np.asarray(c, dtype=np.float32) for c in clips]
        return np.zeros(len(clips))


def whisper_cue(clips: Sequence[np.ndarray], encoder_window_s: float) -> tuple[np.ndarray, float]:
    """Whisper's punctuation cue on each clip's last :data:`WHISPER_TAIL_S` seconds, the encoder
    cut to ``encoder_window_s`` (30: Whisper's own window); and its CPU seconds per clip."""
    import torch

    from turneval.whisper_completion import WhisperCompletion

    reader = WhisperCompletion()
    if encoder_window_s < 30.0:
        positions = int(encoder_window_s * 50)  # 2 frames of 10 ms per encoder position
        reader.model = copy.deepcopy(reader.model)
        encoder = reader.model.model.encoder
        weight = encoder.embed_positions.weight.data[:positions].clone()
        encoder.embed_positions = torch.nn.Embedding(positions, weight.shape[1])
        encoder.embed_positions.weight.data = weight
        reader.model.config.max_source_positions = positions
        processor, frames = reader.processor, positions * 2

        class CutFeatures:  # the processor pads to 30 s: keep the frames the cut encoder reads
            tokenizer = processor.tokenizer

            def __call__(self, *args: Any, **kwargs: Any) -> Any:
                features = processor(*args, **kwargs)
                features["input_features"] = features["input_features"][..., :frames]
                return features

        reader.processor = CutFeatures()
    tails = [c[-int(WHISPER_TAIL_S * SAMPLE_RATE):] for c in clips]
    start = time.process_time()
    values = reader.logits(tails)
    return values, (time.process_time() - start) / max(1, len(clips))


def decision_rows(with_whisper: bool) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """The decision table of the three corpora with the prosody cues; the cue's clips when asked."""
    from pause_decision_corpora import corpus_recordings, default_root

    from turneval.checkpoints import default_checkpoint
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.modeling.judge_loading import load_judge
    from turneval.pause_decision import judge_pause_records
    from turneval.training.fit_pause_decision import decision_table, join_tables, load_recording

    judge = load_judge(default_checkpoint("judge"))
    features = list(BASE_FEATURES) + (["whisper_complete_logit"] if with_whisper else [])
    capture = _Capture() if with_whisper else None
    tables = []
    for corpus, recordings in corpus_recordings(default_root()).items():
        dialogues = [replace(load_recording(r), words=None) for r in recordings]
        dialogues = [d if d.system_speaker is not None else replace(d, system_speaker=1) for d in dialogues]
        table = decision_table(judge, dialogues, features, corpus=corpus, whisper=capture)
        cues = [prosody_cues(d, r) for d in dialogues for r in judge_pause_records(judge, conversation_view(d)).values()]
        for name in PROSODY_CUES:
            table[name] = np.array([c[name] for c in cues])
        tables.append(table)
    return join_tables(tables), (capture.clips if capture is not None else [])


def call_tempo_grid(min_silences_s: Sequence[float] = CALL_TEMPO_MIN_SILENCES_S,
                    prior_weights: Sequence[float] = CALL_TEMPO_PRIOR_WEIGHTS) -> list[dict[str, Any]]:
    """``log_silence_vs_call`` (the judge's ``call_tempo``) over a grid of its two declared
    numbers: per cell, the held-out gains and agreement of the rule over (``turn_complete_p``,
    ``log_silence_vs_call``), in place of the plain log silence."""
    from pause_decision_corpora import corpus_recordings, default_root

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.configuration_turn_taking_judge import CallTempoConfig
    from turneval.modeling.judge_loading import load_judge
    from turneval.training.fit_pause_decision import decision_table, join_tables, load_recording

    judge = load_judge(default_checkpoint("judge"))
    dialogues = {corpus: [replace(load_recording(r), words=None) for r in recordings]
                 for corpus, recordings in corpus_recordings(default_root()).items()}
    features = ["turn_complete_p", "log_silence_vs_call"]
    cells = []
    for min_silence_s in min_silences_s:
        for prior_weight in prior_weights:
            judge.config.call_tempo = CallTempoConfig(min_silence_s=min_silence_s, prior_weight=prior_weight)
            table = join_tables([decision_table(judge, ds, features, corpus=corpus) for corpus, ds in dialogues.items()])
            cells.append({"min_silence_s": min_silence_s, "prior_weight": prior_weight,
                          "gains": held_out_gains(table, features), "agreement": held_out_agreement(table, features)})
    return cells


def held_out_gains(table: dict[str, np.ndarray], features: Sequence[str]) -> dict[str, float]:
    """Per corpus: the held-out rule's ROC-AUC minus the silence length's."""
    from turneval.modeling.modeling_turn_taking_judge import log_silence
    from turneval.training.fit_pause_decision import DEFAULT_C, _auc, leave_one_corpus_out

    y, corpus = table["shift"].astype(int), table["corpus"].astype(str)
    held = leave_one_corpus_out(table, features, DEFAULT_C)["held_out"]
    silence = log_silence(table["silence_elapsed_s"])
    return {str(c): round(_auc(y[corpus == c], held[corpus == c]) - _auc(y[corpus == c], silence[corpus == c]), 3) for c in sorted(set(corpus))}


def held_out_agreement(table: dict[str, np.ndarray], features: Sequence[str]) -> dict[str, str]:
    """Per corpus left out: the rule fitted on the other two (at the strength chosen leaving one
    out), its threshold on P(shift) chosen there, and the agreement of both directions on the
    corpus left out (speaks up / lets continue, with counts)."""
    from turneval.training.fit_pause_decision import DEFAULT_C, _design, fit_rule, leave_one_corpus_out

    y, corpus = table["shift"].astype(bool), table["corpus"].astype(str)
    names = sorted(set(corpus))
    c = leave_one_corpus_out(table, features, DEFAULT_C)["c"]
    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    out = {}
    for held in names:
        rule = fit_rule({k: v[corpus != held] for k, v in table.items()}, features, c)
        p = 1.0 / (1.0 + np.exp(-(_design(table, features) @ np.asarray(rule["weight"]) + rule["bias"])))

        def worse(th: float, which: Sequence[str]) -> float:
            return min(min(np.mean(p[(corpus == k) & y] > th), np.mean(p[(corpus == k) & ~y] <= th)) for k in which)

        fit_on = [k for k in names if k != held]
        th = max(grid, key=lambda g: worse(g, fit_on))
        m = corpus == held
        out[str(held)] = (f"P > {th:.2f}: speaks up {np.mean(p[m & y] > th):.0%} (n = {int((m & y).sum())}), "
                     f"lets continue {np.mean(p[m & ~y] <= th):.0%} (n = {int((m & ~y).sum())})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--whisper", action="store_true", help="also Whisper's cue in its full and a cut window (~15 CPU min)")
    parser.add_argument("--cache", type=Path, help="an .npz: read the table (and Whisper's cues) from it when it exists, else write it")
    parser.add_argument("--call_tempo_grid", action="store_true",
                        help="only the grid of the call tempo's two declared numbers (the shortest silence counted, the prior's weight)")
    args = parser.parse_args(argv)
    from turneval.training.fit_pause_decision import _auc

    if args.call_tempo_grid:
        print("log_silence_vs_call in place of log_silence_s: gains over the silence length on the corpus left out, and agreement")
        for cell in call_tempo_grid():
            agreement = "; ".join(f"{k}: {v.split(': ', 1)[1]}" for k, v in cell["agreement"].items())
            print(f"silences >= {cell['min_silence_s']:g} s, prior weight {cell['prior_weight']:g}: {cell['gains']}\n    {agreement}")
        return 0

    cached = dict(np.load(args.cache)) if args.cache and args.cache.exists() else None
    if cached is not None:
        table, clips = cached, []
    else:
        table, clips = decision_rows(args.whisper)
    y, corpus = table["shift"].astype(int), table["corpus"].astype(str)
    base = list(BASE_FEATURES)
    print(f"{len(y)} decisions; gains over the silence length on the corpus left out ({', '.join(sorted(set(corpus)))})")
    print(f"cue + plain log silence (the rule of 2026-11-26) {base}: {held_out_gains(table, base)}")
    for held, line in held_out_agreement(table, base).items():
        print(f"  agreement, {held} left out, cue + plain log silence: {line}")
    for cue in PROSODY_CUES:
        alone = {str(c): round(_auc(y[corpus == c], table[cue][corpus == c]), 3) for c in sorted(set(corpus))}
        print(f"+ {cue}: {held_out_gains(table, base + [cue])}   (ROC-AUC alone {alone})")
    if args.whisper:
        for window in (30.0, 8.0):
            key = f"whisper_window_{window:g}"
            if key not in table:
                table[key], cost = whisper_cue(clips, window)
                table[f"{key}_cpu_s"] = np.full(len(y), cost)  # a column, so the table splits by rows
            print(f"+ Whisper's cue, last {WHISPER_TAIL_S:g} s, encoder window {window:g} s "
                  f"({float(table[key + '_cpu_s'][0]):.2f} CPU s a decision): {held_out_gains(table, base + [key])}")
            if window == 30.0:
                for held, line in held_out_agreement(table, base + [key]).items():
                    print(f"  agreement, {held} left out, with Whisper's cue: {line}")
    if args.cache and cached is None:
        np.savez(args.cache, **table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
