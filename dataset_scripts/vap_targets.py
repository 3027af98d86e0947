"""The VAP training target: 256-class voice-activity projection windows (docs/naturalness.md).

For every 50 Hz frame t, VAP looks at the next two seconds of voice activity of both
speakers, ``va[t+1 : t+101]``, and cuts it into four bins per speaker whose *durations* are
0.2, 0.4, 0.6 and 0.8 s (10, 20, 30 and 40 frames). A bin is active when at least half of
its frames are active. The 8 bin activities (speaker A near->far, then speaker B near->far)
are the bits of one of 256 classes::

    bits[k] = (idx >> k) & 1      k = 0..3: speaker A, k = 4..7: speaker B

so 15 is "A in every bin", 240 "B in every bin" and 195 "A near, B far".

The same class probabilities give VAP's zero-shot turn-taking probabilities: ``p_now``
(bins 0-1), ``p_future`` (bins 2-3) and ``p_tot`` (all bins), the share of predicted
activity that belongs to each speaker.

Everything here is plain numpy; the label and aggregation functions also take torch
tensors, batched, and answer on the tensor's device (torch is imported only then), so the
training recipe computes targets on the GPU with the same code the report uses. A
self-contained model file can hold :func:`class_bit_matrix` as a fixed weight. The
arithmetic reproduces the reference ``VAPObjective`` of VoiceActivityProjection exactly,
float32 where the reference computes in float32 (see golden/vap_objective).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .grids import FRAME_HZ


BIN_TIMES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)
"""Bin durations in seconds (not edges): 0-200, 200-600, 600-1200, 1200-2000 ms."""

THRESHOLD_RATIO = 0.5
"""A bin is active when ``active_frames / bin_frames >= THRESHOLD_RATIO`` (inclusive)."""

IGNORE_INDEX = -100
"""Label of frames without a full 2 s future (PyTorch's cross-entropy ignore index)."""

N_SPEAKERS = 2

PROB_EPS = 1e-5
"""Added to the per-frame speaker total before normalising aggregated probabilities."""

BIT_ORDER = (
    "bits[k] = (idx >> k) & 1; k=0..3 -> speaker A (channel 0) bins 0..3 (nearest..farthest), "
    "k=4..7 -> speaker B (channel 1) bins 0..3"
)
"""How a class index maps to bin activities, in words."""


class VAPTargetError(ValueError):
    """The voice activity cannot produce VAP targets (wrong shape, too short, ...)."""


def bin_times_to_frames(
    bin_times: Sequence[float] = BIN_TIMES, frame_hz: int = FRAME_HZ, rounding: str = "truncate"
) -> list[int]:
    """Bin durations in frames.

    Args:
        bin_times: bin durations in seconds.
        frame_hz: frame rate.
        rounding: ``"truncate"`` as VAP (``int(float32(t) * hz)``) or ``"round"`` as TurnNat.
            Both give [10, 20, 30, 40] for the default bins at 50 Hz.
    """
    if rounding == "truncate":
        # VAP multiplies a float32 tensor and truncates with .long().
        frames = [int(np.float32(t) * np.float32(frame_hz)) for t in bin_times]
    elif rounding == "round":
        frames = [int(round(float(t) * frame_hz)) for t in bin_times]
    else:
        raise ValueError(f"rounding must be 'truncate' or 'round', got {rounding!r}")
    if any(f <= 0 for f in frames):
        raise ValueError(f"every bin must span at least one frame; bin_times {list(bin_times)} give {frames}")
    return frames


@dataclass(frozen=True)
class ProjectionLayout:
    """The bin layout of the projection window.

    Attributes:
        bin_frames: frames per bin, nearest bin first.
        threshold_ratio: fraction of active frames that makes a bin active (``>=``).
    """

    bin_frames: tuple[int, ...] = tuple(bin_times_to_frames())
    threshold_ratio: float = THRESHOLD_RATIO

    @classmethod
    def from_times(
        cls,
        bin_times: Sequence[float] = BIN_TIMES,
        frame_hz: int = FRAME_HZ,
        threshold_ratio: float = THRESHOLD_RATIO,
        rounding: str = "truncate",
    ) -> "ProjectionLayout":
        return cls(tuple(bin_times_to_frames(bin_times, frame_hz, rounding)), threshold_ratio)

    @property
    def n_bins(self) -> int:
        return len(self.bin_frames)

    @property
    def horizon(self) -> int:
        """Frames of future one label needs (100 for the default bins)."""
        return int(sum(self.bin_frames))

    @property
    def n_classes(self) -> int:
        return 2 ** (N_SPEAKERS * self.n_bins)

    @property
    def bin_edges(self) -> np.ndarray:
        """Frame offsets of the bin boundaries inside the window, ``[0, 10, 30, 60, 100]``."""
        return np.concatenate([[0], np.cumsum(self.bin_frames)]).astype(np.int64)


DEFAULT_LAYOUT = ProjectionLayout()


# ---------------------------------------------------------------------------------------
# Codebook
# ---------------------------------------------------------------------------------------
def codebook(n_bins: int = DEFAULT_LAYOUT.n_bins) -> np.ndarray:
    """All class codes as bits, ``[2**(2*n_bins), 2*n_bins]`` int8; row i is class i."""
    n_bits = N_SPEAKERS * n_bins
    idx = np.arange(2**n_bits, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n_bits)) & 1).astype(np.int8)


def decode_classes(idx, n_bins: int = DEFAULT_LAYOUT.n_bins) -> np.ndarray:
    """Class indices ``[...]`` to bin activities ``[..., 2, n_bins]`` (int8)."""
    idx = np.asarray(idx, dtype=np.int64)
    n_bits = N_SPEAKERS * n_bins
    if idx.size and (idx.min() < 0 or idx.max() >= 2**n_bits):
        raise VAPTargetError(f"class indices must lie in [0, {2**n_bits}), got min {idx.min()} max {idx.max()}")
    bits = (idx[..., None] >> np.arange(n_bits)) & 1
    return bits.reshape(*idx.shape, N_SPEAKERS, n_bins).astype(np.int8)


def encode_bins(bins):
    """Bin activities ``[..., 2, n_bins]`` (0/1) to class indices ``[...]`` (int64).

    For binary input this is exactly VAP's nearest-code search. Torch input gives torch output.
    """
    if _is_torch(bins):
        import torch

        flat = (bins.flatten(-2) > 0).to(torch.int64)
        return (flat << torch.arange(flat.shape[-1], device=flat.device)).sum(dim=-1)
    bins = np.asarray(bins)
    if bins.ndim < 2 or bins.shape[-2] != N_SPEAKERS:
        raise VAPTargetError(f"bins must have shape [..., 2, n_bins], got {bins.shape}")
    n_bins = bins.shape[-1]
    flat = (bins.reshape(*bins.shape[:-2], N_SPEAKERS * n_bins) > 0).astype(np.int64)
    return (flat << np.arange(N_SPEAKERS * n_bins)).sum(axis=-1)


def class_bit_matrix(layout: ProjectionLayout = DEFAULT_LAYOUT) -> np.ndarray:
    """Codebook reshaped to ``[n_classes, 2, n_bins]`` float32 (a fixed model weight)."""
    return decode_classes(np.arange(layout.n_classes), layout.n_bins).astype(np.float32)


# ---------------------------------------------------------------------------------------
# Labels from voice activity
# ---------------------------------------------------------------------------------------
def _check_va(va) -> np.ndarray:
    va = np.asarray(va)
    if va.ndim < 2 or va.shape[-1] != N_SPEAKERS:
        raise VAPTargetError(f"voice activity must have shape [n_frames, 2] (or [batch, n_frames, 2]), got {va.shape}")
    if va.size and not np.all(np.isfinite(va.astype(np.float64))):
        raise VAPTargetError("voice activity contains NaN or inf")
    return va


def _too_short(n_frames: int, horizon: int) -> VAPTargetError:
    return VAPTargetError(
        f"VAP labels need more than {horizon} frames ({horizon / FRAME_HZ:g} s of future after the "
        f"first frame); got {n_frames}. Pass voice activity that extends {horizon} frames past the "
        "last frame you want labelled."
    )


def projection_windows(va, layout: ProjectionLayout = DEFAULT_LAYOUT):
    """Bin activities of the future window of every labelled frame.

    Args:
        va: voice activity ``[T, 2]`` or ``[batch, T, 2]`` (0/1; fractional values are
            averaged like VAP does). A torch tensor gives a torch result on its device.
        layout: the bin layout (default 10/20/30/40 frames).

    Returns:
        ``[..., T - horizon, 2, n_bins]`` (int8 for numpy): entry ``[t, s, b]`` says whether
        speaker s is active in bin b of the window ``va[t+1 : t+1+horizon]`` (the window
        starts at the *next* frame).

    Raises:
        VAPTargetError: when ``T <= horizon`` (no frame has a full future window).
    """
    if _is_torch(va):
        return _projection_windows_torch(va, layout)
    va = _check_va(va)
    n_frames = va.shape[-2]
    n_labels = n_frames - layout.horizon
    if n_labels <= 0:
        raise _too_short(n_frames, layout.horizon)
    # Cumulative sums give every bin sum in O(T): sum(va[a:b]) = cs[b] - cs[a].
    zeros = np.zeros(va.shape[:-2] + (1, N_SPEAKERS))
    cs = np.concatenate([zeros, np.cumsum(va.astype(np.float64), axis=-2)], axis=-2)
    t = np.arange(n_labels)
    bins = np.empty(va.shape[:-2] + (n_labels, N_SPEAKERS, layout.n_bins), dtype=np.int8)
    edges = layout.bin_edges
    for b, size in enumerate(layout.bin_frames):
        ratio = (cs[..., t + 1 + edges[b + 1], :] - cs[..., t + 1 + edges[b], :]) / size
        # VAP compares sum / bin_len >= threshold, inclusive at exactly one half.
        bins[..., b] = (ratio.astype(np.float32) >= np.float32(layout.threshold_ratio)).astype(np.int8)
    return bins


def _is_torch(x) -> bool:
    # torch stays optional: only look for it when the caller already passes a tensor.
    return type(x).__module__.startswith("torch")


def _projection_windows_torch(va, layout: ProjectionLayout):
    import torch

    if va.ndim < 2 or va.shape[-1] != N_SPEAKERS:
        raise VAPTargetError(f"voice activity must have shape [..., n_frames, 2], got {tuple(va.shape)}")
    n_frames = va.shape[-2]
    n_labels = n_frames - layout.horizon
    if n_labels <= 0:
        raise _too_short(n_frames, layout.horizon)
    va = va.to(torch.float64)
    zeros = torch.zeros(va.shape[:-2] + (1, N_SPEAKERS), dtype=va.dtype, device=va.device)
    cs = torch.cat([zeros, va.cumsum(dim=-2)], dim=-2)
    t = torch.arange(n_labels, device=va.device)
    edges = layout.bin_edges.tolist()
    out = []
    for b, size in enumerate(layout.bin_frames):
        ratio = (cs[..., t + 1 + edges[b + 1], :] - cs[..., t + 1 + edges[b], :]) / size
        out.append(ratio >= layout.threshold_ratio)
    return torch.stack(out, dim=-1).to(torch.int8)


def vap_labels(va, layout: ProjectionLayout = DEFAULT_LAYOUT):
    """VAP class index of every frame that has a full future window, ``[..., T - horizon]`` (int64).

    Accepts numpy or torch input, with or without a batch dimension.
    """
    return encode_bins(projection_windows(va, layout))


def window_dialog_states(bins) -> np.ndarray:
    """Number of speakers (0, 1, 2) with at least one active bin, per window ``[N]``."""
    bins = np.asarray(bins)
    return (bins.sum(axis=-1) > 0).sum(axis=-1).astype(np.int64)


def padded_vap_labels(va, layout: ProjectionLayout = DEFAULT_LAYOUT, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
    """Labels over all T frames, TurnNat style: the last ``horizon`` frames get ``ignore_index``.

    Unlike :func:`vap_labels` this never raises for short input: every frame is ignored.
    """
    va = _check_va(va)
    n_frames = va.shape[-2]
    out = np.full(va.shape[:-1], ignore_index, dtype=np.int64)
    if n_frames > layout.horizon:
        out[..., : n_frames - layout.horizon] = vap_labels(va, layout)
    return out


# ---------------------------------------------------------------------------------------
# Zero-shot probabilities from the 256-way distribution
# ---------------------------------------------------------------------------------------
def _check_probs(probs, layout: ProjectionLayout) -> np.ndarray:
    probs = np.asarray(probs, dtype=np.float32)
    if probs.ndim < 1 or probs.shape[-1] != layout.n_classes:
        raise VAPTargetError(f"probs must have shape [..., {layout.n_classes}], got {probs.shape}")
    return probs


def speaker_bin_probs(
    probs,
    bins: Sequence[int] = (0, 3),
    scale_with_bins: bool = False,
    layout: ProjectionLayout = DEFAULT_LAYOUT,
    eps: float = PROB_EPS,
) -> np.ndarray:
    """Share of predicted activity per speaker over an inclusive bin range, ``[..., 2]``.

    Numpy or torch input (a torch tensor gives a tensor on its device).

    For each class the speaker's active bins in ``bins[0]..bins[-1]`` are counted (weighted
    by bin length with ``scale_with_bins``); the expectation under ``probs`` is normalised
    over the two speakers with ``p / (p_A + p_B + eps)``. Computed in float32 like VAP, so
    mass on silence (class 0) gives 0 for both speakers rather than 0.5.

    Args:
        probs: class probabilities ``[..., n_classes]``.
        bins: first and last bin of the range (inclusive), e.g. (0, 1) for p_now.
        scale_with_bins: weight each bin by its number of frames.
        layout: the bin layout.
        eps: added to the denominator.
    """
    lo, hi = int(bins[0]), int(bins[-1])
    if not 0 <= lo <= hi < layout.n_bins:
        raise ValueError(f"bins must satisfy 0 <= first <= last < {layout.n_bins}, got {tuple(bins)}")
    states = class_bit_matrix(layout)
    if scale_with_bins:
        states = states * np.asarray(layout.bin_frames, dtype=np.float32)
    per_class = states[:, :, lo : hi + 1].sum(axis=-1)  # [n_classes, 2]
    if _is_torch(probs):
        import torch

        if probs.shape[-1] != layout.n_classes:
            raise VAPTargetError(f"probs must have shape [..., {layout.n_classes}], got {tuple(probs.shape)}")
        p = probs.to(torch.float32) @ torch.from_numpy(per_class).to(probs.device)
        return p / (p.sum(dim=-1, keepdim=True) + eps)
    probs = _check_probs(probs, layout)
    p = probs @ per_class
    return (p / (p.sum(axis=-1, keepdims=True) + np.float32(eps))).astype(np.float32)


def _select(p: np.ndarray, both_speakers: bool) -> np.ndarray:
    # VAP's newMaster returns speaker A only (the aggregate is symmetric); main returns both.
    return p if both_speakers else p[..., 0]


def p_now(probs, both_speakers: bool = False, scale_with_bins: bool = False, layout: ProjectionLayout = DEFAULT_LAYOUT) -> np.ndarray:
    """Probability that each speaker is the one active in the near future (bins 0-1).

    Returns ``[...]`` for speaker A (VAP newMaster) or ``[..., 2]`` with ``both_speakers``.
    """
    return _select(speaker_bin_probs(probs, (0, 1), scale_with_bins, layout), both_speakers)


def p_future(probs, both_speakers: bool = False, scale_with_bins: bool = False, layout: ProjectionLayout = DEFAULT_LAYOUT) -> np.ndarray:
    """As :func:`p_now` over the far bins (2 to the last)."""
    return _select(speaker_bin_probs(probs, (2, layout.n_bins - 1), scale_with_bins, layout), both_speakers)


def p_tot(probs, both_speakers: bool = False, scale_with_bins: bool = False, layout: ProjectionLayout = DEFAULT_LAYOUT) -> np.ndarray:
    """As :func:`p_now` over every bin."""
    return _select(speaker_bin_probs(probs, (0, layout.n_bins - 1), scale_with_bins, layout), both_speakers)


def p_per_bin(probs, both_speakers: bool = False, layout: ProjectionLayout = DEFAULT_LAYOUT) -> np.ndarray:
    """Per-bin speaker share, ``[n_bins, ...]`` (speaker A) or ``[n_bins, ..., 2]``."""
    per_bin = [_select(speaker_bin_probs(probs, (b, b), layout=layout), both_speakers) for b in range(layout.n_bins)]
    if _is_torch(probs):
        import torch

        return torch.stack(per_bin)
    return np.stack(per_bin)


def aggregate_probs(probs, layout: ProjectionLayout = DEFAULT_LAYOUT) -> dict[str, np.ndarray]:
    """VAP's ``aggregate_probs``: ``p_now``, ``p_future``, ``p_all`` and per-bin ``p`` (speaker A)."""
    return {
        "p_now": p_now(probs, layout=layout),
        "p_future": p_future(probs, layout=layout),
        "p_all": p_tot(probs, layout=layout),
        "p": p_per_bin(probs, layout=layout),
    }


def frame_nll(probs, labels, ignore_index: int = IGNORE_INDEX, min_prob: float = 0.0) -> np.ndarray:
    """Per-frame negative log-likelihood of the observed class, float32.

    Args:
        probs: predicted class probabilities ``[T, n_classes]``.
        labels: observed classes ``[N]`` with ``N <= T`` (frame i of both is the same time);
            ``ignore_index`` marks frames without a label.
        ignore_index: label value that gives NaN.
        min_prob: floor applied before the log (0 lets a zero probability give inf).

    Returns:
        ``[N]`` float32, NaN where the label is ignored.
    """
    probs = np.asarray(probs, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.int64)
    if probs.ndim != 2:
        raise VAPTargetError(f"probs must have shape [T, n_classes], got {probs.shape}")
    if labels.ndim != 1 or labels.shape[0] > probs.shape[0]:
        raise VAPTargetError(f"labels must be [N] with N <= {probs.shape[0]} (frames of probs), got {labels.shape}")
    valid = labels != ignore_index
    if np.any(labels[valid] < 0) or np.any(labels[valid] >= probs.shape[1]):
        raise VAPTargetError(f"labels must lie in [0, {probs.shape[1]}) or equal {ignore_index}")
    out = np.full(labels.shape[0], np.nan, dtype=np.float32)
    picked = probs[np.flatnonzero(valid), labels[valid]]
    with np.errstate(divide="ignore"):
        out[valid] = -np.log(np.maximum(picked, np.float32(min_prob)))
    return out


def frame_nll_from_logits(logits, labels, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
    """As :func:`frame_nll` from unnormalised logits, with a stable float32 log-softmax."""
    logits = np.asarray(logits, dtype=np.float32)
    if logits.ndim != 2:
        raise VAPTargetError(f"logits must have shape [T, n_classes], got {logits.shape}")
    labels = np.asarray(labels, dtype=np.int64)
    if labels.ndim != 1 or labels.shape[0] > logits.shape[0]:
        raise VAPTargetError(f"labels must be [N] with N <= {logits.shape[0]}, got {labels.shape}")
    logits = logits[: labels.shape[0]]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1))
    valid = labels != ignore_index
    out = np.full(labels.shape[0], np.nan, dtype=np.float32)
    rows = np.flatnonzero(valid)
    out[valid] = log_z[rows] - shifted[rows, labels[valid]]
    return out


def horizon_seconds(layout: ProjectionLayout = DEFAULT_LAYOUT, frame_hz: int = FRAME_HZ) -> float:
    """Length of the projection window in seconds (2.0 by default)."""
    return layout.horizon / frame_hz


__all__ = [
    "BIN_TIMES",
    "BIT_ORDER",
    "DEFAULT_LAYOUT",
    "IGNORE_INDEX",
    "PROB_EPS",
    "THRESHOLD_RATIO",
    "ProjectionLayout",
    "VAPTargetError",
    "aggregate_probs",
    "bin_times_to_frames",
    "class_bit_matrix",
    "codebook",
    "decode_classes",
    "encode_bins",
    "frame_nll",
    "frame_nll_from_logits",
    "horizon_seconds",
    "p_future",
    "p_now",
    "p_per_bin",
    "p_tot",
    "padded_vap_labels",
    "projection_windows",
    "speaker_bin_probs",
    "vap_labels",
    "window_dialog_states",
]
