"""The papers' Switchboard tables, reproduced on the real ms98 word times.

    python benchmarks/validation/switchboard_tables.py --swb-root PATH [--splits DIR] [--split test|all]
        [--limit N] [--workers N] [--json OUT] [--markdown OUT]

Every call of the split goes through turneval's own pipeline: the Switchboard reader, the
turn-taking events, the 40 ms labels, the corpus statistics, the agreement instances (with
each speaker in turn as the "system", as a human-human reference has no system), the turn-end
decisions and VAP's zero-shot events. The figures are pooled over calls and set beside:

* Talking Turns (Arora et al. 2025) Table 2, human reference in domain (Switchboard): the
  occurrence rates (a)-(e) of the 40 ms labels;
* Talking Turns Table 8 (speaking rate, backchannel word rate) and §A.8 (C and NA make up
  more than 95 % of the labels); §3.2 / Fig. 2 give Switchboard's IPU, pause, gap and overlap
  statistics only as a bar chart, so ours stand alone;
* VAP (Ekstedt & Skantze 2022): the counts of its shift/hold, backchannel and long events
  under its default EventConfig, over whole calls;
* the shared data's README: the offset at speaker changes (median and 10-90 %).

``--split all`` reads the 2,438 calls of train, val and test. Quick mode (``run(quick=True)``
under run_all.py): the first 20 test calls. Without the data: a message, no figure.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure  # noqa: E402
from _switchboard import add_data_arguments, locate, map_calls  # noqa: E402


QUICK_LIMIT = 20
VAP_KEYS = ("shift", "hold", "backchannel", "long", "pred_shift", "pred_hold", "pred_backchannel")
DECISION_VIEWS = {
    "all IPUs": {},
    "metric (a)": {"include_backchannel_ipus": False, "next_backchannel": "skip"},
}

# ---------------------------------------------------------------------------------- per call


def call_figures(dialogue) -> dict[str, Any]:
    """Every additive count of one call (small: the parent pools them)."""
    from turneval.dataset_scripts.agreement_instances import build_agreement_instances, user_interruption_rate
    from turneval.dataset_scripts.events import extract_events
    from turneval.dataset_scripts.labels import LABELS, chunk_labels
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions
    from turneval.dataset_scripts.vap_events import turn_taking_events
    from turneval.metrics.turn_statistics import event_totals

    events = extract_events(dialogue)
    labels = chunk_labels(dialogue, events=events)
    seq = list(labels.labels)
    probs = np.zeros((len(seq), len(LABELS)))
    occurrence: dict[str, dict[str, int]] = {}
    speaker_interruptions = [0, 0]
    for system in (0, 1):  # a human-human call: each speaker is the "system" once
        for inst in build_agreement_instances(seq, labels.floor, probs, system, dialogue.id):
            counts = occurrence.setdefault(inst.metric, {})
            counts[inst.decision] = counts.get(inst.decision, 0) + 1
        rate = user_interruption_rate(seq, labels.floor, system, dialogue.id)
        speaker_interruptions[0] += rate["count"]
        speaker_interruptions[1] += rate["n_chunks"]
    decisions = {}
    for view, kwargs in DECISION_VIEWS.items():
        found = turn_end_decisions(dialogue, events=events, **kwargs)
        decisions[view] = [len(found), sum(d.shift for d in found)]
    vap = turn_taking_events(dialogue.frame_activity().T, max_time=dialogue.duration + 1.0)
    # Offset at each speaker change: the next start minus the previous end (negative: the new
    # speaker starts in overlap), between successive IPUs (backchannels included: the
    # definition that reproduces the data README's figures) and between successive turns.
    ipus = sorted(events.ipus, key=lambda u: (u.start, u.end))
    turns = sorted(events.turns, key=lambda t: (t.start, t.end))
    offsets = {
        "ipus": [b.start - a.end for a, b in zip(ipus, ipus[1:]) if a.speaker != b.speaker],
        "turns": [b.start - a.end for a, b in zip(turns, turns[1:]) if a.speaker != b.speaker],
    }
    return {
        "totals": event_totals(events),
        "labels": {label: seq.count(label) for label in LABELS},
        "occurrence": occurrence,
        "speaker_interruptions": speaker_interruptions,
        "decisions": decisions,
        "vap": {key: len(vap[key]) for key in VAP_KEYS},
        "offsets": offsets,
    }


def _chunk(args: tuple[str, list[str]]) -> list[tuple[str, dict[str, Any]]]:
    root, ids = args
    return map_calls(Path(root), ids, call_figures)


def process_calls(root: Path, ids: list[str], workers: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """``call_figures`` of every call, sorted by id; ``workers`` > 1 splits the calls over
    processes (each reads its own share; from the archive each streams it once)."""
    if workers <= 1 or len(ids) < 2 * workers:
        return map_calls(root, ids, call_figures)
    import multiprocessing

    shares = [ids[i::workers] for i in range(workers)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_chunk, [(str(root), share) for share in shares])
    return sorted((item for part in parts for item in part), key=lambda item: int(item[0]))


# ---------------------------------------------------------------------------------- pooling


def _offset_summary(values: np.ndarray) -> dict[str, float]:
    if not values.size:
        return {"n": 0, "median_s": float("nan"), "p10_s": float("nan"), "p90_s": float("nan"), "overlap_share": float("nan")}
    return {
        "n": int(values.size),
        "median_s": float(np.median(values)),
        "p10_s": float(np.percentile(values, 10)),
        "p90_s": float(np.percentile(values, 90)),
        "overlap_share": float(np.mean(values < 0)),
    }


def pool(per_call: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Corpus figures from the per-call counts (every rate from summed counts)."""
    from turneval.metrics.turn_statistics import add_totals, statistics_from_totals

    calls = [c for _, c in per_call]
    stats = statistics_from_totals(add_totals(c["totals"] for c in calls))
    labels = {k: sum(c["labels"][k] for c in calls) for k in calls[0]["labels"]} if calls else {}
    occurrence: dict[str, dict[str, int]] = {}
    for c in calls:
        for metric, counts in c["occurrence"].items():
            for decision, n in counts.items():
                occurrence.setdefault(metric, {}).setdefault(decision, 0)
                occurrence[metric][decision] += n
    positive = {"a": "T", "b": "BC", "c": "I", "d": "T", "e": "T"}
    rates = {}
    for metric, pos in positive.items():
        counts = occurrence.get(metric, {})
        total = sum(counts.values())
        rates[metric] = {"count": counts.get(pos, 0), "n_instances": total, "rate": counts.get(pos, 0) / total if total else float("nan")}
    si = [sum(c["speaker_interruptions"][i] for c in calls) for i in (0, 1)]
    rates["speaker_interruption"] = {"count": si[0], "n_instances": si[1], "rate": si[0] / si[1] if si[1] else float("nan")}
    decisions = {}
    for view in DECISION_VIEWS:
        n = sum(c["decisions"][view][0] for c in calls)
        shifts = sum(c["decisions"][view][1] for c in calls)
        decisions[view] = {"n": n, "shifts": shifts, "shift_rate": shifts / n if n else float("nan")}
    vap = {k: sum(c["vap"][k] for c in calls) for k in VAP_KEYS}
    offsets = {unit: np.asarray([o for c in calls for o in c["offsets"][unit]], dtype=np.float64) for unit in ("ipus", "turns")}
    n_chunks = sum(labels.values())
    return {
        "n_calls": len(calls),
        "hours": stats["duration_s"] / 3600.0,
        "statistics": stats,
        "labels": labels,
        "label_shares": {k: v / n_chunks for k, v in labels.items()} if n_chunks else {},
        "occurrence": rates,
        "turn_end_decisions": decisions,
        "vap_events": vap,
        "vap_shift_share": vap["shift"] / (vap["shift"] + vap["hold"]) if vap["shift"] + vap["hold"] else float("nan"),
        "offsets": {unit: _offset_summary(values) for unit, values in offsets.items()},
    }


# ---------------------------------------------------------------------------------- tables

# Each row: (label, our value from the pooled result, unit, paper value, source, why they differ)
EXPLAIN = {
    "a": "Same instance rule and 40 ms state machine as the paper's recipe (golden/espnet_labels). The data differ: the "
         "paper's own 138-call test split and alignments, VAP's split and the ms98 hand-corrected word times here. The "
         "exact-time count (turn-end decisions, metric (a) view, below) gives 16.3 % on the test split.",
    "b": "More backchannel onsets than the paper's. Not over-detection against the dialogue acts: on 120 test calls with "
         "SWDA tags our backchannel IPUs number 4,044 against 4,063 units tagged b (69 % of ours are all-b, 71 % of the "
         "b units lie in one of ours). The rest of the gap is not established (the paper's calls and backchannel rows).",
    "c": "Agrees within the paper's one-decimal rounding.",
    "d": "Human-human data has no system: with each speaker as the system in turn, (d) pools the same instances as (a), "
         "as the paper's equal (a) and (d) values show.",
    "speaker_interruption": "(c) with the roles swapped; pooled over both directions it equals (c), as in the paper (0.4 and 0.4).",
    "e": "Same rule (an I run entered with the speaker on the floor, resolved by T or C). Sampling does not explain the gap "
         "(about 16,000 instances here, roughly a quarter of that on 138 calls: +-1.5 points); the cause is not "
         "established. Candidates: word end times (ms98's are hand-corrected; an interrupter whose last word ends "
         "later outlasts the overlap more often) and the paper's different test calls.",
}


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def _references() -> dict[str, dict[str, Any]]:
    """The papers' values shipped with the package (turneval/data/reference_values.json)."""
    from importlib import resources

    text = resources.files("turneval").joinpath("data/reference_values.json").read_text(encoding="utf-8")
    return {entry["key"]: entry for entry in json.loads(text)["values"]}


def table2_rows(result: dict[str, Any]) -> list[tuple[str, float, float, str, str]]:
    """(row, ours %, paper %, source, explanation) of Talking Turns Table 2."""
    refs = _references()
    occ = result["occurrence"]
    rows = []
    for metric in ("a", "b", "c", "d", "e"):
        ref = refs[f"occurrence.{metric}"]
        rows.append((ref["label"], 100 * occ[metric]["rate"], ref["values"]["human_in_domain"],
                     f"Table 2, {ref['column']}", EXPLAIN[metric]))
    rows.insert(4, ("% interruption when the system speaks (user-alone chunks followed by I)",
                    100 * occ["speaker_interruption"]["rate"], 0.4,
                    "Table 2, AI is Speaker: % Interruption", EXPLAIN["speaker_interruption"]))
    return rows


def statistics_rows(result: dict[str, Any]) -> list[tuple[str, float, float | None, str, str]]:
    refs = _references()
    s = result["statistics"]
    bc_per_speaker = s["backchannel_word_rate"] / 2 if s["backchannel_word_rate"] is not None else None
    shares = result["label_shares"]
    rows = [
        ("Speaking rate (words per minute of own speech)", s["speaking_rate_wpm"],
         refs["statistics.speaking_rate_wpm"]["values"]["human_in_domain"], "Table 8",
         "Ours: hand-aligned words over the speaker's IPU time (pauses under 200 ms inside an IPU count as speech). The "
         "paper: Whisper ASR words of each utterance; ASR drops disfluent fragments and fillers that ms98 keeps, and the "
         "utterance span it divides by differs from our IPUs."),
        ("Backchannel word rate (both speakers, per minute of conversation)", s["backchannel_word_rate"],
         refs["statistics.backchannel_word_rate"]["values"]["human_in_domain"], "Table 8",
         "Backchannel words (words of the IPUs the events call backchannels: word list + inside the other's turn) "
         "per minute of call, both speakers together. The paper counts the backchannel sequences of its labels on "
         "Whisper ASR words and does not say whether its human row counts one speaker or both; the next row is "
         "the per-speaker rate (half this one), the convention of its Moshi and cascaded rows."),
        ("Backchannel word rate (one speaker, per minute of conversation)", bc_per_speaker,
         refs["statistics.backchannel_word_rate"]["values"]["human_in_domain"], "Table 8",
         "Both speakers' backchannel words / (2 x call minutes)."),
        ("C + NA share of the 40 ms labels", 100 * (shares.get("C", 0) + shares.get("NA", 0)), 95.0, "§A.8 (\"more than 95 %\")",
         "The paper states a lower bound (of its training labels). Our I share is larger than a VAD would give: ms98 "
         "word spans inside IPUs (pauses <= 200 ms joined) overlap the partner's more often than acoustic speech does."),
    ]
    for name in ("ipu", "pause", "gap", "overlap"):
        rows.append((f"{name.upper() if name == 'ipu' else name.capitalize()}s per minute", s[f"{name}_per_min"], None,
                     "Fig. 2(a) (bar chart only)", "The paper's Switchboard bars carry no printed value."))
        rows.append((f"{name.upper() if name == 'ipu' else name.capitalize()} % of duration", s[f"{name}_percent"], None,
                     "Fig. 2(b) (bar chart only)", "As above."))
    return rows


WHY_IN_CELL_MAX = 100
"""A longer "why they differ" goes under its table as a numbered note (docs/ keeps cells short)."""


def _why_cell(why: str, notes: list[str]) -> str:
    if len(why) <= WHY_IN_CELL_MAX:
        return why
    notes.append(why)
    return f"note {len(notes)}"


def _notes(notes: list[str]) -> list[str]:
    return ["", *(f"{n}. {text}" for n, text in enumerate(notes, start=1))] if notes else []


def markdown(result: dict[str, Any], split: str, seconds: float) -> str:
    head = (f"Switchboard ms98, split `{split}`: {result['n_calls']} calls, {result['hours']:.1f} h; "
            f"computed {result.get('computed_at', '(date not recorded)')} in {seconds:.0f} s "
            f"({result.get('workers', 1)} process(es)), code at commit {result.get('commit') or '(not recorded)'}.")
    lines = [head, "", "### Talking Turns Table 2: occurrence rates of the 40 ms labels (human, in domain)", "",
             "| figure | ours | paper | difference | source | why they differ |", "|---|---|---|---|---|---|"]
    notes: list[str] = []
    for label, ours, paper, source, why in table2_rows(result):
        digits = 2 if paper < 1 else 1
        lines.append(f"| {label} | {_fmt(ours, digits)} % | {paper} % | {ours - paper:+.{digits}f} | {source} | {_why_cell(why, notes)} |")
    occ = result["occurrence"]
    lines += _notes(notes)
    notes = []
    lines += ["", "Instances: " + ", ".join(f"({m}) {occ[m]['n_instances']}" for m in "abcde") + "; "
              f"system-speaking chunks {occ['speaker_interruption']['n_instances']}.", "",
              "### Talking Turns §3.2, Table 8 and §A.8: corpus statistics", "",
              "| figure | ours | paper | difference | source | why they differ |", "|---|---|---|---|---|---|"]
    for label, ours, paper, source, why in statistics_rows(result):
        diff = "" if paper is None or ours is None else f"{ours - paper:+.1f}"
        lines.append(f"| {label} | {_fmt(ours, 2)} | {'' if paper is None else paper} | {diff} | {source} | {_why_cell(why, notes)} |")
    lines += _notes(notes)
    shares = result["label_shares"]
    lines += ["", "Label shares: " + ", ".join(f"{k} {100 * v:.2f} %" for k, v in shares.items()) + ".", "",
              "### Turn-end decisions, VAP events and offsets at speaker changes", "",
              "| figure | ours | reference | source | note |", "|---|---|---|---|---|"]
    dec = result["turn_end_decisions"]
    lines.append(f"| shift share after >= 200 ms of silence, metric (a) view | {100 * dec['metric (a)']['shift_rate']:.1f} % "
                 f"({dec['metric (a)']['n']} decisions) | 15.9 % | Talking Turns Table 2 (a) | the floor holder's pauses; "
                 "backchannel answers decide nothing |")
    lines.append(f"| shift share after >= 200 ms of silence, all IPUs | {100 * dec['all IPUs']['shift_rate']:.1f} % "
                 f"({dec['all IPUs']['n']} decisions) | 27 % | issue 13 (200 test calls) | every IPU end, any next speech |")
    vap = result["vap_events"]
    lines.append(f"| VAP shift / (shift + hold) | {100 * result['vap_shift_share']:.1f} % ({vap['shift']} shifts, {vap['hold']} holds) "
                 "| no published count located | Ekstedt & Skantze 2022 | VAP's default EventConfig (1 s single-speaker pre/post "
                 "conditions, >= 250 ms mutual silence), over whole calls; see below |")
    lines.append(f"| VAP backchannel (short) / long events | {vap['backchannel']} / {vap['long']} | no published count located | "
                 "Ekstedt & Skantze 2022 | same configuration |")
    for unit, what in (("ipus", "successive IPUs of different speakers, backchannels included"),
                       ("turns", "successive turns (backchannels do not count)")):
        off = result["offsets"][unit]
        reference = "+0.06 s (-1.39 to +0.76 s)" if unit == "ipus" else ""
        source = "shared/real/switchboard_ms98/README.md" if unit == "ipus" else ""
        lines.append(f"| offset at speaker changes ({unit[:-1].upper() if unit == 'ipus' else 'turn'}s), median (10-90 %) | "
                     f"{off['median_s']:+.2f} s ({off['p10_s']:+.2f} to {off['p90_s']:+.2f} s), {off['n']} changes | "
                     f"{reference} | {source} | next start - previous end, {what}; "
                     f"{100 * off['overlap_share']:.0f} % start in overlap |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- entry points


def evaluate(root: Path, splits: Path, split: str = "test", limit: int | None = None, workers: int = 1) -> dict[str, Any]:
    from turneval.dataset_scripts.readers import read_split_ids

    ids = read_split_ids(splits, split)[:limit]
    start = time.perf_counter()
    per_call = process_calls(root, ids, workers)
    result = pool(per_call)
    import datetime

    result.update({"split": split, "limit": limit, "seconds": time.perf_counter() - start, "workers": workers,
                   "swb_root": str(root),
                   "computed_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   "commit": _git_commit()})
    return result


def _git_commit() -> str | None:
    """The repository's commit (``+`` when the working tree has changes), None outside git."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=HERE, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def run(quick: bool) -> list[dict]:
    """run_all.py entry: the headline figures (quick: the first 20 test calls; full: the test split)."""
    found = locate()
    if found is None:
        return []
    limit = QUICK_LIMIT if quick else None
    result = evaluate(*found, "test", limit)
    where = f"{result['n_calls']} Switchboard test calls, {result['hours']:.1f} h"
    occ, dec = result["occurrence"], result["turn_end_decisions"]
    return [
        figure("Switchboard tables: calls per second", result["n_calls"] / result["seconds"], "1/s",
               note=f"reader, events, 40 ms labels, instances, decisions, VAP events; {where}"),
        figure("Switchboard (a) % turn change after a pause", 100 * occ["a"]["rate"], "%", headline=True,
               note=f"Talking Turns Table 2 human in domain: 15.9 %; {where}"),
        figure("Switchboard (b) % backchannel", 100 * occ["b"]["rate"], "%", note="Talking Turns: 0.30 %"),
        figure("Switchboard (c) % interruption", 100 * occ["c"]["rate"], "%", note="Talking Turns: 0.4 %"),
        figure("Switchboard (e) % floor-taking", 100 * occ["e"]["rate"], "%", note="Talking Turns: 63.6 %"),
        figure("Switchboard speaking rate", result["statistics"]["speaking_rate_wpm"], "wpm", note="Talking Turns Table 8: 204.5"),
        figure("Switchboard shift share, metric (a) decisions", 100 * dec["metric (a)"]["shift_rate"], "%"),
        figure("Switchboard VAP shift share", 100 * result["vap_shift_share"], "%"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(parser)
    parser.add_argument("--split", default="test", choices=("train", "val", "test", "all"))
    parser.add_argument("--limit", type=int, help="only the first N calls (sorted ids)")
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_LIMIT} calls")
    parser.add_argument("--workers", type=int, default=1, help="processes (calls are split among them)")
    parser.add_argument("--json", type=Path, help="write the pooled figures here")
    parser.add_argument("--markdown", type=Path, help="write the tables here")
    parser.add_argument("--docs", type=Path, help="replace this split's generated block in a docs page (docs/switchboard.md)")
    parser.add_argument("--from-json", type=Path, help="re-render the tables of an earlier --json result (no data needed)")
    args = parser.parse_args(argv)
    limit = QUICK_LIMIT if args.quick and args.limit is None else args.limit
    if args.from_json:
        result = json.loads(args.from_json.read_text(encoding="utf-8"))
        args.split, limit = result["split"], result["limit"]
    else:
        found = locate(args.swb_root, args.splits)
        if found is None:
            return 0
        result = evaluate(*found, args.split, limit, args.workers)
    text = markdown(result, args.split, result["seconds"])
    print(text)
    for path, content in ((args.json, json.dumps(result, indent=1)), (args.markdown, text + "\n")):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    if args.docs:
        update_docs(args.docs, args.split if limit is None else f"{args.split}-{limit}", text)
    return 0


def update_docs(path: Path, name: str, text: str) -> None:
    """Put ``text`` between ``<!-- switchboard_tables:NAME -->`` and ``<!-- /switchboard_tables:NAME -->``
    in ``path`` (the generated block of one split); the rest of the page stays as written."""
    begin, end = f"<!-- switchboard_tables:{name} -->", f"<!-- /switchboard_tables:{name} -->"
    page = path.read_text(encoding="utf-8")
    if begin not in page or end not in page:
        raise SystemExit(f"{path}: no {begin} ... {end} block to replace; add the two markers where the tables go")
    block = f"{begin}\n_Generated by `python benchmarks/validation/switchboard_tables.py --split {name} --docs docs/{path.name}`._\n\n{text}\n{end}"
    head, rest = page.split(begin, 1)
    path.write_text(head + block + rest.split(end, 1)[1], encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
