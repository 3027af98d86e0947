"""Training windows for the FutureActivityPredictor.

Each example is a random crop of a conversation: stereo audio, the voice activity of its
frames, the VAP class of the 2 s after every frame (computed from voice activity that runs past
the crop where the conversation goes on), and per-frame loss weights that put ``alpha`` on the
frames of turn-taking boundary units (TurnNat Eq. 5-6).

Voice-activity-only training (``input_type="vad"``) can start from voice activity alone
(:meth:`FutureActivityWindows.from_voice_activity`, e.g. Switchboard's cached word times):
no audio is needed. Two options make such a model ready for the activity a report gives it,
which comes from a VAD rather than from hand-corrected word times:

- ``vad_like_p``: the chance that a crop's whole activity track (past and future) is redrawn
  as a VAD would give it: per channel, edges moved by a few frames, short gaps bridged or
  short runs dropped (:func:`vad_like`);
- ``clean_labels``: targets and boundary units from the DualTurn-cleaned activity, the one
  the naturalness score compares the predictions with (``score_naturalness(clean=True)``).

A word-reading model (``vad_features="timing+words"`` or ``"timing+words+ends"``) also gets each crop's word cue track,
computed from the call's words on the crop's clock (channels swapped with the activity) exactly
as :meth:`FutureActivityPredictorModel.vad_inputs` computes it at run time
(:meth:`FutureActivityWindows.with_words`); with chance ``word_dropout_p`` a crop gets no words
(all-zero cues), as a recording without a transcript has none.

Examples are a pure function of (seed, index): a run resumed at step k draws exactly the
batches it would have drawn, with no data-loader state to save.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import soundfile as sf
import torch

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.grids import FRAME_HZ, SAMPLE_RATE, SAMPLES_PER_FRAME
from turneval.dataset_scripts.vap_targets import DEFAULT_LAYOUT, IGNORE_INDEX, padded_vap_labels
from turneval.metrics.turnnat_units import boundary_frame_mask, clean_vad, extract_utterance_units


def boundary_unit_mask(va: np.ndarray, frame_hz: int = FRAME_HZ) -> np.ndarray:
    """Frames [T] inside a turn-taking boundary unit of ``va`` ([T, 2] voice activity).

    The units are exactly the ones the naturalness score is computed on (utterance onsets and
    offsets, [boundary - 2 s, boundary]); training up-weights their frames (TurnNat Eq. 5-6).
    """
    va = np.asarray(va).astype(np.int8)
    units = extract_utterance_units(va, va.shape[0] / frame_hz, frame_hz)
    return boundary_frame_mask(units, va.shape[0], frame_hz)


def _shift(x: np.ndarray, k: int) -> np.ndarray:
    """``x`` moved by ``k`` frames (later for k > 0), zero-filled."""
    out = np.zeros_like(x)
    if k > 0:
        out[k:] = x[:-k]
    elif k < 0:
        out[:k] = x[-k:]
    else:
        out[:] = x
    return out


def _fill_runs(x: np.ndarray, value: int, shorter_than: int) -> np.ndarray:
    """Runs of ``value`` shorter than ``shorter_than`` frames, closed on both sides, set to ``1 - value``."""
    out = x.copy()
    change = np.flatnonzero(np.diff(x.astype(np.int8))) + 1
    bounds = np.concatenate([[0], change, [x.size]])
    for start, end in zip(bounds[:-1], bounds[1:]):
        if x[start] == value and 0 < start and end < x.size and end - start < shorter_than:
            out[start:end] = 1 - value
    return out


def vad_like(va: np.ndarray, rng: np.random.Generator, max_edge_frames: int = 3, max_gap_frames: int = 15) -> np.ndarray:
    """``va`` ([T, 2] 0/1) as a voice-activity detector might report it, one random draw per channel.

    Onsets move by -1..+2 frames (detection lag), offsets by -1..``max_edge_frames`` frames
    (hang-over), gaps shorter than 0..``max_gap_frames`` frames are bridged, and with chance
    0.3 runs under 3-7 frames are dropped. Deterministic for a given ``rng`` state.
    """
    out = np.asarray(va).astype(np.int8).copy()
    for ch in range(out.shape[1]):
        x = out[:, ch]
        onset_lag = int(rng.integers(-1, 3))  # > 0: speech detected late
        hangover = int(rng.integers(-1, max_edge_frames + 1))  # > 0: speech held after it ends
        starts = _shift(x, onset_lag)  # onsets move with the lag ...
        ends = _shift(x, hangover)  # ... offsets with the hang-over
        # [s, e) becomes [s + lag, e + hangover): the union of the two shifted copies when the
        # run grows, their intersection when it shrinks.
        x = (starts | ends) if onset_lag <= hangover else (starts & ends)
        gap = int(rng.integers(0, max_gap_frames + 1))
        if gap:
            x = _fill_runs(x, 0, gap)
        if rng.random() < 0.3:
            x = _fill_runs(x, 1, int(rng.integers(3, 8)))
        out[:, ch] = x
    return out


@dataclass
class WindowConfig:
    window_s: float = 20.0
    alpha: float = 2.0  # weight on boundary-unit frames
    channel_swap_p: float = 0.5
    mask_p: float = 0.2  # chance of masking one stretch of one channel (audio or VAD input)
    mask_max_s: float = 1.0
    vad_like_p: float = 0.0  # chance of redrawing a crop's activity as a VAD would report it (vad_like)
    clean_labels: bool = False  # targets and boundary units from the DualTurn-cleaned activity (as scored)
    word_dropout_p: float = 0.0  # word-reading models: chance that a crop has no words (all-zero cues)


class FutureActivityWindows(torch.utils.data.Dataset):
    """Random training crops from a list of dialogues; ``len`` is the number of draws per epoch."""

    def __init__(self, dialogues: list[Dialogue], config: WindowConfig, draws: int, seed: int = 0, input_type: str = "audio"):
        if not dialogues:
            raise ValueError("no dialogues to train on")
        self.dialogues = dialogues
        self.config = config
        self.draws = draws
        self.seed = seed
        self.input_type = input_type
        self.horizon = DEFAULT_LAYOUT.horizon
        self._va = [d.frame_activity().T for d in dialogues]  # [T, 2] each
        self._words = None
        weights = np.array([max(1e-3, d.duration) for d in dialogues])
        self._pick_p = weights / weights.sum()

    @classmethod
    def from_voice_activity(cls, voice_activity: list[np.ndarray], config: WindowConfig, draws: int, seed: int = 0) -> "FutureActivityWindows":
        """Voice-activity-only crops from ``[n_frames, 2]`` 50 Hz arrays (no dialogues, no audio)."""
        if not voice_activity:
            raise ValueError("no voice activity to train on")
        bad = [k for k, va in enumerate(voice_activity) if np.ndim(va) != 2 or np.shape(va)[1] != 2]
        if bad:
            raise ValueError(f"voice activity #{bad[0]} has shape {np.shape(voice_activity[bad[0]])}; expected [n_frames, 2]")
        self = cls.__new__(cls)
        self.dialogues, self.config, self.draws, self.seed, self.input_type = None, config, draws, seed, "vad"
        self._words = None
        self.horizon = DEFAULT_LAYOUT.horizon
        self._va = [np.asarray(va, dtype=np.int8) for va in voice_activity]
        weights = np.array([max(1, va.shape[0]) for va in self._va], dtype=np.float64)
        self._pick_p = weights / weights.sum()
        return self

    def with_words(self, calls: list[dict], cue) -> "FutureActivityWindows":
        """Give every crop its word cue track: ``calls`` as
        :func:`turneval.training.switchboard_words.load_words` returns them (one per activity array,
        same order), ``cue`` the model's :class:`WordTurnCue` (its weights). Returns ``self``."""
        if len(calls) != len(self._va):
            raise ValueError(f"{len(calls)} calls with words for {len(self._va)} activity arrays; pass the cache the activity came from")
        largest = max((int(np.max(b)) for call in calls for b in call["word_buckets"] if len(b)), default=-1)
        if largest >= cue.buckets:
            raise ValueError(f"the word cache has bucket {largest} but the model's cue has {cue.buckets} (word_cue_buckets); "
                             "build the cache with the model's bucket count")
        self._cue_hz = cue.frame_hz
        self._words = [([np.asarray(x, np.float64) for x in call["word_starts"]], [cue.bucket_logits(b) for b in call["word_buckets"]])
                       for call in calls]
        return self

    def _cue_track(self, index: int, frames: int, start_frame: int, swapped: bool, rng: np.random.Generator) -> np.ndarray:
        from turneval.modeling.modeling_future_activity_predictor import word_cue_track

        if rng.random() < self.config.word_dropout_p:
            return np.zeros((frames, 2), dtype=np.float32)
        starts, logits = self._words[index]
        starts = [x - start_frame / self._cue_hz for x in starts]
        if swapped:
            starts, logits = starts[::-1], logits[::-1]
        return word_cue_track(frames, starts, logits, self._cue_hz)

    def __len__(self) -> int:
        return self.draws

    def _audio(self, index: int, start_frame: int, frames: int) -> np.ndarray:
        d = self.dialogues[index]
        start, stop = start_frame * SAMPLES_PER_FRAME, (start_frame + frames) * SAMPLES_PER_FRAME
        if d.audio is not None:
            audio = d.audio[:, start:stop]
        else:
            audio, sr = sf.read(d.audio_path, start=start, stop=stop, dtype="float32", always_2d=True)
            if sr != SAMPLE_RATE:
                raise ValueError(f"{d.audio_path}: expected {SAMPLE_RATE} Hz audio for training, got {sr} Hz")
            audio = audio.T
        out = np.zeros((2, frames * SAMPLES_PER_FRAME), dtype=np.float32)
        out[:, : audio.shape[1]] = audio
        return out

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        rng = np.random.default_rng([self.seed, i])
        index = int(rng.choice(len(self._va), p=self._pick_p))
        va_full = self._va[index]
        frames = int(round(self.config.window_s * FRAME_HZ))
        start = int(rng.integers(0, max(1, va_full.shape[0] - frames // 2)))
        # Voice activity past the crop (when the conversation goes on) gives the last frames a label.
        va_ext = np.zeros((frames + self.horizon, 2), dtype=np.int8)
        part = va_full[start : start + frames + self.horizon]
        va_ext[: part.shape[0]] = part
        audio = self._audio(index, start, frames) if self.input_type == "audio" else None
        swapped = rng.random() < self.config.channel_swap_p
        if swapped:
            va_ext = va_ext[:, ::-1].copy()
            audio = audio[::-1].copy() if audio is not None else None
        if self.config.vad_like_p > 0 and rng.random() < self.config.vad_like_p:
            va_ext = vad_like(va_ext, rng)  # input and future alike: in a report both come from the VAD
        target_va = clean_vad(va_ext) if self.config.clean_labels else va_ext
        labels = padded_vap_labels(target_va)[:frames].astype(np.int64)
        # A label is only trustworthy when its whole 2 s future lies inside the conversation.
        labels[max(0, va_full.shape[0] - start - self.horizon) :] = IGNORE_INDEX
        va = va_ext[:frames]
        weights = np.where(boundary_unit_mask(target_va)[:frames], self.config.alpha, 1.0).astype(np.float32)
        inputs_va = va.astype(np.float32).copy()
        if rng.random() < self.config.mask_p:
            ch = int(rng.integers(0, 2))
            length = int(rng.integers(1, int(self.config.mask_max_s * FRAME_HZ) + 1))
            at = int(rng.integers(0, max(1, frames - length)))
            if audio is not None:
                audio[ch, at * SAMPLES_PER_FRAME : (at + length) * SAMPLES_PER_FRAME] = 0.0
            inputs_va[at : at + length, ch] = 0.0
        if self._words is not None:
            inputs_va = np.concatenate([inputs_va, self._cue_track(index, frames, start, swapped, rng)], axis=1)
        example = {
            "labels": torch.from_numpy(labels),
            "va_labels": torch.from_numpy(va.astype(np.float32)),
            "frame_weights": torch.from_numpy(weights),
        }
        if audio is not None:
            example["input_values"] = torch.from_numpy(audio)
        else:
            example["voice_activity"] = torch.from_numpy(inputs_va)
        return example
