"""How strong must a turn-completion cue be? A perfect one, carried from the natural call, on the Switchboard pairs.

    python benchmarks/experiments/turn_final_cue_ceiling.py cache --words CACHE/swb_words_train.npz --out CUE/train.npz [--flip 0.2]
    python benchmarks/experiments/turn_final_cue_ceiling.py cache --words CACHE/swb_words_val.npz --out CUE/val.npz [--flip 0.2]
    python benchmarks/experiments/turn_final_cue_ceiling.py init --checkpoint checkpoints/future_activity_predictor_lookahead \\
        --out CUE/init [--flip 0.2]
    python -m turneval.training.train_future_activity --init_from CUE/init --train_words CUE/train.npz --val_words CUE/val.npz \\
        --output_dir CUE/run --input_type vad --max_train_steps 600 --per_device_train_batch_size 32 --window_s 20 \\
        --learning_rate 1e-3 --num_warmup_steps 50 --vad_like_p 0.5 --mask_p 0 --clean_labels --word_dropout_p 0.25 --cpu
    python benchmarks/experiments/turn_final_cue_ceiling.py pairs --predictor CUE/run/final --swb-root SWB --splits SPLITS [--flip 0.2]

The word-reading predictor's cue (a regression on the last 1-3 words; ROC-AUC 0.745 at the
speaker's stops) left inserted turns at chance. Is the cue too weak, or can no cue help, because
an inserted turn adds cheap boundary units that lower MeanNLL and TailNLL? This bounds it. Each
inter-pausal unit (IPU: a speaker's speech with gaps under 0.2 s merged) gets the truth of the
*natural* call: +cue when the other side speaks before the speaker goes on, -cue otherwise,
shown from the IPU's start until the speaker's next IPU (the word cue's layout, one "word" per
IPU). ``--flip`` flips each IPU's truth with that probability, for a cue that is right
``1 - flip`` of the time (cue magnitude: its log-odds; a perfect cue is clipped at 6).

``cache`` writes that cue into a copy of a Switchboard word cache (``training.switchboard_words``
format); ``init`` widens the look-ahead predictor to read it (the cue's table: bucket 0 = shift,
bucket 1 = hold); training is the word-reading recipe's. ``pairs`` cuts TurnNat's pairs from
the first ``--pair-calls`` test calls with every word tagged with its IPU's truth in the natural
call, so an edit moves the truth with the speech (a turn inserted into a pause keeps the "hold"
its speaker's words and voice said), and scores them with that predictor, beside the bundled
word-reading and look-ahead predictors (the tags removed) on the same pairs. An earlier oracle
(model_cards/future_activity_predictor_switchboard) read the truth from the clip being scored,
which makes an inserted turn look like a real shift; that is why it found no gain there.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np


HERE = Path(__file__).resolve().parents[1]
for path in (HERE, HERE / "validation"):  # the shared helpers, the validation scripts it reuses
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import limit_threads  # noqa: E402


MERGE_S = 0.2
"""Gaps shorter than this do not end an IPU."""
FRAME_HZ = 50
SHIFT, HOLD = "S", "H"
PERFECT_CUE = 6.0
"""The magnitude of a perfect cue (the word cue's clip)."""


def cue_magnitude(flip: float) -> float:
    """The log-odds of a cue that is right ``1 - flip`` of the time (a perfect one: :data:`PERFECT_CUE`)."""
    return PERFECT_CUE if flip <= 0 else math.log((1 - flip) / flip)


def ipu_truth(own: Sequence[tuple[float, float]], other: Sequence[tuple[float, float]], duration: float,
              merge_s: float = MERGE_S) -> list[tuple[float, float, bool]]:
    """``(start, end, shift)`` of each IPU of one speaker (``events.merge_into_ipus``; a silence of
    ``merge_s`` or more ends one): ``shift`` when the other side speaks before this speaker's next
    IPU (or the end)."""
    from turneval.dataset_scripts.events import merge_into_ipus

    # merge_into_ipus splits at silences longer than its limit; these IPUs end at merge_s itself
    runs = merge_into_ipus(own, 0, max_silence_s=merge_s - 2e-9)
    out = []
    for i, ipu in enumerate(runs):
        nxt = runs[i + 1].start if i + 1 < len(runs) else duration
        out.append((ipu.start, ipu.end, any(a < nxt and b > ipu.end for a, b in other)))
    return out


def _flips(flip: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n) < flip if flip > 0 else np.zeros(n, bool)


# -- cache: the cue in a word cache --------------------------------------------------------------
def write_cache(words_cache: str | Path, out: str | Path, flip: float = 0.0, seed: int = 0) -> dict[str, Any]:
    """A copy of a word cache whose words are the IPUs, bucket 0 for a shift and 1 for a hold."""
    from turneval.dataset_scripts.grids import activity_to_segments
    from turneval.training.switchboard_words import load_words, save_word_cache

    rng = np.random.default_rng(seed)
    calls, ipus, shifts = [], 0, 0
    for call in load_words(words_cache):
        va = call["va"]
        segs = [activity_to_segments(va[:, c], FRAME_HZ) for c in (0, 1)]
        sides = []
        for c in (0, 1):
            truth = ipu_truth(segs[c], segs[1 - c], va.shape[0] / FRAME_HZ)
            shift = np.array([t[2] for t in truth], bool) ^ _flips(flip, len(truth), rng)
            sides.append((np.array([t[0] for t in truth], np.float32), np.array([t[1] for t in truth], np.float32),
                          np.repeat(np.where(shift, 0, 1)[:, None], 3, axis=1).astype(np.int32)))
            ipus, shifts = ipus + len(truth), shifts + int(shift.sum())
        calls.append((call["id"], va, sides))
    save_word_cache(out, calls)
    return {"calls": len(calls), "ipus": ipus, "shift_share": shifts / max(ipus, 1)}


def init_predictor(checkpoint: str | Path, out: str | Path, flip: float = 0.0, buckets: int = 65536) -> Path:
    """The look-ahead predictor widened to read the cue: bucket 0 (shift) -> +magnitude, 1 (hold) -> -magnitude."""
    from turneval.training.switchboard_words import init_checkpoint

    weights = np.zeros(buckets + 1, np.float32)  # a "word" reads three buckets, all the same
    weights[0], weights[1] = cue_magnitude(flip) / 3, -cue_magnitude(flip) / 3
    return init_checkpoint(checkpoint, weights, out)


# -- pairs: the cue carried by the words of the natural call -------------------------------------
def tag_words_by_ipu(dialogue, tags_of: Callable[[int, list], Sequence[str]], empty: str):
    """The dialogue with each word's text suffixed ``|<tag>``: the tag of its IPU in this call,
    ``tags_of(channel, ipu_truth(...))`` (``empty`` for a side without IPUs)."""
    from turneval.dataset_scripts.dialogue import Word

    tagged = []
    for c in (0, 1):
        truth = ipu_truth(dialogue.segments[c], dialogue.segments[1 - c], float(dialogue.duration))
        tags = tags_of(c, truth)
        starts = np.array([t[0] for t in truth])
        side = []
        for w in dialogue.words[c]:
            i = max(int(np.searchsorted(starts, w.start + 0.05, side="right")) - 1, 0)
            side.append(Word(w.start, w.end, f"{w.text}|{tags[i] if len(tags) else empty}"))
        tagged.append(side)
    return replace(dialogue, words=tagged)


def tag_words(dialogue, flip: float = 0.0, seed: int = 0):
    """The dialogue with each word's text suffixed ``|S`` or ``|H``: its IPU's truth in this call."""
    def tags_of(c: int, truth: list) -> list[str]:
        shift = np.array([t[2] for t in truth], bool) ^ _flips(flip, len(truth), np.random.default_rng([seed, c]))
        return [SHIFT if s else HOLD for s in shift]

    return tag_words_by_ipu(dialogue, tags_of, HOLD)


def untag_words(dialogue):
    from turneval.dataset_scripts.dialogue import Word

    return replace(dialogue, words=[[Word(w.start, w.end, w.text.rsplit("|", 1)[0]) for w in side] for side in dialogue.words])


def read_tags(model, magnitude: float):
    """Make ``model``'s word cue read the tags instead of the words: +magnitude for a shift, -magnitude for a hold."""
    def word_logits(texts: Sequence[str]):
        return np.arange(len(texts)), np.array([magnitude if t.endswith(f"|{SHIFT}") else -magnitude for t in texts])

    model.word_cue.word_logits = word_logits
    return model


def switchboard_pair_wins(swb_root: str, splits: str, pair_calls: int, prepare: Callable[[Any, int], Any],
                          scorers: Sequence[tuple[str, Any, Callable[[Any], Any]]]) -> dict[str, dict[str, list[bool]]]:
    """Per scorer and type, whether the natural crop outscores the perturbed one, on TurnNat's
    pairs of the first ``pair_calls`` Switchboard test calls (the Switchboard benchmark's edits).
    ``prepare(dialogue, k)`` readies the k-th call (tags its words); each scorer is ``(name,
    model, view)``, ``view`` turning a crop into what that model reads."""
    from _switchboard import map_calls
    from predictor_switchboard import SWITCHBOARD_EDIT_PARAMS, with_silent_audio

    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES
    from turneval.dataset_scripts.perturbations.pairs import iter_pairs
    from turneval.dataset_scripts.readers import read_split_ids
    from turneval.naturalness_inference import score_dialogue

    wins: dict[str, dict[str, list[bool]]] = {name: defaultdict(list) for name, _, _ in scorers}
    for k, (_, dialogue) in enumerate(map_calls(swb_root, read_split_ids(splits, "test")[:pair_calls], lambda d: d)):
        clip = with_silent_audio(prepare(dialogue, k))
        for pair in iter_pairs([clip], PERTURBATION_TYPES, 0, skip_counts={}, edit_params=SWITCHBOARD_EDIT_PARAMS, normalize=False):
            for name, model, view in scorers:
                wins[name][pair.perturbation_type].append(score_dialogue(view(pair.natural), model).score > score_dialogue(view(pair.perturbed), model).score)
        clip.audio = None
    return wins


def score_pairs(swb_root: str, splits: str, predictor: str, flip: float = 0.0, pair_calls: int = 100) -> dict[str, Any]:
    """Pairwise accuracy per type of the cue-reading predictor and the bundled word-reading and
    look-ahead predictors, on the same pairs."""
    from turneval.checkpoints import bundled_root
    from turneval.naturalness_inference import load_predictor

    scorers = [("the cue, right %.0f %% of the time" % (100 * (1 - flip)), read_tags(load_predictor(predictor), cue_magnitude(flip)), lambda d: d)]
    for name in ("future_activity_predictor_words", "future_activity_predictor_lookahead"):
        scorers.append((name, load_predictor(str(bundled_root() / name)), untag_words))
    wins = switchboard_pair_wins(swb_root, splits, pair_calls, lambda dialogue, k: tag_words(dialogue, flip, seed=k), scorers)
    out = {}
    for name, per_type in wins.items():
        every = [w for v in per_type.values() for w in v]
        out[name] = {"all": (float(np.mean(every)) if every else math.nan, len(every)),
                     **{t: (float(np.mean(v)), len(v)) for t, v in sorted(per_type.items())}}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cache", help="a word cache whose words are the IPUs with their truth")
    c.add_argument("--words", required=True, help="a cache of turneval.training.switchboard_words")
    c.add_argument("--out", required=True)
    i = sub.add_parser("init", help="the look-ahead predictor widened to read the cue")
    i.add_argument("--checkpoint", required=True)
    i.add_argument("--out", required=True)
    p = sub.add_parser("pairs", help="Switchboard test pairs, the cue carried from the natural call")
    p.add_argument("--predictor", required=True, help="the trained cue-reading predictor")
    p.add_argument("--swb-root", required=True)
    p.add_argument("--splits", required=True)
    p.add_argument("--pair-calls", type=int, default=100)
    for sp in (c, i, p):
        sp.add_argument("--flip", type=float, default=0.0, help="chance that an IPU's truth is flipped (0: a perfect cue)")
    args = parser.parse_args(argv)
    limit_threads()
    if args.command == "cache":
        print(write_cache(args.words, args.out, args.flip))
    elif args.command == "init":
        print(f"wrote {init_predictor(args.checkpoint, args.out, args.flip)}")
    else:
        result = score_pairs(args.swb_root, args.splits, args.predictor, args.flip, args.pair_calls)
        types = sorted({t for per in result.values() for t in per if t != "all"})
        print("| predictor | all | " + " | ".join(types) + " |\n|---|" + "---|" * (len(types) + 1))
        for name, per in result.items():
            print(f"| {name} | {per['all'][0]:.3f} ({per['all'][1]}) | " + " | ".join(f"{per[t][0]:.3f} ({per[t][1]})" for t in types) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
