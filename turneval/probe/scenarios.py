"""What the scripted caller says: scenario files, the built-in suites, and folders of stimuli.

A scenario file (YAML or JSON) lists samples; each names its Full-Duplex-Bench task folder
and the caller's audio as parts spoken by eSpeak NG (``say``) or read from files (``audio``),
placed at set times, and optionally the behaviour expected of a good agent::

    name: my-suite
    samples:
      - task: synthetic_pause_handling        # an FDB task folder name (v1.0 or v1.5)
        user:
          - {say: "so I was thinking that maybe", punct: ","}
          - {say: "we could go to the coast on Saturday", after: 1.2, mark: true}
        expect: {take_turn: false}
      - task: user_interruption               # v1.5 overlap: speaks again while the agent answers
        user:
          - {say: "what time does the pharmacy open tomorrow", punct: "?"}
          - {say: "wait what about on Sunday", after: 2.5, mark: true}

A part starts ``at`` seconds into the sample, or ``after`` seconds after the previous part
ends (the first at 0.3 s), or when the agent does something, heard live during the call
(:mod:`turneval.probe.caller`): ``on: agent_start|agent_end`` with ``delay: S|human``,
``during: agent_speech`` with ``every: S``, ``timeout: S``. A sample with such a part has no
audio before its call: the caller's track is made as the call goes, and the task's metadata are
written from where the parts actually played. ``voice`` picks an eSpeak voice (default: the sample's caller,
varied across samples), ``gain`` scales it (background speech). The ``mark``ed part (default:
the second, or the only one) is the task's event: the pause before it (pause handling), the
interruption (user interruption), the overlap event (v1.5). From it come the metadata files
the benchmark's evaluation reads: ``pause.json``, ``turn_taking.json``, ``interrupt.json``,
``metadata.json``, and ``input.json`` (the caller's words, exact from the synthesizer).

Built-in suites (``--scenarios NAME``): ``fdb-v1`` (the four v1.0 tasks), ``fdb-v1.5`` (the
four overlap cases), ``fdb`` (both), ``smoke`` (two short samples, for tests), and turneval's own
calls, each judged pass/fail (:mod:`turneval.probe.verdicts`): ``barge-in``, ``backchannel``,
``pause-hold``, ``dialogue`` (five-turn calls) and ``calls`` (the four). A folder of
the user's own stimuli (e.g. Full-Duplex-Bench's published inputs: task folders of sample
folders holding ``input.wav`` and their metadata) plays each ``input.wav`` and copies the
metadata files beside the recording.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from turneval.probe.caller import DURING, EVENTS, MAX_REPEATS, ScriptPart
from turneval.probe.listener import HOLD_S
from turneval.probe.transports import ProbeError


V10_TASKS = ("synthetic_pause_handling", "candor_pause_handling", "candor_turn_taking", "synthetic_user_interruption",
             "icc_backchannel")
V15_TASKS = ("user_interruption", "user_backchannel", "talking_to_other", "background_speech")
CALL_TASKS = ("barge_in", "backchannel", "pause_hold", "dialogue")
"""turneval's own calls (not Full-Duplex-Bench tasks): written under ``calls/<task>/<id>/`` and judged per sample
(:mod:`turneval.probe.verdicts`)."""
TASKS = V10_TASKS + V15_TASKS + CALL_TASKS
BUILTIN_SUITES = {"fdb-v1": ["probe_fdb_v1.yaml"], "fdb-v1.5": ["probe_fdb_v15.yaml"],
                  "fdb": ["probe_fdb_v1.yaml", "probe_fdb_v15.yaml"], "smoke": ["probe_smoke.yaml"],
                  "barge-in": ["probe_barge_in.yaml"], "backchannel": ["probe_backchannel.yaml"],
                  "pause-hold": ["probe_pause_hold.yaml"], "dialogue": ["probe_dialogue.yaml"],
                  "calls": ["probe_barge_in.yaml", "probe_backchannel.yaml", "probe_pause_hold.yaml",
                            "probe_dialogue.yaml"]}
CALLER_VOICES = (("en-us+m3", 170, 45), ("en-us+f2", 165, 65), ("en-us+m1", 160, 40), ("en-us+f4", 180, 58))
"""The callers' eSpeak voices, taken in turn across samples (name, words per minute, pitch)."""
DEFAULT_TAIL_S = {"synthetic_pause_handling": 0.0, "candor_pause_handling": 0.0, "icc_backchannel": 0.0}
"""Recording kept after the caller's last sound. Pause handling and backchannel stop with the caller, as
the benchmark's output is as long as its input: what the agent says after the caller has finished is an
answer, not a take-over inside the caller's turn. Others: 3 s."""
LEAD_S = 0.3
SAMPLE_RATE = 16000


class ScenarioError(ProbeError):
    """A scenario file or stimuli folder that cannot be used (the message names it and the fix)."""


@dataclass
class Sample:
    """One scripted call: the caller's audio (float32 mono, 16 kHz) and what the benchmark needs beside it."""

    task: str
    sample_id: str
    audio: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)  # file name -> JSON data written beside the recording
    copies: dict[str, Path] = field(default_factory=dict)  # file name -> stimuli file copied beside it
    reference_s: float | None = None  # the instant response latency counts from
    event: tuple[float, float] | None = None  # the marked part's span
    tail_s: float = 3.0
    expect: dict[str, Any] = field(default_factory=dict)
    parts: list[ScriptPart] | None = None  # a script that reacts to the agent (audio is then made during the call)
    spans: list[tuple[float, float]] = field(default_factory=list)  # each part's span, where fixed in advance
    plan: list[dict[str, Any]] = field(default_factory=list)  # each fixed part's log (as a reacting caller's)
    mark: int = 0  # the marked part

    @property
    def reacts(self) -> bool:
        return self.parts is not None

    @property
    def version(self) -> str:
        if self.task in CALL_TASKS:
            return "calls"
        return "v1.5" if self.task in V15_TASKS else "v1.0"

    @property
    def folder(self) -> str:
        return f"{self.version}/{self.task}/{self.sample_id}"

    @property
    def duration_s(self) -> float:
        return self.audio.size / SAMPLE_RATE

    def write_metadata(self, folder: Path, only_copies: bool = False) -> None:
        for name, data in ({} if only_copies else self.metadata).items():
            (folder / name).write_text(json.dumps(data, indent=1) + "\n")
        for name, source in self.copies.items():
            shutil.copyfile(source, folder / name)


def _voice(spec: Any, index: int):
    from turneval.dataset_scripts.synthetic.espeak import Voice

    if isinstance(spec, dict):
        return Voice(str(spec["name"]), rate=int(spec.get("rate", 170)), pitch=int(spec.get("pitch", 50)))
    if isinstance(spec, str):
        return Voice(spec)
    name, rate, pitch = CALLER_VOICES[index % len(CALLER_VOICES)]
    return Voice(name, rate=rate, pitch=pitch)


def _part_audio(part: dict, voice: Any, where: str, base: Path) -> tuple[np.ndarray, list[tuple[float, float, str]], str]:
    """A part's audio at 16 kHz, its words (relative times) and text."""
    if "say" in part:
        from turneval.dataset_scripts.synthetic.espeak import synthesize
        from turneval.dataset_scripts.synthetic.material import text_to_tokens

        text = str(part["say"])
        utt = synthesize(text_to_tokens(text, str(part.get("punct", "."))), voice)
        return utt.audio, [(w.start, w.end, w.text) for w in utt.words], text
    if "audio" in part:
        from turneval.dataset_scripts.audio import load_audio, mono_mix

        path = (base / str(part["audio"])).expanduser()
        audio, _ = load_audio(path)
        return mono_mix(audio), [], str(part.get("text", ""))
    raise ScenarioError(f"{where}: a part needs `say: TEXT` or `audio: FILE`")


def _asr(words: list[tuple[float, float, str]]) -> dict:
    """Words in the benchmark's ASR JSON layout."""
    return {"text": " ".join(w[2] for w in words),
            "chunks": [{"text": w[2], "timestamp": [round(w[0], 3), round(w[1], 3)]} for w in words]}


def _metadata(task: str, spans: list[tuple[float, float, str]], mark: int, end_s: float) -> tuple[dict, float | None]:
    """The task's metadata files and the instant response latency counts from."""
    start, stop, text = spans[mark]
    if task in CALL_TASKS:  # judged by turneval.probe.verdicts from the parts' spans; response counted from the end
        return {}, max(s[1] for s in spans)
    if task in ("synthetic_pause_handling", "candor_pause_handling"):
        pause = [spans[mark - 1][1], start] if mark > 0 else [0.0, start]
        return {"pause.json": [{"text": "[PAUSE]", "timestamp": [round(pause[0], 3), round(pause[1], 3)]}]}, pause[0]
    if task == "candor_turn_taking":
        last_end = max(s[1] for s in spans)
        return {"turn_taking.json": [{"text": spans[-1][2], "timestamp": [round(last_end, 3), round(end_s, 3)]}]}, last_end
    if task == "synthetic_user_interruption":
        return {"interrupt.json": [{"text": text, "timestamp": [round(start, 3), round(stop, 3)]}]}, stop
    if task == "icc_backchannel":
        return {}, None
    return {"metadata.json": {"context_text": spans[0][2], "current_turn_text": text,
                              "timestamps": [round(start, 3), round(stop, 3)]}}, stop


def _number(part: dict, key: str, where: str, minimum: float = 0.0) -> float | None:
    if key not in part:
        return None
    try:
        value = float(part[key])
    except (TypeError, ValueError):
        raise ScenarioError(f"{where}: `{key}` must be a number of seconds, not {part[key]!r}") from None
    if value < minimum or (key == "every" and value <= 0):
        raise ScenarioError(f"{where}: `{key}` must be {'more than' if key == 'every' else 'at least'} {minimum:g} s")
    return value


def _trigger(part: dict, where: str) -> dict[str, Any]:
    """The keys that say when a part starts, checked (a fixed time, or an event of the agent's)."""
    fixed = [k for k in ("at", "after") if k in part]
    reacting = [k for k in ("on", "during") if k in part]
    if len(fixed) + len(reacting) > 1:
        raise ScenarioError(f"{where}: give one of `at`, `after`, `on` or `during`, not {' and '.join(fixed + reacting)}")
    out: dict[str, Any] = {"at": _number(part, "at", where), "after": _number(part, "after", where)}
    if "on" in part and part["on"] not in EVENTS:
        raise ScenarioError(f"{where}: `on: {part['on']}` is not an agent event; use one of {', '.join(EVENTS)}")
    if "during" in part and part["during"] not in DURING:
        raise ScenarioError(f"{where}: `during: {part['during']}` is not known; use `during: agent_speech`")
    if "during" in part and "every" not in part:
        raise ScenarioError(f"{where}: `during: agent_speech` needs `every: S` (seconds between its repeats)")
    for key in ("delay", "every", "timeout", "hold", "max"):
        if key in part and not reacting:
            raise ScenarioError(f"{where}: `{key}` belongs to a part that waits for the agent (`on:` or `during:`)")
    delay = part.get("delay", 0.0)
    if delay != "human":
        delay = _number(part, "delay", where) or 0.0
    hold = _number(part, "hold", where, minimum=0.05)
    repeats = part.get("max", MAX_REPEATS)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ScenarioError(f"{where}: `max` must be a whole number of repeats, 1 or more, not {repeats!r}")
    out.update(on=part.get("on"), during=part.get("during"), delay=delay, every=_number(part, "every", where),
               timeout_s=_number(part, "timeout", where), hold_s=HOLD_S if hold is None else hold, max_count=repeats)
    return out


def _parse_part(part: Any, i: int, where: str, base: Path, caller: Any) -> ScriptPart:
    where = f"{where}, part {i + 1}"
    if not isinstance(part, dict):
        raise ScenarioError(f"{where}: expected a mapping such as {{say: hello}}")
    if True in part:  # YAML 1.1 reads a bare `on:` key as the boolean true
        part = {("on" if k is True else k): v for k, v in part.items()}
    voice = _voice(part["voice"], 0) if "voice" in part else caller
    trigger = _trigger(part, where)
    audio, words, text = _part_audio(part, voice, where, base)
    return ScriptPart(audio=audio * float(part.get("gain", 1.0)), words=words, text=text, mark=bool(part.get("mark")),
                      **trigger)


def _place_fixed(parts: list[ScriptPart]) -> list[float]:
    """Start times of parts that all start at set times (the first at 0.3 s, else after the previous one)."""
    starts, cursor = [], LEAD_S
    for i, part in enumerate(parts):
        start = part.at if part.at is not None else cursor + ((part.after or 0.0) if i else 0.0)
        starts.append(start)
        cursor = start + part.audio.size / SAMPLE_RATE
    return starts


def mix_parts(placed: list[tuple[float, ScriptPart]], task: str, mark: int, tail: float) -> tuple[np.ndarray, dict, float | None, tuple[float, float]]:
    """The caller's audio of parts placed at their start times, the task's metadata, its reference and its event."""
    speech_end = max(s + p.audio.size / SAMPLE_RATE for s, p in placed)
    total = np.zeros(int(round((speech_end + tail) * SAMPLE_RATE)) + 1, dtype=np.float32)
    words = []
    for start, part in placed:
        begin = int(round(start * SAMPLE_RATE))
        total[begin : begin + part.audio.size] += part.audio[: total.size - begin]
        words += [(start + w0, start + w1, t) for w0, w1, t in part.words]
    spans = [(s, s + p.audio.size / SAMPLE_RATE, p.text) for s, p in placed]
    metadata, reference = _metadata(task, spans, mark, total.size / SAMPLE_RATE)
    if words:
        metadata["input.json"] = _asr(sorted(words))
    return total, metadata, reference, spans[mark][:2]


def build_sample(entry: dict, index: int, where: str, base: Path) -> Sample:
    """One sample of a scenario file (``where`` names it in errors)."""
    task = str(entry.get("task", ""))
    if task not in TASKS:
        raise ScenarioError(f"{where}: task {task!r} is not a Full-Duplex-Bench task folder nor one of turneval's "
                            f"calls; use one of {', '.join(TASKS)}")
    raw_parts = entry.get("user")
    if not isinstance(raw_parts, list) or not raw_parts:
        raise ScenarioError(f"{where}: `user` must be a list of parts ({{say: TEXT}} or {{audio: FILE}})")
    caller = _voice(entry.get("voice"), index)
    parts = [_parse_part(part, i, where, base, caller) for i, part in enumerate(raw_parts)]
    marks = [i for i, p in enumerate(parts) if p.mark]
    mark = marks[0] if marks else min(1, len(parts) - 1)
    tail = float(entry.get("tail_s", DEFAULT_TAIL_S.get(task, 3.0)))
    common = {"task": task, "sample_id": str(entry.get("id", "")), "tail_s": tail, "expect": dict(entry.get("expect") or {}),
              "mark": mark}
    if any(p.reacts for p in parts):  # the caller's audio is made during the call, as the agent acts
        return Sample(audio=np.zeros(0, dtype=np.float32), parts=parts, **common)
    starts = _place_fixed(parts)
    if min(starts) < 0:
        raise ScenarioError(f"{where}, part {starts.index(min(starts)) + 1}: starts before 0 s")
    audio, metadata, reference, event = mix_parts(list(zip(starts, parts)), task, mark, tail)
    spans = [(round(s, 4), round(s + p.audio.size / SAMPLE_RATE, 4)) for s, p in zip(starts, parts)]
    log = [{"part": i + 1, "text": p.text, "plan": p.spec(), "gap_s": None, "timed_out": False,
            "left": [{"planned_s": a, "left_s": a}], "done_s": b} for i, (p, (a, b)) in enumerate(zip(parts, spans))]
    return Sample(audio=audio, metadata=metadata, reference_s=reference, event=event, spans=spans, plan=log, **common)


def _read_file(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as err:  # yaml and json raise their own error types
        raise ScenarioError(f"{path}: not a valid scenario file ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise ScenarioError(f"{path}: a scenario file is a mapping with a `samples:` list (see docs/probe.md)")
    return data


def load_scenario_file(path: str | Path, start_index: int = 0) -> list[Sample]:
    """Every sample of one YAML/JSON scenario file, synthesised."""
    path = Path(path)
    data = _read_file(path)
    out = []
    for i, entry in enumerate(data["samples"]):
        out.append(build_sample(entry, start_index + i, f"{path}, sample {i + 1}", path.parent))
    return out


def load_stimuli(folder: str | Path) -> list[Sample]:
    """A folder of the user's stimuli in the benchmark's layout: each sample's ``input.wav`` and metadata."""
    from turneval.dataset_scripts.audio import load_audio, mono_mix
    from turneval.dataset_scripts.readers.full_duplex_bench import BenchmarkLayoutError, find_full_duplex_bench_tasks

    try:
        tasks = find_full_duplex_bench_tasks(folder)
    except BenchmarkLayoutError as err:
        raise ScenarioError(f"{folder}: not a stimuli folder: {err}") from None
    out = []
    for task in tasks:
        name = task.name if task.name in V10_TASKS + V15_TASKS else _task_folder(task.kind, task.name)
        for item in task.samples:
            if not item.has("input.wav"):
                continue
            audio, _ = load_audio(item.path("input.wav"))
            copies = {p.name: p for p in sorted(item.folder.iterdir())
                      if p.is_file() and p.suffix == ".json" and not p.name.startswith("output")}
            out.append(Sample(task=name, sample_id=item.sample_id, audio=mono_mix(audio), copies=copies,
                              reference_s=_reference_from_files(item.folder), tail_s=3.0))
    if not out:
        raise ScenarioError(f"{folder}: no sample folder holds an input.wav; a stimuli folder has task folders of "
                            "sample folders, each with the caller's input.wav (and the task's metadata JSON)")
    return out


def _task_folder(kind: str, name: str) -> str:
    return {"pause_handling": "synthetic_pause_handling", "smooth_turn_taking": "candor_turn_taking",
            "user_interruption": "synthetic_user_interruption", "backchannel": "icc_backchannel"}.get(kind, name)


def _reference_from_files(folder: Path) -> float | None:
    """The latency reference of a stimuli sample, from the metadata the benchmark ships."""
    for name, index in (("turn_taking.json", (0, 0)), ("interrupt.json", (0, 1)), ("pause.json", (0, 0))):
        if (folder / name).is_file():
            try:
                return float(json.loads((folder / name).read_text())[index[0]]["timestamp"][index[1]])
            except (ValueError, KeyError, IndexError, TypeError):
                return None
    if (folder / "metadata.json").is_file():
        try:
            return float(json.loads((folder / "metadata.json").read_text())["timestamps"][1])
        except (ValueError, KeyError, IndexError, TypeError):
            return None
    return None


def load_scenarios(spec: str | Path) -> list[Sample]:
    """A built-in suite name, a scenario file, or a stimuli folder; sample ids numbered per task where missing."""
    if str(spec) in BUILTIN_SUITES:
        samples = []
        for name in BUILTIN_SUITES[str(spec)]:
            with resources.as_file(resources.files("turneval") / "data" / name) as path:
                samples += load_scenario_file(path, start_index=len(samples))
    else:
        path = Path(spec)
        if path.is_dir():
            samples = load_stimuli(path)
        elif path.is_file():
            samples = load_scenario_file(path)
        else:
            raise ScenarioError(f"{spec}: no such scenario file or stimuli folder; give a YAML/JSON scenario file, a "
                                f"folder of stimuli, or a built-in suite ({', '.join(BUILTIN_SUITES)})")
    counts: dict[str, int] = {}
    seen: set[str] = set()
    for sample in samples:
        if not sample.sample_id:
            counts[sample.task] = counts.get(sample.task, 0) + 1
            sample.sample_id = str(counts[sample.task])
        if sample.folder in seen:
            raise ScenarioError(f"{spec}: two samples of {sample.task} share the id {sample.sample_id}")
        seen.add(sample.folder)
    return samples
