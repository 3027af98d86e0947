"""turneval: how well do spoken dialogue systems take turns?

Subpackages (SPEC §1): ``turneval.dataset_scripts`` (readers, voice activity, events,
labels, dataset builders), ``turneval.modeling`` (the two AutoModels), ``turneval.metrics``
(metric functions and evaluate modules), ``turneval.training`` (Accelerate recipes).
"""
from __future__ import annotations

__version__ = "0.1.0"

from .dataset_scripts.dialogue import Dialogue, DialogueError, Word  # noqa: E402

# Importing turneval registers both model types with AutoConfig / AutoModel (SPEC §5, §6), so
# that AutoModel.from_pretrained(path) works on turneval checkpoints from here on.
from . import modeling  # noqa: E402,F401

__all__ = ["Dialogue", "DialogueError", "Word", "__version__"]


def __getattr__(name: str):
    """``turneval.report(...)`` and ``turneval.Report`` load the report pipeline on first use."""
    if name in ("report", "Report"):
        from . import reporting

        return getattr(reporting, name)
    raise AttributeError(f"module 'turneval' has no attribute {name!r}")
