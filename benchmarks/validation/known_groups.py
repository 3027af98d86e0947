"""Known groups: do the report's figures tell human-like, cascaded-like and eager-duplex-like systems apart?

    python benchmarks/validation/known_groups.py [--quick] [--conversations N] [--ami-root PATH] [--revoice-test PATH] [--markdown OUT.md]
    python benchmarks/run_all.py --only known_groups

A metric is valid only if it separates groups known to differ. Three synthetic systems, the
same conversations (seed ``conversation_seed(2026, i)``, held out from the demo models'
training seeds) with the system on channel 1 acting out one timing style of
``turneval.dataset_scripts.synthetic`` each: ``human`` (human-like), ``cascaded`` (waits for
long silences, never backchannels or overlaps) and ``eager_duplex`` (starts before the user has
finished and talks over them). Every one is run through ``turneval.report`` with its
ground-truth segments and the default models; for every summary figure the mean per group
(95 % CI over conversations) and the paired differences between groups (the conversations
share their words and voices, so each difference is per conversation; 95 % CI
``mean +- 1.96 sd / sqrt(n)``), and the ordering of the groups.

Checks (issue 13):

* the eager system's agreement (a) "the system lets the user continue" is clearly below the
  human-like one's: the paired difference's interval lies below 0;
* on human-human data every direction (the two decisions of each of (a)-(e)) of agreement is at
  least 60 %: on AMI (``real_speech.agreement_instances``, ``$TURNEVAL_AMI_ROOT``) and on the
  held-out re-voiced Switchboard test split (``--revoice-test``, else ``$TURNEVAL_REVOICED/test``,
  default ``../cache/revoice/test`` beside the repository: ``manifest.jsonl`` of two-channel dialogues, spoken by
  Flite, an engine no model here was trained on), each speaker as the system in turn. Data
  that is absent is skipped with a note.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import _revoiced  # noqa: E402
from _harness import figure, limit_threads  # noqa: E402


HELD_OUT_SEED = 2026
GROUPS = {"human": "human-like", "cascaded": "cascaded-like", "eager_duplex": "eager-duplex-like"}
TARGET_AGREEMENT = 60.0  # % per direction on human-human data (issue 13)
EAGER_KEY = "agreement.a.C"  # (a) "the system lets the user continue"


# --------------------------------------------------------------------------- synthetic groups
def group_reports(n: int, duration_s: float, judge, predictor) -> dict[str, list[list[dict]]]:
    """style -> per conversation the report's summary rows (same seeds for every style)."""
    import turneval
    from turneval.dataset_scripts.synthetic import conversation_seed, generate_dialogue

    out: dict[str, list[list[dict]]] = {style: [] for style in GROUPS}
    for i in range(n):
        seed = conversation_seed(HELD_OUT_SEED, i)
        for style in GROUPS:
            dialogue = generate_dialogue(seed, duration_s=duration_s, style=style, system_speaker=1, dialogue_id=f"{style}_{i}")
            rep = turneval.report(dialogue, judge=judge, predictor=predictor, progress=False)
            out[style].append(rep.summary_rows())
    return out


def _values(reports: list[list[dict]], key: str) -> np.ndarray:
    return np.array([next((r["value"] for r in rows if r["key"] == key), None) for rows in reports], dtype=float)


def _interval(values: np.ndarray) -> tuple[float, float, float, int]:
    """Mean, CI low, CI high and n over the finite values (normal approximation, sample sd)."""
    from turneval.metrics.intervals import mean_interval

    finite = values[np.isfinite(values)]
    if not finite.size:
        return math.nan, math.nan, math.nan, 0
    ci = mean_interval(finite)
    return ci.mean, ci.low, ci.high, ci.n


def group_table(reports: dict[str, list[list[dict]]]) -> list[dict[str, Any]]:
    """Per summary figure: each group's mean and CI, the paired differences and the ordering."""
    first = reports["human"][0]
    table = []
    for row in first:
        key = row["key"]
        values = {style: _values(reports[style], key) for style in GROUPS}
        means = {style: _interval(v) for style, v in values.items()}
        pairs = {}
        for a, b in (("human", "cascaded"), ("human", "eager_duplex"), ("cascaded", "eager_duplex")):
            diff = values[a] - values[b]  # paired: conversation i of each group shares its seed
            pairs[f"{a}-{b}"] = _interval(diff)
        finite = {s: m[0] for s, m in means.items() if math.isfinite(m[0])}
        ordering = " > ".join(GROUPS[s] for s in sorted(finite, key=lambda s: -finite[s]))
        table.append({"key": key, "label": row["label"], "unit": row["unit"], "reference": row.get("reference"),
                      "groups": means, "differences": pairs, "ordering": ordering})
    return table


def _clear(diff: tuple[float, float, float, int]) -> str:
    """'>' / '<' when the paired difference's interval excludes 0, else '~'."""
    _, low, high, n = diff
    if n < 2 or not math.isfinite(low):
        return "?"
    return ">" if low > 0 else ("<" if high < 0 else "~")


def markdown_table(table: list[dict[str, Any]]) -> str:
    """The README table: a row per figure, the three groups, the pairwise orderings."""
    head = "| figure | human-like | cascaded-like | eager-duplex-like | human vs cascaded | human vs eager | cascaded vs eager |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    fmt = lambda v: "n/a" if not math.isfinite(v) else f"{v:.3g}"  # noqa: E731
    for t in table:
        cells = [f"{t['label']}" + (f" ({t['unit']})" if t["unit"] else "")]
        cells += [f"{fmt(t['groups'][s][0])} ± {fmt((t['groups'][s][2] - t['groups'][s][1]) / 2)}" for s in GROUPS]
        cells += [_clear(t["differences"][p]) for p in ("human-cascaded", "human-eager_duplex", "cascaded-eager_duplex")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def group_figures(table: list[dict[str, Any]], where: str) -> list[dict]:
    out = []
    for t in table:
        g, d = t["groups"], t["differences"]
        note = "; ".join(f"{GROUPS[s]} {g[s][0]:.3g} [{g[s][1]:.3g}, {g[s][2]:.3g}]" for s in GROUPS)
        note += "; paired differences " + ", ".join(f"{p} {v[0]:+.3g} [{v[1]:+.3g}, {v[2]:+.3g}]" for p, v in d.items())
        out.append(figure(f"known groups: {t['label']} (human-like)", g["human"][0], t["unit"],
                          note=f"{note}; ordering {t['ordering'] or 'n/a'} ({where})"))
    return out


def eager_check(table: list[dict[str, Any]]) -> dict:
    row = next(t for t in table if t["key"] == EAGER_KEY)
    diff = row["differences"]["human-eager_duplex"]
    met = diff[3] >= 2 and diff[1] > 0
    return figure("known groups check: (a) lets-the-user-continue agreement, eager minus human-like", -diff[0], "%", headline=True,
                  note=f"paired 95 % CI [{-diff[2]:+.1f}, {-diff[1]:+.1f}] over {diff[3]} conversations; "
                       f"target: clearly below 0 (interval below 0): {'MET' if met else 'MISSED'}")


# --------------------------------------------------------------------------- human-human data
def two_party_instances(dialogues, judge) -> list:
    """Agreement instances of two-party conversations, each speaker as the system in turn,
    judged as the report judges them ((a)/(d) by the turn-end head when the judge has one)."""
    from turneval.reporting import two_party_judged_instances

    return [inst for d in dialogues for inst in two_party_judged_instances(judge, d)]


def load_revoice_test(folder: str | os.PathLike, limit: int | None = None) -> list:
    """The dialogues of a re-voiced split folder (``manifest.jsonl``, audio paths inside)."""
    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest, with_audio

    manifest = Path(folder) / "manifest.jsonl"
    if not manifest.is_file():
        raise FileNotFoundError(f"no re-voiced test split: {manifest} does not exist; pass --revoice-test or set ${_revoiced.ENV_VAR} (the corpus folder)")
    return [with_audio(dialogue) for _, dialogue in itertools.islice(read_dialogue_manifest(manifest), limit)]


def human_human_figures(instances: list, data: str, judge_name: str, source: str = "", thresholds: dict | None = None) -> list[dict]:
    """Every direction's agreement, the check that each is >= TARGET_AGREEMENT, and the ceiling:
    the lowest direction at the threshold that is best for these very instances (an in-sample
    bound; when it clears the target and the judge's own thresholds do not, the thresholds did
    not transfer; when it does not, no threshold can meet the target on this data)."""
    from real_speech import agreement_figures

    from turneval.metrics.agreement import agreement, agreement_ceiling

    out = agreement_figures(instances, judge_name, data, thresholds)
    directions = [(f"({m}) {s['description']}", 100 * s["agreement"])
                  for m, r in agreement(instances, thresholds).items() for s in r["decisions"].values() if s["n_instances"]]
    if not directions:
        return out
    worst = min(directions, key=lambda d: d[1])
    met = sum(v >= TARGET_AGREEMENT for _, v in directions)
    out.append(figure(f"{data} agreement, lowest direction: {judge_name}", worst[1], "%", headline=True,
                      note=f"{source}{'; ' if source else ''}{worst[0]}; {met} of {len(directions)} directions >= {TARGET_AGREEMENT:g} %: "
                           f"{'MET' if met == len(directions) else 'MISSED'} (target: every direction >= {TARGET_AGREEMENT:g} %)"))
    ceiling = agreement_ceiling(instances)
    if ceiling:
        reachable = sum(100 * a >= TARGET_AGREEMENT for c in ceiling.values() for a in c["agreement"].values())
        lowest = min(ceiling, key=lambda m: ceiling[m]["lowest"])
        out.append(figure(f"{data} agreement ceiling, lowest direction at the best threshold per metric: {judge_name}",
                          100 * ceiling[lowest]["lowest"], "%",
                          note=f"in-sample bound, each metric's threshold chosen on these instances: ({lowest}) at "
                               f"{ceiling[lowest]['threshold']:.4g}; {reachable} of {2 * len(ceiling)} directions could reach "
                               f"{TARGET_AGREEMENT:g} %; per metric (threshold: lower direction) "
                               + ", ".join(f"({m}) {c['threshold']:.4g}: {100 * c['lowest']:.1f} %" for m, c in ceiling.items())))
    return out


# --------------------------------------------------------------------------- run
def run(quick: bool) -> list[dict]:
    """The run_all entry: the default models, AMI and the re-voiced test split where present."""
    return run_on(quick)[0]


def run_on(quick: bool, ami_root: str | None = None, revoice_test: str | None = None,
           conversations: int | None = None) -> tuple[list[dict], str]:
    """Figures and the markdown table; ``conversations`` per group (default 6, quick 2)."""
    from _ami import AmiDataMissing, load_recordings
    from real_speech import agreement_instances, judge_checkpoints, predictor_checkpoint

    limit_threads()
    n, duration = (2, 45.0) if quick else (6, 90.0)
    n = conversations or n
    (judge_name, judge), *_ = judge_checkpoints(baseline=False)
    predictor = predictor_checkpoint()
    reports = group_reports(n, duration, judge, predictor[1] if predictor else False)
    table = group_table(reports)
    where = f"{n} synthetic conversations of {duration:g} s per group, {judge_name}" + (f", {predictor[0]}" if predictor else "")
    out = [eager_check(table)] + group_figures(table, where)
    try:
        recordings = load_recordings(ami_root, limit=5 if quick else None)
        out += human_human_figures(agreement_instances(recordings, judge), "AMI", judge_name, f"{len(recordings)} AMI recordings",
                                   judge.config.agreement_thresholds)
    except AmiDataMissing as err:
        out.append(figure("AMI agreement, lowest direction", math.nan, "%", note=f"skipped: {err}"))
    folder = revoice_test or str(_revoiced.split_folder("test"))
    try:
        dialogues = load_revoice_test(folder, limit=3 if quick else None)
        out += human_human_figures(two_party_instances(dialogues, judge), "re-voiced Switchboard test (Flite)", judge_name,
                                   f"{len(dialogues)} re-voiced test excerpts ({sum(d.duration for d in dialogues) / 60:.0f} min) from {folder}",
                                   judge.config.agreement_thresholds)
    except FileNotFoundError as err:
        out.append(figure("re-voiced Switchboard test (Flite) agreement, lowest direction", math.nan, "%", note=f"skipped: {err}"))
    return out, markdown_table(table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 conversations of 45 s per group, a few human-human recordings")
    parser.add_argument("--ami-root", default=None, help="AMI folder (default $TURNEVAL_AMI_ROOT or ../shared/real/ami)")
    parser.add_argument("--revoice-test", default=None, help=f"re-voiced Switchboard test split (default ${_revoiced.ENV_VAR}/test or ../cache/revoice/test)")
    parser.add_argument("--conversations", type=int, default=None,
                        help="synthetic conversations per group (default 6, --quick 2): more narrow the paired intervals")
    parser.add_argument("--markdown", default=None, help="write the known-groups table here")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    figures, table = run_on(args.quick, args.ami_root, args.revoice_test, args.conversations)
    print(table)
    for f in figures:
        value = "n/a" if not math.isfinite(f["value"]) else f"{f['value']:.3f}"
        print(f"{f['name']}: {value} {f['unit']}".rstrip() + (f"  ({f['note']})" if f.get("note") else ""))
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, allow_nan=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
