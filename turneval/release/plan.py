"""What the release holds: its repo names, the :class:`RepoPlan` of one Hub repo and the error every
release step raises. The list of repos of a release is :func:`.planning.release_plan`.

One model per job: the judge, the predictor the report uses, and the word-reading predictor
the README recommends when a transcript exists. The other predictors of earlier generations
are not released; their recipes stay in ``training/recipes/`` (docs/history.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import turneval


REPO_ROOT = Path(turneval.__file__).resolve().parents[1]
"""The source checkout the release reads (model cards, the Space, the examples)."""

MODEL_REPOS: dict[str, str] = {
    "turn_taking_judge_swb_revoiced": "turn_taking_judge",
    "future_activity_predictor_lookahead": "future_activity_predictor_lookahead",
    "future_activity_predictor_words": "future_activity_predictor_words",
}
"""Released checkpoint (folder of ``checkpoints/`` and repo name) -> its card folder in ``model_cards/``."""

DATASET_REPOS: tuple[str, ...] = ("turn_taking_chunks", "turn_taking_perturbations", "turn_taking_questions")
"""Data set repo names; each card is ``model_cards/datasets/<name>/README.md``."""

METRIC_REPOS: tuple[str, ...] = (
    "turn_naturalness",
    "turn_taking_agreement",
    "turn_taking_statistics",
    "full_duplex_timing",
    "backchannel_timing",
    "rubric_pass_rate",
)
"""``evaluate`` modules (``metrics/<name>/``), each released as a Space named like its module, so
that ``evaluate.load("ORG/<name>")`` finds ``<name>.py`` at the root of the repo."""

DEMO_SPACE = "turneval"
"""Repo name of the demo Space (the Gradio app of ``space/``)."""

CODE_LICENCE = "apache-2.0"
"""The licence of turneval's code (setup.py), and so of the metric Spaces."""

REPO_TYPES: dict[str, str] = {"model": "model", "dataset": "dataset", "metric": "space", "demo": "space"}
"""Release kind -> Hub repo type."""


class ReleaseError(RuntimeError):
    """The release cannot be written; the message names the file or option and what to do."""


@dataclass(frozen=True)
class RepoPlan:
    """One repo of the release: its id, what it is, its licence and where its parts come from."""

    repo_id: str
    kind: str  # "model" | "dataset" | "metric" | "demo"
    name: str
    licence: str
    sources: tuple[str, ...] = field(default_factory=tuple)

    @property
    def repo_type(self) -> str:
        """The Hub repo type: model, dataset or space."""
        return REPO_TYPES[self.kind]

    @property
    def folder(self) -> str:
        """Where the repo lies inside the release folder: ``<repo type>s/<name>``."""
        return f"{self.repo_type}s/{self.name}"


def check_org(org: str) -> str:
    """``org`` if it can be a Hub namespace; raises ReleaseError otherwise."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}", org or ""):
        raise ReleaseError(f"--org {org!r}: not a Hugging Face user or organisation name (letters, digits, '-', '_', '.')")
    return org
