"""turneval: how well do spoken dialogue systems take turns?

Subpackages: ``turneval.dataset_scripts`` (readers, voice activity, events,
labels, dataset builders), ``turneval.modeling`` (the two AutoModels), ``turneval.metrics``
(metric functions and evaluate modules), ``turneval.training`` (Accelerate recipes).

The package is lazy, the way transformers is: ``import turneval`` loads no torch and no
transformers; a name below is imported on first use. Importing ``turneval.modeling`` (which
every model loader in turneval does) registers both model types with AutoConfig / AutoModel.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


__version__ = "0.1.0"

_LAZY_NAMES: dict[str, str] = {
    "Dialogue": ".dataset_scripts.dialogue",
    "DialogueError": ".dataset_scripts.dialogue",
    "Word": ".dataset_scripts.dialogue",
    "report": ".reporting",
    "Report": ".reporting",
    # benchmarks people already use, scored in their own layout (turneval full-duplex-bench, turneval fd-bench)
    "evaluate_full_duplex_bench_run": ".benchmark_runs.full_duplex_bench",
    "evaluate_fd_bench_run": ".benchmark_runs.fd_bench",
}
"""Public name -> the module that defines it, imported when the name is first used."""

__all__ = sorted([*_LAZY_NAMES, "__version__"])

if TYPE_CHECKING:  # the names of _LAZY_NAMES, for type checkers and IDEs
    from .benchmark_runs.fd_bench import evaluate_fd_bench_run  # noqa: F401
    from .benchmark_runs.full_duplex_bench import evaluate_full_duplex_bench_run  # noqa: F401
    from .dataset_scripts.dialogue import Dialogue, DialogueError, Word  # noqa: F401
    from .reporting import Report, report  # noqa: F401


def __getattr__(name: str) -> Any:
    module_name = _LAZY_NAMES.get(name)
    if module_name is None:
        raise AttributeError(f"module 'turneval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_NAMES))
