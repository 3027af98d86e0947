"""benchmarks/experiments/vad_state_reset.py: Silero with its state reset after a quiet stretch."""
import sys
from pathlib import Path

import numpy as np
import pytest


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "experiments"))

import vad_state_reset as experiment  # noqa: E402

from turneval.dataset_scripts.audio import load_stereo  # noqa: E402
from turneval.dataset_scripts.vad import SileroVAD  # noqa: E402


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """Six seconds of the bundled human-like example's first channel (synthetic speech and pauses)."""
    return load_stereo(REPO / "examples" / "human_like.wav")[0][: 6 * 16000]


def test_without_a_reset_it_is_the_stock_stream(speech):
    stock = SileroVAD().speech_probabilities(speech)
    ours = experiment.probabilities_with_reset(speech, None)
    np.testing.assert_array_equal(ours, stock)


def test_after_a_reset_the_stream_is_a_fresh_one(speech):
    signal = np.concatenate([speech[:48000], np.zeros(32000, dtype=np.float32), speech])  # 3 s, 2 s of silence, 6 s
    probs, resets = experiment.probabilities_and_resets(signal, 0.5, band="full")
    in_silence = [r for r in resets if 48000 // 512 < r < 80000 // 512 - 1]
    assert in_silence, "2 s of digital silence holds a 0.5 s quiet stretch"
    last = in_silence[-1]
    fresh = experiment.probabilities_with_reset(signal[(last + 1) * 512 :], 0.5, band="full")
    np.testing.assert_array_equal(probs[last + 1 :], fresh)
    stock = experiment.probabilities_with_reset(signal, None, band="full")
    assert np.abs(stock[last + 1 :] - fresh).max() > 1e-4, "without the reset the state remembers what came before"


def test_agreement_counts_missed_speech_and_false_alarms():
    figures = experiment.agreement([(0.0, 1.0), (2.0, 3.0)], [(0.5, 1.0), (2.0, 3.5)], duration_s=4.0)
    assert figures["miss"] == pytest.approx(0.25)  # 0.5 s of 2 s
    assert figures["false_alarm"] == pytest.approx(0.5 / 2.01, rel=1e-3)  # 0.5 s of the 2.01 s without speech (401 frames)


def test_word_spans_close_short_gaps_only():
    from turneval.dataset_scripts.dialogue import Word

    words = [Word(1.0, 1.2, "a"), Word(0.0, 0.4, "so"), Word(0.6, 0.9, "it"), Word(2.0, 2.3, "is")]
    assert experiment.closed_word_spans(words) == [(0.0, 1.2), (2.0, 2.3)]
