"""Switchboard voice activity for the FutureActivityPredictor: read once, cache, reload fast.

The ms98 word alignments (``<root>/<2 digits>/<4 digits>/swNNNN{A,B}-ms98-a-word.text``) are
read with turneval's Switchboard reader; each conversation becomes its 50 Hz voice activity
``[n_frames, 2]`` (speech = the union of the speech words' spans, channel 0 = side A). A split
is cached as one ``.npz`` (all conversations concatenated, with their offsets), about 30 kB a
conversation, so training and benchmarks never parse the text files again.

    python -m turneval.training.switchboard_va \\
        --transcripts /work/cache/swb/swb_ms98_transcriptions \\
        --splits /work/shared/real/switchboard_ms98/splits --split train --out cache/swb_va_train.npz

The calls are read with :func:`turneval.dataset_scripts.readers.switchboard.iter_switchboard_calls`
(the extracted folder, or the ``.tar.gz`` archive streamed without unpacking it).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from turneval.dataset_scripts.readers.switchboard import iter_switchboard_calls, read_split_ids


def cache_voice_activity(root: str | Path, conversations: list[str], out: str | Path, *, verbose: bool = False) -> Path:
    """Write the 50 Hz voice activity of ``conversations`` to ``out`` (.npz); returns ``out``.

    Keys: ``ids`` (str, without ``sw``), ``offsets`` (``[n + 1]``, frame offsets into ``va``),
    ``va`` (``[sum frames, 2]`` int8), ``durations`` (seconds).
    """
    started = time.time()
    ids, arrays, durations = [], [], []
    for k, dialogue in enumerate(iter_switchboard_calls(root, conversations)):
        ids.append(dialogue.id.removeprefix("sw"))
        arrays.append(dialogue.frame_activity().T.astype(np.int8))
        durations.append(dialogue.duration)
        if verbose and (k + 1) % 100 == 0:
            print(f"{k + 1}/{len(conversations)} conversations, {time.time() - started:.0f} s", flush=True)
    conversations = ids
    offsets = np.concatenate([[0], np.cumsum([a.shape[0] for a in arrays])]).astype(np.int64)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    va = np.concatenate(arrays) if arrays else np.zeros((0, 2), np.int8)
    np.savez_compressed(out, ids=np.array(conversations), offsets=offsets, va=va, durations=np.array(durations))
    return out


def load_voice_activity(path: str | Path) -> dict[str, np.ndarray]:
    """``{conversation id: [n_frames, 2] int8}`` from a cache written by :func:`cache_voice_activity`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no voice-activity cache; build it with python -m turneval.training.switchboard_va")
    with np.load(path) as data:
        missing = {"ids", "offsets", "va"} - set(data.files)
        if missing:
            raise ValueError(f"{path}: not a voice-activity cache (missing {sorted(missing)}); rebuild it")
        ids, offsets, va = data["ids"], data["offsets"], data["va"]
    return {str(i): va[offsets[k] : offsets[k + 1]] for k, i in enumerate(ids)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Cache the 50 Hz voice activity of a Switchboard split (ms98 word times).")
    p.add_argument("--transcripts", required=True, help="the extracted swb_ms98_transcriptions folder (or the .tar.gz archive)")
    p.add_argument("--splits", required=True, help="folder with train.txt / val.txt / test.txt")
    p.add_argument("--split", required=True, choices=["train", "val", "test", "all"])
    p.add_argument("--out", required=True, help="output .npz")
    p.add_argument("--limit", type=int, help="only the first N conversations of the split")
    args = p.parse_args(argv)
    ids = read_split_ids(args.splits, args.split)[: args.limit]
    started = time.time()
    out = cache_voice_activity(args.transcripts, ids, args.out, verbose=True)
    print(f"wrote {out}: {len(ids)} conversations in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
