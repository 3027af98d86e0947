"""Band and voice invariance of naturalness m: one dialogue at 8, 16 and 44.1 kHz and voiced by two engines.

    python benchmarks/validation/naturalness_invariance.py [--dialogues 6] [--duration-s 30] [--predictor CKPT ...] [--json OUT]
    python benchmarks/run_all.py --only naturalness_invariance

A synthetic human-like dialogue (``dataset_scripts.synthetic``, eSpeak NG, deterministic per
seed) is written as a stereo file at 16 kHz, at 8 kHz (telephone band) and at 44.1 kHz, and
re-voiced with the same timing and words by a second engine (the first of Flite, Festival and
SVOX Pico that is installed, ``dataset_scripts.synthetic.revoice``; none: that comparison is
skipped and says so). Every version is scored as ``turneval score FILE.wav`` scores it
(:func:`turneval.commands.score.score_one`: loaded and resampled to 16 kHz, speech by Silero VAD,
then m), by both bundled predictors and any ``--predictor``. The figure per predictor and
version is the largest relative change of m against the 16 kHz eSpeak version over the
dialogues, ``|m - m_16k| / |m_16k|``, beside the :data:`TOLERANCE` that
``tests/test_naturalness_invariance.py`` asserts for the predictors that meet it. On real speech,
where the AMI folder is found (``$TURNEVAL_AMI_ROOT``, ``../shared/real/ami``), the close-talk
channel pairs of ES2004a at 16 and 8 kHz (a voice cannot be swapped there).

Known groups by voice: the same held-out conversations acted by the three synthetic systems
(human-like, cascaded-like, eager-duplex-like; ``conversation_seed(2026, i)`` as
``benchmarks/validation/known_groups.py``), voiced by eSpeak NG and by every installed engine of Flite, Festival
and Pico (one pair of voices per conversation and engine for all three systems), each file scored as ``turneval score`` scores it. Per
predictor and voice, the share of (human-like, other) pairs over all pairs of conversations in
which human-like has the higher m, beside :data:`KNOWN_GROUP_TARGETS`. Quick mode: one
dialogue of 20 s, no AMI, no known groups.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import emit_result, figure, limit_threads  # noqa: E402


RATES = (8000, 44100)
"""Sample rates compared with the 16 kHz file (telephone band; a common wideband rate)."""
SECOND_ENGINES = ("flite", "festival", "pico")
"""Engines tried, in this order, for the second voicing (eSpeak NG voices the original)."""
TOLERANCE = 0.05
"""Largest relative change of m accepted between versions of one dialogue (issue 31: 8 vs 16 kHz within 5 %)."""
FULL, QUICK = {"dialogues": 6, "duration_s": 30.0}, {"dialogues": 1, "duration_s": 20.0}
KNOWN_GROUP_TARGETS = {"cascaded": 0.90, "eager_duplex": 0.80}
"""Share of (human-like, system) pairs in which human-like scores higher, voiced by an engine the
predictor never heard (issue 31)."""
KNOWN_GROUP_SEED = 2026
"""Corpus seed of the known-groups conversations: held out from the demo models' training seeds."""
GROUP_NAMES = {"human": "human-like", "cascaded": "cascaded-like", "eager_duplex": "eager-duplex-like"}


def second_engine() -> str | None:
    """The first installed engine of :data:`SECOND_ENGINES`, or None."""
    return next(iter(installed_engines()), None)


def installed_engines() -> list[str]:
    """Every installed engine of :data:`SECOND_ENGINES` (the known groups are voiced by each)."""
    from turneval.dataset_scripts.synthetic.engines import available_engines

    found = available_engines()
    return [e for e in SECOND_ENGINES if e in found]


def write_rates(audio: np.ndarray, folder: Path, rates: Sequence[int] = RATES) -> dict[str, Path]:
    """Stereo 16 kHz ``audio`` as wav files: ``16000 Hz`` and one per rate of ``rates``."""
    import soundfile as sf
    import soxr

    folder.mkdir(parents=True, exist_ok=True)
    out = {"16000 Hz": folder / "16000.wav"}
    sf.write(out["16000 Hz"], audio.T, 16000, subtype="FLOAT")
    for rate in rates:
        out[f"{rate} Hz"] = folder / f"{rate}.wav"
        sf.write(out[f"{rate} Hz"], soxr.resample(audio.T, 16000, rate, quality="VHQ"), rate, subtype="FLOAT")
    return out


def write_versions(dialogue, folder: Path, engine: str | None, seed: int) -> dict[str, Path]:
    """The dialogue as stereo wav files: ``16000 Hz`` (its own audio), one per rate of
    :data:`RATES`, and ``<engine> voices`` (re-voiced at 16 kHz) when ``engine`` is given."""
    import soundfile as sf

    from turneval.dataset_scripts.synthetic.revoice import draw_speaker_voices, revoice_dialogue

    out = write_rates(dialogue.audio, folder)
    if engine is not None:
        voices = draw_speaker_voices([engine], np.random.default_rng(seed))
        audio, _ = revoice_dialogue(dialogue, voices)
        out[f"{engine} voices"] = folder / f"{engine}.wav"
        sf.write(out[f"{engine} voices"], audio.T, 16000, subtype="FLOAT")
    return out


def version_scores(files: dict[str, Path], model) -> dict[str, float]:
    """m of every version, as ``turneval score`` gets it from the file."""
    import warnings

    from turneval.bandwidth import NarrowBandWarning
    from turneval.commands.score import score_one

    out = {}
    for name, path in files.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NarrowBandWarning)  # the 8 kHz file is telephone band on purpose
            m = score_one(name, path, model)["naturalness_score"]
        out[name] = math.nan if m is None else float(m)
    return out


def relative_changes(scores: dict[str, float]) -> dict[str, float]:
    """``|m - m_16k| / |m_16k|`` of every other version."""
    ref = scores["16000 Hz"]
    return {k: abs(v - ref) / abs(ref) for k, v in scores.items() if k != "16000 Hz"}


def real_band_changes(models: Sequence[tuple[str, Any]], folder: Path, ami_root: str | None = None) -> dict[str, Any] | None:
    """Real speech at 16 and 8 kHz: every close-talk channel pair of the AMI excerpt
    (``_real_calls.ami_channel_pairs``), per predictor the relative change of m at 8 kHz; None
    without the AMI folder."""
    from _ami import AmiDataMissing
    from _real_calls import ami_channel_pairs

    try:
        pairs = ami_channel_pairs(ami_root)
    except AmiDataMissing:
        return None
    changes: dict[str, list[float]] = {name: [] for name, _ in models}
    for i, pair in enumerate(pairs):
        files = write_rates(pair.audio, folder / f"ami{i}", rates=(8000,))
        for name, model in models:
            changes[name].append(relative_changes(version_scores(files, model))["8000 Hz"])
    return {"recordings": [p.id for p in pairs], "worst": {k: max(v) for k, v in changes.items()},
            "mean": {k: float(np.mean(v)) for k, v in changes.items()}}


def write_group_versions(index: int, duration_s: float, engines: Sequence[str], folder: Path) -> dict[str, dict[str, Path]]:
    """voice -> system style -> 16 kHz stereo wav: conversation ``index`` of the held-out corpus as
    each system of :data:`GROUP_NAMES` acts it, voiced by eSpeak NG and re-voiced by each of
    ``engines`` (per engine the same two voices for the three systems)."""
    import soundfile as sf

    from turneval.dataset_scripts.synthetic import conversation_seed, generate_dialogue
    from turneval.dataset_scripts.synthetic.revoice import draw_speaker_voices, revoice_dialogue

    seed = conversation_seed(KNOWN_GROUP_SEED, index)
    voices = {engine: draw_speaker_voices([engine], np.random.default_rng(seed)) for engine in engines}
    out: dict[str, dict[str, Path]] = {}
    folder.mkdir(parents=True, exist_ok=True)
    for style in GROUP_NAMES:
        dialogue = generate_dialogue(seed, duration_s=duration_s, style=style)
        audio = {"eSpeak NG": dialogue.audio}
        for engine, pair in voices.items():
            audio[engine] = revoice_dialogue(dialogue, pair)[0]
        for voice, samples in audio.items():
            path = folder / f"{index}_{style}_{voice.replace(' ', '_')}.wav"
            sf.write(path, samples.T, 16000, subtype="FLOAT")
            out.setdefault(voice, {})[style] = path
    return out


def known_groups_by_voice(models: Sequence[tuple[str, Any]], conversations: int, duration_s: float, engines: Sequence[str], folder: Path) -> dict[str, Any]:
    """Per predictor and voice: m of every system's conversations and the share of (human-like,
    system) pairs, over all pairs of conversations, in which human-like scores higher."""
    m: dict[str, dict[str, dict[str, list[float]]]] = {}
    for index in range(conversations):
        for voice, files in write_group_versions(index, duration_s, engines, folder / f"groups{index}").items():
            for name, model in models:
                for style, score in version_scores(files, model).items():
                    m.setdefault(name, {}).setdefault(voice, {}).setdefault(style, []).append(score)
    shares = {
        name: {voice: {other: float(np.mean(np.asarray(styles["human"])[:, None] > np.asarray(styles[other])[None, :]))
                       for other in KNOWN_GROUP_TARGETS} for voice, styles in per_voice.items()}
        for name, per_voice in m.items()
    }
    return {"conversations": conversations, "duration_s": duration_s, "seed": KNOWN_GROUP_SEED, "m": m, "shares": shares}


def evaluate(dialogues: int, duration_s: float, extra_predictors: Sequence[str] = (), real: bool = True) -> dict[str, Any]:
    from _real_calls import predictors

    from turneval.dataset_scripts.synthetic import generate_dialogue

    limit_threads()
    engine = second_engine()
    models = predictors(extra_predictors)
    rows = []
    with tempfile.TemporaryDirectory(prefix="turneval-invariance-") as tmp:
        for seed in range(dialogues):
            dialogue = generate_dialogue(seed, duration_s=duration_s, style="human")
            files = write_versions(dialogue, Path(tmp) / str(seed), engine, seed)
            for name, model in models:
                scores = version_scores(files, model)
                rows.append({"seed": seed, "predictor": name, "m": scores, "relative_change": relative_changes(scores)})
        real_speech = real_band_changes(models, Path(tmp)) if real else None
        # the known groups need several conversations per system; quick mode (real=False) skips them
        groups = known_groups_by_voice(models, dialogues, duration_s, installed_engines(), Path(tmp)) if real else None
    changes: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        for version, change in row["relative_change"].items():
            changes.setdefault(row["predictor"], {}).setdefault(version, []).append(change)
    worst = {name: {v: max(c) for v, c in per.items()} for name, per in changes.items()}
    mean = {name: {v: float(np.mean(c)) for v, c in per.items()} for name, per in changes.items()}
    return {"dialogues": dialogues, "duration_s": duration_s, "second_engine": engine, "tolerance": TOLERANCE, "rows": rows,
            "worst": worst, "mean": mean, "real_speech": real_speech, "known_groups": groups}


def figures(result: dict[str, Any]) -> list[dict]:
    out = []
    for name, per_version in result["worst"].items():
        for version, change in per_version.items():
            out.append(figure(f"naturalness m change, {version} vs 16 kHz eSpeak: {name}", 100 * change, "%",
                              note=f"largest |m - m_16k| / |m_16k| over {result['dialogues']} synthetic dialogues of {result['duration_s']:g} s "
                                   f"(mean {100 * result['mean'][name][version]:.1f} %), "
                                   f"scored as `turneval score` does; tolerance {100 * TOLERANCE:g} %"))
    real = result.get("real_speech")
    for name, change in (real or {}).get("worst", {}).items():
        out.append(figure(f"naturalness m change, 8 kHz vs 16 kHz on real AMI headset pairs: {name}", 100 * change, "%",
                          note=f"largest over {len(real['recordings'])} channel pairs of AMI ES2004a (mean {100 * real['mean'][name]:.1f} %); "
                               f"tolerance {100 * TOLERANCE:g} %"))
    groups = result.get("known_groups")
    for name, per_voice in (groups or {}).get("shares", {}).items():
        for voice, per_other in per_voice.items():
            for other, share in per_other.items():
                out.append(figure(f"known groups voiced by {voice}, human-like above {GROUP_NAMES[other]}: {name}", 100 * share, "%",
                                  note=f"all pairs of {groups['conversations']} held-out conversations of {groups['duration_s']:g} s per system, "
                                       f"m from Silero VAD as `turneval score` gets it; target {100 * KNOWN_GROUP_TARGETS[other]:g} % "
                                       "with an engine the predictor never heard (issue 31)"))
    if result["second_engine"] is None:
        out.append(figure("naturalness m change, second engine vs eSpeak", math.nan, "%",
                          note=f"skipped: none of {', '.join(SECOND_ENGINES)} is installed (make synth-deps)"))
    return out


def markdown(result: dict[str, Any]) -> str:
    versions = list(next(iter(result["worst"].values()))) if result["worst"] else []
    lines = [f"{result['dialogues']} synthetic human-like dialogues of {result['duration_s']:g} s (eSpeak NG, seeds 0-{result['dialogues'] - 1}); "
             f"largest (mean) relative change of m against the 16 kHz file; tolerance {100 * TOLERANCE:g} %.", "",
             "| predictor | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    for name, per_version in result["worst"].items():
        lines.append(f"| {name} | " + " | ".join(f"{100 * per_version[v]:.1f} % ({100 * result['mean'][name][v]:.1f} %)" for v in versions) + " |")
    lines += ["", "| seed | predictor | " + " | ".join(["16000 Hz", *versions]) + " |", "|---|---|" + "---|" * (len(versions) + 1)]
    for row in result["rows"]:
        lines.append(f"| {row['seed']} | {row['predictor']} | " + " | ".join(f"{row['m'][v]:.3f}" for v in ["16000 Hz", *versions]) + " |")
    real = result.get("real_speech")
    if real:
        lines.append(f"\nReal speech, the {len(real['recordings'])} AMI ES2004a channel pairs at 8 vs 16 kHz, largest (mean) change: "
                     + "; ".join(f"{name} {100 * w:.1f} % ({100 * real['mean'][name]:.1f} %)" for name, w in real["worst"].items()))
    groups = result.get("known_groups")
    if groups:
        lines += ["", f"Known groups by voice: {groups['conversations']} held-out conversations of {groups['duration_s']:g} s per system; "
                  "share of all (human-like, system) pairs in which human-like has the higher m; mean m per system.", "",
                  "| predictor | voices | above cascaded-like | above eager-duplex-like | m human-like / cascaded-like / eager-duplex-like |",
                  "|---|---|---|---|---|"]
        for name, per_voice in groups["shares"].items():
            for voice, per_other in per_voice.items():
                means = " / ".join(f"{np.mean(groups['m'][name][voice][style]):.2f}" for style in GROUP_NAMES)
                lines.append(f"| {name} | {voice} | {100 * per_other['cascaded']:.0f} % | {100 * per_other['eager_duplex']:.0f} % | {means} |")
    if result["second_engine"] is None:
        lines.append(f"\nNo second engine installed ({', '.join(SECOND_ENGINES)}): voice invariance not measured.")
    return "\n".join(lines)


def run(quick: bool) -> list[dict]:
    """run_all.py entry (quick: one dialogue of 20 s)."""
    counts = QUICK if quick else FULL
    return figures(evaluate(counts["dialogues"], counts["duration_s"], real=not quick))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=FULL["dialogues"])
    parser.add_argument("--duration-s", type=float, default=FULL["duration_s"])
    parser.add_argument("--predictor", action="append", default=[], metavar="PATH", help="another predictor checkpoint (repeatable)")
    parser.add_argument("--json", default=None, help="write the result here")
    args = parser.parse_args(argv)
    return emit_result(evaluate(args.dialogues, args.duration_s, args.predictor), args.json, markdown)


if __name__ == "__main__":
    sys.exit(main())
