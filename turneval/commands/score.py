"""`turneval score`: the naturalness score of many dialogues, and their mean with a 95 % CI.

    turneval score examples/                       # every annotation JSON (or audio file) in a folder
    turneval score a.wav b.wav --system-channel 1  # stereo files (speech found by VAD)
    turneval score manifest.csv --out scores.json  # a CSV with a `path` column (optional `id`)
    accelerate launch --num_processes 4 -m turneval.cli score corpus/ --out scores.json

Under ``accelerate launch`` the dialogues are split across the ranks
(``Accelerator.split_between_processes``), each rank scores its share with its own copy of the
predictor, and the results are gathered on the main process (``gather_object``), which alone
prints and writes them: a large evaluation set scales out unchanged.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from turneval.bandwidth import narrow_band_warning
from turneval.cli import UserError
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.files import atomic_write_text, to_jsonable
from turneval.dataset_scripts.readers import AUDIO_SUFFIXES
from turneval.metrics.intervals import mean_interval
from turneval.reporting import ConversationInput, InputSettings, load_predictor_model, read_conversation


MANIFEST_COLUMNS = ("path", "audio", "file")


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "score",
        help="naturalness score of many dialogues (files, a folder or a manifest CSV) with the mean and its CI",
        description="Score the turn-taking naturalness (TurnNat m = -(l MeanNLL + (1 - l) TailNLL)) of each dialogue "
        "with a FutureActivityPredictor and report the mean with a 95 % confidence interval. Inputs: annotation "
        "JSONs (their segments are used), stereo audio files (speech found by VAD), folders of either, or a "
        "manifest CSV with a 'path' column. Runs data-parallel under `accelerate launch`.",
    )
    parser.add_argument("inputs", nargs="+", metavar="DIALOGUES", help="files, folders or manifest CSVs")
    parser.add_argument("--predictor", metavar="PATH", default=None, help="FutureActivityPredictor checkpoint (default: the bundled look-ahead predictor, Switchboard voice activity read 1 s ahead)")
    parser.add_argument("--system-channel", type=int, choices=(0, 1), default=None,
                        help="system channel (default: the one an annotation JSON names, else 1)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (under accelerate: each rank's device)")
    parser.add_argument("--out", metavar="FILE.json", default=None, help="write per-dialogue scores and the aggregate here")
    parser.add_argument("--n-worst", type=int, default=3, help="worst boundary units kept per dialogue (default 3)")
    parser.add_argument("--band-limit", choices=("none", "telephone"), default="none",
                        help="telephone: low-pass every input to the telephone band first (compare 8 kHz and wideband audio)")
    parser.add_argument("--quiet", action="store_true", help="errors only: no progress, no table of scores")
    parser.add_argument("--skip-errors", action="store_true",
                        help="score the other dialogues when one cannot be read; the errors are listed (and kept in --out)")
    return parser


class Item(tuple):
    """``(dialogue id, file, where it was named)``: where is ``manifest.csv:3`` for a manifest row, else None."""

    def __new__(cls, name: str, file: Path, where: str | None = None) -> "Item":
        return super().__new__(cls, (name, file, where))

    name = property(lambda self: self[0])
    file = property(lambda self: self[1])
    where = property(lambda self: self[2])

    def locate(self, message: str) -> str:
        """``message`` prefixed with the manifest row that named this dialogue."""
        return f"{self.where}: {message}" if self.where else message


def _read_manifest(path: Path) -> list[Item]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text CSV file") from None
    if not rows:
        raise UserError(f"{path}: the manifest has no rows")
    column = next((c for c in MANIFEST_COLUMNS if c in rows[0]), None)
    if column is None:
        raise UserError(f"{path}:1: the manifest needs a column named one of {', '.join(MANIFEST_COLUMNS)}; found {list(rows[0])}")
    items = []
    for line, row in enumerate(rows, start=2):
        value = (row.get(column) or "").strip()
        if not value:
            raise UserError(f"{path}:{line}: empty {column!r}")
        file = Path(value) if Path(value).is_absolute() else path.parent / value
        items.append(Item((row.get("id") or "").strip() or file.stem, file, f"{path}:{line}"))
    return items


def _folder_items(folder: Path) -> list[Item]:
    annotations = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".json")
    if annotations:
        return [Item(p.stem, p) for p in annotations]
    audio = sorted(p for p in folder.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
    if not audio:
        raise UserError(f"{folder}: no annotation JSON or audio files ({', '.join(AUDIO_SUFFIXES)}) in this folder")
    return [Item(p.stem, p) for p in audio]


def collect_inputs(inputs: Sequence[str | Path]) -> list[Item]:
    """``(dialogue id, file, manifest row)`` for every dialogue named by files, folders and manifest CSVs."""
    items: list[Item] = []
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            items += _folder_items(path)
        elif path.suffix.lower() == ".csv":
            if not path.is_file():
                raise UserError(f"{path}: manifest not found")
            items += _read_manifest(path)
        else:
            items.append(Item(path.stem, path))
    seen: dict[str, Path] = {}
    for name, file, _ in items:
        if name in seen and seen[name] != file:
            raise UserError(f"two dialogues share the id {name!r}: {seen[name]} and {file}; give them distinct ids in a manifest")
        seen[name] = file
    return items


def score_one(name: str, file: Path, model: Any, system_channel: int | None = None, n_worst: int = 3, band_limit: str = "none") -> dict[str, Any]:
    """The naturalness of one dialogue file (annotation JSON or stereo audio)."""
    from turneval.naturalness_inference import score_dialogue

    dialogue, facts = read_conversation(ConversationInput(file, system_channel), InputSettings(band_limit=band_limit))
    dialogue.id = name
    band = facts.bandwidth or {}
    notes = narrow_band_warning(band) if model.config.input_type == "audio" else []
    result = score_dialogue(dialogue, model).to_dict(n_worst=n_worst)
    result.pop("units")
    return to_jsonable({
        "id": name, "file": str(file), "duration_s": dialogue.duration,
        "input_sample_rate_hz": band.get("input_sample_rate_hz"), "narrow_band": band.get("narrow_band"), "notes": notes, **result,
    })


def _score_or_error(item: Item, model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """:func:`score_one`; with ``--skip-errors`` a dialogue that cannot be read becomes an error entry."""
    try:
        if not item.file.is_file():
            raise UserError(f"{item.file}: file not found")
        return score_one(item.name, item.file, model, args.system_channel, args.n_worst, args.band_limit)
    except (DialogueError, UserError) as err:
        message = item.locate(str(err))
        if not args.skip_errors:
            raise UserError(message) from None
        return {"id": item.name, "file": str(item.file), "where": item.where, "error": message}


def aggregate(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean (with its 95 % CI over dialogues) of the naturalness score, MeanNLL and TailNLL."""
    out: dict[str, Any] = {"n_dialogues": len(results)}
    for key in ("naturalness_score", "mean_nll", "tail_nll"):
        values = [r[key] for r in results if r.get(key) is not None]
        out[key] = mean_interval(values).to_dict()
    out["n_unscored"] = sum(1 for r in results if r.get("naturalness_score") is None)
    return to_jsonable(out)


def format_scores(results: Sequence[dict[str, Any]], summary: dict[str, Any]) -> str:
    width = max([len(r["id"]) for r in results] + [8])
    lines = [f"{'dialogue':{width}}  {'m':>9}  {'MeanNLL':>9}  {'TailNLL':>9}  units"]
    fmt = lambda v: "n/a" if v is None else f"{v:.4f}"  # noqa: E731
    for r in results:
        lines.append(f"{r['id']:{width}}  {fmt(r['naturalness_score']):>9}  {fmt(r['mean_nll']):>9}  {fmt(r['tail_nll']):>9}  {r['num_units']}")
    m = summary["naturalness_score"]
    lines.append(f"mean naturalness m over {m['n']} dialogue(s): {fmt(m['mean'])} (95% CI {fmt(m['ci95_low'])} .. {fmt(m['ci95_high'])})")
    for r in results:
        if r.get("undefined_reason"):
            lines.append(f"{r['id']}: naturalness undefined: {r['undefined_reason']}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from accelerate import Accelerator
    from accelerate.utils import gather_object


    if args.out:
        from turneval.input_checks import check_output_file

        check_output_file(args.out)
    items = collect_inputs(args.inputs)
    if not args.skip_errors:  # a missing file fails before the model loads
        for item in items:
            if not item.file.is_file():
                raise UserError(item.locate(f"{item.file}: file not found"))
    accelerator = Accelerator(cpu=args.device == "cpu")
    model, checkpoint = load_predictor_model(args.predictor, str(accelerator.device))
    with accelerator.split_between_processes(items) as mine:
        local = [_score_or_error(item, model, args) for item in mine]
    gathered = gather_object(local)
    if not accelerator.is_main_process:
        return 0
    order = {item.name: k for k, item in enumerate(items)}
    gathered = sorted(gathered, key=lambda r: order[r["id"]])
    results = [r for r in gathered if "error" not in r]
    errors = [r for r in gathered if "error" in r]
    summary = aggregate(results)
    summary["n_errors"] = len(errors)
    if results and not args.quiet:
        print(format_scores(results, summary))
    for err in errors:
        print(f"not scored: {err['error']}", file=sys.stderr if args.quiet else sys.stdout)
    if not results:
        raise UserError(f"none of the {len(items)} dialogue(s) could be scored (errors above)")
    if args.out:
        document = {"predictor": checkpoint, "n_processes": accelerator.num_processes, "aggregate": summary, "dialogues": results, "errors": errors}
        atomic_write_text(args.out, json.dumps(document, indent=1, allow_nan=False))
        if not args.quiet:
            print(f"wrote {args.out}")
    return 0
