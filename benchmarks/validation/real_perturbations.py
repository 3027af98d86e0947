"""TurnNat's perturbations on the audio of real calls: how often the original outranks each edit.

    python benchmarks/validation/real_perturbations.py [--spokenwoz-root DIR] [--ami-root DIR] [--seeds 16]
        [--predictor CKPT ...] [--json OUT]
    python benchmarks/run_all.py --only real_perturbations     # $TURNEVAL_SPOKENWOZ_ROOT or the default

The recordings (``_real_calls.real_recordings``): the SpokenWOZ telephone calls (stereo 8 kHz,
word times; ``--spokenwoz-root``, ``$TURNEVAL_SPOKENWOZ_ROOT``, default
``../shared/real/spokenwoz``) and every pair of close-talk channels of the AMI ES2004a excerpt
(``--ami-root``, ``$TURNEVAL_AMI_ROOT``; no word times, so the types whose rules read the words
cannot be placed there). Nobody's code made them. Without the SpokenWOZ folder the benchmark
skips with one NaN figure whose note says why.

The five edits of TurnNat §IV-A, as the perturbation builder makes them
(:func:`turneval.dataset_scripts.perturbations.pairs.make_pair`: real speech and room tone cut
and pasted per channel with faded splices, no synthesis; a 20-25 s crop in mutual silence around
the edit, the natural crop the same stretch of the original; loudness normalised; a removed
response may leave a pause of up to 3 s, as in the Switchboard pairs, :data:`EDIT_PARAMS`):

==========================  ===========================================================
late_response               the responding utterance 1.2-2.0 s later
early_entry                 the responding utterance 1.2-2.5 s earlier, overlapping
hold_instead_of_shift       the responding turn removed (hold instead of shift)
shift_instead_of_hold       a turn of the other speaker from elsewhere in the call inserted
                            into a pause (shift instead of hold)
excessive_backchannel       2-3 extra backchannels of the listener, copies of their own
==========================  ===========================================================

Each recording gets each type with ``--seeds`` seeds (different places where the recording has
several; a place drawn twice counts once). Both crops are scored as ``turneval score`` scores a
stereo file (speech by Silero VAD on the crop's audio, then the predictor's m). Per predictor and
type: the share of pairs in which the original has the higher m (ties count as losses) with a
Wilson 95 % interval (and, since pairs cut from one recording are not independent, a bootstrap
interval that resamples recordings), the number of pairs, the recordings that host the type and those that
cannot (and why); late responses also counted apart by the gap they lengthen, and backchannels by
whether the VAD heard every inserted copy (:data:`SPLITS`). Issue 31's target: >= 0.90 for every type. Every bundled predictor
(``_real_calls.GENERATIONS``) is scored side by side, with the default
(``$TURNEVAL_PREDICTOR``) and ``--predictor`` checkpoints, beside a stopwatch on the silences
that needs no model (:data:`SILENCE_TIMER`) and TurnNat's own figures for scale (its listeners and
its best model, on its pairs). Quick mode (``run_all --quick``): SpokenWOZ only, 2 seeds.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import emit_result, figure, limit_threads  # noqa: E402
from _turnnat_paper import BEST_MODEL, TABLE_III, paper_figures  # noqa: E402
from predictor_switchboard import SWITCHBOARD_EDIT_PARAMS  # noqa: E402


FULL_SEEDS, QUICK_SEEDS = 16, 2
TARGET = 0.90
"""Issue 31: each perturbation type applied to real audio ranks below the original in >= 90 % of pairs."""
EDIT_PARAMS = SWITCHBOARD_EDIT_PARAMS
"""The Switchboard pairs' one departure from the reference filters (a removed response may leave a
pause of up to 3 s, not 1.5 s): a real call's responses are longer than the reference's pause
window allows, so with the reference filter no SpokenWOZ call hosts a removed response."""


def perturbation_pairs(dialogue, seeds: int) -> tuple[list, dict[str, Counter]]:
    """The distinct natural/perturbed pairs of every type that ``dialogue`` hosts with seeds
    ``0..seeds-1``, and per type the reasons of the draws that found no place."""
    from turneval.dataset_scripts.perturbations.conflicts import anchor_key
    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES, NoCandidateError
    from turneval.dataset_scripts.perturbations.pairs import make_pair

    pairs, seen, failed = [], set(), {t: Counter() for t in PERTURBATION_TYPES}
    for kind in PERTURBATION_TYPES:
        for seed in range(seeds):
            try:
                pair = make_pair(dialogue, kind, seed, **EDIT_PARAMS.get(kind, {}))
            except NoCandidateError as err:
                failed[kind][err.reason] += 1
                continue
            # the same place drawn by two seeds is one pair (its anchor on the uncropped clock)
            key = anchor_key(pair.edit)
            place = (kind, round(pair.edit.get(f"source_timeline_{key}", pair.edit.get(key, 0.0)) if key else 0.0, -2))
            if place not in seen:
                seen.add(place)
                pairs.append(pair)
    return pairs, failed


SILENCE_TIMER = "silence timer"
"""The baseline beside every predictor: a stopwatch on the silences, minus the mean absolute gap
at changes of speaker (``perturbation_ranking.mean_gap_score``) on the same VAD segments; a
longer or an overlapping answer scores lower. It needs no model and sees no unit."""


def _scores(heard, models: Sequence[tuple[str, Any]]) -> dict[str, float]:
    """m of one VAD-heard crop by every model, and the silence timer's score."""
    from _real_calls import score_given_segments

    from turneval.training.perturbation_ranking import mean_gap_score

    return {**{name: score_given_segments(heard, model) for name, model in models}, SILENCE_TIMER: mean_gap_score(heard)}


def score_pairs(dialogues: Sequence, models: Sequence[tuple[str, Any]], seeds: int) -> dict[str, Any]:
    """Every pair of every recording scored by every model and the silence timer:
    ``{"pairs": [...], "hosting": {...}}``."""
    from _real_calls import heard_as_turneval

    rows, hosting = [], {}
    for dialogue in dialogues:
        pairs, failed = perturbation_pairs(dialogue, seeds)
        made = Counter(p.perturbation_type for p in pairs)
        hosting[dialogue.id] = {kind: {"pairs": made[kind], "no_place": dict(reasons)} for kind, reasons in failed.items()}
        natural_cache: dict[tuple, tuple] = {}
        for pair in pairs:
            crop = (pair.crop.get("source_start_s"), pair.crop.get("source_end_s"))
            # each crop's speech is found once, as `turneval score` finds it, then every model scores it
            if crop not in natural_cache:
                heard = heard_as_turneval(pair.natural)
                natural_cache[crop] = (heard, _scores(heard, models))
            heard_natural, natural = natural_cache[crop]
            heard_perturbed = heard_as_turneval(pair.perturbed)
            gap_ms = pair.edit.get("pre_response_gap_ms")
            rows.append({"recording": dialogue.id, "corpus": str(dialogue.metadata.get("corpus", "real")),
                         "type": pair.perturbation_type, "description": pair.description,
                         "crop": pair.crop, "natural_m": natural, "perturbed_m": _scores(heard_perturbed, models),
                         "original_gap_s": None if gap_ms is None else gap_ms / 1000.0,
                         "backchannels_heard": backchannels_heard(pair.edit, heard_natural.segments, heard_perturbed.segments)})
    return {"pairs": rows, "hosting": hosting}


def backchannels_heard(edit: dict[str, Any], natural_segments: Sequence, perturbed_segments: Sequence) -> list[int] | None:
    """``[heard, inserted]``: of an excessive_backchannel edit's inserted copies, how many the VAD
    found as speech on the listener's channel of the edited crop where it found none in the
    original (None for the other edits). A copy the VAD misses is an edit no voice-activity
    predictor can see; Silero's recurrent state also makes it hear one copy of a backchannel and
    miss another, or the listener's own unedited backchannel only after a copy."""
    from turneval.dataset_scripts.perturbations.edits import CHANNELS

    inserted = edit.get("inserted_backchannels")
    if not inserted:
        return None
    channel = CHANNELS.index(edit["source_channel"])

    def speech_at(segments: Sequence, start_s: float, end_s: float) -> bool:
        return any(s < end_s and e > start_s for s, e in segments[channel])

    spans = [(b["start_ms"] / 1000.0, b["end_ms"] / 1000.0) for b in inserted]
    heard = sum(speech_at(perturbed_segments, *span) and not speech_at(natural_segments, *span) for span in spans)
    return [heard, len(spans)]


LATE_GAP_SPLIT_S = 1.0
"""Late responses are also counted apart by the gap they lengthen: shorter than this, or not.
A boundary unit covers the 2 s before a speech onset (TurnNat), so once the original gap lasts
about a second, the delayed answer's unit holds silence only, which every predictor finds cheap:
m cannot see a late answer to a question that already waited."""


@dataclass(frozen=True)
class Split:
    """One type's pairs counted apart by what the edit left for m to see."""

    key: str
    title: str
    labels: tuple[str, ...]
    group: Callable[[dict[str, Any]], str | None]
    note: str


def _original_gap(row: dict[str, Any]) -> str | None:
    gap = row.get("original_gap_s")
    return None if gap is None else f"{'<' if gap < LATE_GAP_SPLIT_S else '>='} {LATE_GAP_SPLIT_S:g} s"


def _copies_heard(row: dict[str, Any]) -> str | None:
    heard = row.get("backchannels_heard")
    return None if heard is None else ("every copy" if heard[0] == heard[1] else "not every copy")


SPLITS = {
    "late_response": Split("by_original_gap", "original gap", (f"< {LATE_GAP_SPLIT_S:g} s", f">= {LATE_GAP_SPLIT_S:g} s"), _original_gap,
                           "a unit covers the 2 s before an onset, so lengthening a gap of a second or more moves silence only"),
    "excessive_backchannel": Split("by_copies_heard", "VAD heard", ("every copy", "not every copy"), _copies_heard,
                                   "an inserted backchannel the VAD does not hear (backchannels_heard) is an edit no voice-activity predictor sees"),
}
"""Types also counted apart, and by what."""


def _shares(rows: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    """Wins (original m > perturbed m), pairs, share, Wilson 95 % CI, a CI that resamples recordings, mean difference."""
    from turneval.metrics.intervals import bootstrap_interval, wilson_interval

    rows = [r for r in rows if math.isfinite(r["natural_m"][name]) and math.isfinite(r["perturbed_m"][name])]
    won = [float(r["natural_m"][name] > r["perturbed_m"][name]) for r in rows]
    wins = int(sum(won))
    low, high = wilson_interval(wins, len(rows))
    # pairs of one recording are not independent: beside Wilson's interval, one that resamples recordings
    by_recording = bootstrap_interval(lambda w: float(w.mean()), [won], clusters=[r["recording"] for r in rows])[1:] if rows else (math.nan, math.nan)
    deltas = [r["natural_m"][name] - r["perturbed_m"][name] for r in rows]
    return {"wins": wins, "pairs": len(rows), "share": wins / len(rows) if rows else math.nan,
            "ci95": [low, high], "ci95_resampling_recordings": list(by_recording),
            "mean_m_difference": sum(deltas) / len(deltas) if deltas else math.nan,
            "recordings": len({r["recording"] for r in rows})}


def summarize(scored: dict[str, Any], model_names: Sequence[str]) -> dict[str, Any]:
    """Per model and type: wins (original m > perturbed m), pairs, share, Wilson 95 % CI, mean
    difference; the types of :data:`SPLITS` also counted apart (late responses by the original
    gap, backchannels by whether the VAD heard every copy); the recordings that host each type
    and those that cannot."""
    from turneval.dataset_scripts.perturbations.edits import PERTURBATION_TYPES

    out: dict[str, Any] = {"models": {}, "types": {}}
    for kind in PERTURBATION_TYPES:
        hosts = [rec for rec, h in scored["hosting"].items() if h[kind]["pairs"]]
        cannot = {rec: h[kind]["no_place"] for rec, h in scored["hosting"].items() if not h[kind]["pairs"]}
        out["types"][kind] = {"hosted_by": hosts, "cannot_host": cannot}
    for name in model_names:
        per_type = {kind: _shares([r for r in scored["pairs"] if kind in ("all", r["type"])], name) for kind in [*PERTURBATION_TYPES, "all"]}
        for kind, split in SPLITS.items():
            rows = [r for r in scored["pairs"] if r["type"] == kind]
            per_type[kind][split.key] = {label: _shares([r for r in rows if split.group(r) == label], name) for label in split.labels}
        # every type pooled, per corpus: does the check hold on each kind of call?
        per_type["all"]["by_corpus"] = {c: _shares([r for r in scored["pairs"] if r.get("corpus") == c], name)
                                        for c in sorted({r.get("corpus", "real") for r in scored["pairs"]})}
        out["models"][name] = per_type
    return out


def evaluate(spokenwoz_root: str | None, ami_root: str | None, seeds: int, extra_predictors: Sequence[str] = (), quick: bool = False) -> dict[str, Any]:
    """Everything this benchmark measures, or ``{"skipped": why}`` without the SpokenWOZ folder."""
    from _real_calls import predictors, real_recordings

    limit_threads()
    dialogues, missing = real_recordings(spokenwoz_root, ami_root, quick=quick)
    if not any(d.metadata.get("corpus") == "spokenwoz" for d in dialogues):
        return {"skipped": "; ".join(missing)}
    models = predictors(extra_predictors)
    scored = score_pairs(dialogues, models, seeds)
    return {"seeds": seeds, "recordings": [d.id for d in dialogues], "missing": missing,
            "summary": summarize(scored, [*(name for name, _ in models), SILENCE_TIMER]), **scored}


def _cannot_text(kind_info: dict[str, Any]) -> str:
    cannot = kind_info["cannot_host"]
    if not cannot:
        return "every recording hosts it"
    return "cannot host it: " + ", ".join(f"{rec} ({'/'.join(sorted(reasons)) or 'no place'})" for rec, reasons in cannot.items())


def _difference_label(name: str) -> str:
    return "mean difference of minus the mean gap (s)" if name == SILENCE_TIMER else "mean m difference"


def figures(result: dict[str, Any]) -> list[dict]:
    if "skipped" in result:
        print(f"[real_perturbations] skipped: {result['skipped']}", file=sys.stderr)
        return [figure("real-call perturbations: original above perturbed", math.nan, "", note=f"skipped: {result['skipped']}")]
    out = []
    summary = result["summary"]
    for name, per_type in summary["models"].items():
        for kind, s in per_type.items():
            hosts = "all types pooled" if kind == "all" else f"{len(summary['types'][kind]['hosted_by'])} of {len(result['recordings'])} recordings host it; {_cannot_text(summary['types'][kind])}"
            ci = "no pair" if not s["pairs"] else (f"Wilson 95 % CI [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] "
                                                   f"([{s['ci95_resampling_recordings'][0]:.2f}, {s['ci95_resampling_recordings'][1]:.2f}] resampling recordings)")
            out.append(figure(f"real-call perturbations, original above {kind}: {name}", s["share"], "", headline=kind == "all",
                              note=f"{s['wins']} of {s['pairs']} pairs from {s['recordings']} recordings, {ci}; {_difference_label(name)} "
                                   f"{s['mean_m_difference']:+.3f}; {hosts}; target >= {TARGET:.2f}; {paper_figures(kind)}"))
            for corpus, g in s.get("by_corpus", {}).items():
                out.append(figure(f"real-call perturbations, original above any edit, {corpus} calls: {name}", g["share"], "",
                                  note=f"{g['wins']} of {g['pairs']} pairs from {g['recordings']} recordings; "
                                       f"{_difference_label(name)} {g['mean_m_difference']:+.3f}"))
            split = SPLITS.get(kind)
            for label, g in (s.get(split.key, {}) if split else {}).items():
                out.append(figure(f"real-call perturbations, original above {kind}, {split.title} {label}: {name}", g["share"], "",
                                  note=f"{g['wins']} of {g['pairs']} pairs; {_difference_label(name)} {g['mean_m_difference']:+.3f}; {split.note}"))
    return out


def markdown(result: dict[str, Any]) -> str:
    if "skipped" in result:
        return f"skipped: {result['skipped']}"
    summary = result["summary"]
    names = list(summary["models"])
    lines = [f"{len(result['pairs'])} pairs from {len(result['recordings'])} recordings ({', '.join(result['recordings'])}), "
             f"seeds 0-{result['seeds'] - 1}; share of pairs in which the original has the higher m [Wilson 95 % CI], pairs.", "",
             "| type | " + " | ".join(names) + " | recordings hosting it | TurnNat's best model, its own pairs (paper) |",
             "|---|" + "---|" * (len(names) + 2)]
    for kind in [*summary["types"], "all"]:
        cells = []
        for name in names:
            s = summary["models"][name][kind]
            cells.append("no pair" if not s["pairs"] else f"{s['share']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}], n = {s['pairs']}")
        hosts = "" if kind == "all" else f"{len(summary['types'][kind]['hosted_by'])} of {len(result['recordings'])}"
        paper = TABLE_III[BEST_MODEL]["pairwise_accuracy" if kind == "all" else kind]
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {hosts} | {paper:.3f} |")
    for kind, split in SPLITS.items():
        for label in split.labels:
            cells = []
            for name in names:
                g = summary["models"][name][kind][split.key][label]
                cells.append("no pair" if not g["pairs"] else f"{g['share']:.2f}, n = {g['pairs']}")
            lines.append(f"| {kind}, {split.title} {label} | " + " | ".join(cells) + " | | |")
    corpora = sorted({c for name in names for c in summary["models"][name]["all"].get("by_corpus", {})})
    for corpus in corpora:
        cells = []
        for name in names:
            g = summary["models"][name]["all"]["by_corpus"].get(corpus)
            cells.append("no pair" if not g or not g["pairs"] else f"{g['share']:.2f} [{g['ci95'][0]:.2f}, {g['ci95'][1]:.2f}], n = {g['pairs']}")
        lines.append(f"| all, {corpus} calls | " + " | ".join(cells) + " | | |")
    lines += ["", f"- {paper_figures('all')} (TurnNat Tables II-III)."] + [f"- {kind}: {_cannot_text(info)}" for kind, info in summary["types"].items()]
    if result["missing"]:
        lines += [f"- not found: {m}" for m in result["missing"]]
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """run_all.py entry: the default data folders; quick: SpokenWOZ only, 2 seeds."""
    return figures(evaluate(None, None, QUICK_SEEDS if quick else FULL_SEEDS, quick=quick))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spokenwoz-root", default=None, help="SpokenWOZ folder (default: $TURNEVAL_SPOKENWOZ_ROOT or ../shared/real/spokenwoz)")
    parser.add_argument("--ami-root", default=None, help="AMI folder (default: $TURNEVAL_AMI_ROOT or ../shared/real/ami)")
    parser.add_argument("--seeds", type=int, default=FULL_SEEDS, help=f"draws per recording and type (default {FULL_SEEDS})")
    parser.add_argument("--predictor", action="append", default=[], metavar="PATH", help="another predictor checkpoint (repeatable)")
    parser.add_argument("--quick", action="store_true", help="SpokenWOZ only")
    parser.add_argument("--json", default=None, help="write the result (every pair) here")
    args = parser.parse_args(argv)
    return emit_result(evaluate(args.spokenwoz_root, args.ami_root, args.seeds, args.predictor, args.quick), args.json, markdown)


if __name__ == "__main__":
    sys.exit(main())
