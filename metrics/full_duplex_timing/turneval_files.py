# A copy of turneval.dataset_scripts.files for the evaluate module beside it, turneval's imports made relative.
# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.
"""Files in and out, one rule each: outputs are written atomically (a temp file renamed into
place; docs/inputs.md), JSON is read with errors that name the file and line, and results become plain
JSON values.

    >>> import numpy as np
    >>> to_jsonable({"m": np.float32(0.5), "frames": np.arange(2), "nan": float("nan")})
    {'m': 0.5, 'frames': [0, 1], 'nan': None}
"""
from __future__ import annotations

import json
import math
import os
import re
import tempfile
from bisect import bisect_right
from contextlib import contextmanager
from json import decoder as _json_decoder
from json import scanner as _json_scanner
from pathlib import Path
from typing import Any, Iterator

import numpy as np


PathLike = str | Path


# -- atomic writes ------------------------------------------------------------------------
def _default_file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give (0o666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp creates owner-only files; the result should be readable like any other output
        os.chmod(tmp, _default_file_mode())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: PathLike, text: str) -> None:
    """Write ``text`` to ``path`` so that readers never see a half-written file."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


# -- JSON in --------------------------------------------------------------------------------
class LinedDict(dict):
    """A JSON object that remembers the line it starts on."""

    line: int = 1


class LinedList(list):
    """A JSON array that remembers the line it starts on."""

    line: int = 1


class _LineDecoder(json.JSONDecoder):
    """json.JSONDecoder whose objects and arrays carry their line numbers (pure-Python scanner)."""

    def __init__(self) -> None:
        super().__init__()
        self._newlines: list[int] = []

        def parse_object(s_and_end, *args, **kwargs):
            obj, end = _json_decoder.JSONObject(s_and_end, *args, **kwargs)
            out = LinedDict(obj)
            out.line = self._line_at(s_and_end[1])
            return out, end

        def parse_array(s_and_end, *args, **kwargs):
            arr, end = _json_decoder.JSONArray(s_and_end, *args, **kwargs)
            out = LinedList(arr)
            out.line = self._line_at(s_and_end[1])
            return out, end

        self.parse_object = parse_object
        self.parse_array = parse_array
        self.scan_once = _json_scanner.py_make_scanner(self)

    def _line_at(self, offset: int) -> int:
        # A bisect over the newline offsets: counting from the start for every object and
        # array made large annotation files quadratic to read.
        return bisect_right(self._newlines, offset - 1) + 1

    def decode(self, s: str, *args, **kwargs):  # noqa: D401 - json API
        self._newlines = [m.start() for m in re.finditer("\n", s)]
        return super().decode(s, *args, **kwargs)


def read_json(path: PathLike, *, error: type[Exception] = ValueError, lined: bool = False) -> Any:
    """Parse a JSON file; a missing file, bad UTF-8 or bad JSON raises ``error`` with
    ``path:line: problem``. With ``lined`` objects and arrays know their line (``.line``)."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{path}: not valid UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_json(text, path, error=error, lined=lined)


def parse_json(
    text: str, source: PathLike, *, first_line: int = 1, error: type[Exception] = ValueError, lined: bool = False
) -> Any:
    """Parse JSON text that starts on line ``first_line`` of ``source`` (e.g. one row of a JSON
    Lines file); errors as :func:`read_json`."""
    try:
        return _LineDecoder().decode(text) if lined else json.loads(text)
    except json.JSONDecodeError as err:
        raise error(f"{source}:{first_line + err.lineno - 1}: invalid JSON (column {err.colno}): {err.msg}") from None


# -- JSON out -------------------------------------------------------------------------------
def to_jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars and arrays, tuples, NaN/inf (as None), objects via ``to_dict``."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
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
        return to_jsonable(value.to_dict())
    return str(value)
