"""The two models, transformers style: TurnTakingJudge and FutureActivityPredictor."""
