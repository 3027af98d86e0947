"""Switchboard's real words for the word-reading FutureActivityPredictor (``vad_features="timing+words"``, or ``"timing+words+ends"`` from a look-ahead predictor).

    python -m turneval.training.switchboard_words cache --transcripts SWB/swb_ms98_transcriptions.tar.gz \\
        --splits shared/real/switchboard_ms98/splits --split train --out cache/swb_words_train.npz
    python -m turneval.training.switchboard_words fit --train cache/swb_words_train.npz \\
        --val cache/swb_words_val.npz --out cache/word_cue.npz
    python -m turneval.training.switchboard_words init --checkpoint benchmarks/baselines/future_activity_predictor_switchboard \\
        --cue cache/word_cue.npz --out runs/fap_words_init

A voice-activity model cannot tell a turn end from a pause, so it cannot expect an answer at
the moment a speaker stops (issue 31). The words can: "so that's what I think" ends a turn, "and
then the" does not. Three steps:

* ``cache``: per call, the 50 Hz activity (as :mod:`turneval.training.switchboard_va` writes it)
  and each side's words: start and end times and the hashed buckets of the word with the one or
  two before it (:func:`~turneval.modeling.modeling_future_activity_predictor.word_cue_keys`).
* ``fit``: the word cue, a logistic regression over those buckets that says, for every word,
  whether the speaker stops after it (at least 200 ms of their silence) and the other side
  speaks before they go on. Fitted on the train calls' words (C = 0.1; ``fit_cue`` takes others and keeps
  the best on val); its ROC-AUC on
  the val words, and on the val stops alone (shift against hold), is printed.
* ``init``: a ``timing+words`` checkpoint that starts as the voice-activity predictor (every
  weight copied, the cue inputs' weights zero, so it predicts exactly what that model predicts)
  with the fitted cue in its ``word_cue.weights``. ``training.train_future_activity --init_from``
  then trains it with ``--train_words``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from turneval.modeling.modeling_future_activity_predictor import word_buckets


FRAME_HZ = 50
BUCKETS = 65536
"""FutureActivityPredictorConfig's frame rate and word_cue_buckets."""
STOP_S = 0.2
"""A speaker has stopped after a word when at least this much of their silence follows it."""


def speech_stops(voice_activity: np.ndarray, word_ends: list[np.ndarray], frame_hz: int = FRAME_HZ, min_silence_s: float = STOP_S) -> list[tuple[int, int, int, int]]:
    """``(channel, end, next start, last word)`` of every stretch of speech in ``[T, 2]`` 0/1
    activity (a run of 1s ending at frame ``end``) followed by at least ``min_silence_s`` of the
    speaker's silence; ``last word``: the index in ``word_ends[channel]`` (sorted seconds) of the
    last word that ends by ``end`` + 1 frame, -1 when there is none inside the stretch."""
    va = np.asarray(voice_activity) > 0.5
    n, gap = va.shape[0], int(np.ceil(min_silence_s * frame_hz - 1e-9))
    stops = []
    for c in range(2):
        x = va[:, c].astype(np.int8)
        change = np.flatnonzero(np.diff(x)) + 1
        starts = change[x[change] == 1]
        if x[0] == 1:
            starts = np.concatenate([[0], starts])
        ends_s = np.asarray(word_ends[c], dtype=np.float64)
        for end in change[x[change] == 0].tolist():
            i = int(np.searchsorted(starts, end))
            start, next_start = (int(starts[i - 1]) if i else 0), (int(starts[i]) if i < starts.size else n)
            if end + gap > next_start:
                continue
            k = int(np.searchsorted(ends_s, (end + 1) / frame_hz, side="right")) - 1
            stops.append((c, end, next_start, k if k >= 0 and ends_s[k] > start / frame_hz else -1))
    return stops


def call_words(dialogue, buckets: int = BUCKETS) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per side: (word start times [K], end times [K], bucket ids [K, 3]) of the words the cue reads,
    in the order the model reads them (``WordTurnCue.track``)."""
    out = []
    for spoken in dialogue.words or [[], []]:
        spoken = sorted(spoken, key=lambda w: (w.start, w.end))
        kept, ids = word_buckets([w.text for w in spoken], buckets)
        out.append((np.array([spoken[i].start for i in kept], dtype=np.float32),
                    np.array([spoken[i].end for i in kept], dtype=np.float32), ids.astype(np.int32)))
    return out


def save_word_cache(out: str | Path, calls: Sequence[tuple[str, np.ndarray, Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]]]) -> Path:
    """Write ``(id, activity [frames, 2], per side (word starts, ends, buckets [K, 3]))`` per call
    as a word cache: keys ``ids``, ``offsets``, ``va`` (int8), ``word_offsets`` (``[n, 2, 2]``:
    start and end of each side's words), ``word_starts``, ``word_ends`` and ``word_buckets``
    (what :func:`load_words` reads)."""
    ids, arrays, starts, ends, buckets, word_offsets, cursor = [], [], [], [], [], [], 0
    for call_id, va, sides in calls:
        ids.append(call_id)
        arrays.append(np.asarray(va, dtype=np.int8))
        offsets = []
        for s, e, b in sides:
            offsets.append((cursor, cursor + len(e)))
            cursor += len(e)
            starts.append(s)
            ends.append(e)
            buckets.append(b)
        word_offsets.append(offsets)
    offsets = np.concatenate([[0], np.cumsum([a.shape[0] for a in arrays])]).astype(np.int64)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, ids=np.array(ids), offsets=offsets, va=np.concatenate(arrays),
                        word_offsets=np.array(word_offsets, dtype=np.int64).reshape(-1, 2, 2),
                        word_starts=np.concatenate(starts), word_ends=np.concatenate(ends), word_buckets=np.concatenate(buckets))
    return out


def cache_words(root: str | Path, conversations: list[str], out: str | Path, verbose: bool = False) -> Path:
    """Write activity and words of ``conversations`` as a word cache (:func:`save_word_cache`)."""
    from turneval.dataset_scripts.readers.switchboard import iter_switchboard_calls

    started = time.time()
    calls = []
    for k, dialogue in enumerate(iter_switchboard_calls(root, conversations)):
        calls.append((dialogue.id.removeprefix("sw"), dialogue.frame_activity().T, call_words(dialogue)))
        if verbose and (k + 1) % 200 == 0:
            print(f"{k + 1}/{len(conversations)} calls, {time.time() - started:.0f} s", flush=True)
    return save_word_cache(out, calls)


def load_words(path: str | Path) -> list[dict]:
    """Per call of a cache: ``{"id", "va" [T, 2] int8, "word_starts", "word_ends", "word_buckets"}`` (each side's arrays)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no word cache; build it with python -m turneval.training.switchboard_words cache")
    with np.load(path) as data:
        missing = {"ids", "offsets", "va", "word_offsets", "word_starts", "word_ends", "word_buckets"} - set(data.files)
        if missing:
            raise ValueError(f"{path}: not a word cache (missing {sorted(missing)}); rebuild it")
        ids, offsets, va, wo, ws, we, wb = (data[k] for k in ("ids", "offsets", "va", "word_offsets", "word_starts", "word_ends", "word_buckets"))
    return [{"id": str(i), "va": va[offsets[k] : offsets[k + 1]], "word_starts": [ws[a:b] for a, b in wo[k]],
             "word_ends": [we[a:b] for a, b in wo[k]], "word_buckets": [wb[a:b] for a, b in wo[k]]} for k, i in enumerate(ids)]


def word_examples(calls: list[dict]):
    """Every word of every call: (sparse ``[n, buckets]`` of its last 1-3 words' buckets, label,
    kind). Label 1: the speaker stops after it (at least 200 ms of silence) and the other side
    speaks before the speaker goes on. Kind: 1 such a stop, 2 any other stop (the speaker goes on
    first, or nobody speaks again), 0 a word the speaker does not stop after."""
    from scipy.sparse import csr_matrix

    buckets, labels, kinds = [], [], []
    for call in calls:
        per_side = [(np.zeros(len(e), np.int8), np.zeros(len(e), np.int8)) for e in call["word_ends"]]
        for c, end, next_start, k in speech_stops(call["va"], call["word_ends"]):
            if k >= 0:
                shift = bool(call["va"][end:next_start, 1 - c].any())
                per_side[c][0][k], per_side[c][1][k] = int(shift), 1 if shift else 2
        for c in range(2):
            buckets.append(call["word_buckets"][c])
            labels.append(per_side[c][0])
            kinds.append(per_side[c][1])
    b = np.concatenate(buckets).reshape(-1, 3)
    x = csr_matrix((np.ones(b.size), b.reshape(-1), np.arange(0, b.size + 1, 3)), shape=(b.shape[0], BUCKETS))
    return x, np.concatenate(labels), np.concatenate(kinds)


def fit_cue(train: list[dict], val: list[dict], cs: tuple[float, ...] = (0.1,)) -> dict:
    """The word cue: a logistic regression on each word's last 1-3 words that says whether the
    speaker stops after it and the other side speaks next (:func:`word_examples`), the C of ``cs``
    that does best on val (default 0.1 alone: 0.3 and 1.0 gave 0.840 and 0.833 on the val words, 0.1
    gave 0.840). ``weights``: the buckets, then the bias (the layout of ``WordTurnCue.weights``)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    xt, yt, _ = word_examples(train)
    xv, yv, kv = word_examples(val)
    report = {"train_words": int(yt.size), "val_words": int(yv.size), "val_positive_rate": round(float(yv.mean()), 4)}
    best = None
    for c in cs:
        model = LogisticRegression(C=c, max_iter=2000).fit(xt, yt)
        score = model.decision_function(xv)
        auc = roc_auc_score(yv, score)
        report[f"val_roc_auc_C={c}"] = round(float(auc), 4)
        if best is None or auc > best[0]:
            best = (auc, c, model, score)
    auc, c, model, score = best
    at_stops = kv > 0
    weights = np.concatenate([model.coef_[0], [model.intercept_[0]]]).astype(np.float32)
    report.update({"C": c, "val_roc_auc": round(float(auc), 4),
                   "val_roc_auc_at_stops_shift_vs_hold": round(float(roc_auc_score(yv[at_stops], score[at_stops])), 4)})
    return {"weights": weights, "report": report}


def init_checkpoint(checkpoint: str | Path, weights: np.ndarray, out: str | Path) -> Path:
    """A word-reading predictor that starts as the predictor ``checkpoint`` (cue inputs weighted 0)
    with the word cue ``weights``: ``timing+words`` from a ``timing`` predictor, ``timing+words+ends``
    from a look-ahead (``timing+ends``) one."""
    import torch

    from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
    from turneval.training.warm_start import reading_with, widen_timing_predictor

    base = FutureActivityPredictorConfig.from_pretrained(str(checkpoint)).vad_features
    model, state = widen_timing_predictor(checkpoint, reading_with(base, "words"))
    state["word_cue.weights"] = torch.from_numpy(np.asarray(weights, dtype=np.float32))
    model.load_state_dict(state, strict=True)
    model.save_pretrained(str(out))
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cache", help="activity and words of a split")
    c.add_argument("--transcripts", required=True, help="the ms98 folder or swb_ms98_transcriptions.tar.gz")
    c.add_argument("--splits", required=True)
    c.add_argument("--split", required=True, choices=["train", "val", "test"])
    c.add_argument("--out", required=True)
    c.add_argument("--limit", type=int)
    f = sub.add_parser("fit", help="the word cue on the train cache (C = 0.1)")
    f.add_argument("--train", required=True)
    f.add_argument("--val", required=True)
    f.add_argument("--out", required=True, help=".npz with the cue weights and its report")
    i = sub.add_parser("init", help="a word-reading checkpoint warm-started from a timing or look-ahead one")
    i.add_argument("--checkpoint", required=True)
    i.add_argument("--cue", required=True)
    i.add_argument("--out", required=True)
    args = p.parse_args(argv)
    started = time.time()
    if args.command == "cache":
        from turneval.dataset_scripts.readers.switchboard import read_split_ids

        ids = read_split_ids(args.splits, args.split)[: args.limit]
        print(f"wrote {cache_words(args.transcripts, ids, args.out, verbose=True)}: {len(ids)} calls")
    elif args.command == "fit":
        import json

        fitted = fit_cue(load_words(args.train), load_words(args.val))
        np.savez(args.out, weights=fitted["weights"], report=json.dumps(fitted["report"]))
        print(json.dumps(fitted["report"], indent=1))
    else:
        with np.load(args.cue) as data:
            weights = data["weights"]
        print(f"wrote {init_checkpoint(args.checkpoint, weights, args.out)}")
    print(f"{time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
