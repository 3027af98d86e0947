"""BalancedChunkSampler: balance, determinism, sharding, and the causal context window."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch

from turneval.dataset_scripts.grids import SAMPLE_RATE, SAMPLES_PER_CHUNK
from turneval.dataset_scripts.sampler import LABELS, BalancedChunkSampler, ClassBalance, read_context_window


T = LABELS.index("T")


def _write_ramp(path, seconds, sr=SAMPLE_RATE, channels=2):
    """Audio whose sample k holds k / 1e6 on every channel, so a window can be located."""
    n = int(seconds * sr)
    ramp = (np.arange(n, dtype=np.float64) / 1e6).astype(np.float32)
    data = np.stack([ramp, ramp], axis=1) if channels == 2 else ramp
    sf.write(str(path), data, sr, subtype="FLOAT")
    return ramp


def _rows(tmp_path, n_conv=3, n_chunks=200, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_conv):
        path = tmp_path / f"c{i}.wav"
        _write_ramp(path, n_chunks * 0.04)
        labels = rng.choice(len(LABELS), size=n_chunks, p=[0.3, 0.05, 0.05, 0.05, 0.55])
        rows.append({"conversation_id": f"c{i}", "audio_path": str(path), "labels": labels.tolist()})
    return rows


def test_example_interface_and_window_alignment(tmp_path):
    rows = _rows(tmp_path, n_conv=1)
    ds = BalancedChunkSampler(rows, context_s=1.0, seed=0)
    ex = ds.example(0, 10)
    assert set(ex) == {"input_values", "attention_mask", "labels", "conversation_id", "chunk_index"}
    assert ex["input_values"].dtype == torch.float32 and ex["input_values"].shape == (SAMPLE_RATE,)
    assert ex["attention_mask"].shape == (SAMPLE_RATE,)
    assert ex["labels"] == rows[0]["labels"][11] and ex["chunk_index"] == 10 and ex["conversation_id"] == "c0"
    end = 11 * SAMPLES_PER_CHUNK  # the window ends at the end of chunk 10
    values, mask = ex["input_values"].numpy(), ex["attention_mask"].numpy()
    assert mask.sum() == end and mask[-end:].all() and not mask[:-end].any()
    np.testing.assert_allclose(values[-1], (end - 1) / 1e6, rtol=1e-6)
    np.testing.assert_allclose(values[-end], 0.0)
    assert not values[:-end].any()


def test_window_never_sees_audio_after_chunk_end(tmp_path):
    path = tmp_path / "a.wav"
    _write_ramp(path, 3.0)
    before, _ = read_context_window(str(path), 20 * SAMPLES_PER_CHUNK, 8000)
    data, sr = sf.read(str(path), dtype="float32")
    data[20 * SAMPLES_PER_CHUNK :] = 1.0  # change the future
    sf.write(str(path), data, sr, subtype="FLOAT")
    after, _ = read_context_window(str(path), 20 * SAMPLES_PER_CHUNK, 8000)
    np.testing.assert_array_equal(before, after)


def test_other_sample_rate_is_resampled(tmp_path):
    path = tmp_path / "a8k.wav"
    _write_ramp(path, 2.0, sr=8000, channels=1)
    values, mask = read_context_window(str(path), 16000, 8000)
    assert values.shape == (8000,) and mask.all()
    np.testing.assert_allclose(values[4000], 12000 / 2 / 1e6, atol=2e-5)  # 16 kHz sample 12000 = 8 kHz sample 6000


def test_classes_balanced_to_count_of_T(tmp_path):
    rows = _rows(tmp_path)
    ds = BalancedChunkSampler(rows, context_s=0.5)
    counts = ds.class_counts()
    n_t = sum(int(np.sum(np.asarray(r["labels"][1:]) == T)) for r in rows)
    assert counts["T"] == n_t
    for name, count in counts.items():
        available = sum(int(np.sum(np.asarray(r["labels"][1:]) == LABELS.index(name))) for r in rows)
        assert count == min(available, n_t)
    over = BalancedChunkSampler(rows, context_s=0.5, balance=ClassBalance(oversample=True)).class_counts()
    assert set(over.values()) == {n_t}


def test_deterministic_per_seed_and_epoch(tmp_path):
    rows = _rows(tmp_path)
    a = BalancedChunkSampler(rows, seed=3)
    b = BalancedChunkSampler(rows, seed=3)
    assert a.epoch_indices(0) == b.epoch_indices(0)
    assert a.epoch_indices(0) != a.epoch_indices(1)
    assert a.epoch_indices(0) != BalancedChunkSampler(rows, seed=4).epoch_indices(0)
    a.set_epoch(1)
    assert a.rank_indices() == b.rank_indices(1)


def test_ranks_are_disjoint_equal_and_cover(tmp_path):
    rows = _rows(tmp_path)
    full = BalancedChunkSampler(rows, seed=1).epoch_indices(0)
    shares = [BalancedChunkSampler(rows, seed=1, rank=r, world_size=3).rank_indices(0) for r in range(3)]
    assert len({len(s) for s in shares}) == 1
    flat = [x for s in shares for x in s]
    assert len(flat) == len(set(flat)) == (len(full) // 3) * 3
    assert set(flat) <= set(full)


def test_dataloader_with_workers_yields_each_example_once(tmp_path):
    rows = _rows(tmp_path, n_conv=1, n_chunks=60, seed=2)
    ds = BalancedChunkSampler(rows, context_s=0.2, seed=0)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    seen = []
    for batch in loader:
        assert batch["input_values"].shape[1] == int(0.2 * SAMPLE_RATE)
        seen += list(zip(batch["conversation_id"], batch["chunk_index"].tolist()))
    assert sorted(seen) == sorted((f"c{c}", t) for c, t in ds.rank_indices())


def test_bad_rows_and_labels_are_reported(tmp_path):
    with pytest.raises(KeyError, match="audio_path"):
        BalancedChunkSampler([{"conversation_id": "x", "labels": [0, 1]}])
    with pytest.raises(ValueError, match="unknown chunk label"):
        BalancedChunkSampler([{"conversation_id": "x", "audio_path": "x.wav", "labels": ["NA", "Q"]}])
    with pytest.raises(ValueError, match="rank"):
        BalancedChunkSampler([], rank=2, world_size=2)


def test_string_labels_accepted(tmp_path):
    rows = _rows(tmp_path, n_conv=1)
    rows[0]["labels"] = [LABELS[i] for i in rows[0]["labels"]]
    ds = BalancedChunkSampler(rows)
    assert ds.conversations[0].labels.dtype == np.int64


def test_ignored_chunks_are_never_targets(tmp_path):
    rows = _rows(tmp_path, n_conv=1)
    rows[0]["labels"] = [-100 if i % 2 else lab for i, lab in enumerate(rows[0]["labels"])]
    ds = BalancedChunkSampler(rows, balance=ClassBalance(oversample=True))
    assert all(rows[0]["labels"][t + 1] >= 0 for _, t in ds.rank_indices())
    with pytest.raises(ValueError, match="out of range"):
        BalancedChunkSampler([{"conversation_id": "x", "audio_path": "x.wav", "labels": [0, 7]}])


def test_window_follows_a_shifted_chunk_grid(tmp_path):
    rows = _rows(tmp_path, n_conv=1)
    rows[0]["first_chunk_s"] = 0.2
    ex = BalancedChunkSampler(rows, context_s=1.0).example(0, 0)
    end = int(0.2 * SAMPLE_RATE) + SAMPLES_PER_CHUNK
    assert int(ex["attention_mask"].sum()) == end
    np.testing.assert_allclose(ex["input_values"][-1].item(), (end - 1) / 1e6, rtol=1e-6)
