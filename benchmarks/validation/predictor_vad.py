"""The predictor on VAD output, as a report runs it: how far m moves, and whether known groups hold.

    python benchmarks/validation/predictor_vad.py [--predictor CKPT] [--ami DIR] [--n 8] [--duration 60] [--json OUT]

1. **Real speech (AMI ES2004a excerpt, CC BY 4.0)**: ``shared/real/ami/ES2004a_excerpt`` has one
   audio file per speaker (``source0-3.flac``), a ground-truth RTTM of the mixture and
   ``SPEAKER_MAP_inferred.txt`` (which source is which RTTM speaker). Every pair of the three
   speakers who talk (the fourth says only "Mm. Yeah.") becomes a two-channel dialogue; m is
   computed once from the RTTM segments and once from Silero VAD on the two sources, with the
   same predictor. Reported: m both ways and |delta m| per pair.
2. **Known groups with VAD input**: ``--n`` synthetic conversations (eSpeak NG, ``--duration``
   s) of each style, ``human`` / ``cascaded`` / ``eager_duplex``, scored from Silero VAD of
   their audio (not their ground truth); the share of (human, cascaded) and (human, eager)
   pairs in which the human-like one has the higher m (issue 14's target: >= 90 %), and the
   same from ground-truth segments beside it. Where the difference comes from: the units of each
   style by boundary (onset / offset) and speaker (user = channel 0, system = channel 1), their
   count and mean NLL.

An audio predictor hears the same audio in both cases; only the segments that m is scored
on change. Needs the Silero VAD (``silero-vad``) and eSpeak NG (``espeakng-loader``); without the AMI
folder part 1 is skipped with a message. Under ``run_all.py`` quick mode uses 3 conversations
of 30 s per style.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import emit_result, figure, limit_threads  # noqa: E402
from _switchboard import switchboard_predictor  # noqa: E402


AMI_EXCERPT = Path("shared") / "real" / "ami" / "ES2004a_excerpt"
STYLES = ("human", "cascaded", "eager_duplex")


def find_ami(explicit: str | None = None) -> Path | None:
    """``explicit``, else ``shared/real/ami/ES2004a_excerpt`` beside or above the repository."""
    if explicit:
        return Path(explicit)
    repo = HERE.parents[1]
    for parent in (repo, *repo.parents):
        if (parent / AMI_EXCERPT / "mixture.rttm").is_file():
            return parent / AMI_EXCERPT
    return None


def ami_speakers(folder: Path) -> dict[str, Path]:
    """RTTM speaker -> its source file, from ``SPEAKER_MAP_inferred.txt`` (lines ``sourceN.wav SPEAKER ...``)."""
    out = {}
    for line in (folder / "SPEAKER_MAP_inferred.txt").read_text().splitlines():
        fields = line.split()
        if line.startswith("#") or len(fields) < 2:
            continue
        source = folder / Path(fields[0]).with_suffix(".flac").name
        if source.is_file():
            out[fields[1]] = source
    return out


def rttm_segments(path: Path) -> dict[str, list[tuple[float, float]]]:
    segments: dict[str, list[tuple[float, float]]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "SPEAKER":
            segments.setdefault(f[7], []).append((float(f[3]), float(f[3]) + float(f[4])))
    return segments


def score(dialogue, model) -> float:
    from turneval.naturalness_inference import score_dialogue

    return float(score_dialogue(dialogue, model).score)


UNIT_ROLES = ("user", "system")  # channel 0 / channel 1 of the synthetic systems


def unit_breakdown(results) -> dict[str, dict[str, float]]:
    """``"<role> <boundary>"`` -> the number of units and their mean NLL over ``results``."""
    nll: dict[str, list[float]] = {}
    for result in results:
        for unit in result.units:
            if unit.speaker in (0, 1):
                nll.setdefault(f"{UNIT_ROLES[unit.speaker]} {unit.boundary}", []).append(float(unit.unit_nll))
    return {key: {"units": len(v), "mean_nll": float(np.mean(v))} for key, v in sorted(nll.items())}


def ami_deltas(folder: Path, model, min_speech_s: float = 5.0) -> list[dict[str, Any]]:
    """m from ground-truth and from VAD segments for each pair of speakers with >= ``min_speech_s`` of speech."""
    import soundfile as sf

    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.dataset_scripts.vad import detect_speech_channels

    truth = rttm_segments(folder / "mixture.rttm")
    sources = ami_speakers(folder)
    talkers = sorted(s for s in sources if sum(e - b for b, e in truth.get(s, [])) >= min_speech_s)
    out = []
    for a, b in itertools.combinations(talkers, 2):
        audio = np.stack([sf.read(sources[s], dtype="float32")[0] for s in (a, b)])
        duration = audio.shape[1] / 16000
        gt = Dialogue(id=f"ami_{a}_{b}_truth", segments=[truth[a], truth[b]], duration=duration, audio=audio)
        vad = Dialogue(id=f"ami_{a}_{b}_vad", segments=detect_speech_channels(audio), duration=duration, audio=audio)
        m_gt, m_vad = score(gt, model), score(vad, model)
        out.append({"pair": f"{a}+{b}", "m_truth": m_gt, "m_vad": m_vad, "abs_delta": abs(m_vad - m_gt)})
    return out


def known_groups(model, n: int, duration_s: float, seed: int = 100) -> dict[str, Any]:
    """m per style from VAD and from ground truth, and the human-above-system pair shares."""
    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.dataset_scripts.synthetic import generate_dialogue
    from turneval.dataset_scripts.vad import detect_speech_channels
    from turneval.naturalness_inference import score_dialogue

    m: dict[str, dict[str, list[float]]] = {"vad": {s: [] for s in STYLES}, "truth": {s: [] for s in STYLES}}
    units: dict[str, dict[str, list]] = {"vad": {s: [] for s in STYLES}, "truth": {s: [] for s in STYLES}}
    for style in STYLES:
        for k in range(n):
            d = generate_dialogue(seed + k, duration_s=duration_s, style=style)
            vad = Dialogue(id=d.id + "_vad", segments=detect_speech_channels(d.audio), duration=d.duration, audio=d.audio)
            for source, dialogue in (("vad", vad), ("truth", Dialogue(id=d.id, segments=d.segments, duration=d.duration, audio=d.audio))):
                result = score_dialogue(dialogue, model)
                m[source][style].append(float(result.score))
                units[source][style].append(result)
    shares = {}
    for source in ("vad", "truth"):
        # diagnostic, not m: how expected the system's speech onsets were (lower NLL = more expected)
        onsets = {style: [r.mean_unit_nll(1, "onset") for r in units[source][style]] for style in STYLES}
        for other in ("cascaded", "eager_duplex"):
            pairs = [(h, o) for h in m[source]["human"] for o in m[source][other]]
            shares[f"{source}: human > {other}"] = float(np.mean([h > o for h, o in pairs]))
            pairs = [(h, o) for h in onsets["human"] for o in onsets[other] if np.isfinite(h) and np.isfinite(o)]
            shares[f"{source}: system onsets more expected, human than {other}"] = float(np.mean([h < o for h, o in pairs])) if pairs else float("nan")
    breakdown = {source: {style: unit_breakdown(units[source][style]) for style in STYLES} for source in units}
    return {"m": m, "shares": shares, "units": breakdown}


def evaluate(predictor: str | None, ami: Path | None, n: int, duration_s: float) -> dict[str, Any]:
    import torch

    from turneval.naturalness_inference import load_predictor

    torch.set_num_threads(max(1, limit_threads()))
    # the Switchboard voice-activity predictor is what these figures are about, not the report default
    predictor = predictor or switchboard_predictor()
    model = load_predictor(predictor)
    result: dict[str, Any] = {"predictor": str(predictor or "bundled"), "n": n, "duration_s": duration_s}
    start = time.perf_counter()
    if ami is not None and (ami / "mixture.rttm").is_file():
        result["ami"] = ami_deltas(ami, model)
    else:
        print("predictor_vad: AMI excerpt not found (pass --ami shared/real/ami/ES2004a_excerpt); part 1 skipped", file=sys.stderr)
    result["ami_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    result["known_groups"] = known_groups(model, n, duration_s)
    result["known_groups_seconds"] = time.perf_counter() - start
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [f"Predictor: {result['predictor']}", ""]
    if "ami" in result:
        lines += ["| AMI ES2004a pair | m (RTTM truth) | m (Silero VAD) | abs. delta m |", "|---|---|---|---|"]
        for r in result["ami"]:
            lines.append(f"| {r['pair']} | {r['m_truth']:.3f} | {r['m_vad']:.3f} | {r['abs_delta']:.3f} |")
        lines.append("")
    kg = result["known_groups"]
    lines += [f"Known groups: {result['n']} synthetic conversations of {result['duration_s']:g} s per style.", "",
              "| segments | mean m human | mean m cascaded | mean m eager | human > cascaded | human > eager |", "|---|---|---|---|---|---|"]
    for source in ("vad", "truth"):
        means = [np.mean(kg["m"][source][s]) for s in STYLES]
        lines.append(f"| {'Silero VAD' if source == 'vad' else 'ground truth'} | {means[0]:.3f} | {means[1]:.3f} | {means[2]:.3f} | "
                     f"{100 * kg['shares'][f'{source}: human > cascaded']:.0f} % | {100 * kg['shares'][f'{source}: human > eager_duplex']:.0f} % |")
    if "units" in kg:
        keys = [f"{role} {boundary}" for role in UNIT_ROLES for boundary in ("onset", "offset")]
        lines += ["", "Units by boundary and speaker (ground truth): count, mean unit NLL (nats; lower is more expected).", "",
                  "| style | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
        for style in STYLES:
            cells = [kg["units"]["truth"][style].get(key) for key in keys]
            lines.append(f"| {style} | " + " | ".join("-" if c is None else f"{c['units']}, {c['mean_nll']:.2f}" for c in cells) + " |")
    return "\n".join(lines)


def figures(result: dict[str, Any]) -> list[dict]:
    out = []
    if result.get("ami"):
        deltas = [r["abs_delta"] for r in result["ami"]]
        out.append(figure("predictor |m(VAD) - m(truth)|, AMI real speech", float(np.mean(deltas)), "", headline=True,
                          note=f"mean over {len(deltas)} speaker pairs of the ES2004a excerpt; max {max(deltas):.3f}"))
    for key, share in result["known_groups"]["shares"].items():
        out.append(figure(f"predictor known groups, {key}", 100 * share, "%", headline=key.startswith("vad"),
                          note=f"{result['n']} x {result['duration_s']:g} s per style; target >= 90 % with VAD"))
    return out


def run(quick: bool) -> list[dict]:
    """run_all.py entry (quick: 3 conversations of 30 s per style)."""
    n, duration = (3, 30.0) if quick else (8, 60.0)
    return figures(evaluate(None, find_ami(), n, duration))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--predictor", help="FutureActivityPredictor checkpoint, audio or voice activity (default: benchmarks/baselines/future_activity_predictor_switchboard)")
    p.add_argument("--ami", help="the ES2004a_excerpt folder (default: shared/real/ami/ES2004a_excerpt when found)")
    p.add_argument("--n", type=int, default=8, help="synthetic conversations per style")
    p.add_argument("--duration", type=float, default=60.0, help="seconds per synthetic conversation")
    p.add_argument("--json", help="write the full result here")
    args = p.parse_args(argv)
    result = evaluate(args.predictor, find_ami(args.ami), args.n, args.duration)
    return emit_result(result, args.json, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
