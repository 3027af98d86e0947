"""Dataset builders (``datasets.GeneratorBasedBuilder`` subclasses used directly) and helpers.

- :class:`TurnTakingChunks`: a row per conversation with 40 ms labels (judge training).
- :class:`TurnTakingPerturbations`: natural / perturbed pairs (TurnNat §IV-A).
- :class:`TurnTakingQuestions`: the yes/no question set for audio foundation models (Talking Turns §5).
"""
from .export import export_parquet, load_parquet
from .manifest import read_dialogue_manifest, write_dialogue_manifest
from .turn_taking_chunks import TurnTakingChunks, TurnTakingChunksConfig, conversation_row
from .turn_taking_perturbations import (
    TurnTakingPerturbations,
    TurnTakingPerturbationsConfig,
    decode_audio,
    pair_row,
)
from .turn_taking_questions import (
    PROMPTS,
    QUESTION_TASKS,
    TurnTakingQuestions,
    TurnTakingQuestionsConfig,
    question_audio,
    question_instances,
)


__all__ = [
    "QUESTION_TASKS",
    "PROMPTS",
    "TurnTakingQuestions",
    "TurnTakingQuestionsConfig",
    "question_audio",
    "question_instances",
    "TurnTakingChunks",
    "TurnTakingChunksConfig",
    "TurnTakingPerturbations",
    "TurnTakingPerturbationsConfig",
    "decode_audio",
    "pair_row",
    "conversation_row",
    "export_parquet",
    "load_parquet",
    "read_dialogue_manifest",
    "write_dialogue_manifest",
]
