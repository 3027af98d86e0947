"""The Space's "Analyse" tab without the browser: caps, the report call, and its outputs.

:func:`analyse` checks an upload (one stereo file, or the user's and the system's mono
files) against the size and duration caps, runs :func:`turneval.reporting.report` (the one
switchable analysis call, :func:`run_report`), and writes the timeline PNG, ``report.json``
and ``report.html`` into a fresh folder under the Space's work folder. Folders older than
``max_age_s`` are removed on every call, so uploads and outputs do not pile up.

The judge and the naturalness predictor run when their bundled checkpoints are installed (or
``$TURNEVAL_JUDGE`` / ``$TURNEVAL_PREDICTOR`` name checkpoints); otherwise the report says
that the stage was skipped.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from turneval.checkpoints import default_checkpoint
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.files import atomic_write_bytes, atomic_write_text
from turneval.reporting import report
from turneval.reporting.html_report import render_html, timeline_png
from turneval.reporting.summary import format_number
from turneval.reporting.verdict import about_models, gaps_png, verdict_line


MAX_SECONDS_ENV_VAR = "TURNEVAL_SPACE_MAX_SECONDS"
MAX_MB_ENV_VAR = "TURNEVAL_SPACE_MAX_MB"
WORK_ENV_VAR = "TURNEVAL_SPACE_WORK"
DEFAULT_MAX_SECONDS = 600.0
"""Ten minutes: the judge and the predictor run on a shared CPU."""
DEFAULT_MAX_MB = 100.0
"""Megabytes as Gradio counts them (2**20 bytes), so that our message and Gradio's upload limit agree."""
MB = 2**20
MIN_SECONDS = 2.0
"""Shortest upload: the judge needs context and the naturalness score 2 s of future."""
DEFAULT_MAX_AGE_S = 3600.0


class AnalysisError(ValueError):
    """The upload cannot be analysed; the message says what to change."""


def max_seconds() -> float:
    """The duration cap (``$TURNEVAL_SPACE_MAX_SECONDS``, default 600 s)."""
    return float(os.environ.get(MAX_SECONDS_ENV_VAR, DEFAULT_MAX_SECONDS))


def max_bytes() -> int:
    """The upload size cap (``$TURNEVAL_SPACE_MAX_MB``, default 100 MB of 2**20 bytes, Gradio's unit)."""
    return int(float(os.environ.get(MAX_MB_ENV_VAR, DEFAULT_MAX_MB)) * MB)


def size_text(n_bytes: float) -> str:
    """A size in Gradio's megabytes (2**20 bytes), the unit of its own upload-limit message."""
    return f"{n_bytes / MB:.1f} MB"


def work_root() -> Path:
    """``$TURNEVAL_SPACE_WORK``, else ``<temp>/turneval_space/work``."""
    override = os.environ.get(WORK_ENV_VAR)
    root = Path(override) if override else Path(tempfile.gettempdir()) / "turneval_space" / "work"
    root.mkdir(parents=True, exist_ok=True)
    return root


def clean_old_outputs(root: Path, max_age_s: float = DEFAULT_MAX_AGE_S, now: float | None = None) -> list[Path]:
    """Remove the analysis folders in ``root`` last changed more than ``max_age_s`` ago."""
    now = time.time() if now is None else now
    removed = []
    for child in root.iterdir():
        if child.is_dir() and child.name.startswith("analysis_") and now - child.stat().st_mtime > max_age_s:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
    return removed


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def check_upload(path: str | Path, *, limit_bytes: int, limit_seconds: float, channels: int | None = None) -> float:
    """Refuse a file over the size or duration cap, unreadable, or with the wrong channel
    count (from its header, before decoding); returns its duration in seconds."""
    import soundfile as sf

    path = Path(path)
    size = path.stat().st_size
    name = path.name
    if size > limit_bytes:
        raise AnalysisError(f"{name} is {size_text(size)}; the limit here is {size_text(limit_bytes)}. Cut the conversation or run `turneval report` locally.")
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError, TypeError):
        from turneval.dataset_scripts.audio import READABLE_FORMATS

        raise AnalysisError(f"{name} is not a readable audio file (or it is corrupt); upload a {READABLE_FORMATS} file.") from None
    if info.frames <= 0 or info.samplerate <= 0:
        raise AnalysisError(f"{name} holds no audio (0 samples).")
    seconds = info.frames / info.samplerate
    if seconds > limit_seconds:
        raise AnalysisError(
            f"{name} is {_duration(seconds)} long; the limit here is {_duration(limit_seconds)}. "
            "Cut the conversation or run `turneval report` locally (no limit)."
        )
    if channels is not None and info.channels != channels:
        if channels == 2:
            raise AnalysisError(f"{name} has {info.channels} channel(s); a stereo file (one speaker per channel) is needed, or upload the user's and the system's mono files instead.")
        raise AnalysisError(f"{name} has {info.channels} channels; the user's and the system's files must be mono (one speaker each).")
    if seconds < MIN_SECONDS:
        raise AnalysisError(f"{name} is only {seconds:.1f} s long; the analysis needs at least {MIN_SECONDS:g} s of conversation (turn-taking happens over seconds).")
    return seconds


def model_checkpoints() -> dict[str, Any]:
    """Which model stages can run: the judge and predictor checkpoints found (False: skip)."""
    found = {kind: default_checkpoint(kind) for kind in ("judge", "predictor")}
    return {kind: str(path) if path is not None and (path / "config.json").is_file() else False for kind, path in found.items()}


_MODELS_LOCK = threading.Lock()
_MODELS: dict[tuple[str, Any], Any] = {}


def loaded_model(kind: str, checkpoint: Any) -> Any:
    """The model of ``checkpoint``, loaded once per process (the Space serves many analyses)."""
    if checkpoint is False:
        return False
    with _MODELS_LOCK:
        key = (kind, checkpoint)
        if key not in _MODELS:
            from turneval.reporting import load_judge_model, load_predictor_model

            loader = load_judge_model if kind == "judge" else load_predictor_model
            _MODELS[key] = loader(checkpoint)[0]
        return _MODELS[key]


def run_report(
    stereo: str | Path | None,
    user: str | Path | None,
    system: str | Path | None,
    system_channel: int,
    limit_seconds: float,
) -> Any:
    """The analysis call: :func:`turneval.reporting.report` with the checkpoints found here."""
    models = model_checkpoints()
    rep = report(
        stereo,
        system_channel=system_channel,
        user_audio=user,
        system_audio=system,
        judge=loaded_model("judge", models["judge"]),
        predictor=loaded_model("predictor", models["predictor"]),
        max_seconds=limit_seconds,
        progress=False,
    )
    for stage, flag in (("judge", "--no-judge"), ("predictor", "--no-predictor")):
        if models[stage] is False:
            rep.notes = [n for n in rep.notes if flag not in n] + [f"The {stage} checkpoint is not installed in this Space, so that stage was skipped."]
    return rep


@dataclass
class AnalysisResult:
    """What the Analyse tab shows: the verdict (headline figures beside the human ranges), the
    response-gap plot, the timeline, the full table, and files."""

    report: dict[str, Any]
    headline: dict[str, Any]
    table: list[list[Any]]
    timeline_png: Path
    report_json: Path
    report_html: Path | None
    notes: list[str] = field(default_factory=list)
    gaps_png: Path | None = None


TABLE_COLUMNS = ["Section", "Metric", "This conversation", "Unit", "Reference (human)", "Reference source"]


def summary_table(report: dict[str, Any]) -> list[list[Any]]:
    """The report's summary rows as table rows (``TABLE_COLUMNS``)."""
    return [
        [row["section"], row["label"], format_number(row["value"], digits=3), row["unit"], "" if row["reference"] is None else format_number(row["reference"], digits=3), row.get("reference_source") or ""]
        for row in report["summary"]
    ]


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """What the tab shows first: the verdict rows of the report (each headline figure beside its
    human range), the sentence that sums them up, and the one note about the models."""
    rows = (report.get("headline") or {}).get("verdict") or []
    return {
        "conversation": report["conversation"]["id"],
        "duration_s": report["conversation"]["duration_s"],
        "system_channel": report["conversation"]["system_channel"],
        "verdict_line": verdict_line(rows) if rows else None,
        "verdict": rows,
        "about_models": about_models(report.get("models")),
    }


def analyse(
    stereo: str | Path | None = None,
    user: str | Path | None = None,
    system: str | Path | None = None,
    system_channel: int = 1,
    *,
    root: Path | None = None,
    limit_seconds: float | None = None,
    limit_bytes: int | None = None,
    analyser: Callable[..., Any] = run_report,
) -> AnalysisResult:
    """Check the upload, run the analysis, write the timeline, JSON and HTML.

    Give ``stereo`` (one speaker per channel; ``system_channel`` says which is the system),
    or both ``user`` and ``system`` mono files.

    Raises:
        AnalysisError: nothing uploaded, over a cap, unreadable, wrong channel count, or the
            report refused the input (silent channel, no speech, ...).
    """
    limit_seconds = max_seconds() if limit_seconds is None else limit_seconds
    limit_bytes = max_bytes() if limit_bytes is None else limit_bytes
    if system_channel not in (0, 1):
        raise AnalysisError(f"choose the system channel: 0 (left) or 1 (right), got {system_channel!r}")
    if stereo is not None and (user is not None or system is not None):
        raise AnalysisError("upload either one stereo file or the two mono files, not both")
    if stereo is not None:
        check_upload(stereo, limit_bytes=limit_bytes, limit_seconds=limit_seconds, channels=2)
    elif user is not None and system is not None:
        for path in (user, system):
            check_upload(path, limit_bytes=limit_bytes, limit_seconds=limit_seconds, channels=1)
    elif user is not None or system is not None:
        raise AnalysisError("upload both mono files (the user's and the system's), or one stereo file")
    else:
        raise AnalysisError("upload a stereo conversation (one speaker per channel), or the user's and the system's mono files")

    root = work_root() if root is None else Path(root)
    root.mkdir(parents=True, exist_ok=True)
    clean_old_outputs(root)
    try:
        rep = analyser(stereo, user, system, system_channel, limit_seconds)
    except DialogueError as err:  # AudioError and ReportError are DialogueErrors
        raise AnalysisError(_strip_dirs(str(err))) from None
    data = rep.to_dict()
    # Render everything before writing anything: no half-written output set.
    png = timeline_png(rep)
    gaps = gaps_png(rep.headline["response_gaps_s"], bool(rep.conversation.get("has_words")))
    page = render_html(rep)
    out = Path(tempfile.mkdtemp(prefix="analysis_", dir=root))
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(data["conversation"]["id"]))[:60] or "conversation"
    paths = {"png": out / f"{stem}_timeline.png", "gaps": out / f"{stem}_gaps.png", "json": out / f"{stem}_report.json",
             "html": out / f"{stem}_report.html"}
    atomic_write_bytes(paths["png"], png)
    atomic_write_bytes(paths["gaps"], gaps)
    atomic_write_text(paths["json"], rep.to_json())
    atomic_write_text(paths["html"], page)
    return AnalysisResult(
        report=data,
        headline=headline(data),
        table=summary_table(data),
        timeline_png=paths["png"],
        report_json=paths["json"],
        report_html=paths["html"],
        # the model warnings are in the one note about the models (headline["about_models"])
        notes=[n for n in data.get("notes") or [] if not n.startswith("WARNING:")],
        gaps_png=paths["gaps"],
    )


def _strip_dirs(message: str) -> str:
    """Upload paths are long temp paths: show the file name only."""
    words = []
    for word in message.split(" "):
        if os.sep in word and (word.startswith(os.sep) or word.startswith(tempfile.gettempdir())):
            trailing = word[len(word.rstrip(":,;")) :]
            word = Path(word.rstrip(":,;")).name + trailing
        words.append(word)
    return " ".join(words)


__all__ = [
    "AnalysisError",
    "AnalysisResult",
    "TABLE_COLUMNS",
    "analyse",
    "check_upload",
    "clean_old_outputs",
    "headline",
    "max_bytes",
    "max_seconds",
    "model_checkpoints",
    "run_report",
    "summary_table",
]
