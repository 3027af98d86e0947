"""`turneval dataset`: build a data set from conversations and export it as Parquet.

    turneval dataset chunks corpus/manifest.jsonl --out data/chunks
    turneval dataset perturbations synth/*.json --out data/pairs --types late_response early_entry
    turneval dataset questions swb/*-word.text --out data/questions --max-per-class 750

Inputs are a dialogue manifest (``.jsonl``) or conversation files in any format turneval
reads (format guessed per file unless ``--format``); conversations need their audio. The
output folder gets ``<split>.parquet`` (readable with ``load_dataset("parquet", ...)``)
and, for file inputs, the manifest the builder read (``src/manifest.jsonl``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from turneval.cli import UserError
from turneval.dataset_scripts.readers import read_corpus
from turneval.input_checks import check_output_dir


KINDS = ("chunks", "perturbations", "questions")


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "dataset",
        help="build turn_taking_chunks / _perturbations / _questions and export Parquet",
        description="Build one of turneval's data sets from conversations (a manifest.jsonl or conversation "
        "files in any supported format) and write <split>.parquet files to --out.",
    )
    parser.add_argument("kind", choices=KINDS, help="which data set to build")
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="a manifest.jsonl, or conversation files")
    parser.add_argument("--out", required=True, help="output folder for the Parquet files")
    parser.add_argument("--format", default=None, help="input format of conversation files (default: guessed)")
    parser.add_argument("--split", default="train", help="split name for conversation-file inputs (default: train)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument("--cache-dir", default=None, help="datasets cache folder (default: <out>/.cache)")
    parser.add_argument("--types", nargs="+", default=None, help="perturbations: types to build (default: all five)")
    parser.add_argument(
        "--edit-params", default=None, metavar="JSON",
        help='perturbations: per-type edit arguments, e.g. \'{"hold_instead_of_shift": {"max_edited_hold_gap_ms": 4000}}\'',
    )
    parser.add_argument("--audio-storage", choices=("bytes", "path"), default="bytes", help="perturbations: embed WAV bytes or write files")
    parser.add_argument("--max-per-class", type=int, default=750, help="questions: yes (and no) items per task (default 750)")
    parser.add_argument("--first-chunk", type=float, default=0.0, help="chunks: start of chunk 0 in s (0.2 = ESPnet recipe grid)")
    return parser


def _manifest(args: argparse.Namespace, out: Path) -> Path:
    if len(args.inputs) == 1 and args.inputs[0].endswith(".jsonl"):
        path = Path(args.inputs[0])
        if not path.is_file():
            raise UserError(f"{path}: manifest not found")
        return path
    from turneval.dataset_scripts.builders.manifest import write_dialogue_manifest

    dialogues = list(read_corpus([Path(p) for p in args.inputs], format=args.format))
    if not dialogues:
        raise UserError("no conversations found in the inputs")
    return write_dialogue_manifest(dialogues, out / "src" / "manifest.jsonl", split=args.split)


def run(args: argparse.Namespace) -> int:
    from turneval.dataset_scripts.builders import (
        TurnTakingChunks,
        TurnTakingPerturbations,
        TurnTakingQuestions,
        export_parquet,
    )

    out = check_output_dir(args.out)
    manifest = _manifest(args, out)
    cache = args.cache_dir or str(out / ".cache")
    if args.kind == "chunks":
        builder = TurnTakingChunks(cache_dir=cache, manifest=str(manifest), first_chunk_s=args.first_chunk)
    elif args.kind == "perturbations":
        options = {"types": tuple(args.types)} if args.types else {}
        if args.edit_params:
            try:
                options["edit_params"] = json.loads(args.edit_params)
            except json.JSONDecodeError as err:
                raise UserError(f"--edit-params is not valid JSON: {err.msg}") from None
        if args.audio_storage == "path":
            options.update(audio_storage="path", audio_dir=str((out / "audio").resolve()))
        builder = TurnTakingPerturbations(cache_dir=cache, manifest=str(manifest), seed=args.seed, **options)
    else:
        builder = TurnTakingQuestions(cache_dir=cache, manifest=str(manifest), seed=args.seed, max_per_class=args.max_per_class)
    try:
        builder.download_and_prepare()
    except ValueError as err:
        raise UserError(str(err)) from err
    written = export_parquet(builder.as_dataset(), out)
    for split, path in written.items():
        import pyarrow.parquet as pq

        print(f"{split}: {pq.ParquetFile(path).metadata.num_rows} rows -> {path}")
    skipped = getattr(builder, "skipped", None)
    if skipped:
        print(f"skipped: {skipped.summary()}")
    return 0
