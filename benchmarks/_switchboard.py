"""Where the Switchboard ms98 word alignments are, for the benchmarks that read them.

The data never lives in the repository. A benchmark takes ``--swb-root`` (the extracted
``swb_ms98_transcriptions`` folder, or the ``swb_ms98_transcriptions.tar.gz`` archive itself)
and ``--splits`` (the folder with ``train.txt``, ``val.txt``, ``test.txt``). Without them (e.g.
under ``run_all.py``) it looks at ``$TURNEVAL_SWB_ROOT`` / ``$TURNEVAL_SWB_SPLITS``, then for
``shared/real/switchboard_ms98/`` beside the repository or above it (the project layout), and
skips with :data:`SKIP_MESSAGE` when there is nothing.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar


REPO = Path(__file__).resolve().parents[1]
ROOT_ENV, SPLITS_ENV = "TURNEVAL_SWB_ROOT", "TURNEVAL_SWB_SPLITS"
SHARED = Path("shared") / "real" / "switchboard_ms98"
ARCHIVE_NAME = "swb_ms98_transcriptions.tar.gz"

SKIP_MESSAGE = (
    "Switchboard ms98 word alignments not found: pass --swb-root (the extracted swb_ms98_transcriptions "
    f"folder or {ARCHIVE_NAME}) and --splits, or set ${ROOT_ENV} / ${SPLITS_ENV}; skipped"
)

T = TypeVar("T")


def _shared_dirs() -> list[Path]:
    return [parent / SHARED for parent in (REPO, *REPO.parents) if (parent / SHARED).is_dir()]


def _find(explicit: str | os.PathLike | None, env: str, shared_file: str) -> Path | None:
    """``explicit``, else ``$env``, else ``shared_file`` (relative to the shared folder) where it exists."""
    for candidate in (explicit, os.environ.get(env)):
        if candidate:
            return Path(candidate)
    for shared in _shared_dirs():
        if (shared / shared_file).is_file():
            return shared / shared_file
    return None


def find_swb_root(explicit: str | os.PathLike | None = None) -> Path | None:
    """The ms98 folder or archive: ``explicit``, ``$TURNEVAL_SWB_ROOT``, or the shared archive."""
    return _find(explicit, ROOT_ENV, f"raw/{ARCHIVE_NAME}")


ACTS_ARCHIVE_NAME = "swb_dialog_acts_words_VAP.tar.gz"
ACTS_ENV = "TURNEVAL_SWB_ACTS"


def find_dialog_acts(explicit: str | os.PathLike | None = None) -> Path | None:
    """The word-level dialogue acts (folder or archive): ``explicit``, ``$TURNEVAL_SWB_ACTS``, or the shared archive."""
    return _find(explicit, ACTS_ENV, f"raw/{ACTS_ARCHIVE_NAME}")


def find_splits(explicit: str | os.PathLike | None = None) -> Path | None:
    """The splits folder: ``explicit``, ``$TURNEVAL_SWB_SPLITS``, or the shared one."""
    for candidate in (explicit, os.environ.get(SPLITS_ENV)):
        if candidate:
            return Path(candidate)
    for shared in _shared_dirs():
        if (shared / "splits" / "test.txt").is_file():
            return shared / "splits"
    return None


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--swb-root`` and ``--splits`` options every Switchboard benchmark takes (see :func:`locate`)."""
    parser.add_argument("--swb-root", help="extracted swb_ms98_transcriptions folder, or the .tar.gz archive")
    parser.add_argument("--splits", help="folder with train.txt, val.txt, test.txt")


VA_PREDICTOR_HELP = "voice-activity FutureActivityPredictor checkpoint (default: benchmarks/baselines/future_activity_predictor_switchboard)"
"""``--predictor`` of the benchmarks about the Switchboard voice-activity predictor."""


def switchboard_predictor() -> str:
    """The Switchboard voice-activity predictor: an earlier generation that no longer ships, kept in
    ``benchmarks/baselines/`` for the benchmarks that compare generations."""
    from turneval.checkpoints import named_checkpoint

    path = named_checkpoint("future_activity_predictor_switchboard")
    if path is None:
        raise SystemExit("benchmarks/baselines/future_activity_predictor_switchboard: not found; rebuild it with "
                         "python -m turneval.training.recipes.future_activity_predictor_switchboard, or pass --predictor")
    return str(path)


def predictor_parser(doc: str | None) -> argparse.ArgumentParser:
    """The command line every Switchboard predictor benchmark starts from: its docstring's first
    paragraph as description, the data options and ``--predictor``."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    add_data_arguments(parser)
    parser.add_argument("--predictor", help=VA_PREDICTOR_HELP)
    return parser


def locate(swb_root: str | None = None, splits: str | None = None) -> tuple[Path, Path] | None:
    """Both paths, or None (and the skip message on stderr) when either is missing."""
    root, split_dir = find_swb_root(swb_root), find_splits(splits)
    if root is None or split_dir is None or not root.exists() or not split_dir.is_dir():
        print(SKIP_MESSAGE + (f" (looked for {root} and {split_dir})" if root or split_dir else ""), file=sys.stderr)
        return None
    return root, split_dir


def run_where_located(evaluate: Callable[..., dict], figures: Callable[[dict], list[dict]], counts: dict[str, Any]) -> list[dict]:
    """``run_all.py``'s entry for a predictor benchmark: ``figures(evaluate(swb_root, splits, None,
    counts))`` where the data is found, no figures (and the skip message) where it is not."""
    found = locate()
    return [] if found is None else figures(evaluate(*found, None, counts))


def map_calls(root: Path, call_ids: list[str], fn: Callable[[Any], T]) -> list[tuple[str, T]]:
    """``fn(dialogue)`` for every call, as ``(call id, result)`` sorted by id (an archive
    yields calls in its own order; holding results, not dialogues, keeps memory small)."""
    from turneval.dataset_scripts.readers import iter_switchboard_calls

    out = [(d.id.removeprefix("sw"), fn(d)) for d in iter_switchboard_calls(root, call_ids)]
    return sorted(out, key=lambda item: int(item[0]))
