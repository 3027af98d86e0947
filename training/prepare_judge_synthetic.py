"""Build the judge's demo training data: a synthetic corpus -> turn_taking_chunks parquet.

    python -m turneval.training.prepare_judge_synthetic --out data/synth_chunks --n 60 --duration 120

generates ``n`` eSpeak NG conversations (``turneval.dataset_scripts.synthetic``), splits them
by conversation (80 / 10 / 10 % into train / validation / test), labels every 40 ms chunk
with the TurnTakingChunks builder and exports ``{train,validation,test}.parquet`` that
``training/train_judge.py`` and ``training/evaluate_judge.py`` read.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from turneval.dataset_scripts.synthetic.corpus import CorpusRecipe, generate_corpus, load_dialogue


def split_of(index: int, n: int) -> str:
    """80 / 10 / 10 % by conversation index (at least one validation and test conversation)."""
    n_test = max(1, n // 10)
    n_val = max(1, n // 10)
    if index >= n - n_test:
        return "test"
    if index >= n - n_test - n_val:
        return "validation"
    return "train"


def prepare(out: str | Path, n: int, seed: int, duration_s: float, snr_db: float | None, styles: Sequence[str] = ("human",)) -> Path:
    """Generate, split, label and export; return the parquet folder."""
    from turneval.dataset_scripts.builders.export import export_parquet
    from turneval.dataset_scripts.builders.manifest import write_dialogue_manifest
    from turneval.dataset_scripts.builders.turn_taking_chunks import TurnTakingChunks

    if n < 3:
        raise ValueError(f"need at least 3 conversations (train, validation, test), got {n}")
    out = Path(out)
    corpus_dir = out / "corpus"
    generate_corpus(corpus_dir, n=n, seed=seed, recipe=CorpusRecipe(duration_s=duration_s, styles=tuple(styles), snr_db=snr_db))
    dialogues = [load_dialogue(path) for path in sorted(corpus_dir.glob("*.json"))]
    splits = {d.id: split_of(i, len(dialogues)) for i, d in enumerate(dialogues)}
    manifest = write_dialogue_manifest(dialogues, out / "manifest.jsonl", split=splits)
    builder = TurnTakingChunks(cache_dir=str(out / "cache"), manifest=str(manifest.resolve()))
    builder.download_and_prepare()
    export_parquet(builder.as_dataset(), out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Synthetic turn_taking_chunks data for the demo judge.")
    parser.add_argument("--out", required=True, help="output folder ({train,validation,test}.parquet, corpus/, manifest.jsonl)")
    parser.add_argument("--n", type=int, default=60, help="conversations (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=120.0, help="seconds per conversation (default 120)")
    parser.add_argument("--snr", type=float, default=None, help="background noise SNR in dB (default: clean)")
    args = parser.parse_args(argv)
    print(prepare(args.out, args.n, args.seed, args.duration, args.snr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
