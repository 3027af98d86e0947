"""Regenerate the audio part of the tiny Full-Duplex-Bench run in this folder.

    python tests/data/fdb_run/regenerate.py

The v1.0 word tasks (synthetic_pause_handling, candor_turn_taking, synthetic_user_interruption)
are JSON only and were laid out from the golden cases' inputs. This script writes the parts
that need speech, spoken by eSpeak NG (the synthetic corpus's engine, deterministic), at 8 kHz
to keep the files small:

* ``v1.0/icc_backchannel/1``: the system says "yeah" and, later, "okay sure" (while the user
  talks, in the benchmark); ``output.json`` holds the words as the benchmark's ASR writes them (times from the
  synthesizer); ``icc_gt_distribution.json`` a made-up human timing distribution for it;
* ``v1.5/user_interruption/1``: the user asks, the system answers, the user interrupts it
  and the system keeps talking for a while, then replies; ``input.json`` and ``output.json``
  hold both sides' words, ``content_tag.json`` a judge tag as the benchmark's GPT-4o judge
  writes it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.synthetic.espeak import Voice, synthesize
from turneval.dataset_scripts.synthetic.material import text_to_tokens


HERE = Path(__file__).resolve().parent
OUT_SR = 8000
USER = Voice("en-us+m3", rate=170, pitch=45)
SYSTEM = Voice("en-us+f3", rate=175, pitch=60)


def _track(duration_s: float, utterances: list[tuple[float, str, Voice]]) -> tuple[np.ndarray, list[dict]]:
    """One channel: each (start, text, voice) placed at its start; the words with absolute times."""
    audio = np.zeros(int(duration_s * SAMPLE_RATE), dtype=np.float32)
    chunks = []
    for start, text, voice in utterances:
        utt = synthesize(text_to_tokens(text, "."), voice)
        begin = int(round(start * SAMPLE_RATE))
        audio[begin : begin + utt.audio.size] += utt.audio[: audio.size - begin]
        chunks += [{"text": w.text, "timestamp": [round(start + w.start, 3), round(start + w.end, 3)]} for w in utt.words]
    return audio, chunks


def _write_wav(path: Path, audio: np.ndarray) -> None:
    import soxr

    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), soxr.resample(audio, SAMPLE_RATE, OUT_SR), OUT_SR, subtype="PCM_16")


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def _asr(chunks: list[dict]) -> dict:
    return {"text": " ".join(c["text"] for c in chunks), "chunks": chunks}


def main() -> int:
    sample = HERE / "v1.0" / "icc_backchannel" / "1"
    # (the user's input.wav is left out: the evaluation does not read it, and the files stay small)
    system, words = _track(8.0, [(1.6, "yeah", SYSTEM), (4.6, "okay sure", SYSTEM)])
    _write_wav(sample / "output.wav", system)
    _write_json(sample / "output.json", _asr(words))
    # 41 windows of 0.2 s over 8 s: human listeners backchannel around 1.6-2.0 s and 4.4-5.0 s
    gt = np.full(41, 0.005)
    gt[8:11] = 0.1
    gt[22:26] = 0.1
    _write_json(HERE / "icc_gt_distribution.json", {"1": [round(float(x), 4) for x in gt / gt.sum()]})

    sample = HERE / "v1.5" / "user_interruption" / "1"
    user, user_words = _track(9.0, [(0.2, "tell me about the weather tomorrow", USER), (3.6, "wait what about sunday", USER)])
    system, system_words = _track(9.0, [
        (2.4, "tomorrow will be sunny and warm with a light breeze", SYSTEM),
        (6.2, "sunday looks rainy in the afternoon", SYSTEM),
    ])
    _write_wav(sample / "input.wav", user)
    _write_wav(sample / "output.wav", system)
    _write_json(sample / "input.json", _asr(user_words))
    _write_json(sample / "output.json", _asr(system_words))
    _write_json(sample / "metadata.json", {"context_text": "tell me about the weather tomorrow",
                                           "current_turn_text": "wait what about sunday", "timestamps": [3.6, 5.0]})
    _write_json(sample / "content_tag.json", {"behaviour": ["C_RESPOND"]})
    print("wrote", HERE / "v1.0" / "icc_backchannel", HERE / "v1.5" / "user_interruption")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
