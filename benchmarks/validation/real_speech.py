"""Real speech: turn-end decisions, agreement (a)-(e) and naturalness on AMI meeting recordings.

    python benchmarks/validation/real_speech.py --ami-root ../shared/real/ami [--quick] [--judge PATH ...]
    python benchmarks/run_all.py --only real_speech          # $TURNEVAL_AMI_ROOT or the default

The recordings (``_ami.py``; ~8 minutes, ground-truth speaker segments, CC BY 4.0) were made
by none of this project's code. The judge on real two-party calls as a user's recording is read
(SpokenWOZ phone calls and AMI channel pairs, speech by VAD; its pause decisions beside the
silence's length and smart-turn with paired intervals, every agreement direction beside
Talking Turns' Table 6) is ``real_calls_judge.py``, run beside this one by ``run_all``. Skips with a clear message (one NaN figure whose note says
why) when the folder is absent.

1. **Turn-end decisions** (metric (a)'s decision, ``turn_end_peers.py``'s contestants): every
   IPU end followed by a pause of at least 200 ms in which nobody speaks, then by speech:
   *shift* when someone else speaks first, *hold* when the same speaker resumes (the rule of
   ``turneval.dataset_scripts.turn_end_decisions``, which also makes the judge's Switchboard
   decisions, on each speaker-against-the-rest view). At 200 ms after
   the IPU end: the judge (``p_T - p_C``, one pass over its context ending there, mono mix),
   smart-turn v3.2 (the speaker's own channel where the recording has one, else the mix, since
   the turn started) and silence thresholds (shift iff the speaker stays silent 200/500/700 ms).
   ROC-AUC (shift positive) with a 95 % percentile-bootstrap interval that resamples whole
   recordings (``turneval.metrics.intervals.bootstrap_roc_auc``), the paired difference judge
   minus smart-turn, and balanced accuracy at each contestant's own threshold.
2. **Agreement (a)-(e)** of the judge with the decisions the meeting participants took, each
   speaker against the others (``_ami.focus_instances`` says which metric is read from which
   view); human listeners agree 72-81 % (Talking Turns Table 6, human row).
3. **Naturalness** (TurnNat m) of the two-channel ES2004a excerpt: each speaker's own channel
   against the sum of the others (speech by Silero VAD per channel, as ``turneval score``
   finds it), natural and in three perturbed versions
   (:func:`perturbed_versions`: late responses, the partner delayed, the partner from another
   moment); pairwise accuracy natural > perturbed (Wilson 95 % CI) and the mean m of each.

Every model is the one ``turneval report`` would use (``turneval.checkpoints``: bundled, or
``$TURNEVAL_JUDGE`` / ``$TURNEVAL_PREDICTOR``), beside the eSpeak demo judge kept as the
baseline in ``benchmarks/baselines/`` when a new judge is bundled; ``--judge`` adds others. The figure names carry each model's checkpoint name.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np


HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # this suite's scripts, then benchmarks/ (the shared _harness and data readers)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from _harness import figure, limit_threads, print_figures  # noqa: E402


MIN_PAUSE_S = 0.2  # the pause (nobody speaking) a decision needs: pipecat's VAD stop time
SILENCE_THRESHOLDS_MS = (200, 500, 700)
QUICK_RECORDINGS = 5  # the excerpt and four openings
HUMAN_AGREEMENT = "72-81 % (Talking Turns Table 6, human listeners)"


# --------------------------------------------------------------------------- models
BASELINE_JUDGE = HERE / "baselines" / "turn_taking_judge_espeak_demo"
"""The eSpeak-trained demo judge, kept as the baseline a new bundled judge must beat."""


def judge_checkpoints(extra: Sequence[str] = (), baseline: bool = True) -> list[tuple[str, Any]]:
    """(name, loaded judge) for the default judge, the eSpeak baseline (when it is kept in
    ``benchmarks/baselines/`` and is not the default) and every ``extra`` checkpoint folder."""
    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge

    paths: list[Path] = []
    default = default_checkpoint("judge")
    if default is not None:
        paths.append(Path(default))
    wanted = ([BASELINE_JUDGE] if baseline and (BASELINE_JUDGE / "config.json").is_file() else []) + [Path(p) for p in extra]
    for path in wanted:
        if path.resolve() not in {q.resolve() for q in paths}:
            paths.append(path)
    return [(f"judge {checkpoint_name(p)}", load_judge(p).eval()) for p in paths]


def checkpoint_name(folder: Path) -> str:
    """The name a checkpoint gives itself (``provenance.json``), else its folder's name (with
    the run folder for a training run's ``final`` / ``step_N``)."""
    from turneval.model_provenance import ProvenanceError, read_provenance

    try:
        name = (read_provenance(folder) or {}).get("name")
    except ProvenanceError:
        name = None
    if name:
        return name
    return f"{folder.parent.name}/{folder.name}" if folder.name == "final" or folder.name.startswith("step_") else folder.name


def predictor_checkpoint() -> tuple[str, Any] | None:
    from turneval.checkpoints import default_checkpoint
    from turneval.naturalness_inference import load_predictor

    path = default_checkpoint("predictor")
    return None if path is None else (f"predictor {checkpoint_name(Path(path))}", load_predictor(path))


# --------------------------------------------------------------------------- 1. decisions
@dataclass(frozen=True)
class AmiDecision:
    """One turn-end decision of a meeting, with what each contestant may see."""

    recording: str
    speaker: str  # whose IPU ended
    shift: bool  # someone else spoke first after the pause
    ipu_end: float  # s
    silence_until_next_s: float  # s of silence (nobody speaking) before the next speech of anyone
    horizon: float  # s: the audio observed ends here (200 ms after the IPU end, on the 40 ms grid)
    turn_start: float  # s: start of the speaker's turn (smart-turn's segment start)
    until_pauser_resumes_s: float  # s until the same speaker speaks again (inf: never), as in turneval/pause_decision/pause.py


def turn_end_decisions(recording) -> list[AmiDecision]:
    """The shift/hold decisions of every speaker of ``recording``: the rule of
    ``turneval.dataset_scripts.turn_end_decisions`` (the judge's Switchboard decisions) on each
    speaker-against-the-rest view, keeping the focus speaker's IPUs (after a pause of the rest
    the next speaker may be another member of the rest, which is no hold)."""
    from turneval.dataset_scripts.grids import CHUNK_S
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions as decide

    out = []
    for speaker in recording.speakers:
        own_starts = [s for s, _ in recording.speakers[speaker]]
        for d in decide(recording.view(speaker), min_silence=MIN_PAUSE_S):
            if d.speaker != 0:
                continue
            later = [s for s in own_starts if s > d.ipu_end + 1e-9]
            # The audio up to 200 ms after the IPU end, on the judge's 40 ms grid (never past it).
            horizon = math.floor((d.ipu_end + MIN_PAUSE_S) / CHUNK_S + 1e-6) * CHUNK_S
            out.append(AmiDecision(recording.id, speaker, d.shift, d.ipu_end, d.silence_until_next_s, horizon,
                                   d.ipu_end - d.turn_duration, (later[0] - d.ipu_end) if later else math.inf))
    return out


def _contestant_scores(recordings, judges, smart_turn) -> list[dict[str, Any]]:
    from dataclasses import replace

    from turn_end_peers import judge_probabilities

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.metrics.agreement import judge_scores
    from turneval.pause_decision import asked_pauses, turn_end_head_probabilities
    from turneval.smart_turn import PRE_SPEECH_S

    rows = []
    for rec in recordings:
        views: dict[int, Any] = {}
        for d in turn_end_decisions(rec):
            own = rec.sources.get(d.speaker, rec.mixture)
            start = int(max(0.0, d.turn_start - PRE_SPEECH_S) * 16000)
            user_audio = own[start : int(round(d.horizon * 16000))]
            judged = {name: float(judge_scores("a", judge_probabilities(j, rec.mixture, d.horizon)[None])[0]) for name, j in judges}
            # the judge's turn-end head, where it has one, hears what smart-turn hears: the speaker's own channel up to the horizon
            if d.speaker not in views:  # the speaker is 0 in its own view, as in turn_end_decisions; its channel heard
                views[d.speaker] = conversation_view(replace(rec.view(d.speaker), audio=np.stack([own, own])))
            asked = asked_pauses(rec.id, [(0, d.ipu_end, d.horizon, d.turn_start)])
            head = {name: float(turn_end_head_probabilities(j, views[d.speaker], asked)[0])
                    for name, j in judges if getattr(j.config, "turn_end_head", None)}
            smart = smart_turn.probability(user_audio) if smart_turn is not None else math.nan
            rows.append({"recording": rec.id, "shift": d.shift, "silence_until_next_s": d.silence_until_next_s,
                         "until_pauser_resumes_s": min(d.until_pauser_resumes_s, 1e6),
                         "judge": judged, "head": head, "smart": smart, "own_channel": d.speaker in rec.sources})
    return rows


def decision_figures(rows: list[dict], judges, smart_missing: str | None, n_resamples: int, where: str) -> list[dict]:
    from sklearn.metrics import balanced_accuracy_score

    from turneval.metrics.agreement import DEFAULT_THRESHOLDS, pause_decision_threshold
    from turneval.metrics.intervals import bootstrap_roc_auc, bootstrap_roc_auc_difference

    y = np.array([r["shift"] for r in rows], dtype=int)
    clusters = np.array([r["recording"] for r in rows])
    n_rec = len(set(clusters.tolist()))
    scores = {name: np.array([r["judge"][name] for r in rows]) for name, _ in judges}
    smart = np.array([r["smart"] for r in rows])
    silence = np.array([r["until_pauser_resumes_s"] for r in rows])
    out = [figure("AMI turn-end decisions", len(rows), "decisions",
                  note=f"{int(y.sum())} shifts, {int((1 - y).sum())} holds after pauses >= {MIN_PAUSE_S * 1000:g} ms, from {n_rec} recordings ({where})")]

    def auc_figures(label: str, score: np.ndarray, predicted: np.ndarray | None, rule: str, reference: str | None = None):
        if len(set(y.tolist())) < 2 or not np.all(np.isfinite(score)):
            return [figure(f"AMI turn-end ROC-AUC: {label}", math.nan, "", headline=True, note="not measurable here")]
        ci = bootstrap_roc_auc(y, score, clusters=clusters, n_resamples=n_resamples)
        plain = bootstrap_roc_auc(y, score, n_resamples=n_resamples)
        figs = [figure(f"AMI turn-end ROC-AUC: {label}", ci.value, "", headline=True, reference=reference,
                       note=f"95 % CI [{ci.low:.3f}, {ci.high:.3f}] resampling the {ci.n_units} recordings "
                            f"([{plain.low:.3f}, {plain.high:.3f}] resampling decisions); {rule}")]
        if predicted is not None:
            figs.append(figure(f"AMI turn-end balanced accuracy: {label}", balanced_accuracy_score(y, predicted), "", note=rule))
        return figs

    smart_name = "smart-turn v3.2"
    if smart_missing is None:
        out += auc_figures(smart_name, smart, (smart > 0.5).astype(int), "P(complete) > 0.5, 200 ms after the IPU end")
    else:
        out.append(figure(f"AMI turn-end ROC-AUC: {smart_name}", math.nan, "", headline=True, note=smart_missing))
    for name, score in scores.items():
        out += auc_figures(name, score, (score > DEFAULT_THRESHOLDS["a"]).astype(int), "p_T - p_C > 0, 200 ms after the IPU end",
                           reference=f"AMI turn-end ROC-AUC: {smart_name}" if smart_missing is None else None)
        if smart_missing is None and len(set(y.tolist())) == 2:
            diff = bootstrap_roc_auc_difference(y, score, smart, clusters=clusters, n_resamples=n_resamples)
            out.append(figure(f"AMI turn-end ROC-AUC difference: {name} minus smart-turn v3.2", diff.value, "",
                              note=f"paired 95 % CI [{diff.low:.3f}, {diff.high:.3f}] resampling recordings"))
    for name, judge in judges:
        if not all(name in r["head"] for r in rows):
            continue
        head = np.array([r["head"][name] for r in rows])
        threshold = pause_decision_threshold(judge.config.agreement_thresholds)
        label = f"{name}, turn-end head"
        out += auc_figures(label, head, (head > threshold).astype(int),
                           f"P(shift) > {threshold:.3f} (its tuned (a) threshold), the speaker's own channel up to 200 ms after the IPU end",
                           reference=f"AMI turn-end ROC-AUC: {smart_name}" if smart_missing is None else None)
        if smart_missing is None and len(set(y.tolist())) == 2:
            diff = bootstrap_roc_auc_difference(y, head, smart, clusters=clusters, n_resamples=n_resamples)
            out.append(figure(f"AMI turn-end ROC-AUC difference: {label} minus smart-turn v3.2", diff.value, "",
                              note=f"paired 95 % CI [{diff.low:.3f}, {diff.high:.3f}] resampling recordings"))
    for ms in SILENCE_THRESHOLDS_MS:
        if len(set(y.tolist())) == 2:
            out.append(figure(f"AMI turn-end balanced accuracy: silence >= {ms} ms", balanced_accuracy_score(y, (silence >= ms / 1000).astype(int)), "",
                              note=f"decides {ms} ms after the IPU end"))
    out += auc_figures("silence length (any threshold)", silence, None, "needs the whole silence: an upper bound for fixed thresholds")
    return out


# --------------------------------------------------------------------------- 2. agreement
def agreement_instances(recordings, judge) -> list:
    """Every agreement instance of every speaker view of ``recordings`` (the judge on the mix;
    (a)/(d) by its turn-end head and (e) by its interruption head when it has them)."""
    from dataclasses import replace

    from _ami import focus_instances

    from turneval.dataset_scripts.agreement_instances import (
        with_interruption_probabilities,
        with_pause_decision_probabilities,
    )
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.dataset_scripts.dialogue import Dialogue
    from turneval.dataset_scripts.labels import chunk_labels
    from turneval.pause_decision import pause_decision_probabilities
    from turneval.reporting import judge_interruption_probabilities, judge_probabilities

    instances = []
    for rec in recordings:
        probs = judge_probabilities(judge, rec.mixture)
        for speaker in rec.speakers:
            view = rec.view(speaker)
            labels = chunk_labels(view)
            found = focus_instances(view, probs, labels)
            if judge.config.turn_end_head is not None or judge.config.interruption_head is not None:
                # (a)/(d) and (e) from the heads: each side's own channel where the recording has them, else the mix
                own = rec.view(speaker, stereo=True).audio if len(rec.sources) == len(rec.speakers) else np.stack([rec.mixture, rec.mixture])
                heard = Dialogue(view.id, view.segments, audio=own, system_speaker=view.system_speaker, duration=view.duration)
                # the view's labels are those of ``view`` (its words too); only the audio heard differs
                found = with_pause_decision_probabilities(found, pause_decision_probabilities(judge, conversation_view(replace(view, audio=own))))
                found = with_interruption_probabilities(found, judge_interruption_probabilities(judge, heard, labels))
            instances += found
    return instances


def agreement_figures(instances: list, label: str, data: str, thresholds: dict | None = None) -> list[dict]:
    """One figure per metric and decision: pooled agreement, n, session-mean CI in the note.
    ``thresholds``: the judge's own (its config's ``agreement_thresholds``), else the paper's."""
    from turneval.metrics.agreement import agreement

    out = []
    for metric, result in agreement(instances, thresholds).items():
        for decision, s in result["decisions"].items():
            if not s["n_instances"]:
                continue
            out.append(figure(f"{data} agreement ({metric}) {s['description']}: {label}", 100 * s["agreement"], "%",
                              headline=metric in ("a", "b", "c"),
                              note=f"threshold {result['threshold']:g}; n = {s['n_instances']} in {s['n_sessions']} speaker views; session mean {100 * s['session_mean']:.1f} % "
                                   f"[{100 * s['ci95_low']:.1f}, {100 * s['ci95_high']:.1f}]; human listeners: {HUMAN_AGREEMENT}"))
    return out


# --------------------------------------------------------------------------- 3. naturalness
LATE_S = 1.5  # added to every gap at a change of speaker (TurnNat's late response, everywhere)
DELAY_S = 2.0  # the partner channel delayed against the focus speaker


def _speaker_changes(view) -> list[float]:
    """Mid-points of the silences at which the floor passes from one channel to the other."""
    edges = sorted((s, e, k) for k in (0, 1) for s, e in view.segments[k])
    out = []
    for (s0, e0, k0), (s1, e1, k1) in zip(edges, edges[1:]):
        covered = max((e for s, e, _ in edges if s <= e0), default=e0)
        if k1 != k0 and s1 > covered:  # nobody speaks between the two: a gap, not an overlap
            out.append((covered + s1) / 2)
    return out


def _insert_silence(view, times: list[float], seconds: float):
    """``view`` with ``seconds`` of silence spliced into both channels at each of ``times``."""
    from turneval.dataset_scripts.dialogue import Dialogue

    cuts = [int(round(t * 16000)) for t in sorted(times)]
    pieces, last = [], 0
    for cut in cuts:
        pieces += [view.audio[:, last:cut], np.zeros((2, int(round(seconds * 16000))), dtype=np.float32)]
        last = cut
    pieces.append(view.audio[:, last:])
    moved = lambda t: t + seconds * sum(1 for c in sorted(times) if c <= t)  # noqa: E731
    segments = [[(moved(s), moved(e)) for s, e in spk] for spk in view.segments]
    audio = np.concatenate(pieces, axis=1)
    return Dialogue(f"{view.id}+late", segments, audio=audio, system_speaker=view.system_speaker, duration=audio.shape[1] / 16000)


def _shift_partner(view, seconds: float, roll: bool):
    """The partner channel (1) delayed by ``seconds`` (cut at the end), or rolled round by it."""
    from turneval.dataset_scripts.dialogue import Dialogue

    n, k = view.audio.shape[1], int(round(seconds * 16000))
    duration = n / 16000
    audio = view.audio.copy()
    if roll:
        audio[1] = np.roll(view.audio[1], k)
        partner = []
        for s, e in view.segments[1]:
            s, e = s + seconds, e + seconds
            partner += [(s, e)] if e <= duration else ([(s, duration)] if s < duration else []) + [(max(0.0, s - duration), e - duration)]
    else:
        audio[1] = np.concatenate([np.zeros(k, dtype=np.float32), view.audio[1, : n - k]])
        partner = [(s + seconds, min(e + seconds, duration)) for s, e in view.segments[1] if s + seconds < duration]
    tag = "rolled" if roll else "delayed"
    return Dialogue(f"{view.id}+{tag}", [view.segments[0], partner], audio=audio, system_speaker=view.system_speaker, duration=duration)


def perturbed_versions(view) -> dict[str, Any]:
    """The perturbations of one stereo view that the naturalness score should rank lower.

    TurnNat's own edits need clean turn exchanges (mutual-silence crops, textual holds) that
    this 60 s meeting excerpt does not have, so three whole-excerpt edits stand in: every
    change of speaker answered ``LATE_S`` later; the partner channel ``DELAY_S`` late against
    the focus speaker (overlaps and gaps in the wrong places); the partner channel from another
    moment (rolled by half the excerpt), i.e. no coordination at all.
    """
    out = {}
    changes = _speaker_changes(view)
    if changes:
        out[f"late responses (+{LATE_S:g} s at {len(changes)} changes)"] = _insert_silence(view, changes, LATE_S)
    out[f"partner delayed {DELAY_S:g} s"] = _shift_partner(view, DELAY_S, roll=False)
    out["partner from another moment (rolled by half)"] = _shift_partner(view, view.duration / 2, roll=True)
    return out


def _with_vad(view):
    """``view`` with each channel's speech found by Silero VAD, as ``turneval score`` finds it:
    the RTTM segments are coarse (pauses inside a segment), the channels are clean."""
    from dataclasses import replace

    from turneval.dataset_scripts.vad import SileroVAD

    vad = SileroVAD()
    return replace(view, segments=[vad.detect_speech(view.audio[k]) for k in (0, 1)], metadata={**view.metadata, "segments": "silero"})


def naturalness_figures(recordings, predictor) -> list[dict]:
    """m of each natural speaker view against its perturbed versions (recordings with own channels)."""
    from turneval.metrics.intervals import wilson_interval
    from turneval.naturalness_inference import score_dialogue

    name, model = predictor
    views = [_with_vad(rec.view(s, stereo=True)) for rec in recordings if len(rec.sources) >= 2 for s in rec.speakers if s in rec.sources]
    if not views:
        return [figure(f"AMI naturalness pairwise accuracy (natural > perturbed): {name}", math.nan, "", headline=True,
                       note="no recording with per-speaker channels")]
    natural_m, wins, per_kind = [], [], {}
    for view in views:
        m0 = float(score_dialogue(view, model).score)
        natural_m.append(m0)
        for kind, perturbed in perturbed_versions(view).items():
            m1 = float(score_dialogue(perturbed, model).score)
            kind = kind.split(" (+")[0]
            per_kind.setdefault(kind, []).append(m1)
            wins.append(m0 > m1)
    low, high = wilson_interval(sum(wins), len(wins))
    kinds = "; ".join(f"{k}: mean m {np.mean(v):.3f}" for k, v in per_kind.items())
    recs = ", ".join(sorted({r.id for r in recordings if len(r.sources) >= 2}))
    return [
        figure(f"AMI naturalness m of the natural excerpt: {name}", float(np.mean(natural_m)), "",
               note=f"mean over the {len(views)} speaker-vs-rest stereo views of {recs} (" + ", ".join(f"{m:.2f}" for m in natural_m) + f"); perturbed: {kinds}"),
        figure(f"AMI naturalness pairwise accuracy (natural > perturbed): {name}", float(np.mean(wins)), "", headline=True,
               note=f"{len(wins)} pairs (views x edits), Wilson 95 % CI [{low:.2f}, {high:.2f}]; edits: late responses, partner delayed, partner rolled"),
    ]


# --------------------------------------------------------------------------- run
def skipped(reason: str) -> list[dict]:
    print(f"[real_speech] skipped: {reason}", file=sys.stderr)
    return [figure("AMI real-speech benchmark", math.nan, "", note=f"skipped: {reason}")]


def run(quick: bool) -> list[dict]:
    """The run_all entry: AMI from ``$TURNEVAL_AMI_ROOT`` (or the default folder), the default models."""
    return run_on(quick)


def run_on(quick: bool, ami_root: str | None = None, extra_judges: Sequence[str] = ()) -> list[dict]:
    """Every figure of this benchmark on the AMI folder ``ami_root``; ``extra_judges``: more judges."""
    from _ami import AmiDataMissing, load_recordings

    from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3

    threads = limit_threads()
    try:
        recordings = load_recordings(ami_root, limit=QUICK_RECORDINGS if quick else None)
    except AmiDataMissing as err:
        return skipped(str(err))
    where = ", ".join(sorted({r.folder for r in recordings}))
    judges = judge_checkpoints(extra_judges)
    try:
        smart_turn, smart_missing = SmartTurnV3(threads=threads), None
    except SmartTurnUnavailable as err:
        smart_turn, smart_missing = None, str(err)
    rows = _contestant_scores(recordings, judges, smart_turn)
    if not rows:
        return skipped(f"no turn-end decision in the {len(recordings)} recordings")
    out = decision_figures(rows, judges, smart_missing, 300 if quick else 2000, where)
    for name, judge in judges:
        out += agreement_figures(agreement_instances(recordings, judge), name, "AMI", judge.config.agreement_thresholds)
    predictor = predictor_checkpoint()
    if predictor is not None:
        out += naturalness_figures(recordings, predictor)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ami-root", default=None, help="folder of the AMI recordings (default: $TURNEVAL_AMI_ROOT or ../shared/real/ami)")
    parser.add_argument("--quick", action="store_true", help="five recordings, fewer bootstrap resamples")
    parser.add_argument("--judge", action="append", default=[], metavar="PATH", help="another judge checkpoint to compare (repeatable)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    figures = run_on(args.quick, args.ami_root, args.judge)
    return print_figures(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
