"""Tune a judge's agreement thresholds (a)-(e) on human-human validation conversations.

    python -m turneval.training.tune_judge_thresholds --judge checkpoints/turn_taking_judge_swb_revoiced \
        --data ../cache/revoice/val ../cache/revoice_val_pico/val --json runs/thresholds.json --write

Talking Turns tunes the thresholds of its metrics "on an in-domain validation set to maximize
the agreement between the judge labels and human judgments" (§4.3, A.4), and reports the
values for its own judge (a 0, b 0.1, c -0.45, e -0.1). Those values describe that judge's
probabilities: another judge (another backbone, another training prior, a logit adjustment)
puts its scores elsewhere, and with the paper's values it may never say "turn change" at all.
This tool does what the paper did for any judge: it runs the judge over two-speaker
conversations, takes every decision either speaker took (``two_party_instances``; (a)/(d)
judged by the turn-end head when the judge has one, as the report judges them), picks per
metric the threshold with the highest mean agreement of its two decisions
(``metrics.agreement.tune_thresholds``, over the whole score range) and, with ``--write``,
stores them as the checkpoint's ``agreement_thresholds``, which ``turneval report`` then uses.
(d) shares (a)'s threshold in the paper; here it is tuned on its own decisions like the rest.
Several ``--data`` manifests are pooled (e.g. the same validation calls voiced by different
synthesizers, so that no one engine sets the thresholds). The output also gives each metric's
``agreement_ceiling``: the best lower-direction agreement any threshold reaches on these very
conversations, which tells a threshold that does not transfer from a judge that cannot rank.

Real speech (``--recordings``: stereo files or ``LEFT+RIGHT`` mono pairs, speech by the
report's VAD, as a user's recording is read) is where the thresholds must hold. Real
conversations are short and people rarely interrupt, so a metric is retuned only where both of
its decisions have at least ``--min_per_decision`` instances; the others keep the checkpoint's
values (and the output says which).

    python -m turneval.training.tune_judge_thresholds --judge checkpoints/turn_taking_judge_swb_revoiced \
        --recordings ../shared/real/spokenwoz/audio/*.flac AMI/source0.flac+AMI/source1.flac ... \
        --min_per_decision 5 --write
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Any, Sequence

from turneval.dataset_scripts.files import atomic_write_text, read_json, to_jsonable


def load_manifest(path: str | Path, limit: int | None = None) -> list:
    """Dialogues (with their audio) of a manifest (``manifest.jsonl``, or the folder holding it)."""
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, resolve_manifest, with_audio

    try:
        manifest = resolve_manifest(path)
    except FileNotFoundError as err:
        raise SystemExit(f"tune_judge_thresholds: {err}; pass a manifest.jsonl of two-speaker conversations with audio") from None
    return [with_audio(dialogue) for _, dialogue in islice(read_dialogue_manifest(manifest), limit)]


def tune(judge: Any, dialogues: Sequence, min_per_decision: int = 1) -> dict[str, Any]:
    """Instances of ``dialogues`` under ``judge``, the tuned thresholds, the agreements at the
    paper's and at the tuned thresholds, and each metric's ``agreement_ceiling`` on them. A
    metric with fewer than ``min_per_decision`` instances of either decision keeps the judge's
    own threshold (listed under ``kept_from_checkpoint``)."""
    from turneval.metrics.agreement import DEFAULT_THRESHOLDS, agreement, agreement_ceiling, tune_thresholds
    from turneval.reporting import two_party_judged_instances

    instances = [inst for d in dialogues for inst in two_party_judged_instances(judge, d)]
    tuned = tune_thresholds(instances, wide=True)
    thresholds = {metric: r["threshold"] for metric, r in tuned.items()}
    current = dict(judge.config.agreement_thresholds or {})
    kept = {m: {"threshold": current.get(m), "n_instances": r["n_instances"]} for m, r in tuned.items()
            if min(r["n_instances"].values(), default=0) < min_per_decision and m in current}
    thresholds.update({m: k["threshold"] for m, k in kept.items()})

    def directions(ths) -> dict[str, float]:
        return {f"{m}.{d}": s["agreement"] for m, r in agreement(instances, ths).items() for d, s in r["decisions"].items()}

    return {
        "thresholds": thresholds,
        "n_instances": {m: r["n_instances"] for m, r in tuned.items()},
        "agreement_paper_thresholds": directions(DEFAULT_THRESHOLDS),
        "agreement_tuned_thresholds": directions(thresholds),
        "paper_thresholds": dict(DEFAULT_THRESHOLDS),
        "agreement_ceiling": agreement_ceiling(instances),
        "kept_from_checkpoint": kept,
    }


def data_name(path: str | Path) -> str:
    """A manifest's short name for the record: its corpus and split folder (``revoice/val``)."""
    folder = Path(path).resolve()
    folder = folder.parent if folder.is_file() else folder
    return f"{folder.parent.name}/{folder.name}"


def write_thresholds(checkpoint: str | Path, thresholds: dict[str, float], source: str,
                     validation: dict[str, Any] | None = None) -> Path:
    """Store ``thresholds`` as the checkpoint's ``agreement_thresholds`` (config.json) and say where
    they came from; ``validation`` (``{"source", "instances": {metric: {decision: n}}}``, when they
    were tuned on real recordings) becomes ``agreement_validation``, which the report reads to say
    which directions rest on too few real instances."""
    config_path = Path(checkpoint) / "config.json"
    config = read_json(config_path)
    config["agreement_thresholds"] = {k: round(float(v), 4) for k, v in sorted(thresholds.items())}
    config["agreement_thresholds_source"] = source
    if validation is not None:
        config["agreement_validation"] = validation
    atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True) + "\n")
    return config_path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", required=True, help="judge checkpoint folder")
    p.add_argument("--data", nargs="+", default=[],
                   help="manifest.jsonl (or its folder) of two-speaker validation conversations with audio; several are pooled")
    p.add_argument("--recordings", nargs="+", default=[],
                   help="real two-party recordings (stereo, one speaker per channel, or LEFT+RIGHT mono files), speech by the report's VAD; pooled with --data")
    p.add_argument("--limit", type=int, help="only the first N conversations of each manifest")
    p.add_argument("--min_per_decision", type=int, default=1,
                   help="retune a metric only when each of its two decisions has at least this many instances; else keep the checkpoint's threshold")
    p.add_argument("--json", help="write the instances' figures here")
    p.add_argument("--write", action="store_true", help="store the thresholds in the checkpoint's config.json")
    args = p.parse_args(argv)
    from turneval.modeling.judge_loading import load_judge

    started = time.time()
    judge = load_judge(args.judge).eval()
    if not args.data and not args.recordings:
        p.error("give --data manifests and/or --recordings")
    from turneval.training.fit_pause_decision import load_recording

    dialogues = [d for data in args.data for d in load_manifest(data, args.limit)] + [load_recording(r) for r in args.recordings]
    result = tune(judge, dialogues, args.min_per_decision)
    result.update(judge=str(args.judge), data=[str(d) for d in args.data], n_dialogues=len(dialogues), seconds=time.time() - started)
    print(f"{len(dialogues)} conversations ({sum(d.duration for d in dialogues) / 3600:.2f} h), {result['seconds']:.0f} s")
    print("| metric.decision | paper thresholds | tuned |\n|---|---|---|")
    for key, value in result["agreement_tuned_thresholds"].items():
        print(f"| {key} | {100 * result['agreement_paper_thresholds'][key]:.1f} % | {100 * value:.1f} % |")
    print("thresholds:", {k: round(v, 3) for k, v in result["thresholds"].items()}, "(paper:", result["paper_thresholds"], ")")
    if result["kept_from_checkpoint"]:
        print(f"kept from the checkpoint (fewer than {args.min_per_decision} instances of a decision):", result["kept_from_checkpoint"])
    print("ceiling (the best any threshold does on these conversations, lower direction):",
          {m: round(100 * c["lowest"], 1) for m, c in result["agreement_ceiling"].items()})
    if args.json:
        atomic_write_text(args.json, json.dumps(to_jsonable(result), indent=1))
    if args.write:
        names = list(map(data_name, args.data))
        if args.recordings:
            names.append(f"{len(args.recordings)} real recordings: " + ", ".join(d.id for d in dialogues[-len(args.recordings):]))
        source = f"training/tune_judge_thresholds.py on {len(dialogues)} conversations ({', '.join(names)})"
        if result["kept_from_checkpoint"]:
            source += f"; kept from the checkpoint, fewer than {args.min_per_decision} instances of a decision: " + ", ".join(sorted(result["kept_from_checkpoint"]))
        validation = None
        if args.recordings and not args.data:  # only real recordings: the counts say how far the directions were checked
            validation = {"source": f"{len(args.recordings)} real recordings (both parties in turn as the system)",
                          "instances": {m: dict(n) for m, n in result["n_instances"].items()}}
        print(f"wrote {write_thresholds(args.judge, result['thresholds'], source, validation)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
