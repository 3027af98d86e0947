"""Distil Whisper's 30 s turn-completion cue into the 8 s completion reader, on synthesized speech.

    python -m turneval.training.distill_completion_reader teacher --corpus DIR[,DIR...] --work runs/distill
    python -m turneval.training.distill_completion_reader real --clips runs/whisper_cue_clips.npz --work runs/distill
    python -m turneval.training.distill_completion_reader fit --work runs/distill --out checkpoints/whisper_completion_reader \
        [--real] [--leave-out CORPUS]

``teacher``: at every (a)/(d) pause of every excerpt of the corpora (re-voiced Switchboard train
calls, ``dataset_scripts/synthetic/revoice.py``; speech where the real words were, as the judge's
labels say), the clip the report hands Whisper (the pauser's channel, its last 8 s before the
pause's horizon; :func:`turneval.pause_decision.cue_clips`) is read twice: by the 30 s reader
(:class:`turneval.whisper_completion.WhisperCompletion`, float32: the teacher's value) and by the
completion reader's encoder (the 8 s window's states, kept in float16). One ``.npz`` per excerpt
under ``WORK/shards/``: the run resumes by skipping those written, and several processes may
share the work (``--part K/N`` takes every N-th excerpt from the K-th).

``fit``: the head (:mod:`turneval.modeling.modeling_completion_reader`) learns the teacher's value
from the states (Huber loss; clips where Whisper heard no word are left out), with the excerpts
of one call in ten (by a hash of the call id) kept aside to choose the epoch; it writes the
checkpoint folder and ``training.json`` (data, epochs, losses, compute).

``real``: the same two readings of real clips (``--clips``: the npz of
``benchmarks/experiments/whisper_cue_cost.py``, the report's clips at every (a)/(d) decision of
the real dev corpora, with ``teacher``, the 30 s reader's value), written to ``WORK/real.npz``
with each clip's corpus. ``fit --real`` adds them to the synthesized clips, real and synthesized
weighing the same in the loss; ``--leave-out CORPUS`` keeps one corpus's clips out (the reader
for that corpus's left-out figures).

Nothing here reads whether anybody took the turn; without ``--real`` no real call either.

The design was fixed before the reader heard any real call (the 8 s window, the head, the loss,
the epochs and the choice by the synthesized held-aside calls), and its one left-out run on the real
dev corpora (``benchmarks/experiments/completion_reader_left_out.py``) is recorded in
docs/validation.md whatever it shows.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np


EPOCHS = 40
BATCH = 64
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-2
HUBER_DELTA = 1.0
ASIDE_ONE_IN = 10
SEED = 0
PAUSES_PER_EXCERPT = 20
"""At most this many pauses of an excerpt are read (drawn by a hash of its id): a 90 s excerpt of
Switchboard has about 45, and more excerpts bring more voices for the teacher's time."""


def aside(dialogue_id: str) -> bool:
    """Whether an excerpt's call is kept aside to choose the epoch (one call in :data:`ASIDE_ONE_IN`)."""
    call = dialogue_id.split("_")[0]
    return int(hashlib.sha256(call.encode()).hexdigest(), 16) % ASIDE_ONE_IN == 0


def excerpt_clips(judge: Any, dialogue: Any) -> list[np.ndarray]:
    """The cue's clip at (a)/(d) pauses of one excerpt (its audio read here): every pause, or
    :data:`PAUSES_PER_EXCERPT` of them drawn with a generator seeded by the excerpt's id."""
    import soundfile as sf

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import cue_clips, judge_pause_records

    audio, rate = sf.read(dialogue.audio_path, dtype="float32", always_2d=True)
    if rate != 16000 or audio.shape[1] != 2:
        raise ValueError(f"{dialogue.audio_path}: expected 16 kHz two-channel audio, got {rate} Hz, {audio.shape[1]} channels")
    dialogue = replace(dialogue, audio=audio.T.copy())
    view = conversation_view(dialogue)
    pauses = list(judge_pause_records(judge, view).values())
    if len(pauses) > PAUSES_PER_EXCERPT:
        rng = np.random.default_rng(int(hashlib.sha256(dialogue.id.encode()).hexdigest(), 16) % 2**32)
        pauses = [pauses[i] for i in sorted(rng.choice(len(pauses), PAUSES_PER_EXCERPT, replace=False))]
    return cue_clips(judge, view, pauses)


def teacher(corpus: str, work: Path, part: tuple[int, int] = (0, 1)) -> int:
    """Write one shard per excerpt (teacher values, states, valid positions); returns how many were written now."""
    import torch

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge
    from turneval.modeling.modeling_completion_reader import CompletionReader
    from turneval.training.corpus import load_corpus
    from turneval.whisper_completion import WhisperCompletion

    torch.set_num_threads(1)
    judge = load_judge(default_checkpoint("judge"))
    whisper, reader = WhisperCompletion(), CompletionReader()
    shards = work / "shards"
    shards.mkdir(parents=True, exist_ok=True)
    dialogues = load_corpus(corpus)[part[0] :: part[1]]
    written = 0
    for k, dialogue in enumerate(dialogues):
        path = shards / f"{dialogue.id}.npz"
        if path.exists():
            continue
        start = time.process_time()
        clips = reader.tails(excerpt_clips(judge, dialogue))
        clips = [c for c in clips if len(c)]
        values = whisper.logits(clips) if clips else np.zeros(0)
        with torch.inference_mode():
            encoded = [reader.encode(clips[i : i + 8]) for i in range(0, len(clips), 8)]
        states = np.concatenate([s.numpy().astype(np.float16) for s, _ in encoded]) if encoded else np.zeros((0, reader.config.positions, reader.config.width), np.float16)
        valid = np.concatenate([v.numpy() for _, v in encoded]) if encoded else np.zeros(0, int)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, teacher=values, states=states, valid=valid, cpu_s=time.process_time() - start)
        tmp.rename(path)
        written += 1
        print(f"teacher {k + 1}/{len(dialogues)} {dialogue.id}: {len(clips)} clips, {time.process_time() - start:.1f} CPU s", flush=True)
    return written


def load_shards(work: Path) -> dict[str, np.ndarray]:
    """Every shard's clips with a teacher value: states, valid, teacher, aside, and the excerpt's id."""
    parts: dict[str, list] = {"states": [], "valid": [], "teacher": [], "aside": [], "excerpt": []}
    cpu = 0.0
    for path in sorted((work / "shards").glob("*.npz")):
        if path.name.endswith(".tmp.npz"):
            continue
        data = np.load(path)
        cpu += float(data["cpu_s"])
        keep = np.isfinite(data["teacher"])
        name = path.name[: -len(".npz")]
        parts["states"].append(data["states"][keep])
        parts["valid"].append(data["valid"][keep])
        parts["teacher"].append(data["teacher"][keep])
        parts["aside"].append(np.full(int(keep.sum()), aside(name)))
        parts["excerpt"].append(np.full(int(keep.sum()), name))
    if not parts["states"]:
        raise FileNotFoundError(f"{work / 'shards'}: no shards; run the teacher stage first")
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["teacher_cpu_s"] = np.array(cpu)
    return out


def real_clips(clips_npz: Path, work: Path) -> int:
    """The 8 s states of the real clips in ``clips_npz`` (and their teacher values and corpora) in ``WORK/real.npz``."""
    import torch

    from turneval.modeling.modeling_completion_reader import CompletionReader

    torch.set_num_threads(1)
    data = dict(np.load(clips_npz))  # an NpzFile would read the whole array again at every index
    if "teacher" not in data:
        raise KeyError(f"{clips_npz}: no 'teacher' column; run benchmarks/experiments/completion_reader_left_out.py once to read it")
    bounds = np.concatenate([[0], np.cumsum(data["clip_lengths"])])
    reader = CompletionReader()
    samples = data["clip_samples"]
    clips = reader.tails([samples[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    with torch.inference_mode():
        encoded = [reader.encode(clips[i : i + 8]) for i in range(0, len(clips), 8)]
    work.mkdir(parents=True, exist_ok=True)
    np.savez(work / "real.npz", states=np.concatenate([s.numpy().astype(np.float16) for s, _ in encoded]),
             valid=np.concatenate([v.numpy() for _, v in encoded]), teacher=data["teacher"], corpus=data["corpus"].astype(str))
    return len(clips)


def fit(work: Path, out: Path, real: bool = False, leave_out: str | None = None) -> dict[str, Any]:
    """Train the head on the shards (and, with ``real``, the real clips of every corpus but
    ``leave_out``); write the checkpoint to ``out`` and return the training record."""
    import torch

    from turneval.modeling.modeling_completion_reader import CompletionReaderConfig, _head_module

    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    data = load_shards(work)
    config = CompletionReaderConfig()
    head = _head_module(config)
    n_synthesized = int((~data["aside"]).sum())
    weight = np.ones(len(data["teacher"]), dtype=np.float32)
    real_corpora: list[str] = []
    if real:
        extra = dict(np.load(work / "real.npz"))
        keep = np.isfinite(extra["teacher"]) & (extra["corpus"] != (leave_out or ""))
        real_corpora = sorted(set(extra["corpus"][keep].tolist()))
        for key in ("states", "valid", "teacher"):
            data[key] = np.concatenate([data[key], extra[key][keep]])
        data["aside"] = np.concatenate([data["aside"], np.zeros(int(keep.sum()), dtype=bool)])
        # real and synthesized clips weigh the same in the loss
        weight = np.concatenate([weight, np.full(int(keep.sum()), n_synthesized / max(1, int(keep.sum())), dtype=np.float32)])
    states, valid = torch.from_numpy(data["states"]), torch.from_numpy(data["valid"].astype(np.int64))
    target = torch.from_numpy(data["teacher"].astype(np.float32))
    weights = torch.from_numpy(weight)
    train_rows, aside_rows = np.flatnonzero(~data["aside"]), np.flatnonzero(data["aside"])
    optimizer = torch.optim.AdamW(head.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    loss_fn = torch.nn.HuberLoss(delta=HUBER_DELTA)
    per_clip = torch.nn.HuberLoss(delta=HUBER_DELTA, reduction="none")
    best, history, start = (float("inf"), -1, None), [], time.process_time()

    def evaluate(rows: np.ndarray) -> tuple[float, float]:
        head.eval()
        with torch.no_grad():
            pred = torch.cat([head(states[rows[i : i + 256]].float(), valid[rows[i : i + 256]]) for i in range(0, len(rows), 256)])
        y = target[rows]
        return float(loss_fn(pred, y)), float(np.corrcoef(pred.numpy(), y.numpy())[0, 1])

    for epoch in range(EPOCHS):
        head.train()
        order = rng.permutation(train_rows)
        total = 0.0
        for i in range(0, len(order), BATCH):
            rows = order[i : i + BATCH]
            w = weights[rows]
            loss = (per_clip(head(states[rows].float(), valid[rows]), target[rows]) * w).sum() / w.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(rows)
        aside_loss, aside_r = evaluate(aside_rows)
        history.append({"epoch": epoch + 1, "train_loss": round(total / len(order), 4), "aside_loss": round(aside_loss, 4), "aside_r": round(aside_r, 4)})
        print(json.dumps(history[-1]), flush=True)
        if aside_loss < best[0]:
            best = (aside_loss, epoch + 1, {k: v.clone() for k, v in head.state_dict().items()})
    head.load_state_dict(best[2])
    from turneval.modeling.modeling_completion_reader import CompletionReader

    reader = CompletionReader.__new__(CompletionReader)  # only the head and config are saved
    reader.config, reader.head = config, head
    reader.save(out)
    record = {
        "config": asdict(config),
        "data": {"excerpts": int(len(set(data["excerpt"]))), "clips": int(len(target)), "clips_aside": int(len(aside_rows)),
                 "real_corpora": real_corpora, "real_clips": int(len(target) - len(data["excerpt"])),
                 "teacher_mean": round(float(target.mean()), 3), "teacher_sd": round(float(target.std()), 3)},
        "recipe": {"epochs": EPOCHS, "batch": BATCH, "learning_rate": LEARNING_RATE, "weight_decay": WEIGHT_DECAY, "huber_delta": HUBER_DELTA,
                   "aside_one_call_in": ASIDE_ONE_IN, "seed": SEED},
        "chosen_epoch": best[1],
        "history": history,
        "compute": {"teacher_and_states_cpu_s": round(float(data["teacher_cpu_s"]), 1), "fit_cpu_s": round(time.process_time() - start, 1),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)},
    }
    (out / "training.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    t = sub.add_parser("teacher", help="read the teacher and the 8 s states at every pause of the corpora")
    t.add_argument("--corpus", required=True, help="re-voiced corpus folder(s), comma-separated")
    t.add_argument("--work", type=Path, required=True)
    t.add_argument("--part", default="0/1", help="K/N: every N-th excerpt from the K-th (to share the work between processes)")
    r = sub.add_parser("real", help="read the 8 s states of real clips with their teacher values")
    r.add_argument("--clips", type=Path, required=True, help="whisper_cue_cost.py's npz of real clips, with a 'teacher' column")
    r.add_argument("--work", type=Path, required=True)
    f = sub.add_parser("fit", help="train the head on the shards")
    f.add_argument("--work", type=Path, required=True)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--real", action="store_true", help="add the real clips of WORK/real.npz")
    f.add_argument("--leave-out", default=None, help="with --real: keep this corpus's clips out")
    args = parser.parse_args(argv)
    from turneval.interrupts import exit_code, handling_signals

    try:
        with handling_signals():
            return _run_stage(args)
    except KeyboardInterrupt as err:  # Ctrl-C or SIGTERM: finished shards are whole (written, then renamed)
        print(f"distill_completion_reader {args.stage}: interrupted; what was finished is kept: run the same command again",
              file=sys.stderr)
        return exit_code(err)


def _run_stage(args: argparse.Namespace) -> int:
    if args.stage == "teacher":
        k, n = (int(x) for x in args.part.split("/"))
        print(f"{teacher(args.corpus, args.work, (k, n))} excerpts read")
        return 0
    if args.stage == "real":
        print(f"{real_clips(args.clips, args.work)} real clips read")
        return 0
    record = fit(args.work, args.out, args.real, args.leave_out)
    print(f"chosen epoch {record['chosen_epoch']}: {record['history'][record['chosen_epoch'] - 1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
