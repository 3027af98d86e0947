"""What both benchmark-run evaluators share: the result files, number formatting, progress, schemas
(JSON values: dataset_scripts.files)."""
from __future__ import annotations

import json
import math
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from turneval.dataset_scripts.files import atomic_write_text


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: ``n/a`` for missing or NaN, fixed digits for floats."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def progress(iterable: Iterable, total: int | None, desc: str, enabled: bool) -> Iterable:
    """A tqdm bar on stderr (nothing when disabled)."""
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="sample", leave=False, file=sys.stderr)


def load_schema(name: str) -> dict[str, Any]:
    """A JSON schema shipped under ``turneval/data/``."""
    return json.loads(resources.files("turneval").joinpath(f"data/{name}").read_text(encoding="utf-8"))


class ResultWriteError(OSError):
    """A benchmark run's results cannot be written (``--out`` / ``--json``); the message names the
    file and why. The commands report it as a user error."""


class RunResult:
    """JSON, markdown and files of one benchmark run's result; a subclass (a dataclass) sets
    ``FILE_STEM`` and defines ``to_dict()`` and ``to_markdown()``."""

    FILE_STEM = "result"

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_markdown(self) -> str:
        raise NotImplementedError

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir`` (each atomically)."""
        out = Path(out_dir)
        written = {"json": out / f"{self.FILE_STEM}.json", "markdown": out / f"{self.FILE_STEM}.md"}
        atomic_write_text(written["json"], self.to_json() + "\n")
        atomic_write_text(written["markdown"], self.to_markdown())
        return written

    def write(self, out_dir: str | Path | None, json_path: str | Path | None) -> list[str]:
        """The files of a command's ``--out DIR`` and ``--json FILE``; the paths written."""
        try:
            written = [str(p) for p in self.save(out_dir).values()] if out_dir else []
            if json_path:
                atomic_write_text(json_path, self.to_json() + "\n")
                written.append(str(json_path))
        except OSError as err:
            raise ResultWriteError(f"cannot write the results: {err.strerror or err} ({err.filename})") from None
        return written
