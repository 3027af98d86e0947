"""One call of a batch, evaluated and written: what every worker runs, local or on Ray.

A worker loads the models once (:class:`CallEvaluator`) and then reports one call after the
other. A call's folder ``OUT/calls/<id>/`` appears whole or not at all: its files are written
into a hidden folder beside it, which is then renamed. A finished call is one whose folder
holds ``report.json``; a rerun skips it. A call that fails gives the one-line reason the
single ``turneval report`` prints, and the batch goes on.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turneval.reporting.build import ConversationInput, ReportOptions

from .discover import Call


CALLS_DIR = "calls"


@dataclass
class CallOutcome:
    """What a worker sends back: the call's id, its audio seconds, the wall seconds it took, and
    either its headline figures and duration or the one-line reason it failed.
    ``documents`` (file name -> text) are set only when the worker does not write the call itself
    (a Ray worker on another machine)."""

    id: str
    ok: bool
    audio_s: float = 0.0
    wall_s: float = 0.0
    reason: str | None = None
    documents: dict[str, str] = field(default_factory=dict)


def call_row(call: Call, report_json: dict[str, Any]) -> dict[str, Any]:
    """What the fleet table needs of a finished call (``call.json`` beside its report, so a fleet
    of thousands is summed up without reading every report.json): the input, the metadata, the
    duration, the headline figures and, per figure, the verdict's mark and human range."""
    from turneval.headline_figures import FIGURES

    verdict = {row["name"]: row for row in (report_json.get("headline") or {}).get("verdict") or []}
    ranges = {}
    for name, figure in FIGURES.items():
        row = verdict.get(name) or {}
        low, high = row.get("human_low"), row.get("human_high")
        ranges[name] = None if low is None or high is None else [low / figure.factor, high / figure.factor]
    return {
        "id": call.id,
        "input": call.source,
        "metadata": call.metadata,
        "duration_s": report_json["conversation"]["duration_s"],
        "figures": {name: figure.read(report_json) for name, figure in FIGURES.items()},
        "marks": {name: (verdict.get(name) or {}).get("mark") for name in FIGURES},
        "human_ranges": ranges,
    }


def call_dir(out_dir: str | Path, call_id: str) -> Path:
    return Path(out_dir) / CALLS_DIR / call_id


def is_finished(out_dir: str | Path, call_id: str) -> bool:
    """Whether the call's report is already written (a rerun skips it)."""
    folder = call_dir(out_dir, call_id)
    return (folder / "report.json").is_file() and (folder / "call.json").is_file()


def write_call(out_dir: str | Path, call_id: str, documents: dict[str, str]) -> Path:
    """Write a call's documents as one folder: all into a hidden folder, then one rename."""
    target = call_dir(out_dir, call_id)
    staging = target.parent / f".{call_id}.{uuid.uuid4().hex[:8]}.tmp"
    staging.mkdir(parents=True)
    try:
        for name, text in documents.items():
            (staging / name).write_text(text, encoding="utf-8")
        if target.exists():  # a folder without report.json (an older turneval's); replaced whole
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def failure_reason(err: BaseException) -> str:
    """The one line ``turneval report`` prints for this error (after ``error:``), or, for an error
    the report does not expect, its type and message so that it can be reported. (The CLI's
    UserError is not among them: only the commands raise it, and a call runs the library.)"""
    from turneval.dataset_scripts.dialogue import DialogueError

    text = " ".join(str(err).split()) or type(err).__name__
    if isinstance(err, (DialogueError, FileNotFoundError, ValueError)):
        return text
    return f"internal error ({type(err).__name__}): {text}"


def audio_seconds(call: Call) -> float:
    """The call's length from its audio header(s) (0 when unreadable: the call will say why)."""
    from turneval.dataset_scripts.audio import audio_duration

    path = call.audio if call.audio is not None else call.system_audio
    if path is None:
        return 0.0
    try:
        if Path(path).suffix.lower() == ".json":
            from turneval.reporting.inputs import annotation_audio, read_annotations

            data = read_annotations(Path(path))
            if not data.get("audio_path"):
                return 0.0
            path = annotation_audio(path, data)
        return float(audio_duration(path))
    except Exception:  # the call itself reports the problem with its own wording
        return 0.0


def set_threads(threads: int) -> None:
    """Bound every library's threads in this worker, so that N workers share the cores instead of
    each taking all of them (torch's default) and thrashing."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    import torch

    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(threads)
    except RuntimeError:  # only settable before the first parallel work; harmless when already set
        pass


class CallEvaluator:
    """The models of a report loaded once, and every call evaluated with them.

    Args:
        options: the report options every call gets (``progress`` is turned off).
        html: also write report.html.
        threads: the threads this worker may use.
    """

    def __init__(self, options: ReportOptions, html: bool = True, threads: int = 1) -> None:
        from dataclasses import replace

        from turneval.reporting.build import load_models

        set_threads(threads)
        self.options = replace(options, progress=False)
        self.html = html
        self.models = load_models(self.options)

    def documents(self, call: Call) -> dict[str, str]:
        """report.json (and report.html) of one call, rendered, not written (errors raise)."""
        from turneval.reporting.build import build_report, check_conversation

        if call.problem:
            raise ValueError(call.problem)
        source = ConversationInput(audio=call.audio, system_channel=call.system_channel, user_audio=call.user_audio,
                                   system_audio=call.system_audio, annotations=call.annotations)
        check_conversation(source, self.options)
        rep = build_report(source, self.options, self.models)
        body = rep.to_dict()
        documents = {"call.json": json.dumps(call_row(call, body), indent=1, allow_nan=False),
                     "report.json": json.dumps(body, indent=1, allow_nan=False)}
        if self.html:
            from turneval.reporting.html_report import render_html

            documents["report.html"] = render_html(rep)
        return documents

    def run(self, call: Call, out_dir: str | Path | None) -> CallOutcome:
        """Evaluate one call; write it under ``out_dir`` (None: return the documents instead)."""
        import warnings

        start = time.perf_counter()
        audio_s = audio_seconds(call)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # every warning the report has is in its notes
                documents = self.documents(call)
        except Exception as err:  # one bad call must not stop the others
            return CallOutcome(call.id, False, audio_s, time.perf_counter() - start, failure_reason(err))
        if out_dir is None:
            return CallOutcome(call.id, True, audio_s, time.perf_counter() - start, documents=documents)
        write_call(out_dir, call.id, documents)
        return CallOutcome(call.id, True, audio_s, time.perf_counter() - start)
