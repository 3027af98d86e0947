"""Band and voice invariance of naturalness m (issue 31, item 5): one synthetic dialogue written at
8, 16 and 44.1 kHz and voiced by a second engine gives the same m, scored as `turneval score`
scores a file, within ``naturalness_invariance.TOLERANCE``.

Asserted for the default predictor, which reads voice activity only (the look-ahead predictor; measured by
``benchmarks/validation/naturalness_invariance.py``, figures in docs/naturalness.md: on 6 dialogues of 30 s its m moves
up to 7.5 % with Flite's voices, 0.4 % on this fixture's dialogue). The audio demo predictor of
an earlier generation did not meet it; it no longer ships (docs/history.md).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks" / "validation"), str(REPO / "benchmarks"), str(REPO / "tools")]

import naturalness_invariance as inv  # noqa: E402

from turneval.dataset_scripts.synthetic import generate_dialogue  # noqa: E402
from turneval.naturalness_inference import load_predictor  # noqa: E402


SEED, DURATION_S = 0, 20.0


@pytest.fixture(scope="module")
def versions(tmp_path_factory) -> dict[str, Path]:
    """The fixture dialogue (eSpeak NG, seed 0, 20 s) at 16, 8 and 44.1 kHz, and re-voiced by a second engine when one is installed."""
    dialogue = generate_dialogue(SEED, duration_s=DURATION_S, style="human")
    return inv.write_versions(dialogue, tmp_path_factory.mktemp("invariance"), inv.second_engine(), SEED)


@pytest.fixture(scope="module")
def va_changes(versions) -> dict[str, float]:
    import torch

    torch.set_num_threads(1)
    model = load_predictor()  # the report's default, no flag: issue 31 asks it of the default
    assert model.config.input_type == "vad"  # it reads voice activity only (and, timing+ends, its own look-ahead)
    return inv.relative_changes(inv.version_scores(versions, model))


@pytest.mark.parametrize("rate", inv.RATES)
def test_voice_activity_predictor_m_does_not_depend_on_the_sample_rate(va_changes, rate):
    assert va_changes[f"{rate} Hz"] <= inv.TOLERANCE, f"m at {rate} Hz moved {100 * va_changes[f'{rate} Hz']:.1f} % from 16 kHz"


def test_voice_activity_predictor_m_does_not_depend_on_the_voice(versions, va_changes):
    engine = inv.second_engine()
    if engine is None:
        pytest.skip(f"no second synthesizer installed ({', '.join(inv.SECOND_ENGINES)}; make synth-deps)")
    change = va_changes[f"{engine} voices"]
    assert change <= inv.TOLERANCE, f"m with {engine} voices moved {100 * change:.1f} % from eSpeak NG"


def test_voice_activity_does_not_depend_on_the_sample_rate(versions):
    """Why the default predictor's m keeps to the band: the VAD listens to the telephone band
    (``VADConfig.band``), so the 8 kHz file gets the 16 kHz file's segments (issue 31: on real AMI
    headset audio the full-band VAD moved m by up to 12.5 % at 8 kHz)."""
    import warnings

    from turneval.bandwidth import NarrowBandWarning
    from turneval.reporting.inputs import load_conversation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NarrowBandWarning)
        segments = {k: load_conversation(versions[k]).segments for k in ("16000 Hz", "8000 Hz", "44100 Hz")}
    for version in ("8000 Hz", "44100 Hz"):
        assert len(segments[version][0]) == len(segments["16000 Hz"][0]) and len(segments[version][1]) == len(segments["16000 Hz"][1])
        for ours, ref in zip(segments[version], segments["16000 Hz"]):
            for (s0, e0), (s1, e1) in zip(ours, ref):
                # measured: identical here; the full-band VAD moved one end by 128 ms at 8 kHz
                assert abs(s0 - s1) <= 0.001 and abs(e0 - e1) <= 0.001, f"{version}: segment {s0:.3f}-{e0:.3f} vs {s1:.3f}-{e1:.3f}"


def test_versions_differ_in_rate_and_voice(versions):
    import soundfile as sf

    assert {sf.info(str(versions[f"{r} Hz"])).samplerate for r in (16000, *inv.RATES)} == {16000, *inv.RATES}
    engine = inv.second_engine()
    if engine is not None:
        a, _ = sf.read(str(versions["16000 Hz"]))
        b, _ = sf.read(str(versions[f"{engine} voices"]))
        assert a.shape == b.shape and not (abs(a - b) < 1e-3).all(), "the second engine speaks the same timing with other voices"
