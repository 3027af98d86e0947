"""The two models, transformers style: TurnTakingJudge and FutureActivityPredictor.

Importing this package registers both with AutoConfig / AutoModel, so that
``AutoModel.from_pretrained(path)`` works on their checkpoints once turneval is imported.
Checkpoints also carry ``auto_map`` (``register_for_auto_class``) so that
``AutoModel.from_pretrained(path, trust_remote_code=True)`` works without turneval.
"""
from __future__ import annotations

import importlib

from transformers import AutoConfig, AutoModel


# (model_type, configuration module, config class, modeling module, model class)
_MODELS = (
    ("turn_taking_judge", "configuration_turn_taking_judge", "TurnTakingJudgeConfig", "modeling_turn_taking_judge", "TurnTakingJudge"),
    (
        "future_activity_predictor",
        "configuration_future_activity_predictor",
        "FutureActivityPredictorConfig",
        "modeling_future_activity_predictor",
        "FutureActivityPredictorModel",
    ),
)


def register() -> list[str]:
    """Register every model of this package with the Auto classes; return their model types.

    Safe to call more than once.
    """
    registered = []
    for model_type, config_module, config_name, model_module, model_name in _MODELS:
        config_cls = getattr(importlib.import_module(f".{config_module}", __name__), config_name)
        model_cls = getattr(importlib.import_module(f".{model_module}", __name__), model_name)
        AutoConfig.register(model_type, config_cls, exist_ok=True)
        AutoModel.register(config_cls, model_cls, exist_ok=True)
        config_cls.register_for_auto_class()
        model_cls.register_for_auto_class("AutoModel")
        registered.append(model_type)
    return registered


register()
