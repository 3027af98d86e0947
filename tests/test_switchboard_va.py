"""training/switchboard_va.py (Switchboard voice-activity cache) and the voice-activity-only training crops."""
import shutil
from pathlib import Path

import numpy as np
import pytest

from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.readers import read_dialogue
from turneval.training.future_activity_data import FutureActivityWindows, WindowConfig, vad_like
from turneval.training.switchboard_va import cache_voice_activity, load_voice_activity, main

FIXTURE = Path(__file__).parent / "data" / "readers" / "switchboard"


@pytest.fixture()
def transcripts(tmp_path) -> Path:
    """The reader fixture laid out as the ms98 archive is: <root>/00/0001/sw0001A-ms98-a-word.text."""
    root = tmp_path / "swb_ms98_transcriptions"
    (root / "00" / "0001").mkdir(parents=True)
    for f in FIXTURE.glob("sw0001*"):
        shutil.copy(f, root / "00" / "0001" / f.name)
    return root


def test_cache_round_trip_matches_the_reader(transcripts, tmp_path):
    out = cache_voice_activity(transcripts, ["0001"], tmp_path / "va.npz")
    cached = load_voice_activity(out)
    assert list(cached) == ["0001"]
    expected = read_dialogue(FIXTURE / "sw0001A-ms98-a-word.text").frame_activity().T
    assert cached["0001"].dtype == np.int8 and np.array_equal(cached["0001"], expected)


def test_cli_reads_a_split(transcripts, tmp_path, capsys):
    (tmp_path / "test.txt").write_text("0001\n\n")
    assert main(["--transcripts", str(transcripts), "--splits", str(tmp_path), "--split", "test", "--out", str(tmp_path / "c.npz")]) == 0
    assert "1 conversations" in capsys.readouterr().out
    assert list(load_voice_activity(tmp_path / "c.npz")) == ["0001"]


def test_missing_files_are_explained(transcripts, tmp_path):
    with pytest.raises(DialogueError, match="swb_ms98_transcriptions"):
        cache_voice_activity(transcripts, ["4637"], tmp_path / "x.npz")
    with pytest.raises(FileNotFoundError, match="no voice-activity cache"):
        load_voice_activity(tmp_path / "none.npz")


def _toy_activity(seconds: float = 30.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    va = np.zeros((int(seconds * 50), 2), np.int8)
    t, speaker = 10, 0
    while t < va.shape[0] - 20:
        length = int(rng.integers(20, 150))
        va[t : t + length, speaker] = 1
        t += length + int(rng.integers(-10, 40))
        speaker = 1 - speaker
    return va


def test_voice_activity_windows_are_deterministic_and_labelled():
    config = WindowConfig(window_s=8.0, alpha=3.0, vad_like_p=0.5, clean_labels=True)
    ds = FutureActivityWindows.from_voice_activity([_toy_activity(seed=0), _toy_activity(seed=1)], config, draws=20, seed=5)
    a, b = ds[11], ds[11]
    assert set(a) == {"labels", "va_labels", "frame_weights", "voice_activity"}
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["voice_activity"].shape == (400, 2) and a["labels"].shape == (400,)
    assert set(np.unique(a["frame_weights"].numpy())) <= {1.0, 3.0}
    assert ((a["labels"] == -100) | ((a["labels"] >= 0) & (a["labels"] < 256))).all()
    with pytest.raises(ValueError, match="expected \\[n_frames, 2\\]"):
        FutureActivityWindows.from_voice_activity([np.zeros((10, 3))], config, draws=1)


def test_vad_like_moves_edges_a_little_and_is_reproducible():
    va = _toy_activity(60.0)
    a = vad_like(va, np.random.default_rng(3))
    b = vad_like(va, np.random.default_rng(3))
    assert np.array_equal(a, b) and a.shape == va.shape and set(np.unique(a)) <= {0, 1}
    changed = (a != va).mean()
    assert 0 < changed < 0.15  # edges and short gaps, not the conversation
