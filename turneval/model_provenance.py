"""What a report's models are: each checkpoint's name, training data and measured quality.

A turneval figure is only as good as the model behind it, so ``turneval report`` names every
checkpoint it used and what it learned from. Each checkpoint folder carries that in a small
``provenance.json`` beside ``config.json`` (the same fields may instead sit at the top level of
``config.json``; ``provenance.json`` wins where both exist)::

    {
      "name": "turn_taking_judge_demo",
      "model": "judge",                                  # or "predictor"
      "training_data": "60 synthetic eSpeak NG conversations (96 min), turneval synth seed 0",
      "trained_on_synthetic_sound": true,                # the audio it heard was synthesised
      "sound_sources": ["eSpeak NG"],                    # optional: engines or corpora of the sound
      "measured": {"ROC-AUC macro (synthetic eSpeak test split)": 0.832},
      "measured_on": "where the figures of `measured` come from",   # optional
      "validated_on_real_speech": "which of its figures were checked on real recordings", # optional
      "model_card": "model_cards/turn_taking_judge/README.md"       # optional
    }

``training_data`` (text), ``trained_on_synthetic_sound`` (bool) and ``measured`` (figure name
-> number; figure names say the data they were measured on) are required. A model trained on
synthetic sound makes the report warn (in ``notes``, on the terminal and in the HTML page):
its figures on real speech are not validated, except those ``validated_on_real_speech`` names. A checkpoint without provenance is reported as
unknown, with a warning too.

>>> info = describe_checkpoint("judge", None)
>>> info["name"], info["provenance"]
(None, 'no checkpoint')
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from turneval.dataset_scripts.files import read_json


PROVENANCE_FILE = "provenance.json"
REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "training_data": str,
    "trained_on_synthetic_sound": bool,
    "measured": dict,
}
"""Field -> type every provenance must have."""
OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "model": str,
    "sound_sources": list,
    "measured_on": str,
    "model_card": str,
    "training_compute": str,
    "validated_on_real_speech": str,
}
MODEL_KINDS = ("judge", "predictor")


class ProvenanceError(ValueError):
    """A checkpoint's provenance file exists but is malformed; the message names the file."""


def validate_provenance(data: Any, source: str) -> dict[str, Any]:
    """``data`` checked field by field; raises ProvenanceError naming ``source`` and the field."""
    if not isinstance(data, dict):
        raise ProvenanceError(f"{source}: provenance must be a JSON object, got {type(data).__name__}")
    for key, kind in {**REQUIRED_FIELDS, **OPTIONAL_FIELDS}.items():
        if key not in data:
            if key in REQUIRED_FIELDS:
                raise ProvenanceError(f"{source}: missing field {key!r} (required: {', '.join(REQUIRED_FIELDS)}; see docs/report.md)")
            continue
        if not isinstance(data[key], kind):
            raise ProvenanceError(f"{source}: field {key!r} must be {getattr(kind, '__name__', kind)}, got {data[key]!r}")
    for name, value in data["measured"].items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ProvenanceError(f"{source}: measured[{name!r}] must be a number or null, got {value!r}")
    if "model" in data and data["model"] not in MODEL_KINDS:
        raise ProvenanceError(f"{source}: field 'model' must be one of {MODEL_KINDS}, got {data['model']!r}")
    return dict(data)


def read_provenance(folder: str | Path) -> dict[str, Any] | None:
    """The provenance of a checkpoint folder (``provenance.json``, else ``config.json`` fields),
    or None when it has none. Raises ProvenanceError when what is there is malformed."""
    folder = Path(folder)
    path = folder / PROVENANCE_FILE
    if path.is_file():
        data = read_json(path, error=ProvenanceError)
        return {**validate_provenance(data, str(path)), "source": str(path)}
    config = folder / "config.json"
    if config.is_file():
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None  # the loader reports a broken config; provenance is simply unknown here
        if isinstance(data, dict) and any(key in data for key in REQUIRED_FIELDS):
            fields = {k: data[k] for k in (*REQUIRED_FIELDS, *OPTIONAL_FIELDS) if k in data}
            return {**validate_provenance(fields, str(config)), "source": str(config)}
    return None


def _folder_of(model: Any) -> Path | None:
    """The folder a loaded model came from (transformers records it as ``name_or_path``)."""
    name = getattr(getattr(model, "config", None), "name_or_path", None) or getattr(model, "name_or_path", None)
    if name and Path(str(name)).is_dir():
        return Path(str(name))
    return None


def describe_checkpoint(kind: str, checkpoint: Any, model: Any = None) -> dict[str, Any]:
    """What the report says about one model: ``name``, ``path``, the provenance fields and
    ``provenance`` ("file" / "config" / "unknown" / "invalid: ..." / "no checkpoint").

    ``checkpoint`` is the folder (str or Path) the report loaded, or a loaded model, or None;
    ``model``, when given, is the loaded model (its ``name_or_path`` is used when
    ``checkpoint`` is no folder, e.g. a model passed to the API as an object).
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"unknown model kind {kind!r}; expected one of {MODEL_KINDS}")
    if checkpoint is None and model is None:
        return {"kind": kind, "name": None, "path": None, "provenance": "no checkpoint"}
    folder = Path(checkpoint) if isinstance(checkpoint, (str, Path)) and Path(checkpoint).is_dir() else None
    if folder is None:
        loaded = model if model is not None else checkpoint
        folder = None if isinstance(loaded, (str, Path)) else _folder_of(loaded)
    name = folder.name if folder is not None else (str(checkpoint) if isinstance(checkpoint, (str, Path)) else type(model if model is not None else checkpoint).__name__)
    out: dict[str, Any] = {"kind": kind, "name": name, "path": None if folder is None else str(folder)}
    if folder is None or not folder.is_dir():
        return {**out, "provenance": "unknown"}
    try:
        data = read_provenance(folder)
    except ProvenanceError as err:
        return {**out, "provenance": f"invalid: {err}"}
    if data is None:
        return {**out, "provenance": "unknown"}
    source = data.pop("source")
    return {**out, **data, "name": data.get("name", name), "provenance": "file" if source.endswith(PROVENANCE_FILE) else "config"}


def models_section(judge: tuple[Any, Any] | None, predictor: tuple[Any, Any] | None) -> dict[str, dict[str, Any] | None]:
    """``report.json``'s ``models``: the judge's and the predictor's descriptions (None: skipped).

    Each argument is ``(checkpoint folder or name, loaded model)`` as the report loaded it.
    """
    return {
        "judge": None if judge is None or judge[1] is None else describe_checkpoint("judge", *judge),
        "predictor": None if predictor is None or predictor[1] is None else describe_checkpoint("predictor", *predictor),
    }


def provenance_warnings(models: Mapping[str, Any] | None) -> list[str]:
    """One warning per model trained on synthetic sound or of unknown provenance."""
    out = []
    role = {"judge": "turn-taking judge (agreement (a)-(e))", "predictor": "naturalness predictor (m, MeanNLL, TailNLL)"}
    for kind, info in (models or {}).items():
        if not info:
            continue
        what = f"The {role.get(kind, kind)} {info.get('name')}"
        if info.get("trained_on_synthetic_sound"):
            sources = ", ".join(info.get("sound_sources") or []) or "synthesised speech"
            checked = info.get("validated_on_real_speech")
            if checked:
                out.append(f"WARNING: {what} was trained on synthetic sound ({sources}); validated on real speech: {checked}.")
            else:
                out.append(f"WARNING: {what} was trained on synthetic sound ({sources}); its figures on real speech are not validated.")
        elif str(info.get("provenance", "")).startswith("invalid"):
            out.append(f"WARNING: {what} has a malformed provenance ({info['provenance'][len('invalid: '):]}); its training data is unknown.")
        elif info.get("provenance") == "unknown":
            out.append(f"WARNING: {what} has no {PROVENANCE_FILE}: its training data and measured quality are unknown.")
    return out


def shown_path(path: Any) -> str:
    """Where a checkpoint came from, short enough for a table cell: "bundled" for turneval's own, a
    Hub id as it is, a local folder by its last two parts (report.json keeps the full path)."""
    import os

    from turneval.checkpoints import bundled_root

    text = str(path)
    if not os.path.isabs(text):
        return text
    try:
        Path(text).resolve().relative_to(bundled_root().resolve())
        return "bundled with turneval"
    except ValueError:
        return os.path.join("...", *Path(text).parts[-2:])


def models_html(models: Mapping[str, Any] | None) -> str:
    """The HTML page's "Models" section: one table row per model, then its measured figures (folded)."""
    import html

    if not models:
        return "<p>No model information in this report.</p>"
    rows, measured = [], []
    for kind, info in models.items():
        if not info:
            rows.append(f"<tr><td>{html.escape(kind)}</td><td colspan=\"4\">skipped</td></tr>")
            continue
        synthetic = info.get("trained_on_synthetic_sound")
        flag = "unknown" if synthetic is None else ("<b>yes</b>" if synthetic else "no")
        cells = [html.escape(kind), html.escape(str(info.get("name"))), html.escape(shown_path(info.get("path"))),
                 html.escape(str(info.get("training_data", info.get("provenance")))), flag]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        for figure, value in (info.get("measured") or {}).items():
            shown = "n/a" if value is None else f"{value:.4g}"
            measured.append(f"<tr><td>{html.escape(kind)}</td><td>{html.escape(figure)}</td><td>{shown}</td></tr>")
    table = ("<table><tr><th>model</th><th>checkpoint</th><th>from</th><th>training data</th>"
             "<th>trained on synthetic sound</th></tr>" + "".join(rows) + "</table>")
    if measured:
        table += ("<details><summary>Measured quality (from the checkpoint's provenance)</summary><table><tr><th>model</th>"
                  "<th>figure</th><th>value</th></tr>" + "".join(measured) + "</table></details>")
    return table


__all__ = [
    "PROVENANCE_FILE",
    "ProvenanceError",
    "describe_checkpoint",
    "models_html",
    "models_section",
    "provenance_warnings",
    "read_provenance",
    "validate_provenance",
]
