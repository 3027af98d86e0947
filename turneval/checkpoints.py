"""Where a model checkpoint comes from: one resolver for the report, `score`, the Space and benchmarks.

A model argument (``--judge`` / ``--predictor``, the ``judge=`` / ``predictor=`` of the API) is
resolved in this order:

1. an explicit local folder, or the name of a bundled checkpoint (``future_activity_predictor_words``);
2. an explicit Hugging Face Hub id (``owner/name``), read from the local Hugging Face cache only
   (``snapshot_download(local_files_only=True)``): turneval never downloads at run time; fetch a
   model first with ``hf download owner/name``;
3. no argument: the environment variable of that model (``$TURNEVAL_JUDGE``,
   ``$TURNEVAL_PREDICTOR``), itself a folder or a Hub id;
4. no argument and no variable: the checkpoint bundled with turneval (package data of
   ``turneval.bundled``, the repository's ``checkpoints/`` folder), so a wheel runs offline.

One model per job ships: the judge, the predictor, and the word-reading predictor (pass its
name, ``--predictor future_activity_predictor_words``, when a transcript exists).
Earlier generations (the audio demo predictor, the Switchboard predictor without look-ahead)
do not ship; a source checkout keeps them in ``benchmarks/baselines/`` for the benchmarks that
compare generations and the recipes that start from them (:func:`named_checkpoint`), and
``training/recipes/`` rebuilds each.

This module only finds checkpoints; refreshing the code and card copies they carry is a developer
tool, ``make sync-checkpoints`` (tools/sync_checkpoints.py).

>>> sorted(BUNDLED)
['judge', 'predictor']
>>> default_checkpoint("predictor").is_dir()
True
"""
from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path


BUNDLED: dict[str, str] = {
    "judge": "turn_taking_judge_swb_revoiced",
    "predictor": "future_activity_predictor_lookahead",
}
"""Model kind -> the folder of its bundled checkpoint inside ``checkpoints/`` (``turneval.bundled``)."""

EARLIER_GENERATIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "baselines"
"""Where a source checkout keeps checkpoints that no longer ship (not package data)."""

ENV_VARS: dict[str, str] = {"judge": "TURNEVAL_JUDGE", "predictor": "TURNEVAL_PREDICTOR"}
"""Model kind -> the environment variable that replaces its bundled checkpoint."""

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class CheckpointNotFoundError(FileNotFoundError):
    """A checkpoint argument names neither a local folder nor an available Hub repository."""


def _check_kind(kind: str) -> None:
    if kind not in BUNDLED:
        raise ValueError(f"unknown model kind {kind!r}; expected one of {sorted(BUNDLED)}")


def bundled_root() -> Path:
    """The folder of the bundled checkpoints (``turneval.bundled``: ``checkpoints/`` of the source)."""
    try:
        return Path(str(resources.files("turneval.bundled")))
    except ModuleNotFoundError:  # an editable install made before turneval.bundled was mapped
        return Path(__file__).resolve().parents[1] / "checkpoints"


def bundled_checkpoint(kind: str) -> Path | None:
    """The checkpoint that ships with turneval for ``kind``, or None when it is not installed."""
    _check_kind(kind)
    folder = bundled_root() / BUNDLED[kind]
    return folder if (folder / "config.json").is_file() else None


def named_checkpoint(name: str) -> Path | None:
    """The checkpoint folder ``name``: bundled with turneval, else an earlier generation kept in
    a source checkout (``benchmarks/baselines/``), else None (rebuild it with its recipe)."""
    for folder in (bundled_root() / name, EARLIER_GENERATIONS / name):
        if (folder / "config.json").is_file():
            return folder
    return None


def is_hub_id(spec: str | os.PathLike) -> bool:
    """True for ``owner/name`` that is not an existing local path."""
    return not Path(spec).exists() and bool(_HUB_ID.match(str(spec)))


def resolve(spec: str | os.PathLike, *, what: str = "checkpoint", hint: str = "") -> Path:
    """A local folder as it is, a bundled checkpoint's name as its folder, or a Hub id resolved to
    its snapshot folder in the local cache (never downloaded).

    Raises CheckpointNotFoundError naming ``spec`` and what to pass instead (``hint``).
    """
    path = Path(spec)
    if not path.exists() and path.name == str(spec) and (bundled_root() / path.name / "config.json").is_file():
        return bundled_root() / path.name
    if not is_hub_id(spec):
        if not path.exists():
            raise CheckpointNotFoundError(f"{what} {spec}: no such folder{'; ' + hint if hint else ''}")
        return path
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(str(spec), local_files_only=True))
    except Exception as err:  # noqa: BLE001 - network, cache and repo errors all mean "not available"
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointNotFoundError(
            f"{what} {spec}: no such folder, and as a Hugging Face Hub id it is not in the local cache ({reason}); "
            f"fetch it first with `hf download {spec}`"
            f"{'; ' + hint if hint else ''}"
        ) from None


def default_checkpoint(kind: str) -> Path | None:
    """``$TURNEVAL_<KIND>`` resolved (folder or Hub id), else the bundled checkpoint, else None."""
    _check_kind(kind)
    override = os.environ.get(ENV_VARS[kind])
    if override:
        return resolve(override, what=f"${ENV_VARS[kind]}", hint=f"unset it to use the bundled {kind}")
    return bundled_checkpoint(kind)


def resolve_checkpoint(kind: str, spec: str | os.PathLike | None = None, *, hint: str = "") -> Path | None:
    """The folder of the ``kind`` checkpoint that ``spec`` names; ``spec`` None: the default one."""
    _check_kind(kind)
    if spec is None:
        return default_checkpoint(kind)
    return resolve(spec, what=f"{kind} checkpoint", hint=hint)
