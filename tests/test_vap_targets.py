"""VAP projection targets, codebook and zero-shot probabilities (beyond golden/vap_objective)."""
from __future__ import annotations

import numpy as np
import pytest

from turneval.dataset_scripts import vap_targets as vt


def random_runs(n_frames: int, seed: int) -> np.ndarray:
    """Voice activity made of random on/off runs of 1-60 frames per channel."""
    rng = np.random.default_rng(seed)
    va = np.zeros((n_frames, 2), dtype=np.int8)
    for c in range(2):
        t, on = 0, bool(rng.integers(2))
        while t < n_frames:
            length = int(rng.integers(1, 60))
            va[t : t + length, c] = on
            t, on = t + length, not on
    return va


def brute_force_bins(va: np.ndarray, bin_frames=(10, 20, 30, 40)) -> np.ndarray:
    """Direct transcription of the rule, one frame at a time."""
    horizon = sum(bin_frames)
    out = []
    for t in range(va.shape[0] - horizon):
        window = va[t + 1 : t + 1 + horizon]
        edges = np.cumsum((0,) + tuple(bin_frames))
        out.append([[int(window[edges[b] : edges[b + 1], s].sum() / bin_frames[b] >= 0.5) for b in range(len(bin_frames))] for s in range(2)])
    return np.asarray(out)


def test_layout_defaults() -> None:
    layout = vt.DEFAULT_LAYOUT
    assert layout.bin_frames == (10, 20, 30, 40)
    assert layout.horizon == 100
    assert layout.n_classes == 256
    assert vt.horizon_seconds() == 2.0
    assert layout.bin_edges.tolist() == [0, 10, 30, 60, 100]


def test_truncation_and_rounding_agree_on_defaults_but_not_everywhere() -> None:
    assert vt.bin_times_to_frames(rounding="truncate") == vt.bin_times_to_frames(rounding="round") == [10, 20, 30, 40]
    # float32(1.06) * 50 = 52.99999... : VAP truncates to 52, TurnNat rounds to 53.
    assert vt.bin_times_to_frames([1.06], 50, "truncate") == [52]
    assert vt.bin_times_to_frames([1.06], 50, "round") == [53]
    with pytest.raises(ValueError, match="rounding"):
        vt.bin_times_to_frames(rounding="floor")


def test_codebook_round_trip_and_bit_order() -> None:
    idx = np.arange(256)
    assert np.array_equal(vt.encode_bins(vt.decode_classes(idx)), idx)
    book = vt.codebook()
    assert book.shape == (256, 8)
    assert np.array_equal(book.reshape(256, 2, 4), vt.decode_classes(idx))
    assert vt.decode_classes(15).tolist() == [[1, 1, 1, 1], [0, 0, 0, 0]]
    assert vt.decode_classes(240).tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
    assert vt.decode_classes(195).tolist() == [[1, 1, 0, 0], [0, 0, 1, 1]]
    with pytest.raises(vt.VAPTargetError):
        vt.decode_classes(256)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_projection_windows_match_brute_force(seed: int) -> None:
    va = random_runs(260, seed)
    bins = vt.projection_windows(va)
    assert bins.shape == (160, 2, 4)
    assert np.array_equal(bins, brute_force_bins(va))
    labels = vt.vap_labels(va)
    assert np.array_equal(labels, vt.encode_bins(bins))
    padded = vt.padded_vap_labels(va)
    assert padded.shape == (260,)
    assert np.array_equal(padded[:160], labels)
    assert np.all(padded[160:] == vt.IGNORE_INDEX)


def test_window_starts_at_next_frame() -> None:
    # Only frame 0 and frames 101.. are active: frame 0's own activity is never in its window.
    va = np.zeros((150, 2), dtype=np.int8)
    va[0, 0] = 1
    assert vt.vap_labels(va)[0] == 0
    va = np.zeros((150, 2), dtype=np.int8)
    va[1:6, 1] = 1  # exactly half of speaker B's first bin
    assert vt.projection_windows(va)[0].tolist() == [[0, 0, 0, 0], [1, 0, 0, 0]]
    assert vt.vap_labels(va)[0] == 16


def test_short_input_raises_clear_error() -> None:
    with pytest.raises(vt.VAPTargetError, match="more than 100 frames"):
        vt.vap_labels(np.ones((100, 2)))
    assert np.all(vt.padded_vap_labels(np.ones((100, 2))) == vt.IGNORE_INDEX)
    with pytest.raises(vt.VAPTargetError, match=r"\[n_frames, 2\]"):
        vt.vap_labels(np.ones((300, 3)))


def test_window_dialog_states_count_speakers() -> None:
    bins = vt.decode_classes(np.array([0, 15, 240, 195, 1]))
    assert vt.window_dialog_states(bins).tolist() == [0, 1, 1, 2, 1]


def swap_speakers(probs: np.ndarray) -> np.ndarray:
    """Probabilities of the same futures with speakers A and B exchanged."""
    idx = np.arange(256)
    swapped = ((idx & 0x0F) << 4) | (idx >> 4)
    out = np.empty_like(probs)
    out[..., swapped] = probs
    return out


def test_speaker_aggregates_are_symmetric_and_normalised() -> None:
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(256, 0.3), size=20).astype(np.float32)
    for fn in (vt.p_now, vt.p_future, vt.p_tot):
        both = fn(probs, both_speakers=True)
        assert both.shape == (20, 2) and both.dtype == np.float32
        np.testing.assert_allclose(both.sum(-1), 1.0, atol=1e-4)
        np.testing.assert_allclose(fn(swap_speakers(probs)), both[:, 1], rtol=1e-5)
        np.testing.assert_array_equal(fn(probs), both[:, 0])
    assert vt.p_per_bin(probs).shape == (4, 20)
    agg = vt.aggregate_probs(probs)
    np.testing.assert_array_equal(agg["p_all"], vt.p_tot(probs))


def test_silence_mass_gives_zero_for_both_speakers() -> None:
    probs = np.zeros((1, 256), dtype=np.float32)
    probs[0, 0] = 1.0
    assert vt.p_now(probs, both_speakers=True).tolist() == [[0.0, 0.0]]


def test_aggregates_accept_batches() -> None:
    probs = np.random.default_rng(1).dirichlet(np.ones(256), size=(3, 7)).astype(np.float32)
    batched = vt.p_now(probs)
    assert batched.shape == (3, 7)
    np.testing.assert_array_equal(batched[1], vt.p_now(probs[1]))
    with pytest.raises(vt.VAPTargetError, match="256"):
        vt.p_now(np.ones((4, 255)))


def test_frame_nll_from_probs_and_logits() -> None:
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(12, 256)).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    labels = rng.integers(0, 256, size=10)
    labels[3] = vt.IGNORE_INDEX
    a = vt.frame_nll(probs, labels)
    b = vt.frame_nll_from_logits(logits, labels)
    assert a.shape == (10,) and np.isnan(a[3]) and np.isnan(b[3])
    np.testing.assert_allclose(a, b, rtol=1e-5, equal_nan=True)
    uniform = np.full((5, 256), 1 / 256, dtype=np.float32)
    np.testing.assert_allclose(vt.frame_nll(uniform, np.zeros(5, dtype=int)), np.log(256), rtol=1e-6)
    with pytest.raises(vt.VAPTargetError):
        vt.frame_nll(uniform, np.full(5, 300))


def test_batched_numpy_and_torch_labels_agree() -> None:
    torch = pytest.importorskip("torch")
    va = np.stack([random_runs(230, 10), random_runs(230, 11)])
    batched = vt.vap_labels(va)
    assert batched.shape == (2, 130)
    np.testing.assert_array_equal(batched[1], vt.vap_labels(va[1]))
    as_tensor = vt.vap_labels(torch.from_numpy(va).float())
    assert isinstance(as_tensor, torch.Tensor) and as_tensor.dtype == torch.int64
    np.testing.assert_array_equal(as_tensor.numpy(), batched)
    assert vt.padded_vap_labels(va).shape == (2, 230)
    with pytest.raises(vt.VAPTargetError, match="more than 100"):
        vt.vap_labels(torch.zeros(1, 100, 2))


def test_torch_aggregates_match_numpy() -> None:
    torch = pytest.importorskip("torch")
    probs = np.random.default_rng(3).dirichlet(np.ones(256), size=(2, 5)).astype(np.float32)
    for fn in (vt.p_now, vt.p_future, vt.p_tot, vt.p_per_bin):
        np.testing.assert_allclose(fn(torch.from_numpy(probs)).numpy(), fn(probs), rtol=1e-5)
