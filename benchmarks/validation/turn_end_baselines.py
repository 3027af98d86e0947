"""Logistic-regression baselines for shift vs hold after a pause, on real Switchboard timing.

    python benchmarks/validation/turn_end_baselines.py --swb-root PATH [--splits DIR]
        [--train-calls 600] [--test-calls 200] [--json OUT] [--save-decisions DIR]

Trains on the first ``--train-calls`` calls of ``splits/train.txt`` and tests on the first
``--test-calls`` of ``splits/test.txt`` (ids sorted; the regressions are seeded), on the
turn-end decisions of :mod:`turneval.dataset_scripts.turn_end_decisions` (an IPU ends,
>= 200 ms of silence follow; who speaks next). Three feature sets
(:mod:`turneval.metrics.turn_end_baselines`): timing only, timing + the last two words, and the
text (last two words, first word, IPU length); ROC-AUC (shift positive) and the shift rate,
each beside the anchor stated in issues 13/14. Two views of the decisions:

* ``all IPUs`` (the default of ``turn_end_decisions``, the view the anchors were measured in:
  every IPU end, any next speech, backchannels included);
* ``metric (a)``: only the floor holder's pauses, a backchannel answer decides nothing
  (``include_backchannel_ipus=False, next_backchannel="skip"``).

Other benchmarks put these baselines beside their own model on the same decisions::

    from turn_end_baselines import switchboard_decisions
    from turneval.metrics.turn_end_baselines import fit_baselines
    train = switchboard_decisions(root, splits, "train", 600)
    test = switchboard_decisions(root, splits, "test", 200)
    baselines = fit_baselines(train, test)  # {"timing": {"roc_auc", "scores", ...}, ...}

Under ``run_all.py`` (``run(quick)``) the data is found as ``_switchboard.py`` says; quick mode
uses 60 train and 20 test calls. Without the data the benchmark prints why and returns no
figure.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure  # noqa: E402
from _switchboard import add_data_arguments, locate, map_calls  # noqa: E402


VIEWS: dict[str, dict[str, Any]] = {
    "all IPUs": {},
    "metric (a)": {"include_backchannel_ipus": False, "next_backchannel": "skip"},
}
"""Decision view -> keyword arguments of ``turn_end_decisions``."""

FULL_CALLS, QUICK_CALLS = (600, 200), (60, 20)


def switchboard_decisions(
    swb_root: str | Path, splits: str | Path, split: str, n_calls: int | None, min_silence: float = 0.2, **view: Any
) -> list:
    """The turn-end decisions of the first ``n_calls`` calls (sorted ids) of ``split``, in call
    order then time order. ``view``: keyword arguments of ``turn_end_decisions``."""
    return decisions_by_view(swb_root, splits, split, n_calls, min_silence, {"view": view})["view"]


def decisions_by_view(
    swb_root: str | Path, splits: str | Path, split: str, n_calls: int | None, min_silence: float = 0.2,
    views: dict[str, dict[str, Any]] = VIEWS,
) -> dict[str, list]:
    """Like :func:`switchboard_decisions` for several views, reading each call once."""
    from turneval.dataset_scripts.events import extract_events
    from turneval.dataset_scripts.readers import read_split_ids
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions

    ids = read_split_ids(splits, split)[:n_calls]

    def per_call(dialogue):
        events = extract_events(dialogue)
        return {name: turn_end_decisions(dialogue, min_silence, events=events, **kw) for name, kw in views.items()}

    results = map_calls(Path(swb_root), ids, per_call)
    return {name: [d for _, found in results for d in found[name]] for name in views}


def save_decisions(decisions: Sequence, path: Path) -> None:
    """One JSON object per line (``TurnEndDecision.to_dict``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for d in decisions:
            handle.write(json.dumps(d.to_dict()) + "\n")


def evaluate(swb_root: Path, splits: Path, train_calls: int, test_calls: int, min_silence: float = 0.2,
             save_dir: Path | None = None) -> dict[str, Any]:
    """Decisions of both views, the three baselines on each, and how long each step took."""
    from turneval.metrics.turn_end_baselines import ANCHORS, fit_baselines

    start = time.perf_counter()
    train = decisions_by_view(swb_root, splits, "train", train_calls, min_silence)
    test = decisions_by_view(swb_root, splits, "test", test_calls, min_silence)
    load_s = time.perf_counter() - start
    out: dict[str, Any] = {
        "swb_root": str(swb_root), "train_calls": train_calls, "test_calls": test_calls,
        "min_silence": min_silence, "load_seconds": load_s, "views": {},
    }
    for view in VIEWS:
        if save_dir is not None:
            slug = view.replace(" ", "_").replace("(", "").replace(")", "")
            save_decisions(train[view], save_dir / f"{slug}_train{train_calls}.jsonl")
            save_decisions(test[view], save_dir / f"{slug}_test{test_calls}.jsonl")
        fit_start = time.perf_counter()
        results = fit_baselines(train[view], test[view])
        for name, result in results.items():
            result.pop("scores")
            result["anchor"], result["anchor_source"] = ANCHORS[name]
        out["views"][view] = {"baselines": results, "fit_seconds": time.perf_counter() - fit_start,
                              "view": VIEWS[view]}
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Train: first {result['train_calls']} calls of train.txt; test: first {result['test_calls']} calls of test.txt; "
        f"decisions after >= {result['min_silence'] * 1000:.0f} ms of silence.",
        "",
        "| view | feature set | ROC-AUC | anchor | difference | train / test decisions | test shift rate |",
        "|---|---|---|---|---|---|---|",
    ]
    for view, entry in result["views"].items():
        for name, r in entry["baselines"].items():
            anchor = r["anchor"] if view == "all IPUs" else None
            diff = f"{r['roc_auc'] - anchor:+.3f}" if anchor is not None else ""
            lines.append(
                f"| {view} | {name} | {r['roc_auc']:.3f} | {anchor if anchor is not None else ''} | {diff} | "
                f"{r['n_train']} / {r['n_test']} | {100 * r['shift_rate_test']:.1f} % |"
            )
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """run_all.py entry: the figures of both views (quick: 60 train / 20 test calls)."""
    found = locate()
    if found is None:
        return []
    train_calls, test_calls = QUICK_CALLS if quick else FULL_CALLS
    result = evaluate(*found, train_calls, test_calls)
    where = f"first {train_calls} train / {test_calls} test calls of Switchboard"
    out = [figure("turn-end decisions: reading + events", result["load_seconds"], "s",
                  note=f"{train_calls + test_calls} calls, ms98 words ({found[0].name})")]
    for view, entry in result["views"].items():
        first = next(iter(entry["baselines"].values()))
        out.append(figure(f"turn-end shift rate ({view})", 100 * first["shift_rate_test"], "%",
                          note=f"{first['n_test']} test decisions; {where}"))
        for name, r in entry["baselines"].items():
            note = f"{r['n_train']} train / {r['n_test']} test decisions"
            if view == "all IPUs":
                note += f"; anchor {r['anchor']} ({r['anchor_source']})"
            out.append(figure(f"turn-end LR ROC-AUC: {name} ({view})", r["roc_auc"], "", note=note,
                              headline=view == "all IPUs"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(parser)
    parser.add_argument("--train-calls", type=int, default=FULL_CALLS[0])
    parser.add_argument("--test-calls", type=int, default=FULL_CALLS[1])
    parser.add_argument("--min-silence", type=float, default=0.2, help="seconds of silence before the decision")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--save-decisions", type=Path, help="write the decisions of each view as JSONL into this folder")
    args = parser.parse_args(argv)
    found = locate(args.swb_root, args.splits)
    if found is None:
        return 0
    result = evaluate(*found, args.train_calls, args.test_calls, args.min_silence, args.save_decisions)
    print(markdown(result))
    print(f"\nreading + events: {result['load_seconds']:.1f} s; fitting: "
          + ", ".join(f"{v}: {e['fit_seconds']:.1f} s" for v, e in result["views"].items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
