"""The range of naturalness m on real human conversations, per predictor: what a report's m is read against.

    python tools/build_naturalness_range.py [--spokenwoz-root DIR] [--ami-root DIR] [--swb-root PATH --splits DIR]
        [--calls 40] [--predictor CKPT ...] [--write turneval/data/naturalness_human_range.json] [--json OUT]
    python benchmarks/run_all.py --only naturalness_range   # its figures, nothing written

Nobody's code made these conversations; each is scored as ``turneval score`` would score it.

* ``spokenwoz_audio``: the SpokenWOZ calls with audio (stereo 8 kHz; speech by Silero VAD on
  the audio), every predictor;
* ``harper_valley_audio``: the Harper Valley Bank calls (stereo 8 kHz bank calls, agent and
  caller; speech by Silero VAD on the audio; ``$TURNEVAL_HARPER_VALLEY_ROOT``), every predictor;
* ``ami_channel_pairs``: every pair of close-talk channels of the AMI ES2004a excerpt (16 kHz
  headsets, two more people in the room), every predictor;
* ``spokenwoz_word_times``: every SpokenWOZ call with word times (speech = the words),
  voice-activity predictors only;
* ``switchboard_test``: the first ``--calls`` held-out test calls of Switchboard (ids sorted;
  speech = the ms98 word times, whole calls), voice-activity predictors only.

Per predictor (both bundled ones, the default and ``--predictor`` checkpoints): each source's m
(every value kept) and, pooled over the sources, the median, the 10th-90th percentile range,
min, max, mean and sd. ``--write`` stores that as the data file the report and ``turneval
compare`` read (:mod:`turneval.naturalness_range`), with the command, the commit and the date.
Quick mode (``run_all --quick``): SpokenWOZ audio calls and 4 Switchboard calls; without the
SpokenWOZ folder it skips with one NaN figure that says why.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))  # the data readers the benchmarks share (_switchboard, _spokenwoz, _real_calls)

from _harness import figure, limit_threads  # noqa: E402


FULL_CALLS, QUICK_CALLS = 40, 4
RANGE_PERCENTILES = (10.0, 90.0)
"""The pooled range stored for a report: the 10th-90th percentile of real conversations, as the
report's other human ranges (``tools/build_human_ranges.py``)."""


def _switchboard_calls(swb_root: str | None, splits: str | None, calls: int) -> tuple[list, str | None]:
    from _switchboard import SKIP_MESSAGE, locate

    from turneval.dataset_scripts.readers import iter_switchboard_calls
    from turneval.dataset_scripts.readers.switchboard import read_split_ids

    found = locate(swb_root, splits)
    if found is None:
        return [], SKIP_MESSAGE
    root, split_dir = found
    ids = read_split_ids(split_dir, "test")[:calls]
    dialogues = sorted(iter_switchboard_calls(root, ids), key=lambda d: d.id)
    return dialogues, None


def collect_sources(spokenwoz_root: str | None, ami_root: str | None, swb_root: str | None, splits: str | None,
                    calls: int, quick: bool) -> tuple[dict[str, tuple[list, Callable, bool]], list[str]]:
    """``{source: (dialogues, scorer, audio_needed)}`` of what is found, and what is not (nothing
    at all without the SpokenWOZ calls)."""
    from _ami import AmiDataMissing
    from _harper_valley import HarperValleyDataMissing
    from _harper_valley import load_calls as load_harper_valley
    from _real_calls import ami_channel_pairs, heard_as_turneval, score_given_segments
    from _spokenwoz import SpokenwozDataMissing, load_calls, word_time_calls

    sources: dict[str, tuple[list, Callable, bool]] = {}
    missing = []
    try:
        # speech found once per recording as `turneval score` finds it, then scored by every predictor
        sources["spokenwoz_audio"] = ([heard_as_turneval(d) for d in load_calls(spokenwoz_root)], score_given_segments, True)
        sources["spokenwoz_word_times"] = (word_time_calls(spokenwoz_root), score_given_segments, False)
    except SpokenwozDataMissing as err:
        return {}, [str(err)]  # without the real calls the benchmark skips: read nothing else
    if not quick:
        try:
            sources["harper_valley_audio"] = ([heard_as_turneval(d) for d in load_harper_valley()], score_given_segments, True)
        except HarperValleyDataMissing as err:
            missing.append(str(err))
        try:
            sources["ami_channel_pairs"] = (ami_channel_pairs(ami_root), score_given_segments, True)  # already heard by that VAD pass
        except AmiDataMissing as err:
            missing.append(str(err))
    swb, why = _switchboard_calls(swb_root, splits, calls)
    if swb:
        sources["switchboard_test"] = (swb, score_given_segments, False)
    elif why:
        missing.append(why)
    return sources, missing


def describe(values: Sequence[float]) -> dict[str, Any]:
    """n, median, the :data:`RANGE_PERCENTILES` range (``low``, ``high``), min, max, mean and sd of the finite values."""
    v = np.array([x for x in values if math.isfinite(x)], dtype=np.float64)
    if not v.size:
        return {"n": 0}
    low, high = np.percentile(v, RANGE_PERCENTILES)
    return {"n": int(v.size), "median": float(np.median(v)), "low": float(low), "high": float(high),
            "min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0}


def evaluate(spokenwoz_root: str | None = None, ami_root: str | None = None, swb_root: str | None = None, splits: str | None = None,
             calls: int = FULL_CALLS, extra_predictors: Sequence[str] = (), quick: bool = False) -> dict[str, Any]:
    """m of every conversation of every source with every predictor that can read it, and the pooled ranges."""
    from _real_calls import predictors

    limit_threads()
    sources, missing = collect_sources(spokenwoz_root, ami_root, swb_root, splits, calls, quick)
    if "spokenwoz_audio" not in sources:
        return {"skipped": "; ".join(missing)}
    out: dict[str, Any] = {"missing": missing, "predictors": {}}
    for name, model in predictors(extra_predictors):
        reads_audio = model.config.input_type == "audio"
        per_source = {}
        for source, (dialogues, scorer, audio_needed) in sources.items():
            if reads_audio and not audio_needed:
                continue  # word times carry no sound
            values = {d.id: scorer(d, model) for d in dialogues}
            per_source[source] = {"conversations": len(dialogues), "duration_s": describe([d.duration for d in dialogues]),
                                  "m": values, **{k: v for k, v in describe(list(values.values())).items() if k != "n"}}
        pooled = [m for s in per_source.values() for m in s["m"].values()]
        out["predictors"][name] = {"input": model.config.input_type, "pooled": describe(pooled), "sources": per_source}
    return out


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


SOURCE_TEXT = {
    "spokenwoz_audio": "SpokenWOZ calls with audio (real two-party telephone calls, stereo 8 kHz, CC BY-NC 4.0; ../shared/real/spokenwoz), speech by Silero VAD as `turneval score` finds it",
    "harper_valley_audio": "Harper Valley Bank calls (real two-party bank calls, stereo 8 kHz; Gridspace-Stanford Harper Valley speech dataset, CC BY 4.0; ../shared/real/harper_valley), speech by Silero VAD",
    "ami_channel_pairs": "AMI ES2004a excerpt, every pair of close-talk headset channels (60 s, CC BY 4.0; ../shared/real/ami), speech by Silero VAD",
    "spokenwoz_word_times": "SpokenWOZ calls, speech from their word times (no audio)",
    "switchboard_test": "Switchboard-1 held-out test calls (VAP split; ms98 word times, whole calls; ../shared/real/switchboard_ms98)",
}


def data_file(result: dict[str, Any], command: str) -> dict[str, Any]:
    """The document stored in ``turneval/data/naturalness_human_range.json``."""
    entries = {}
    for name, p in result["predictors"].items():
        q = p["pooled"]
        sources = ", ".join(f"{s['conversations']} {src}" for src, s in p["sources"].items())
        entries[name] = {
            "input": p["input"],
            "range": {"low": q["low"], "high": q["high"], "median": q["median"], "n": q["n"], "source": f"{name}: {sources}"},
            "min": q["min"], "max": q["max"], "mean": q["mean"], "sd": q["sd"],
            "measured_on": {src: {"conversations": s["conversations"], "median": s["median"], "min": s["min"], "max": s["max"],
                                  "median_duration_s": s["duration_s"]["median"]} for src, s in p["sources"].items()},
        }
    return {
        "description": "Naturalness m (TurnNat, higher is more natural) on real human conversations, per predictor checkpoint: the "
                       "range a report's m is read against and the spread `turneval compare` weighs a difference by. 'range' is the "
                       "10th-90th percentile over the pooled conversations (as the report's other human ranges), 'sd' their standard "
                       "deviation. Measured by turneval, not copied from a paper.",
        "percentiles": list(RANGE_PERCENTILES),
        "source": {src: SOURCE_TEXT[src] for src in dict.fromkeys(s for p in result["predictors"].values() for s in p["sources"])},
        "command": command,
        "commit": _commit(),
        "date": _dt.date.today().isoformat(),
        "naturalness_m": entries,
    }


def figures(result: dict[str, Any]) -> list[dict]:
    if "skipped" in result:
        print(f"[naturalness_range] skipped: {result['skipped']}", file=sys.stderr)
        return [figure("naturalness m of real conversations", math.nan, "", note=f"skipped: {result['skipped']}")]
    out = []
    for name, p in result["predictors"].items():
        pooled = p["pooled"]
        per = "; ".join(f"{src}: median {s['median']:.2f} over {s['conversations']} [{s['min']:.2f}, {s['max']:.2f}]" for src, s in p["sources"].items())
        out.append(figure(f"naturalness m of real conversations, median: {name}", pooled["median"], "", headline=True,
                          note=f"{pooled['n']} conversations, 10-90 % range [{pooled['low']:.2f}, {pooled['high']:.2f}], sd {pooled['sd']:.2f}; {per}"))
    return out


def markdown(result: dict[str, Any]) -> str:
    if "skipped" in result:
        return f"skipped: {result['skipped']}"
    lines = ["| predictor | source | conversations | median m | min | max |", "|---|---|---|---|---|---|"]
    for name, p in result["predictors"].items():
        for src, s in p["sources"].items():
            lines.append(f"| {name} | {src} | {s['conversations']} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} |")
        q = p["pooled"]
        lines.append(f"| {name} | **pooled** | {q['n']} | {q['median']:.2f} | 10-90 %: {q['low']:.2f} | {q['high']:.2f} (sd {q['sd']:.2f}) |")
    lines += [f"- not found: {m}" for m in result["missing"]]
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """run_all.py entry: the default data folders; quick: SpokenWOZ and 4 Switchboard calls."""
    return figures(evaluate(calls=QUICK_CALLS if quick else FULL_CALLS, quick=quick))


def main(argv: Sequence[str] | None = None) -> int:
    from _switchboard import add_data_arguments

    from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spokenwoz-root", default=None, help="SpokenWOZ folder (default: $TURNEVAL_SPOKENWOZ_ROOT or ../shared/real/spokenwoz)")
    parser.add_argument("--ami-root", default=None, help="AMI folder (default: $TURNEVAL_AMI_ROOT or ../shared/real/ami)")
    add_data_arguments(parser)
    parser.add_argument("--calls", type=int, default=FULL_CALLS, help=f"Switchboard test calls (default {FULL_CALLS})")
    parser.add_argument("--predictor", action="append", default=[], metavar="PATH", help="another predictor checkpoint (repeatable)")
    parser.add_argument("--quick", action="store_true", help="SpokenWOZ and Switchboard only")
    parser.add_argument("--write", default=None, metavar="FILE.json", help="store the ranges as the data file the report and `turneval compare` read")
    parser.add_argument("--json", default=None, help="write the whole result (every conversation's m) here")
    args = parser.parse_args(argv)
    result = evaluate(args.spokenwoz_root, args.ami_root, args.swb_root, args.splits, args.calls, args.predictor, args.quick)
    print(markdown(result))
    if args.json:
        atomic_write_text(args.json, json.dumps(to_jsonable(result), indent=1))
    if args.write and "skipped" not in result:
        # the options that change the figures (the data folders are the defaults unless named)
        options = [f"--calls {args.calls}"] + [f"--predictor {p}" for p in args.predictor] + (["--quick"] if args.quick else [])
        command = " ".join(["python tools/build_naturalness_range.py", *options, f"--write {args.write}"])
        atomic_write_text(args.write, json.dumps(to_jsonable(data_file(result, command)), indent=1) + "\n")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
