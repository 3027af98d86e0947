"""The main job (SPEC §9): every turn-taking figure of one human-AI conversation.

    >>> import turneval                                              # doctest: +SKIP
    >>> rep = turneval.report("call.wav", system_channel=1)
    >>> rep.naturalness["naturalness_score"], rep.agreement["metrics"]["a"]
    >>> rep.save("out/")                                             # report.json + report.html

Pipeline: load the audio (a stereo file, or the user's and the system's mono files), find
speech per channel with Silero VAD (or take the segments and words of a turneval annotation
JSON), extract turn-taking events, compute the corpus statistics, the full-duplex timing
metrics (the scenarios FD-Bench and Full-Duplex-Bench script are derived from the events, see
:func:`full_duplex_timing`), run the turn-taking judge over the whole conversation (streamed),
build the agreement instances (a)-(e) and score them, score naturalness with the future
activity predictor, and measure the system's backchannel timing.

The user is the channel that is not the system. A model stage is skipped only when asked
(``judge=False`` / ``predictor=False``, the CLI's ``--no-judge`` / ``--no-predictor``); a
missing checkpoint is an error that says how to fix it.
"""
from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from turneval.dataset_scripts.dialogue import SPEAKERS, Dialogue, DialogueError
from turneval.dataset_scripts.grids import CHUNK_S, SAMPLE_RATE

if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.events import TurnTakingEvents

REPORT_SCHEMA_VERSION = 1
N_WORST_UNITS = 5
VAD_BLOCK_S = 30.0
"""Block length of the streamed VAD pass (also the progress bar's step)."""


class ReportError(DialogueError):
    """The report cannot be made from this input; the message says what to fix."""


# ---------------------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------------------


@dataclass
class Report:
    """Every figure of one conversation, and every instance with its time.

    Attributes:
        conversation: id, audio file(s), duration, system and user channel, where the speech
            segments came from.
        segments: per speaker (A, B) the speech segments in seconds.
        events: the turn-taking events (IPUs, pauses, gaps, overlaps, backchannels, turns,
            interruptions), each with its times.
        statistics: Talking Turns §3.2 statistics (per minute, % of duration, per speaker).
        full_duplex_timing: FD-Bench and Full-Duplex-Bench figures on scenarios derived from
            the events (``derived_from`` says how).
        judge: the judge's class probabilities per 40 ms chunk (row t: the label of chunk t + 1
            from the audio up to the end of chunk t) and the checkpoint; None when skipped.
        agreement: metrics (a)-(e), occurrence rates, confusion matrix, threshold sensitivity
            and every instance; None when the judge was skipped.
        naturalness: MeanNLL, TailNLL, m, the worst boundary units and all units; None when
            the predictor was skipped.
        backchannel_timing: the system's backchannel rate, band share and spacing (SWOZ).
        notes: what was skipped or approximated, in words.
        settings: thresholds, VAD settings, checkpoints, device.
        models: each model's checkpoint, training data and measured quality
            (:mod:`turneval.model_provenance`); None for a skipped model.
    """

    conversation: dict[str, Any]
    segments: list[list[list[float]]]
    events: dict[str, Any]
    statistics: dict[str, Any]
    full_duplex_timing: dict[str, Any]
    backchannel_timing: dict[str, Any]
    judge: dict[str, Any] | None = None
    agreement: dict[str, Any] | None = None
    naturalness: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN and inf become None)."""
        from turneval import __version__

        body = {
            "schema_version": REPORT_SCHEMA_VERSION,
            "turneval_version": __version__,
            "conversation": self.conversation,
            "summary": [row for row in self.summary_rows()],
            "reference_values": reference_values(),
            "segments": self.segments,
            "events": self.events,
            "statistics": self.statistics,
            "full_duplex_timing": self.full_duplex_timing,
            "backchannel_timing": self.backchannel_timing,
            "judge": self.judge,
            "agreement": self.agreement,
            "naturalness": self.naturalness,
            "notes": list(self.notes),
            "settings": self.settings,
            "models": self.models,
        }
        return jsonable(body)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def summary_rows(self) -> list[dict[str, Any]]:
        """The compact table of the terminal and the HTML page (see :func:`summary_rows`)."""
        return summary_rows(self)

    def save(self, out_dir: str | Path, html: bool = True) -> dict[str, Path]:
        """Write ``report.json`` (and ``report.html``) into ``out_dir``, each atomically.

        Both documents are rendered before either file is written, so a failure leaves no
        half-written pair behind.
        """
        from turneval.io_utils import atomic_write_text

        out_dir = Path(out_dir)
        documents = {"report.json": self.to_json()}
        if html:
            from turneval.html_report import render_html

            documents["report.html"] = render_html(self)
        written = {}
        umask = os.umask(0)
        os.umask(umask)
        for name, text in documents.items():
            atomic_write_text(out_dir / name, text)
            # the temp file behind the atomic write is private (0600); a report is for sharing
            os.chmod(out_dir / name, 0o666 & ~umask)
            written[name] = out_dir / name
        return written


def jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars and arrays, tuples, NaN/inf (as None), dataclasses via to_dict."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    return str(value)


# ---------------------------------------------------------------------------------------
# Reference values (Talking Turns Tables 2, 6, 8)
# ---------------------------------------------------------------------------------------


def reference_values() -> dict[str, Any]:
    """The papers' reference values (``turneval/data/reference_values.json``)."""
    text = resources.files("turneval").joinpath("data/reference_values.json").read_text(encoding="utf-8")
    return json.loads(text)


def report_schema() -> dict[str, Any]:
    """The JSON schema that every report.json validates against (``turneval/data/report.schema.json``)."""
    return json.loads(resources.files("turneval").joinpath("data/report.schema.json").read_text(encoding="utf-8"))


def _reference_lookup() -> dict[str, dict[str, Any]]:
    return {entry["key"]: entry for entry in reference_values()["values"]}


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------


def _progress(iterable: Iterable, total: int | None, desc: str, enabled: bool) -> Iterable:
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="block", disable=not enabled, leave=False, file=sys.stderr)


def _vad_segments(audio: np.ndarray, vad_settings: Mapping[str, Any] | None, progress: bool) -> tuple[list[list], dict]:
    """Speech segments of both channels, streamed block by block (exactly the whole-file result)."""
    from turneval.dataset_scripts.vad import SileroVAD

    vad = SileroVAD(**dict(vad_settings or {}))
    streams = [vad.stream(), vad.stream()]
    segments: list[list] = [[], []]
    block = int(VAD_BLOCK_S * SAMPLE_RATE)
    starts = range(0, audio.shape[1], block)
    for start in _progress(starts, len(starts), "voice activity", progress and len(starts) > 1):
        for channel, stream in enumerate(streams):
            segments[channel].extend(stream.accept_audio(audio[channel, start : start + block]))
    for channel, stream in enumerate(streams):
        segments[channel].extend(stream.finish())
    return segments, vad.describe()


def _read_annotations(path: Path) -> dict[str, Any]:
    """The checked annotation dict, from any format turneval reads (:mod:`turneval.validation`)."""
    from turneval.validation import read_annotation_data

    return read_annotation_data(path)


def load_conversation(
    audio: str | Path | Dialogue | None = None,
    *,
    system_channel: int | None = 1,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    vad_settings: Mapping[str, Any] | None = None,
    max_seconds: float | None = None,
    progress: bool = False,
    band_limit: str = "none",
) -> Dialogue:
    """The conversation as a :class:`Dialogue` with audio, speech segments and the system channel.

    Args:
        audio: a stereo file (one speaker per channel), an annotation JSON (its ``audio_path``
            is read, relative to the JSON), or a ready Dialogue.
        system_channel: which channel (0 or 1) is the system; None: the one a Dialogue or an
            annotation JSON names (``system_speaker``), else 1.
        user_audio, system_audio: two mono files instead of a stereo one.
        annotations: a turneval annotation JSON (``Dialogue.save_annotations``) whose segments
            (and words) are used instead of VAD.
        vad_settings: :class:`~turneval.dataset_scripts.vad.VADConfig` fields.
        max_seconds: refuse longer audio.
        progress: show a progress bar for the VAD pass.
        band_limit: "none", or "telephone" to low-pass every channel to the telephone band
            before VAD and the models (:mod:`turneval.bandwidth`).

    Raises:
        ReportError / AudioError: naming the file and the problem.
    """
    from turneval.dataset_scripts.audio import AudioError, load_stereo, load_two_mono

    if system_channel not in (None, 0, 1):
        raise ReportError(f"system channel must be 0 or 1, got {system_channel!r}")
    if isinstance(audio, Dialogue):
        dialogue = audio
        if dialogue.audio is None and dialogue.audio_path:
            dialogue.audio = load_stereo(dialogue.audio_path, max_seconds=max_seconds, allow_silent=False)
        if dialogue.audio is not None and band_limit != "none":
            from turneval.bandwidth import prepare_band

            dialogue.audio, dialogue.metadata["bandwidth"] = prepare_band(dialogue.audio, [], band_limit)
        if system_channel is not None:
            dialogue.system_speaker = system_channel
        elif dialogue.system_speaker is None:
            dialogue.system_speaker = 1
        dialogue.metadata.setdefault("segments_source", "given")
        return dialogue
    if audio is not None and Path(audio).suffix.lower() == ".json" and annotations is None:
        annotations, audio = audio, None
    data = _read_annotations(Path(annotations)) if annotations is not None else None
    input_notes: list[str] = []
    if system_channel is None:
        named = None if data is None else data.get("system_speaker")
        system_channel = named if named in (0, 1) else 1
    if user_audio is not None or system_audio is not None:
        if user_audio is None or system_audio is None:
            raise ReportError("give both --user and --system mono files (or one stereo file)")
        if audio is not None:
            raise ReportError("give either a stereo file or --user/--system mono files, not both")
        from turneval.validation import compare_mono_lengths

        input_notes = compare_mono_lengths(user_audio, system_audio)
        samples = load_two_mono(user_audio, system_audio, system_channel, max_seconds=max_seconds)
        source = {"user_audio": str(user_audio), "system_audio": str(system_audio)}
        name = Path(system_audio).stem
    else:
        if audio is None and data is not None and data.get("audio_path"):
            from turneval.dataset_scripts.readers._common import resolve_audio_reference

            audio = resolve_audio_reference(annotations, data["audio_path"])
            if not audio.is_file():
                raise ReportError(f"{annotations}: the audio file it names ({audio}) does not exist; fix its audio_path, or name the audio: turneval report AUDIO --annotations {annotations}")
        if audio is None:
            raise ReportError("no audio given: pass a stereo file, or --user A.wav --system B.wav")
        try:
            samples = load_stereo(audio, max_seconds=max_seconds, allow_silent=False)
        except AudioError as err:
            if "expected 2 channel(s), found" in str(err):
                raise AudioError(f"{err}; or give each speaker's mono file with --user A.wav --system B.wav") from None
            raise
        source = {"audio": str(audio)}
        name = Path(audio).stem
    from turneval.bandwidth import input_sample_rates, prepare_band  # input rate and band (issue 12)

    samples, band = prepare_band(samples, input_sample_rates([p for k, p in source.items() if k.endswith("audio")]), band_limit)
    if data is not None:
        from turneval.validation import annotated_dialogue

        dialogue, more_notes = annotated_dialogue(data, annotations, samples, system_channel)
        input_notes += more_notes
        dialogue.metadata = {**dialogue.metadata, "segments_source": "annotations", "annotations": str(annotations)}
    else:
        segments, vad_info = _vad_segments(samples, vad_settings, progress)
        dialogue = Dialogue(
            id=name,
            segments=segments,
            audio=samples,
            system_speaker=system_channel,
            metadata={"segments_source": "vad", "vad": vad_info},
        )
    dialogue.audio_path = source.get("audio")
    dialogue.metadata["source"] = source
    dialogue.metadata["bandwidth"] = band
    dialogue.metadata["input_notes"] = input_notes
    if not any(dialogue.segments):
        raise ReportError(f"{source.get('audio') or source['system_audio']}: no speech found in either channel; nothing to evaluate")
    return dialogue


# ---------------------------------------------------------------------------------------
# Model stages
# ---------------------------------------------------------------------------------------


def _check_device(device: str) -> str:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ReportError(f"--device {device}: CUDA is not available on this machine; use --device cpu")
    if not device.startswith(("cpu", "cuda")):
        raise ReportError(f"--device must be cpu or cuda, got {device!r}")
    return device


def resolve_checkpoint(kind: str, spec: str | Path | None, skip_flag: str) -> Path | None:
    """:func:`turneval.checkpoints.resolve_checkpoint` with errors worded for the report's options."""
    from turneval.checkpoints import CheckpointNotFoundError
    from turneval.checkpoints import resolve_checkpoint as resolve

    try:
        return resolve(kind, spec, hint=f"pass a local checkpoint folder, or {skip_flag} to skip this stage")
    except CheckpointNotFoundError as err:
        raise ReportError(str(err)) from None


def load_judge_model(judge: Any, device: str = "cpu") -> tuple[Any, str]:
    """A TurnTakingJudge from a checkpoint path (None: the demo checkpoint) or a loaded model."""
    from turneval.modeling.judge_loading import JudgeCheckpointError, load_judge

    if judge is not None and not isinstance(judge, (str, Path)):
        return judge.to(device).eval(), type(judge).__name__
    path = resolve_checkpoint("judge", judge, "--no-judge")
    if path is None:
        raise ReportError(
            "no judge checkpoint: the bundled judge is not installed; "
            "pass --judge PATH (a TurnTakingJudge checkpoint folder), or --no-judge to skip the judge and agreement metrics"
        )
    try:
        model = load_judge(path)
    except JudgeCheckpointError as err:
        raise ReportError(f"{err} (pass --judge PATH to another checkpoint, or --no-judge to skip the judge)") from None
    return model.to(device).eval(), str(path)


def load_predictor_model(predictor: Any, device: str = "cpu") -> tuple[Any, str]:
    """A FutureActivityPredictor from a checkpoint path (None: the demo checkpoint) or a loaded model."""
    from turneval.naturalness import load_predictor

    if predictor is not None and not isinstance(predictor, (str, Path)):
        return predictor.to(device).eval(), type(predictor).__name__
    path = resolve_checkpoint("predictor", predictor, "--no-predictor")
    if path is None or not (path / "config.json").is_file():
        what = "the bundled predictor is not installed" if path is None else f"{path} is not a FutureActivityPredictor checkpoint (no config.json)"
        raise ReportError(f"no naturalness predictor: {what}; pass --predictor PATH, or --no-predictor to skip the naturalness score")
    try:
        return load_predictor(path, device=device), str(path)
    except (OSError, ValueError, RuntimeError) as err:
        raise ReportError(f"{path}: the predictor checkpoint does not load ({err}); pass another --predictor PATH or --no-predictor") from None


def judge_probabilities(judge: Any, audio: np.ndarray, progress: bool = False) -> np.ndarray:
    """The judge's ``[n_chunks, 5]`` probabilities over the mono mix: row t is the distribution
    over the label of chunk t + 1 from the audio up to the end of chunk t (``judge.score``'s layout).

    A causal judge is streamed window by window (progress bar, flat memory); a window-mode
    judge scores one window per chunk via ``judge.score``.
    """
    from turneval.dataset_scripts.audio import mono_mix
    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudgeStream

    mono = mono_mix(audio)
    config = judge.config
    spc = config.samples_per_chunk
    n_chunks = mono.shape[0] // spc
    if n_chunks < 2:
        raise ReportError(f"the conversation is {mono.shape[0] / SAMPLE_RATE:.3f} s long; the judge needs at least two {config.chunk_s * 1000:g} ms chunks")
    if config.context_mode != "causal":
        return judge.score(mono, sample_rate=SAMPLE_RATE).probabilities
    stream = TurnTakingJudgeStream(judge)
    probs = np.zeros((n_chunks, len(config.label_names)), dtype=np.float32)
    block = config.hop_chunks * spc
    starts = range(0, n_chunks * spc, block)
    for start in _progress(starts, len(starts), "turn-taking judge", progress and len(starts) > 1):
        indices, rows = stream.push(mono[start : min(start + block, n_chunks * spc)])
        probs[indices] = rows
    return probs


# ---------------------------------------------------------------------------------------
# Metric stages
# ---------------------------------------------------------------------------------------


def _event_summary(events: "TurnTakingEvents") -> dict[str, Any]:
    out = events.to_dict()
    out["speakers"] = list(SPEAKERS)
    return out


def _turns_of(events: "TurnTakingEvents", speaker: int) -> list:
    return [t for t in events.turns if t.speaker == speaker]


def _system_word_chunks(dialogue: Dialogue, events: "TurnTakingEvents") -> tuple[list, str]:
    """The system's words as Full-Duplex-Bench word chunks; without a transcript one chunk per IPU."""
    from turneval.metrics.full_duplex_bench import WordChunk

    system = dialogue.system_speaker
    if dialogue.words is not None and dialogue.words[system]:
        return [WordChunk(w.text, w.start, w.end) for w in dialogue.words[system]], "words"
    return [WordChunk("<ipu>", u.start, u.end) for u in events.of_speaker("ipus", system)], "ipus"


def _chunks_between(chunks: Sequence, start: float, end: float) -> list:
    return [c for c in chunks if c.start is not None and start <= c.start < end]


FULL_DUPLEX_DERIVATION = (
    "The benchmarks script the user side; here the scenarios are derived from this conversation's events. "
    "FD-Bench: each user turn is a round (round 1 'First Inquiry', later rounds of unknown interruption type), "
    "the system's IPUs are its segments; as in FD-Bench, a user turn that starts while the system is still speaking "
    "(even a brief overlap at a turn change) counts as an interruption. Full-Duplex-Bench: smooth turn-taking samples are the user's turn ends "
    "(latency from the turn end), pause-handling samples the user's pauses inside a turn (taking over is wrong), "
    "user-interruption samples the user's interruptions of the system (latency from the end of the interrupting IPU); "
    "the system's reply in a sample is its words (without a transcript: its IPUs, one 'word' each, so a reply takes "
    "the turn when it lasts at least 1 s) that start before the user speaks again. The v1.5 timing intervals use the "
    "merged speech segments."
)


def full_duplex_timing(dialogue: Dialogue, events: "TurnTakingEvents") -> dict[str, Any]:
    """FD-Bench and Full-Duplex-Bench figures on scenarios derived from a free conversation.

    The benchmarks script their user side; here the scenarios are read off the events:
    FD-Bench rounds are the user's turns (round 1 "First Inquiry", later rounds of unknown
    interruption type) and the system's segments its IPUs. Full-Duplex-Bench samples are
    the user's turn ends (smooth turn-taking: latency from the turn end), the user's pauses
    inside a turn (pause handling: should not take over) and the user's interruptions of the
    system (user interruption: latency from the end of the interrupting IPU). The system's
    reply in each sample is its words (or, without a transcript, its IPUs as one "word"
    each, so a reply takes the turn when it lasts at least 1 s) that start before the user
    speaks again. The v1.5 timing intervals use the segments directly.
    """
    from turneval.metrics import fdbench, full_duplex_bench as fdb
    from turneval.metrics.intervals import mean_interval

    user, system = dialogue.user_speaker, dialogue.system_speaker
    user_turns = _turns_of(events, user)
    user_ipus = events.of_speaker("ipus", user)
    system_ipus = events.of_speaker("ipus", system)
    out: dict[str, Any] = {
        "derived_from": FULL_DUPLEX_DERIVATION,
    }
    if user_turns:
        marks = fdbench.analyze_conversation(
            fdbench.seconds_to_samples([(t.start, t.end) for t in user_turns]),
            fdbench.seconds_to_samples([(u.start, u.end) for u in system_ipus]),
            [fdbench.FIRST_ROUND_TYPE] + [None] * (len(user_turns) - 1),
            conversation_id=dialogue.id,
        )
        result = fdbench.aggregate_marks([marks]).to_dict()
        out["fdbench"] = {k: v for k, v in result.items() if not k.endswith("_by_category")}
        out["fdbench"].update(n_rounds=marks.n_rounds, n_interrupts=marks.n_interrupts, consistent=marks.consistent)
    else:
        out["fdbench"] = None

    chunks, chunk_source = _system_word_chunks(dialogue, events)
    out["system_reply_unit"] = chunk_source
    user_starts = sorted(u.start for u in user_ipus)

    def next_user_start(after: float) -> float:
        return next((s for s in user_starts if s > after + 1e-9), dialogue.duration)

    smooth = {f"turn_{k}@{t.end:.2f}": (_chunks_between(chunks, t.end, next_user_start(t.end)), t.end) for k, t in enumerate(user_turns)}
    interruptions = {}
    for k, iv in enumerate(e for e in events.interruptions if e.speaker == user):
        end = events.ipus[iv.ipu].end
        interruptions[f"interruption_{k}@{iv.start:.2f}"] = (_chunks_between(chunks, end, next_user_start(end)), end)
    pauses = {f"pause_{k}@{p.start:.2f}": _chunks_between(chunks, p.start, p.end) for k, p in enumerate(events.of_speaker("pauses", user))}
    fdb_out: dict[str, Any] = {}
    for task, result in (
        ("smooth_turn_taking", fdb.smooth_turn_taking(smooth)),
        ("user_interruption", fdb.user_interruption(interruptions)),
        ("pause_handling", fdb.pause_handling(pauses)),
    ):
        fdb_out[task] = {
            "n_samples": len(result.samples),
            "take_over_rate": result.take_over_rate,
            "mean_latency_s": None if task == "pause_handling" else result.mean_latency,
            "samples": [{"id": key, "tor": s.tor, "latency_s": s.latency} for key, s in result.samples.items()],
        }
    merged_user = fdb.merge_segments([(u.start, u.end) for u in user_ipus], fdb.USER_MERGE_GAP_S)
    merged_system = fdb.merge_segments([(u.start, u.end) for u in system_ipus], fdb.MODEL_MERGE_GAP_S)
    stops = fdb.stop_latency_intervals(merged_user, merged_system)
    gaps = fdb.response_gap_intervals(merged_user, merged_system)
    fdb_out["timing"] = {
        "stop_latency": {"intervals": stops, **mean_interval([e - s for s, e in stops]).to_dict()},
        "response_gap": {"intervals": gaps, **mean_interval([e - s for s, e in gaps]).to_dict()},
    }
    out["full_duplex_bench"] = fdb_out
    return out


def backchannel_section(dialogue: Dialogue, events: "TurnTakingEvents") -> dict[str, Any]:
    """SWOZ backchannel measures of the system (no reference listener: no timing match)."""
    from turneval.metrics.backchannel_timing import backchannel_timing

    system = dialogue.system_speaker
    times = [bc.start for bc in events.backchannels if bc.speaker == system]
    out = backchannel_timing(times, duration=max(dialogue.duration, 1e-3), min_segment_s=min(10.0, dialogue.duration))
    out["listener"] = "system"
    out["user_n_backchannels"] = sum(1 for bc in events.backchannels if bc.speaker != system)
    return out


def agreement_section(dialogue: Dialogue, probs: np.ndarray, labels: Any) -> dict[str, Any]:
    """Metrics (a)-(e) with every instance, occurrence rates (Table 2), the system's
    single-label confusion matrix (§4.9) and threshold sensitivity (§A.8)."""
    from turneval.dataset_scripts.agreement_instances import build_agreement_instances, system_decision_chunks
    from turneval.metrics import agreement as ag

    n = min(len(labels), probs.shape[0])
    chunk_labels_ = list(labels.labels[:n])
    floor = list(labels.floor[:n])
    instances = build_agreement_instances(
        chunk_labels_, floor, probs[:n], dialogue.system_speaker, dialogue.id, chunk_starts=labels.chunk_starts[:n]
    )
    thresholds = ag.resolve_thresholds()
    rows = []
    for inst in instances:
        judged = str(ag.judge_labels(inst.metric, [inst.probs], thresholds[inst.metric])[0])
        rows.append({**inst.to_dict(), "judge_label": judged, "agrees": judged == inst.decision})
    present = sorted({inst.metric for inst in instances})
    decisions = system_decision_chunks(floor, dialogue.system_speaker)
    return {
        "thresholds": thresholds,
        "metrics": ag.agreement(instances) if instances else {},
        "occurrence_rates": ag.occurrence_rates(instances) if instances else {},
        # decision chunk k is what the judge predicted from the audio up to chunk k - 1: row k - 1
        "confusion_matrix": ag.confusion_matrix([chunk_labels_[k] for k in decisions], probs[decisions - 1]) if len(decisions) else None,
        "threshold_sensitivity": {
            m: {key: value for key, value in ag.threshold_sweep(instances, m).items() if key in ("mean", "margin_of_error")} for m in present
        },
        "n_instances": len(instances),
        "instances": rows,
    }


# ---------------------------------------------------------------------------------------
# The job
# ---------------------------------------------------------------------------------------


def report(
    audio_or_dialogue: str | Path | Dialogue | None = None,
    *,
    system_channel: int | None = 1,
    user_audio: str | Path | None = None,
    system_audio: str | Path | None = None,
    annotations: str | Path | None = None,
    judge: Any = None,
    predictor: Any = None,
    device: str = "cpu",
    vad_settings: Mapping[str, Any] | None = None,
    max_seconds: float | None = None,
    progress: bool = True,
    band_limit: str = "none",
) -> Report:
    """Evaluate the turn-taking of one human-AI conversation.

    Args:
        audio_or_dialogue: a stereo file (one speaker per channel), a turneval annotation
            JSON, or a Dialogue (its segments are used as they are).
        system_channel: which channel (0 or 1) is the system; the other is the user. None:
            the channel a Dialogue or annotation JSON names as the system, else 1.
        user_audio, system_audio: two mono files instead of one stereo file.
        annotations: ground-truth segments (and words) instead of VAD.
        judge: a TurnTakingJudge checkpoint folder or model; None: the demo checkpoint;
            False: skip the judge and the agreement metrics.
        predictor: a FutureActivityPredictor checkpoint folder or model; None: the demo
            checkpoint; False: skip the naturalness score.
        device: "cpu" or "cuda".
        vad_settings: VADConfig fields (threshold, min_silence_ms, ...).
        max_seconds: refuse longer audio.
        progress: progress bars on stderr.
        band_limit: "none" (default) or "telephone": low-pass every channel to the telephone
            band first, so that wideband and telephone recordings give comparable figures.
            Narrow-band input is noted and warned about (:class:`~turneval.bandwidth.NarrowBandWarning`).

    Raises:
        ReportError (a DialogueError) / AudioError: bad input or a missing checkpoint, with
        what to fix.
    """
    from turneval.dataset_scripts.events import extract_events
    from turneval.dataset_scripts.labels import chunk_labels
    from turneval.metrics.statistics import dialogue_statistics

    device = _check_device(device)
    from turneval.bandwidth import check_band_limit

    check_band_limit(band_limit)
    # Load the models first: a missing checkpoint fails before minutes of VAD.
    judge_model = judge_name = predictor_model = predictor_name = None
    if judge is not False:
        judge_model, judge_name = load_judge_model(judge, device)
    if predictor is not False:
        predictor_model, predictor_name = load_predictor_model(predictor, device)
    dialogue = load_conversation(
        audio_or_dialogue,
        system_channel=system_channel,
        user_audio=user_audio,
        system_audio=system_audio,
        annotations=annotations,
        vad_settings=vad_settings,
        max_seconds=max_seconds,
        progress=progress,
        band_limit=band_limit,
    )
    system, user = dialogue.system_speaker, dialogue.user_speaker
    notes: list[str] = []
    from turneval.bandwidth import narrow_band_warning

    notes += dialogue.metadata.pop("input_notes", []) + narrow_band_warning(dialogue.metadata.get("bandwidth"))
    for speaker, who in ((user, "user"), (system, "system")):
        if not dialogue.segments[speaker]:
            notes.append(f"No speech found on the {who} channel ({speaker}); most metrics are empty.")
    events = extract_events(dialogue)
    statistics = dialogue_statistics(events)
    for key in ("speaking_rate_wpm", "backchannel_word_rate", "backchannels_per_min", "interruptions_per_min"):
        statistics[f"{key}_system"] = statistics.get(f"{key}_{SPEAKERS[system]}")
        statistics[f"{key}_user"] = statistics.get(f"{key}_{SPEAKERS[user]}")
    if not events.has_words:
        notes.append("No transcript: backchannels are found by the duration proxy (listener IPUs of at most 1 s that do not take the floor); speaking and backchannel word rates are not available.")
    timing = full_duplex_timing(dialogue, events)
    notes.append("Full-duplex timing: the FD-Bench rounds and Full-Duplex-Bench samples are derived from the events of this conversation, not scripted (see full_duplex_timing.derived_from).")

    judge_section = agreement = None
    if judge_model is not None:
        if dialogue.audio is None:
            raise ReportError(f"dialogue {dialogue.id!r} has no audio for the judge")
        probs = judge_probabilities(judge_model, dialogue.audio, progress)
        labels = chunk_labels(dialogue)
        agreement = agreement_section(dialogue, probs, labels)
        judge_section = {
            "checkpoint": judge_name,
            "context_mode": judge_model.config.context_mode,
            "label_names": list(judge_model.config.label_names),
            "chunk_s": CHUNK_S,
            "layout": "row t: distribution over the label of chunk t + 1 (starting at 0.04 (t + 1) s), from the audio up to the end of chunk t",
            "probabilities": np.round(probs.astype(np.float64), 4),
            "labels": list(labels.labels[: probs.shape[0]]),
        }
    else:
        notes.append("Judge skipped (--no-judge): no class probabilities and no agreement metrics (a)-(e).")

    naturalness = None
    if predictor_model is not None:
        from turneval.naturalness import score_dialogue

        naturalness = score_dialogue(dialogue, predictor_model, progress=progress).to_dict(n_worst=N_WORST_UNITS)
        naturalness["checkpoint"] = predictor_name
        if not naturalness["defined"]:
            notes.append(f"Naturalness undefined: {naturalness['undefined_reason']}.")
    else:
        notes.append("Naturalness predictor skipped (--no-predictor): no naturalness score.")

    from turneval.model_provenance import models_section, provenance_warnings

    models = models_section((judge_name, judge_model), (predictor_name, predictor_model))
    notes = provenance_warnings(models) + notes  # what the models learned comes first: it qualifies every figure

    conversation = {
        "id": dialogue.id,
        **dialogue.metadata.get("source", {}),
        "duration_s": dialogue.duration,
        "system_channel": system,
        "user_channel": user,
        "segments_source": dialogue.metadata.get("segments_source"),
        "has_words": events.has_words,
        "input_sample_rate_hz": _get(dialogue.metadata, "bandwidth", "input_sample_rate_hz"),
        "bandwidth": dialogue.metadata.get("bandwidth"),
    }
    return Report(
        conversation=conversation,
        segments=[[list(s) for s in spk] for spk in dialogue.segments],
        events=_event_summary(events),
        statistics=statistics,
        full_duplex_timing=timing,
        backchannel_timing=backchannel_section(dialogue, events),
        judge=judge_section,
        agreement=agreement,
        naturalness=naturalness,
        notes=notes,
        settings={
            "device": device,
            "band_limit": band_limit,
            "vad": dialogue.metadata.get("vad"),
            "judge": judge_name,
            "predictor": predictor_name,
            "agreement_thresholds": None if agreement is None else agreement["thresholds"],
        },
        models=models,
    )


# ---------------------------------------------------------------------------------------
# Summary table
# ---------------------------------------------------------------------------------------


def _get(data: Any, *path: Any) -> Any:
    for key in path:
        if data is None:
            return None
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _pct(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else 100.0 * float(value)


def summary_rows(rep: Report) -> list[dict[str, Any]]:
    """One row per headline figure: ``section, key, label, value, unit`` and, where the papers
    have one, ``reference`` (human, in domain) with its ``reference_source``."""
    refs = _reference_lookup()
    primary = reference_values()["primary"]
    stats, timing = rep.statistics, rep.full_duplex_timing
    rows: list[tuple[str, str, str, Any, str]] = [
        ("statistics", "statistics.ipu_per_min", "IPUs per minute", stats.get("ipu_per_min"), "/min"),
        ("statistics", "statistics.pause_per_min", "Pauses per minute", stats.get("pause_per_min"), "/min"),
        ("statistics", "statistics.gap_per_min", "Gaps per minute", stats.get("gap_per_min"), "/min"),
        ("statistics", "statistics.overlap_per_min", "Overlaps per minute", stats.get("overlap_per_min"), "/min"),
        ("statistics", "statistics.gap_percent", "Gaps, % of duration", stats.get("gap_percent"), "%"),
        ("statistics", "statistics.overlap_percent", "Overlaps, % of duration", stats.get("overlap_percent"), "%"),
        ("statistics", "statistics.gap_mean_s", "Mean gap", stats.get("gap_mean_s"), "s"),
        ("statistics", "statistics.backchannels_per_min_system", "System backchannels per minute", stats.get("backchannels_per_min_system"), "/min"),
        ("statistics", "statistics.interruptions_per_min_system", "System interruptions per minute", stats.get("interruptions_per_min_system"), "/min"),
        ("statistics", "statistics.speaking_rate_wpm", "System speaking rate", stats.get("speaking_rate_wpm_system"), "wpm"),
        ("statistics", "statistics.backchannel_word_rate", "System backchannel word rate", stats.get("backchannel_word_rate_system"), "/min"),
        ("timing", "fdbench.fsed_ms", "FD-Bench first-speech emission delay", _get(timing, "fdbench", "fsed_ms"), "ms"),
        ("timing", "fdbench.srr", "FD-Bench success response rate", _pct(_get(timing, "fdbench", "srr")), "%"),
        ("timing", "fdbench.eir", "FD-Bench early interrupt rate", _pct(_get(timing, "fdbench", "eir")), "%"),
        ("timing", "fdb.smooth_turn_taking.tor", "FDB smooth turn-taking TOR", _pct(_get(timing, "full_duplex_bench", "smooth_turn_taking", "take_over_rate")), "%"),
        ("timing", "fdb.smooth_turn_taking.latency", "FDB smooth turn-taking latency", _get(timing, "full_duplex_bench", "smooth_turn_taking", "mean_latency_s"), "s"),
        ("timing", "fdb.pause_handling.tor", "FDB pause-handling TOR (lower is better)", _pct(_get(timing, "full_duplex_bench", "pause_handling", "take_over_rate")), "%"),
        ("timing", "fdb.user_interruption.tor", "FDB user-interruption TOR", _pct(_get(timing, "full_duplex_bench", "user_interruption", "take_over_rate")), "%"),
        ("backchannel", "backchannel.mean_rate_per_minute", "System backchannels per minute (SWOZ band 4-6)", rep.backchannel_timing.get("mean_rate_per_minute"), "/min"),
        ("backchannel", "backchannel.in_band_share", "Minutes in the 4-6 /min band", _pct(rep.backchannel_timing.get("in_band_share")), "%"),
    ]
    if rep.agreement is not None:
        from turneval.dataset_scripts.agreement_instances import METRIC_DECISIONS, METRIC_DESCRIPTIONS

        # every metric and decision gets a row, so that reports line up (n/a: no such decision here)
        for metric in METRIC_DECISIONS:
            occ = _get(rep.agreement, "occurrence_rates", metric, "rate")
            rows.append(("agreement", f"occurrence.{metric}", refs[f"occurrence.{metric}"]["label"], _pct(occ), "%"))
        for metric, decisions in METRIC_DECISIONS.items():
            for decision in decisions:
                value = _get(rep.agreement, "metrics", metric, "decisions", decision, "agreement")
                label = f"({metric}) agreement: {METRIC_DESCRIPTIONS[metric][decision]}"
                rows.append(("agreement", f"agreement.{metric}.{decision}", label, _pct(value), "%"))
    if rep.naturalness is not None:
        rows += [
            ("naturalness", "naturalness.score", "Naturalness m (higher is more natural)", rep.naturalness.get("naturalness_score"), ""),
            ("naturalness", "naturalness.mean_nll", "MeanNLL", rep.naturalness.get("mean_nll"), "nats"),
            ("naturalness", "naturalness.tail_nll", "TailNLL (worst 25 % of units)", rep.naturalness.get("tail_nll"), "nats"),
        ]
    out = []
    for section, key, label, value, unit in rows:
        ref = refs.get(key)
        row = {"section": section, "key": key, "label": label, "value": jsonable(value), "unit": unit, "reference": None, "reference_source": None}
        if ref is not None and primary in ref["values"]:
            row["reference"] = ref["values"][primary]
            row["reference_source"] = f"Talking Turns {ref['table']}, {reference_values()['systems'][primary]}"
        out.append(row)
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 10000 else f"{value:.0f}"
    return str(value)


def format_summary(rep: Report) -> str:
    """The terminal table: our figure beside the human reference value where the papers have one."""
    rows = rep.summary_rows()
    width = max(len(r["label"]) for r in rows)
    lines = [f"turneval report: {rep.conversation['id']} ({rep.conversation['duration_s']:.1f} s, system = channel {rep.conversation['system_channel']})"]
    lines.append(f"{'':{width}}  {'this conversation':>18}  {'reference (human)':>18}")
    section = None
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            lines.append(f"-- {section}")
        ours = "n/a" if r["value"] is None else f"{_fmt(r['value'])} {r['unit']}".strip()
        ref = "" if r["reference"] is None else f"{_fmt(r['reference'])} {r['unit']}".strip()
        lines.append(f"{r['label']:{width}}  {ours:>18}  {ref:>18}")
    lines.append("Reference values: Talking Turns (Arora et al. 2025) Tables 2, 6 and 8, human in-domain (Switchboard); see reference_values in report.json.")
    lines += [f"note: {n}" for n in rep.notes]
    return "\n".join(lines)


__all__ = [
    "Report",
    "ReportError",
    "agreement_section",
    "backchannel_section",
    "format_summary",
    "full_duplex_timing",
    "judge_probabilities",
    "load_conversation",
    "load_judge_model",
    "load_predictor_model",
    "reference_values",
    "report",
    "report_schema",
    "resolve_checkpoint",
    "summary_rows",
]
