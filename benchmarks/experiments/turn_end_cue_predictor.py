"""Does a real-speech turn-end cue help the naturalness predictor? smart-turn v3.2 per IPU, on real calls and on Switchboard.

    python benchmarks/experiments/turn_end_cue_predictor.py calibrate [--json OUT]
    python benchmarks/experiments/turn_end_cue_predictor.py fit-gru --train CACHE/swb_words_train.npz --val CACHE/swb_words_val.npz \
        --out TE/gru.pt   # only for --source gru
    python benchmarks/experiments/turn_end_cue_predictor.py cache --words CACHE/swb_words_train.npz --out TE/train.npz \
        [--source words | --source gru --gru TE/gru.pt --fitted-on]
    python benchmarks/experiments/turn_end_cue_predictor.py cache --words CACHE/swb_words_val.npz --out TE/val.npz \
        [--source words | --source gru --gru TE/gru.pt]
    python benchmarks/experiments/turn_end_cue_predictor.py init --out TE/init
    python -m turneval.training.train_future_activity --init_from TE/init --train_words TE/train.npz --val_words TE/val.npz \\
        --output_dir TE/run --input_type vad --max_train_steps 600 --per_device_train_batch_size 32 --window_s 20 \\
        --learning_rate 1e-3 --num_warmup_steps 50 --vad_like_p 0.5 --mask_p 0 --clean_labels --word_dropout_p 0.25 --cpu
    python benchmarks/experiments/turn_end_cue_predictor.py real-pairs --predictor TE/run/final [--whisper]
    python benchmarks/experiments/turn_end_cue_predictor.py swb-pairs --predictor TE/run/final --swb-root SWB --splits SPLITS \
        [--source words | --source gru --gru TE/gru.pt]

The ceiling experiment (``turn_final_cue_ceiling.py``) says the look-ahead predictor needs a
turn-completion cue far stronger than the last words' regression. smart-turn v3.2 heard real
speech: at the end of every inter-pausal unit (IPU, gaps under 0.2 s merged) of the real
SpokenWOZ calls it tells a turn end (the other side speaks before the speaker goes on) from a
hold at ROC-AUC 0.78, where the word cue is at chance on those calls. Here the look-ahead
predictor reads, per speaker, one cue per IPU: its log-odds from the IPU's last second (the
look-ahead's horizon: ``end_lookahead_s``) until the speaker's next IPU, 0 before that.

* ``calibrate``: smart-turn's logit at the IPU ends of the SpokenWOZ calls with audio (the
  speaker's own channel, the last 8 s up to 200 ms after the IPU, as pipecat asks it; IPUs from
  the report's VAD), its mean and sd per truth: :data:`CALIBRATION`, the four numbers declared.
* ``cache``: a copy of a Switchboard word cache whose "words" are the cue's entries. Switchboard
  has no audio, so ``--source smart-turn`` draws each IPU's cue from the calibration's normal for
  its truth (one draw per IPU, seed 0); ``--source words`` reads the IPU's last word's log-odds
  from the bundled word-reading predictor's cue (real words, no simulation); ``--source gru`` asks
  a GRU over the speaker's last 24 words up to the IPU's end (``fit-gru``: fitted on the train
  IPUs; the train cache gets each IPU's cue from a fold that never saw it). The values travel
  as buckets of :data:`QUANTUM` log-odds (:func:`value_bucket`), which the widened predictor's
  cue table reads back (:func:`bucket_weights`).
* ``init``: the bundled look-ahead predictor widened to read the cue (warm start, cue weights 0).
* ``real-pairs``: the real-call perturbation pairs of ``benchmarks/validation/real_perturbations.py`` (real
  audio cut and pasted; ``--whisper``: the edits place themselves by Whisper tiny.en's words,
  which lets the AMI channel pairs host the word-reading types), each clip heard by the VAD,
  its IPUs judged by smart-turn on the clip's own audio, scored by the cue-reading predictor,
  the same predictor without its cue, the bundled look-ahead predictor and the silence timer.
* ``swb-pairs``: the Switchboard test pairs (``predictor_switchboard.py``'s), each word tagged
  with its IPU's cue in the natural call so an edit moves the cue with the speech (a turn
  inserted into a pause keeps the "hold" the speaker's voice said); ``--source words`` and
  ``--source gru`` compute the cue from the edited clip's words instead.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent, HERE.parent / "validation"):  # its own, the shared helpers, the validation scripts it reuses
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import limit_threads  # noqa: E402
from turn_final_cue_ceiling import FRAME_HZ, ipu_truth, switchboard_pair_wins, tag_words_by_ipu, untag_words  # noqa: E402

from turneval.checkpoints import bundled_root  # noqa: E402


CALIBRATION: dict[str, tuple[float, float]] = {"shift": (1.47, 2.61), "hold": (-1.73, 3.09)}
"""smart-turn v3.2's logit (mean, sd) at the 96 VAD IPU ends of the 3 SpokenWOZ calls with audio,
by truth (75 turn ends, 21 holds; ROC-AUC 0.777): ``calibrate`` measured it on 2026-11-26."""
QUANTUM = 0.1
"""Cue values travel through a word cache as buckets this many log-odds wide."""


def _clip() -> float:
    from turneval.modeling.modeling_future_activity_predictor import WORD_CUE_CLIP

    return WORD_CUE_CLIP


# -- the cue's layout ----------------------------------------------------------------------------
def cue_entries(ipus: Sequence[tuple[float, float, float]], lookahead_s: float) -> list[tuple[float, float]]:
    """``(time, value)`` steps of one speaker's cue track for ``(start, end, log-odds)`` IPUs: 0
    from each IPU's start, its log-odds from ``max(start, end - lookahead_s)`` (clipped to the
    word cue's range) until the next IPU starts. The steps are what ``word_cue_track`` reads."""
    clip, out = _clip(), []
    for start, end, value in ipus:
        shown = max(start, end - lookahead_s)
        if shown - start >= 1.0 / FRAME_HZ:
            out.append((start, 0.0))
        out.append((shown, float(np.clip(value, -clip, clip))))
    return out


def value_bucket(value: float) -> int:
    """The bucket that carries ``value`` (0 and 1 are left to the ceiling experiment's layout)."""
    clip = _clip()
    return 2 + int(round((float(np.clip(value, -clip, clip)) + clip) / QUANTUM))


def bucket_weights(buckets: int = 65536) -> np.ndarray:
    """A word cue table that reads :func:`value_bucket`'s buckets back (a "word" sums three equal buckets; bias 0)."""
    clip = _clip()
    weights = np.zeros(buckets + 1, np.float32)
    steps = int(round(2 * clip / QUANTUM))
    weights[2 : steps + 3] = (np.arange(steps + 1) * QUANTUM - clip) / 3
    return weights


def read_cue_values(model):
    """Make ``model``'s word cue read :func:`with_cue` entries (``cue=<log-odds>``) instead of words."""
    def word_logits(texts: Sequence[str]):
        return np.arange(len(texts)), np.array([float(t.split("=", 1)[1]) for t in texts], dtype=np.float64)

    model.word_cue.word_logits = word_logits
    return model


def with_cue(dialogue, ipus: Sequence[Sequence[tuple[float, float, float]]], lookahead_s: float):
    """``dialogue`` with its words replaced by the cue entries of per-speaker IPUs (:func:`read_cue_values`)."""
    from turneval.dataset_scripts.dialogue import Word

    return replace(dialogue, words=[[Word(t, t, f"cue={v:.4f}") for t, v in cue_entries(side, lookahead_s)] for side in ipus])


# -- the cue's sources ---------------------------------------------------------------------------
def speaker_ipus(dialogue, c: int, duration: float | None = None) -> list[tuple[float, float, bool]]:
    """``ipu_truth`` of speaker ``c`` of a Dialogue (over ``duration``, default the dialogue's)."""
    return ipu_truth(dialogue.segments[c], dialogue.segments[1 - c], float(dialogue.duration if duration is None else duration))


def smart_turn_logit(channel: np.ndarray, end: float, judge) -> float:
    """smart-turn's logit at an IPU ending at ``end`` s, as pipecat asks it: the speaker's own
    channel until ``VAD_STOP_S`` after the IPU, the last ``WINDOW_S`` of it."""
    from turneval.smart_turn import SAMPLE_RATE, VAD_STOP_S, WINDOW_S

    heard_to = min(end + VAD_STOP_S, channel.shape[0] / SAMPLE_RATE)
    p = min(max(judge.probability(channel[int(max(0.0, heard_to - WINDOW_S) * SAMPLE_RATE) : int(heard_to * SAMPLE_RATE)]), 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def smart_turn_ipus(dialogue, judge) -> list[list[tuple[float, float, float]]]:
    """Per speaker ``(start, end, smart-turn logit)`` of each IPU of a stereo Dialogue with audio."""
    from turneval.smart_turn import SAMPLE_RATE

    duration = dialogue.audio.shape[1] / SAMPLE_RATE
    return [[(start, end, smart_turn_logit(dialogue.audio[c], end, judge)) for start, end, _ in speaker_ipus(dialogue, c, duration)]
            for c in (0, 1)]


def last_word_ipus(ipus: Sequence[tuple[float, float, Any]], word_starts: np.ndarray,
                   word_values: np.ndarray) -> list[tuple[float, float, float]]:
    """``(start, end, value of the IPU's last word)`` of one speaker's IPUs (0 for an IPU without words)."""
    out = []
    for start, end, _ in ipus:
        inside = np.flatnonzero((word_starts >= start - 0.05) & (word_starts < end))
        out.append((start, end, float(word_values[inside[-1]]) if inside.size else 0.0))
    return out


def word_ipus(dialogue, word_cue) -> list[list[tuple[float, float, float]]]:
    """Per speaker the IPUs of ``dialogue`` with their last word's log-odds from ``word_cue``."""
    out = []
    for c in (0, 1):
        spoken = sorted(dialogue.words[c] if dialogue.words else [], key=lambda w: (w.start, w.end))
        kept, logits = word_cue.word_logits([w.text for w in spoken])
        starts = np.array([spoken[i].start for i in kept], dtype=np.float64)
        out.append(last_word_ipus(speaker_ipus(dialogue, c), starts, logits))
    return out


def calibration_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per truth the mean and sd of the logits of ``rows`` (``{"shift": bool, "logit": float}``), and the ROC-AUC."""
    from sklearn.metrics import roc_auc_score

    y = np.array([r["shift"] for r in rows], bool)
    x = np.array([r["logit"] for r in rows], np.float64)
    out = {"ipus": int(y.size), "shifts": int(y.sum())}
    for name, mask in (("shift", y), ("hold", ~y)):
        out[name] = [round(float(x[mask].mean()), 2), round(float(x[mask].std()), 2)]
    out["roc_auc"] = round(float(roc_auc_score(y, x)), 3) if 0 < y.sum() < y.size else math.nan
    return out


def calibrate() -> dict[str, Any]:
    """smart-turn's logits at the IPU ends of the SpokenWOZ calls with audio (:data:`CALIBRATION`)."""
    from _spokenwoz import load_calls

    from turneval.smart_turn import SAMPLE_RATE, SmartTurnV3

    judge, rows = SmartTurnV3(threads=2), []
    for dialogue in load_calls():
        duration = dialogue.audio.shape[1] / SAMPLE_RATE
        for c in (0, 1):
            # an IPU cut by the recording's end has no truth
            rows += [{"call": dialogue.id, "shift": shift, "logit": smart_turn_logit(dialogue.audio[c], end, judge)}
                     for _, end, shift in speaker_ipus(dialogue, c, duration) if end <= duration - 0.5]
    return {**calibration_summary(rows), "rows": rows}


# -- a stronger text cue: a GRU over the speaker's last words --------------------------------------
GRU_WORDS, GRU_BEFORE = 24, 12
"""The GRU reads at most this many words: the unit's, after up to ``GRU_BEFORE`` of the speaker's words before it."""
_MARK, _PAD = 65536, 65537
"""Token ids beside the 65,536 word buckets: the unit's start, and padding."""


def gru_sequences(word_starts: np.ndarray, tokens: np.ndarray, ipus: Sequence[tuple[float, float, Any]]) -> np.ndarray:
    """``[n, GRU_WORDS]`` token ids per IPU: the speaker's words before it, a start mark, its words (left-padded)."""
    out = np.full((len(ipus), GRU_WORDS), _PAD, np.int64)
    for k, (start, end, _) in enumerate(ipus):
        first = int(np.searchsorted(word_starts, start - 0.05))
        last = int(np.searchsorted(word_starts, end, side="left"))
        seq = [_MARK] if last <= first else [*tokens[max(0, first - GRU_BEFORE) : first], _MARK, *tokens[first:last]]
        seq = seq[-GRU_WORDS:]
        out[k, GRU_WORDS - len(seq) :] = seq
    return out


def gru_cue_model():
    """Embedding (64) -> GRU (128) -> the log-odds that the IPU is turn-final, from its last token."""
    import torch
    from torch import nn

    class GruTurnEndCue(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(_PAD + 1, 64, padding_idx=_PAD)
            self.gru = nn.GRU(64, 128, batch_first=True)
            self.out = nn.Linear(128, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h, _ = self.gru(self.embed(x))
            return self.out(h[:, -1]).squeeze(-1)

    return GruTurnEndCue()


def gru_scores(model, sequences: np.ndarray) -> np.ndarray:
    import torch

    model.eval()
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(sequences[i : i + 4096])).numpy() for i in range(0, len(sequences), 4096)] or [np.zeros(0)])


def fit_gru(sequences: np.ndarray, labels: np.ndarray, seed: int, epochs: int = 2):
    """The GRU fitted on ``sequences`` (batch 256, Adam 2e-3; two epochs: the third lowered the val ROC-AUC)."""
    import torch

    torch.manual_seed(seed)
    model, x, y = gru_cue_model(), torch.from_numpy(sequences), torch.from_numpy(labels.astype(np.float32))
    optimizer = torch.optim.Adam(model.parameters(), 2e-3)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(x))
        for i in range(0, len(x), 256):
            batch = order[i : i + 256]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def call_ipus(call: dict) -> list[tuple[list, np.ndarray, np.ndarray]]:
    """Per side of a word-cache call: (its IPUs with their truth, word starts, word tokens)."""
    from turneval.dataset_scripts.grids import activity_to_segments

    va = call["va"]
    duration = va.shape[0] / FRAME_HZ
    segments = [activity_to_segments(va[:, c], FRAME_HZ) for c in (0, 1)]
    out = []
    for c in (0, 1):
        buckets = np.asarray(call["word_buckets"][c]).reshape(-1, 3)
        out.append((ipu_truth(segments[c], segments[1 - c], duration), np.asarray(call["word_starts"][c], np.float64), buckets[:, 0].astype(np.int64)))
    return out


def gru_data(words_cache: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Every IPU of a word cache: its token sequence and its truth."""
    from turneval.training.switchboard_words import load_words

    xs, ys = [], []
    for call in load_words(words_cache):
        for ipus, starts, tokens in call_ipus(call):
            xs.append(gru_sequences(starts, tokens, ipus))
            ys.append(np.array([t[2] for t in ipus], bool))
    return np.concatenate(xs), np.concatenate(ys)


def fit_gru_cue(train_cache: str | Path, val_cache: str | Path, out: str | Path) -> dict[str, Any]:
    """The GRU on every train IPU (seed 0), and each train IPU's cue from a GRU that never saw it
    (two folds, seeds 0 and 1): a predictor trained on in-sample cues learns to trust them too much
    (ROC-AUC 0.847 in sample against 0.80 out of fold). Writes ``out`` (.pt: the weights and the train cues)."""
    import torch
    from sklearn.metrics import roc_auc_score

    x, y = gru_data(train_cache)
    xv, yv = gru_data(val_cache)
    model = fit_gru(x, y, seed=0)
    half, out_of_fold = len(y) // 2, np.zeros(len(y), np.float32)
    for fold, (a, b) in enumerate([(0, half), (half, len(y))]):
        keep = np.ones(len(y), bool)
        keep[a:b] = False
        out_of_fold[a:b] = gru_scores(fit_gru(x[keep], y[keep], seed=fold), x[a:b])
    torch.save({"state_dict": model.state_dict(), "train_cues": torch.from_numpy(out_of_fold)}, out)
    return {"train_ipus": int(len(y)), "val_roc_auc": round(float(roc_auc_score(yv, gru_scores(model, xv))), 4),
            "train_roc_auc_out_of_fold": round(float(roc_auc_score(y, out_of_fold)), 4)}


def load_gru_cue(path: str | Path):
    import torch

    saved = torch.load(path)
    model = gru_cue_model()
    model.load_state_dict(saved["state_dict"])
    return model.eval(), saved["train_cues"].numpy()


def gru_ipus(dialogue, model) -> list[list[tuple[float, float, float]]]:
    """Per speaker the IPUs of ``dialogue`` with the GRU's cue from the words up to each one's end."""
    from turneval.modeling.modeling_future_activity_predictor import word_buckets

    out = []
    for c in (0, 1):
        spoken = sorted(dialogue.words[c] if dialogue.words else [], key=lambda w: (w.start, w.end))
        kept, ids = word_buckets([w.text for w in spoken], 65536)
        starts = np.array([spoken[i].start for i in kept], np.float64)
        tokens = np.asarray(ids, np.int64).reshape(-1, 3)[:, 0]
        ipus = speaker_ipus(dialogue, c)
        values = gru_scores(model, gru_sequences(starts, tokens, ipus)) if ipus else []
        out.append([(s, e, float(v)) for (s, e, _), v in zip(ipus, values)])
    return out


# -- cache and init ------------------------------------------------------------------------------
def write_cache(words_cache: str | Path, out: str | Path, source: str, lookahead_s: float, seed: int = 0,
                gru: str | Path | None = None, fitted_on: bool = False) -> dict[str, Any]:
    """A copy of a Switchboard word cache whose "words" are the cue's entries. ``source``: smart-turn
    (drawn from :data:`CALIBRATION`), words (the IPU's last word's cue) or gru (the GRU of
    :func:`fit_gru_cue` saved at ``gru``; ``fitted_on``: this is the cache it was fitted on, so its
    out-of-fold cues are used)."""
    from turneval.naturalness_inference import load_predictor
    from turneval.training.switchboard_words import load_words, save_word_cache

    rng = np.random.default_rng(seed)
    word_cue = load_predictor(str(bundled_root() / "future_activity_predictor_words")).word_cue if source == "words" else None
    gru_model, gru_train_cues = load_gru_cue(gru) if source == "gru" else (None, None)
    calls, values, truths, used = [], [], [], 0
    for call in load_words(words_cache):
        sides = []
        for c, (truth, starts, tokens) in enumerate(call_ipus(call)):
            if source == "smart-turn":
                cues = [rng.normal(*CALIBRATION["shift" if shift else "hold"]) for _, _, shift in truth]
            elif source == "words":
                logits = word_cue.bucket_logits(call["word_buckets"][c]) if len(tokens) else np.zeros(0)
                cues = [v for _, _, v in last_word_ipus(truth, starts, logits)]
            elif fitted_on:
                cues, used = gru_train_cues[used : used + len(truth)].tolist(), used + len(truth)
            else:
                cues = gru_scores(gru_model, gru_sequences(starts, tokens, truth)).tolist() if truth else []
            ipus = [(s, e, float(v)) for (s, e, _), v in zip(truth, cues)]
            values += cues
            truths += [t[2] for t in truth]
            steps = cue_entries(ipus, lookahead_s)
            times = np.array([t for t, _ in steps], np.float32)
            sides.append((times, times, np.repeat(np.array([value_bucket(v) for _, v in steps], np.int32)[:, None], 3, axis=1)))
        calls.append((call["id"], call["va"], sides))
    if fitted_on and used != len(gru_train_cues):
        raise ValueError(f"{words_cache}: {used} IPUs, but the GRU at {gru} was fitted on {len(gru_train_cues)}; pass the cache it was fitted on")
    save_word_cache(out, calls)
    summary = calibration_summary([{"shift": t, "logit": v} for t, v in zip(truths, values)])
    return {"calls": len(calls), "source": source, **summary}


def init_predictor(out: str | Path, checkpoint: str | Path | None = None) -> Path:
    """The look-ahead predictor widened to read the cue (:func:`bucket_weights`)."""
    from turneval.training.switchboard_words import init_checkpoint

    return init_checkpoint(checkpoint or bundled_root() / "future_activity_predictor_lookahead", bucket_weights(), out)


def lookahead_s(checkpoint: str | Path | None = None) -> float:
    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig

    return float(FutureActivityPredictorConfig.from_pretrained(str(checkpoint or bundled_root() / "future_activity_predictor_lookahead")).end_lookahead_s)


# -- pairs ---------------------------------------------------------------------------------------
def _table(wins: dict[str, dict[str, list[bool]]]) -> str:
    types = sorted({t for per in wins.values() for t in per})
    lines = ["| scorer | all | " + " | ".join(types) + " |", "|---|" + "---|" * (len(types) + 1)]
    for name, per in wins.items():
        every = [w for v in per.values() for w in v]
        cells = [f"{np.mean(per[t]):.3f} ({len(per[t])})" if per.get(t) else "" for t in types]
        lines.append(f"| {name} | {np.mean(every):.3f} ({len(every)}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def real_pairs(predictor: str, whisper: bool = False) -> dict[str, dict[str, list[bool]]]:
    """Wins (natural m above perturbed) per scorer and type on the real-call pairs."""
    from _real_calls import heard_as_turneval, real_recordings, score_given_segments
    from real_perturbations import FULL_SEEDS, SILENCE_TIMER, perturbation_pairs

    from turneval.naturalness_inference import load_predictor
    from turneval.smart_turn import SmartTurnV3
    from turneval.training.perturbation_ranking import mean_gap_score

    judge, ahead = SmartTurnV3(threads=2), lookahead_s(predictor)
    cue_model, bare_model = read_cue_values(load_predictor(predictor)), load_predictor(predictor)
    lookahead_model = load_predictor(str(bundled_root() / "future_activity_predictor_lookahead"))
    dialogues, _ = real_recordings()
    if whisper:
        from turneval.transcribe import load_transcriber, transcribe_dialogue

        transcriber = load_transcriber(True)
        dialogues = [replace(d, words=transcribe_dialogue(d, transcriber).words) for d in dialogues]

    def scores(heard) -> dict[str, float]:
        return {"with smart-turn's cue": score_given_segments(with_cue(heard, smart_turn_ipus(heard, judge), ahead), cue_model),
                "the same predictor, no cue": score_given_segments(replace(heard, words=None), bare_model),
                "look-ahead predictor": score_given_segments(heard, lookahead_model), SILENCE_TIMER: mean_gap_score(heard)}

    wins: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for dialogue in dialogues:
        pairs, _ = perturbation_pairs(dialogue, FULL_SEEDS)
        natural_cache: dict[tuple, dict[str, float]] = {}
        for pair in pairs:
            crop = (pair.crop.get("source_start_s"), pair.crop.get("source_end_s"))
            if crop not in natural_cache:
                natural_cache[crop] = scores(heard_as_turneval(pair.natural))
            perturbed = scores(heard_as_turneval(pair.perturbed))
            for name, natural_m in natural_cache[crop].items():
                if math.isfinite(natural_m) and math.isfinite(perturbed[name]):
                    wins[name][pair.perturbation_type].append(natural_m > perturbed[name])
    return wins


def tag_cues(dialogue, seed: int):
    """Each word suffixed ``|<log-odds>``: a draw for its IPU in this (natural) call (:data:`CALIBRATION`)."""
    rng = np.random.default_rng(seed)

    def tags_of(c: int, truth: list) -> list[str]:
        return [f"{rng.normal(*CALIBRATION['shift' if shift else 'hold']):.4f}" for _, _, shift in truth]

    return tag_words_by_ipu(dialogue, tags_of, f"{0.0:.4f}")


def tagged_ipus(dialogue) -> list[list[tuple[float, float, float]]]:
    """Per speaker the IPUs of a :func:`tag_cues` dialogue (perhaps edited) with their last word's tag."""
    out = []
    for c in (0, 1):
        spoken = sorted(dialogue.words[c], key=lambda w: w.start)
        starts = np.array([w.start for w in spoken], np.float64)
        values = np.array([float(w.text.rsplit("|", 1)[1]) for w in spoken], np.float64)
        out.append(last_word_ipus(speaker_ipus(dialogue, c), starts, values))
    return out


def swb_pairs(swb_root: str, splits: str, predictor: str, source: str, pair_calls: int = 100,
              gru: str | Path | None = None) -> dict[str, dict[str, list[bool]]]:
    """Wins per scorer and type on the Switchboard test pairs, the cue carried from the natural
    call (smart-turn) or read from the clip's words (words; gru: the GRU saved at ``gru``)."""
    from turneval.naturalness_inference import load_predictor

    ahead, words_cue = lookahead_s(predictor), None
    if source == "words":
        words_cue = load_predictor(str(bundled_root() / "future_activity_predictor_words")).word_cue
        cue_view = lambda d: with_cue(d, word_ipus(d, words_cue), ahead)  # noqa: E731
        plain = lambda d: d  # noqa: E731
    elif source == "gru":
        gru_model = load_gru_cue(gru)[0]
        cue_view = lambda d: with_cue(d, gru_ipus(d, gru_model), ahead)  # noqa: E731
        plain = lambda d: d  # noqa: E731
    else:
        cue_view = lambda d: with_cue(d, tagged_ipus(d), ahead)  # noqa: E731
        plain = untag_words
    scorers = [(f"with the cue ({source})", read_cue_values(load_predictor(predictor)), cue_view),
               ("the same predictor, no cue", load_predictor(predictor), lambda d: replace(d, words=None)),
               ("look-ahead predictor", load_predictor(str(bundled_root() / "future_activity_predictor_lookahead")), plain)]
    prepare = tag_cues if source == "smart-turn" else (lambda dialogue, k: dialogue)
    return switchboard_pair_wins(swb_root, splits, pair_calls, prepare, scorers)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="smart-turn's logits at the SpokenWOZ calls' IPU ends, per truth")
    cal.add_argument("--json", default=None, help="write every IPU's logit and truth here")
    c = sub.add_parser("cache", help="a word cache whose words are the cue's entries")
    c.add_argument("--words", required=True, help="a cache of turneval.training.switchboard_words")
    c.add_argument("--out", required=True)
    g = sub.add_parser("fit-gru", help="the GRU text cue on the train cache's IPUs (and its out-of-fold train cues)")
    g.add_argument("--train", required=True)
    g.add_argument("--val", required=True)
    g.add_argument("--out", required=True, help=".pt")
    i = sub.add_parser("init", help="the look-ahead predictor widened to read the cue")
    i.add_argument("--out", required=True)
    r = sub.add_parser("real-pairs", help="real calls' audio with TurnNat's edits, smart-turn on each clip")
    s = sub.add_parser("swb-pairs", help="Switchboard test pairs")
    s.add_argument("--swb-root", required=True)
    s.add_argument("--splits", required=True)
    s.add_argument("--pair-calls", type=int, default=100)
    r.add_argument("--whisper", action="store_true", help="edits placed by Whisper tiny.en's words (AMI hosts more types)")
    for sp in (r, s):
        sp.add_argument("--predictor", required=True, help="the trained cue-reading predictor")
    for sp in (c, s):
        sp.add_argument("--source", choices=["smart-turn", "words", "gru"], default="smart-turn",
                        help="smart-turn: drawn from the calibration (Switchboard has no audio); words: the IPU's last word's cue; gru: --gru's")
        sp.add_argument("--gru", default=None, help="--source gru: the .pt of fit-gru")
    c.add_argument("--fitted-on", action="store_true", help="--source gru: this is the cache the GRU was fitted on (use its out-of-fold cues)")
    args = parser.parse_args(argv)
    limit_threads()
    if args.command == "calibrate":
        result = calibrate()
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
        print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    elif args.command == "cache":
        print(json.dumps(write_cache(args.words, args.out, args.source, lookahead_s(), gru=args.gru, fitted_on=args.fitted_on)))
    elif args.command == "fit-gru":
        print(json.dumps(fit_gru_cue(args.train, args.val, args.out)))
    elif args.command == "init":
        print(f"wrote {init_predictor(args.out)}")
    elif args.command == "real-pairs":
        print(_table(real_pairs(args.predictor, args.whisper)))
    else:
        print(_table(swb_pairs(args.swb_root, args.splits, args.predictor, args.source, args.pair_calls, args.gru)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
