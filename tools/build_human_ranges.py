"""Human ranges of the report's headline figures, measured on real conversations.

    python tools/build_human_ranges.py --out turneval/data/human_ranges.json
    python tools/build_human_ranges.py --quick --out /tmp/human_ranges.json   # 200 Switchboard calls, no judge

Every real conversation is read twice, each speaker in turn in the system's seat, and its
headline figures are computed by the code the report runs
(:func:`turneval.reporting.headline.event_figures` on the events; the judge's (a) agreement
by :func:`turneval.report` itself). The range a report prints beside a figure is the 10th-90th
percentile over these call sides.

* Switchboard (ms98 word alignments, 2,438 real telephone calls, no audio): every event
  figure, twice: from the speech segments alone, as a report without a transcript sees a
  recording (backchannels by the duration proxy), and from the words (backchannels by the word
  list), as with ``--transcribe`` or an annotation JSON with words. Also the pooled distribution
  of response gaps the report's gap plot draws.
* The real dev calls (``../shared/real``): SpokenWOZ's word times (7 calls) for the event
  figures; SpokenWOZ's 3 calls with audio, the 6 Harper Valley calls and the AMI ES2004a
  close-talk channel pairs (speech by Silero VAD, as the report finds it) for the judge's (a) agreement with real
  people's pause decisions (bundled judge; ``--no-judge`` skips it).
* m (``naturalness_m``): no range here: m's scale depends on the predictor, so its range is
  measured per checkpoint (``tools/build_naturalness_range.py`` ->
  ``turneval/data/naturalness_human_range.json``), and the report reads the one of its predictor.

Writes the ranges with the command, date, commit and data behind them; the report reads the
file through :mod:`turneval.reporting.verdict`.
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from turneval.dataset_scripts.dialogue import Dialogue
from turneval.dataset_scripts.events import extract_events
from turneval.dataset_scripts.files import atomic_write_text, to_jsonable
from turneval.gates import HEADLINE_FIGURES
from turneval.reporting.headline import event_figures, response_gaps


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))  # the data readers the benchmarks share (_switchboard, _spokenwoz, _real_calls)

from _switchboard import add_data_arguments, locate, map_calls  # noqa: E402


PERCENTILES = (10, 90)
EVENT_FIGURES = ("response_latency_s", "talk_over_rate", "yield_rate", "cut_off_rate", "backchannels_per_min", "overlap_share")
VARIANTS = {"segments": False, "words": True}
"""How a call's events are found: from the speech segments alone (``use_words=False``, as a
report on a recording without a transcript) or from the words (``use_words=True``)."""
GAP_BINS_S = np.round(np.arange(0.0, 3.01, 0.1), 2)
"""Bin edges of the pooled response-gap histogram (the report's gap plot)."""
QUICK_CALLS = 200


def _call_sides(dialogue: Dialogue) -> dict[str, Any]:
    """Per variant, the event figures with each speaker in turn as the system, and the response gaps of both."""
    out: dict[str, Any] = {}
    for variant, use_words in VARIANTS.items():
        events = extract_events(dialogue, use_words=use_words)
        out[variant] = {
            "figures": [event_figures(events, system) for system in (0, 1)],
            "gaps": [g for system in (0, 1) for g in response_gaps(events, system)],
        }
    return out


def spread(values: Iterable[float | None]) -> dict[str, Any]:
    """``low``/``high`` (the 10th and 90th percentiles), ``median`` and ``n`` of the measured values (None left out)."""
    kept = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if kept.size == 0:
        return {"low": None, "high": None, "median": None, "n": 0}
    low, high = np.percentile(kept, PERCENTILES)
    return {"low": float(low), "high": float(high), "median": float(np.median(kept)), "n": int(kept.size)}


def switchboard(swb_root: Path, split_dir: Path, limit: int | None) -> dict[str, Any]:
    from turneval.dataset_scripts.readers.switchboard import read_split_ids

    ids = read_split_ids(split_dir, "all")
    if limit:
        ids = ids[:limit]
    per_call = map_calls(swb_root, ids, _call_sides)
    out: dict[str, Any] = {"n_calls": len(per_call), "figures": {}, "response_gaps": {}}
    for variant in VARIANTS:
        sides = [f for _, call in per_call for f in call[variant]["figures"]]
        out["figures"][variant] = {name: spread(s[name] for s in sides) for name in EVENT_FIGURES}
        gaps = np.asarray([g for _, call in per_call for g in call[variant]["gaps"]], dtype=float)
        counts, _ = np.histogram(np.clip(gaps, 0, GAP_BINS_S[-1]), bins=GAP_BINS_S)
        out["response_gaps"][variant] = {
            "bin_edges_s": GAP_BINS_S.tolist(),
            "counts": counts.tolist(),
            "note": f"pooled over both sides of {len(per_call)} calls; gaps over {GAP_BINS_S[-1]:g} s in the last bin",
            "n": int(gaps.size),
            "quantiles_s": {f"p{q}": float(np.percentile(gaps, q)) for q in (10, 25, 50, 75, 90)} if gaps.size else {},
        }
    return out


def spokenwoz_words() -> dict[str, Any]:
    from _spokenwoz import SpokenwozDataMissing, word_time_calls

    try:
        calls = word_time_calls()
    except SpokenwozDataMissing as err:
        return {"missing": str(err)}
    values: dict[str, dict[str, Any]] = {name: {} for name in EVENT_FIGURES}
    for dialogue in calls:
        for system in (0, 1):
            figures = event_figures(extract_events(dialogue, use_words=False), system)
            for name in EVENT_FIGURES:
                values[name][f"{dialogue.id}:{'AB'[system]}"] = figures[name]
    return {"n_calls": len(calls), "speech": "segments from the word times (words closer than 0.2 s joined)",
            "figures": {name: {**spread(v.values()), "values": v} for name, v in values.items()}}


def judge_on_real_audio(progress: bool) -> dict[str, Any]:
    """The bundled judge's (a) agreement with real people's pause decisions, per call side, by :func:`turneval.report`."""
    from _real_calls import real_recordings

    import turneval

    dialogues, missing = real_recordings()
    values: dict[str, float | None] = {}
    for dialogue in dialogues:
        # as a report on a recording sees it: speech by VAD, no words
        bare = Dialogue(dialogue.id, dialogue.segments, audio=dialogue.audio, metadata={"corpus": dialogue.metadata.get("corpus")})
        for system in (0, 1):
            rep = turneval.report(bare, system_channel=system, predictor=False, progress=False)
            side = f"{dialogue.id}:{'AB'[system]}"
            values[side] = rep.headline["figures"]["judge_agreement_a"]
            if progress:
                print(f"  {side}: (a) agreement {values[side]}", file=sys.stderr)
    judge = rep.models["judge"] if dialogues else {}
    calls = sorted({d.id for d in dialogues})
    corpora = {d.id: str(d.metadata.get("corpus", "real")) for d in dialogues}
    return {"judge": judge.get("name"), "judge_weights_sha256": _weights_digest(judge.get("path")), "missing": missing,
            "calls": calls, "corpora": [corpora[c] for c in calls], "tuned_on": _tuned_on(judge.get("path"), calls), **spread(values.values()), "values": values}


def _tuned_on(checkpoint: str | None, calls: list[str]) -> list[str]:
    """The calls among ``calls`` whose recordings the judge's thresholds were tuned on (its
    config's ``agreement_thresholds_source`` names them): there the range is in sample."""
    config = Path(checkpoint or "") / "config.json"
    if not config.is_file():
        return []
    source = str(json.loads(config.read_text(encoding="utf-8")).get("agreement_thresholds_source") or "")
    return [c for c in calls if c.split(":")[0] in source]


def _weights_digest(checkpoint: str | None) -> str | None:
    """The first 16 hex digits of the judge's model.safetensors: which weights gave the range
    (the bundled judge changes as it is retrained; rerun this script after it does)."""
    import hashlib

    path = Path(checkpoint or "") / "model.safetensors"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None


CORPUS_TEXT = {"spokenwoz": "SpokenWOZ calls", "harper_valley": "Harper Valley calls", "ami": "AMI close-talk channel pairs"}


def _calls_text(corpora: list[str]) -> str:
    """``3 SpokenWOZ calls, 6 Harper Valley calls and 6 AMI close-talk channel pairs`` from each call's corpus."""
    counts = {name: corpora.count(name) for name in dict.fromkeys(corpora)}
    parts = [f"{n} {CORPUS_TEXT.get(name, name + ' recordings')}" for name, n in counts.items()]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "no recordings"


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def build(args: argparse.Namespace) -> dict[str, Any]:
    found = locate(args.swb_root, args.splits)
    if found is None:
        raise SystemExit(1)
    started = time.time()
    swb = switchboard(*found, limit=QUICK_CALLS if args.quick else None)
    swoz = spokenwoz_words()
    judge = None if args.no_judge or args.quick else judge_on_real_audio(progress=args.verbose)
    ranges: dict[str, Any] = {}
    for name in EVENT_FIGURES:
        ranges[name] = {
            "range": {**swb["figures"]["segments"][name], "source": f"Switchboard, {swb['n_calls']} calls, speech segments (no words)"},
            "range_with_words": {**swb["figures"]["words"][name], "source": f"Switchboard, {swb['n_calls']} calls, words"},
            "spokenwoz": (swoz.get("figures") or {}).get(name),
        }
    ranges["judge_agreement_a"] = {
        "range": None if judge is None or not judge["n"] else {
            key: judge[key] for key in ("low", "high", "median", "n")
        } | {"source": f"{judge['judge']} on {_calls_text(judge.get('corpora') or [])}, speech by VAD, each speaker as the system"
                       + ("; in sample: the judge's thresholds were tuned on these recordings" if judge["tuned_on"] else "")},
        "per_call": judge,
    }
    ranges["naturalness_m"] = {
        "range": None,
        "note": "m has no fixed scale: its range is measured per predictor checkpoint by tools/build_naturalness_range.py "
                "(turneval/data/naturalness_human_range.json), which the report reads for the predictor that scored m. "
                'A range given here, as {"range": {"low", "high", "median", "n", "source"}}, would apply to every predictor.',
    }
    assert set(ranges) == set(HEADLINE_FIGURES), "every headline figure needs an entry"
    command = "python tools/build_human_ranges.py " + " ".join(sys.argv[1:])
    return {
        "description": "Human ranges of the report's headline figures: the 10th-90th percentile over real conversations, "
                       "each speaker in turn in the system's seat, computed by the report's own code "
                       "(turneval.reporting.headline). Measured by turneval, not copied from a paper.",
        "command": command.strip(),
        "measured": datetime.date.today().isoformat(),
        "commit": _commit(),
        "seconds": round(time.time() - started, 1),
        "percentiles": list(PERCENTILES),
        "data": {
            "switchboard": "Switchboard-1 ms98 word alignments (ISIP; LDC97S62 calls), two-party telephone calls, real timing",
            "spokenwoz": "SpokenWOZ (Si et al. 2023, CC BY-NC 4.0), the shared sample: word times of 7 calls, audio of 3",
            "ami": "AMI Meeting Corpus ES2004a excerpt (CC BY 4.0), pairs of close-talk channels",
        },
        "figures": ranges,
        "response_gaps": swb["response_gaps"],
    }


def run(quick: bool) -> list[dict]:
    """The run_all entry: the ranges as figures (median, with the 10th-90th percentile in the
    note), from Switchboard's segments and, outside ``quick``, the judge on the real calls;
    nothing is written (``--out`` does that)."""
    from _harness import figure

    if locate(None, None) is None:
        return [figure("human ranges", float("nan"), "", note="skipped: Switchboard ms98 alignments not found")]
    result = build(argparse.Namespace(swb_root=None, splits=None, quick=quick, no_judge=quick, verbose=False))
    out = []
    for name, entry in result["figures"].items():
        r = entry.get("range")
        if r:
            out.append(figure(f"human range: {name}", r["median"], "", note=f"10-90 %: {r['low']:.3g} to {r['high']:.3g}; n = {r['n']}; {r['source']}"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_data_arguments(parser)
    parser.add_argument("--out", required=True, help="where to write the JSON (the shipped file: turneval/data/human_ranges.json)")
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_CALLS} Switchboard calls, no judge (a smoke test)")
    parser.add_argument("--no-judge", action="store_true", help="skip the judge on the real calls with audio")
    parser.add_argument("--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    result = build(args)
    atomic_write_text(Path(args.out), json.dumps(to_jsonable(result), indent=1) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
