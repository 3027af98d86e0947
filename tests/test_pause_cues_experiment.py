"""benchmarks/experiments/pause_cues_across_corpora.py: its pitch track and its held-out threshold."""
import sys
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "experiments"))

import pause_cues_across_corpora as cues  # noqa: E402


def test_f0_track_finds_a_tone_and_not_noise():
    t = np.arange(int(0.5 * cues.SAMPLE_RATE)) / cues.SAMPLE_RATE
    f0 = cues.f0_track(0.3 * np.sin(2 * np.pi * 150.0 * t))
    assert abs(np.nanmedian(f0) - 150.0) < 3.0
    assert np.isnan(cues.f0_track(np.zeros_like(t))).all()


def test_held_out_agreement_chooses_on_the_other_corpora():
    rng = np.random.default_rng(0)
    n = 60
    corpus = np.repeat(["x", "y", "z"], n)
    shift = rng.random(3 * n) < 0.5
    # one feature that separates the outcomes in every corpus alike: every threshold carries
    table = {"shift": shift, "corpus": corpus, "recording": np.char.add(corpus, (np.arange(3 * n) % 4).astype(str)),
             "silence_elapsed_s": rng.uniform(0.2, 2.0, 3 * n), "cue": np.where(shift, 1.0, -1.0) + 0.3 * rng.standard_normal(3 * n)}
    lines = cues.held_out_agreement(table, ["cue"])
    assert sorted(lines) == ["x", "y", "z"]
    for line in lines.values():
        up, cont = (int(part.split("%")[0].split()[-1]) for part in line.split(",")[0:2])
        assert up >= 90 and cont >= 90, line
