"""What turn prosody changes in re-voiced Switchboard: IPU-final pitch, and smart-turn's ear.

    python benchmarks/validation/revoice_prosody.py [--calls 16] [--excerpt-s 60] [--swb-root PATH] [--splits DIR]
        [--dialog-acts PATH] [--json out.json]

Takes ``calls`` validation calls that have dialogue acts (in the split's seeded order, as
``revoice.revoice_split``), cuts one excerpt of each as the re-voicing does, and voices it with
each installed engine (both speakers that engine, two voices, seeded) twice: ``--prosody units``
(every IPU a stand-alone sentence, the corpora so far) and ``--prosody turns``
(``docs/revoicing.md``). Clean audio (no augmentation): the measurement is of the voices. Then:

1. **Pitch at IPU ends**: the F0 slope over each IPU's last 300 ms (``synthetic.pitch``, a numpy
   autocorrelation tracker), by the IPU's planned role and act: turn-internal, turn-final
   statement, turn-final question. The separation figure is the ROC-AUC of "the slope of a
   turn-internal IPU is above that of a turn-final statement" (0.5: no cue; the roles and acts
   are the same in both modes, from the real words and acts).
2. **smart-turn v3.2's ear**: at every (a)/(d) pause decision of the excerpt (after an IPU and a
   silence, does the other speaker take the turn? from the real timing), smart-turn hears the
   pausing speaker's re-voiced channel from the turn start to 200 ms after the IPU end, as
   pipecat asks it; ROC-AUC of its P(complete) for shift vs hold, with 95 % intervals resampling
   calls, and the paired difference turns minus units. smart-turn was trained on real turn
   ends, so a rise means the re-voiced ends now sound more like real ones to a model that heard
   real speech. It runs through onnxruntime (pipecat-ai's file), else through the bundled
   judge's converted copy (``judge.turn_complete_logits``).

Without the Switchboard alignments and dialogue acts, ``run(quick)`` returns one NaN figure
saying so. One process, one thread: synthesis and smart-turn are single-threaded.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure, limit_threads  # noqa: E402
from _switchboard import find_dialog_acts, find_splits, find_swb_root  # noqa: E402


SEED = 0
EXCERPT_S = 60.0
QUICK_CALLS, FULL_CALLS = 4, 16
MODES = ("units", "turns")
N_RESAMPLES = 2000


def select_calls(swb_root: Path, splits: Path, acts_source: Path, n_calls: int, split: str = "val") -> list[tuple[str, Any, Any]]:
    """(conversation, whole-call dialogue, its acts) for the first ``n_calls`` of the split's seeded
    order that have dialogue acts (the order ``revoice_split`` takes with seed 0)."""
    from turneval.dataset_scripts.readers import iter_switchboard_calls
    from turneval.dataset_scripts.readers.switchboard_acts import read_switchboard_acts

    path = splits / f"{split}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: split list not found (one conversation number per line)")
    # the file's order, as revoice.split_ids reads it, so the seeded order is the corpus's
    ids = [line.strip().lower().removeprefix("sw").lstrip("0") for line in path.read_text().splitlines() if line.strip()]
    order = np.random.default_rng([SEED, 7]).permutation(len(ids))
    ordered = [ids[i] for i in order]
    acts = read_switchboard_acts(acts_source, ordered)
    chosen = [c for c in ordered if c in acts][: n_calls * 2]  # spares: some calls give no excerpt
    calls = {d.id.removeprefix("sw").lstrip("0"): d for d in iter_switchboard_calls(swb_root, chosen)}
    return [(c, calls[c], acts[c]) for c in chosen if c in calls]


def engine_voices(engine: str, conv: str, index: int) -> tuple[Any, Any]:
    """Two different voices of one engine for a call (seeded by call and engine)."""
    from turneval.dataset_scripts.synthetic.revoice import draw_speaker_voices

    return draw_speaker_voices([engine], np.random.default_rng([SEED, int(conv), 100 + index]))


def pitch_rows(pairs: Sequence[tuple[Any, Any]], audio: np.ndarray) -> list[dict[str, Any]]:
    """Per spoken unit: its role, act and the F0 slope over its last 300 ms in ``audio``."""
    from turneval.dataset_scripts.synthetic.pitch import end_slope

    return [{"role": plan.role, "act": plan.act, "slope": end_slope(audio[unit.speaker], unit.start, unit.end)} for unit, plan in pairs]


def decision_rows(excerpt: Any, audio: np.ndarray, turn_end: Any) -> list[dict[str, Any]]:
    """Per (a)/(d) pause decision: shift or hold (real timing) and smart-turn's score."""
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import ipu_pauses, smart_turn_clip
    from turneval.smart_turn import VAD_STOP_S

    view = conversation_view(replace(excerpt, audio=audio, system_speaker=1))
    decisions = ipu_pauses(view, VAD_STOP_S)
    scores = turn_end([smart_turn_clip(view.dialogue, d) for d in decisions]) if decisions else []
    return [{"shift": d.decision == "T", "score": float(s)} for d, s in zip(decisions, scores)]


def smart_turn_scorer() -> tuple[Any, str]:
    """A function clips -> scores, and its name: smart-turn v3.2 through onnxruntime, else the
    judge's converted copy (its logits rank the same way)."""
    try:
        from turneval.smart_turn import SmartTurnV3

        model = SmartTurnV3(threads=1)
        return (lambda clips: [model.probability(c) for c in clips]), "smart-turn v3.2 (onnxruntime)"
    except Exception as err:  # no onnxruntime or pipecat-ai file: the bundled judge carries the same weights
        import torch

        from turneval.modeling.judge_loading import load_judge

        torch.set_num_threads(1)
        judge = load_judge(HERE.parents[1] / "checkpoints" / "turn_taking_judge_swb_revoiced")
        print(f"[revoice_prosody] smart-turn through the bundled judge ({err})", file=sys.stderr)
        return (lambda clips: list(judge.turn_complete_logits(clips))), "smart-turn v3.2 as converted into the bundled judge"


def evaluate(swb_root: Path, splits: Path, acts_source: Path, n_calls: int, excerpt_s: float = EXCERPT_S,
             engines: Sequence[str] | None = None, progress: bool = True) -> dict[str, Any]:
    """Pitch and smart-turn rows per engine and mode, on ``n_calls`` validation excerpts."""
    from turneval.dataset_scripts.synthetic.engines import available_engines
    from turneval.dataset_scripts.synthetic.revoice import excerpt_bounds, revoice_dialogue, unit_plans

    engines = list(engines or available_engines())
    turn_end, scorer = smart_turn_scorer()
    rows: dict[str, dict[str, dict[str, list]]] = {e: {m: {"pitch": [], "decisions": [], "fit": []} for m in MODES} for e in engines}
    used, seconds, t0 = [], 0.0, time.time()
    endings: list[tuple[str, str]] = []  # (from the dialogue acts, from the words) of turn ends
    for conv, full, acts in select_calls(swb_root, splits, acts_source, n_calls):
        if len(used) >= n_calls:
            break
        bounds = excerpt_bounds(full, excerpt_s, np.random.default_rng([SEED, int(conv)]))
        if bounds is None:
            continue
        excerpt = full.crop(*bounds, new_id=f"sw{int(conv):04d}_{int(round(bounds[0] * 100)):06d}")
        if not excerpt.segments[0] or not excerpt.segments[1]:
            continue
        pairs = unit_plans(excerpt, acts, full, bounds[0])
        by_words = unit_plans(excerpt, None, full, bounds[0])
        endings += [(p.act, w.act) for (_, p), (_, w) in zip(pairs, by_words) if p.role != "internal" and p.source == "acts"]
        for k, engine in enumerate(engines):
            voices = engine_voices(engine, conv, k)
            for mode in MODES:
                audio, fit = revoice_dialogue(excerpt, voices, prosody=mode, acts=acts, context=full, offset=bounds[0])
                r = rows[engine][mode]
                r["fit"].append({"units": fit["units"], "beyond_bound": fit["beyond_bound"], "spoken_alone": fit.get("units_spoken_alone", 0)})
                r["pitch"] += [{**p, "call": conv} for p in pitch_rows(pairs, audio)]
                r["decisions"] += [{**d, "call": conv} for d in decision_rows(excerpt, audio, turn_end)]
        used.append(conv)
        seconds += float(excerpt.duration)
        if progress:
            print(f"[revoice_prosody] {len(used)}/{n_calls} sw{conv} {excerpt.duration:.0f} s, {time.time() - t0:.0f} s so far", file=sys.stderr, flush=True)
    return {"calls": used, "excerpt_seconds": seconds, "engines": engines, "scorer": scorer, "rows": rows, "endings": endings,
            "dialogue_acts": str(acts_source.name), "wall_s": time.time() - t0}


def summarise(rows: dict[str, list]) -> dict[str, Any]:
    """The figures of one engine and mode."""
    from turneval.metrics.intervals import bootstrap_roc_auc, roc_auc

    pitch = [r for r in rows["pitch"] if math.isfinite(r["slope"])]
    slopes = {name: np.array([r["slope"] for r in pitch if sel(r)]) for name, sel in (
        ("internal", lambda r: r["role"] == "internal"),
        ("final statement", lambda r: r["role"] == "final" and r["act"] == "statement"),
        ("final question", lambda r: r["role"] == "final" and r["act"] == "question"),
    )}
    out: dict[str, Any] = {f"median slope {k}": float(np.median(v)) if v.size else math.nan for k, v in slopes.items()}
    out.update({f"n {k}": int(v.size) for k, v in slopes.items()})
    out["n unvoiced ends"] = len(rows["pitch"]) - len(pitch)
    for key in ("units", "beyond_bound", "spoken_alone"):
        out[f"fit {key}"] = sum(f[key] for f in rows.get("fit", []))
    a, b = slopes["internal"], slopes["final statement"]
    out["internal above final statement AUC"] = roc_auc(np.r_[np.ones(a.size), np.zeros(b.size)], np.r_[a, b]) if a.size and b.size else math.nan
    q = slopes["final question"]
    out["question above statement AUC"] = roc_auc(np.r_[np.ones(q.size), np.zeros(b.size)], np.r_[q, b]) if q.size and b.size else math.nan
    d = rows["decisions"]
    y = np.array([r["shift"] for r in d], dtype=int)
    out["n shifts"], out["n holds"] = int(y.sum()), int(len(y) - y.sum())
    if 0 < y.sum() < len(y):
        ci = bootstrap_roc_auc(y, [r["score"] for r in d], clusters=[r["call"] for r in d], n_resamples=N_RESAMPLES)
        out["smart-turn AUC"], out["smart-turn CI"] = ci.value, (ci.low, ci.high)
    else:
        out["smart-turn AUC"], out["smart-turn CI"] = math.nan, (math.nan, math.nan)
    return out


def paired_difference(units: list[dict], turns: list[dict]) -> tuple[float, float, float]:
    """smart-turn ROC-AUC turns minus units on the same decisions, 95 % interval resampling calls."""
    from turneval.metrics.intervals import bootstrap_roc_auc_difference

    y = np.array([r["shift"] for r in units], dtype=int)
    if not units or not 0 < y.sum() < len(y) or [r["shift"] for r in turns] != [r["shift"] for r in units]:
        return math.nan, math.nan, math.nan
    diff = bootstrap_roc_auc_difference(y, [r["score"] for r in turns], [r["score"] for r in units],
                                        clusters=[r["call"] for r in units], n_resamples=N_RESAMPLES)
    return diff.value, diff.low, diff.high


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """Per engine: each mode's figures and the paired smart-turn difference; and all engines pooled."""
    out = {}
    for engine, modes in result["rows"].items():
        out[engine] = {m: summarise(modes[m]) for m in MODES}
        out[engine]["difference"] = paired_difference(modes["units"]["decisions"], modes["turns"]["decisions"])
    pooled = {m: {k: [r for e in result["rows"].values() for r in e[m][k]] for k in ("pitch", "decisions", "fit")} for m in MODES}
    out["all engines"] = {m: summarise(pooled[m]) for m in MODES}
    out["all engines"]["difference"] = paired_difference(pooled["units"]["decisions"], pooled["turns"]["decisions"])
    return out


def ending_agreement(endings: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """How often the word rule gives the ending the dialogue acts give, at turn ends and backchannels."""
    acts = sorted({a for a, _ in endings} | {w for _, w in endings})
    n = len(endings)
    agree = sum(a == w for a, w in endings)
    return {"n": n, "agreement": agree / n if n else math.nan,
            "confusion (acts -> words)": {a: {w: sum(1 for x, y in endings if x == a and y == w) for w in acts} for a in acts}}


def markdown(result: dict[str, Any]) -> str:
    """The tables docs/revoicing.md shows."""
    s = summary(result)
    agreement = ending_agreement(result["endings"])
    lines = [
        f"{len(result['calls'])} validation calls ({result['excerpt_seconds'] / 60:.1f} min of excerpts), clean audio, "
        f"both speakers one engine; {result['scorer']}.",
        "",
        "| engine | prosody | end F0 slope, st/s: internal / final statement / final question (n) | internal above final statement AUC | question above statement AUC | pause decisions shift / hold | smart-turn ROC-AUC [95 % CI, calls] | turns minus units [95 % CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for engine, by_mode in s.items():
        for mode in MODES:
            f = by_mode[mode]
            diff = by_mode["difference"]
            lines.append(
                f"| {engine} | {mode} | {f['median slope internal']:+.1f} / {f['median slope final statement']:+.1f} / "
                f"{f['median slope final question']:+.1f} ({f['n internal']} / {f['n final statement']} / {f['n final question']}) | "
                f"{f['internal above final statement AUC']:.3f} | {f['question above statement AUC']:.3f} | {f['n shifts']} / {f['n holds']} | "
                f"{f['smart-turn AUC']:.3f} [{f['smart-turn CI'][0]:.3f}, {f['smart-turn CI'][1]:.3f}] | "
                + (f"{diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] |" if mode == "turns" else "|")
            )
    lines += ["", "| engine | prosody | IPUs | beyond stretch bound 0.5-2 | spoken alone (turn not cut) |", "|---|---|---|---|---|"]
    lines += [f"| {engine} | {mode} | {by_mode[mode]['fit units']} | {by_mode[mode]['fit beyond_bound']} | {by_mode[mode]['fit spoken_alone']} |"
              for engine, by_mode in s.items() for mode in MODES]
    confusion = agreement["confusion (acts -> words)"]
    lines += ["", f"Endings of turn-final and backchannel IPUs from the words against the dialogue acts: {agreement['n']} IPUs, "
              f"{100 * agreement['agreement']:.1f} % agree.", "", "| dialogue acts \\ words | " + " | ".join(confusion) + " |",
              "|---" * (len(confusion) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join(str(row[w]) for w in confusion) + " |" for a, row in confusion.items()]
    return "\n".join(lines)


def figures(result: dict[str, Any]) -> list[dict]:
    """The benchmark's figures for run_all.py."""
    s = summary(result)
    where = f"{len(result['calls'])} Switchboard val excerpts, clean re-voiced audio"
    out = []
    for engine, by_mode in s.items():
        for mode in MODES:
            f = by_mode[mode]
            out.append(figure(f"re-voiced ({engine}, prosody {mode}): IPU-end slope, internal above final statement ROC-AUC",
                              f["internal above final statement AUC"], "",
                              note=f"median F0 slope over the last 300 ms: internal {f['median slope internal']:+.1f}, final statement "
                                   f"{f['median slope final statement']:+.1f}, question {f['median slope final question']:+.1f} st/s; {where}"))
            out.append(figure(f"re-voiced ({engine}, prosody {mode}): smart-turn shift vs hold ROC-AUC", f["smart-turn AUC"], "",
                              headline=engine == "all engines" and mode == "turns",
                              note=f"{f['n shifts']} shifts, {f['n holds']} holds; 95 % CI [{f['smart-turn CI'][0]:.3f}, {f['smart-turn CI'][1]:.3f}] "
                                   f"resampling calls; {result['scorer']}; {where}"))
        diff = by_mode["difference"]
        out.append(figure(f"re-voiced ({engine}): smart-turn ROC-AUC, prosody turns minus units (paired)", diff[0], "",
                          note=f"95 % CI [{diff[1]:+.3f}, {diff[2]:+.3f}] resampling calls; {where}"))
    agreement = ending_agreement(result["endings"])
    out.append(figure("re-voicing: turn endings from the words agree with the dialogue acts", 100 * agreement["agreement"], "%",
                      note=f"{agreement['n']} turn-final and backchannel IPUs; {where}"))
    return out


def _locate(swb_root: str | None = None, splits: str | None = None, acts: str | None = None) -> tuple[Path, Path, Path] | str:
    found = find_swb_root(swb_root), find_splits(splits), find_dialog_acts(acts)
    missing = [name for name, p in zip(("ms98 word alignments (--swb-root)", "splits (--splits)", "dialogue acts (--dialog-acts)"), found)
               if p is None or not Path(p).exists()]
    return f"Switchboard {', '.join(missing)} not found; skipped" if missing else found  # type: ignore[return-value]


def run(quick: bool) -> list[dict]:
    """run_all.py entry: quick, 4 calls; full, 16."""
    located = _locate()
    if isinstance(located, str):
        print(f"[revoice_prosody] {located}", file=sys.stderr)
        return [figure("re-voicing prosody benchmark", math.nan, "", note=located)]
    limit_threads()
    return figures(evaluate(*located, QUICK_CALLS if quick else FULL_CALLS, progress=False))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swb-root", help="extracted swb_ms98_transcriptions folder, or the .tar.gz archive")
    parser.add_argument("--splits", help="folder with train.txt, val.txt, test.txt")
    parser.add_argument("--dialog-acts", help="swb_dialog_acts_words folder or swb_dialog_acts_words_VAP.tar.gz")
    parser.add_argument("--calls", type=int, default=FULL_CALLS)
    parser.add_argument("--excerpt-s", type=float, default=EXCERPT_S)
    parser.add_argument("--engines", default=None, help="comma-separated (default: every installed engine)")
    parser.add_argument("--json", help="write the rows and the summary here")
    args = parser.parse_args(argv)
    located = _locate(args.swb_root, args.splits, args.dialog_acts)
    if isinstance(located, str):
        print(located, file=sys.stderr)
        return 1
    engines = [e.strip() for e in args.engines.split(",")] if args.engines else None
    limit_threads()
    result = evaluate(*located, args.calls, args.excerpt_s, engines)
    if args.json:
        from turneval.dataset_scripts.files import atomic_write_text, to_jsonable

        atomic_write_text(args.json, json.dumps(to_jsonable({**result, "summary": summary(result)}), indent=1))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
