"""The checkpoints bundled with turneval (package data of ``turneval.bundled``).

Each folder is a saved model (``config.json``, ``model.safetensors``, the modeling code for
``trust_remote_code``, its card). :mod:`turneval.checkpoints` resolves which one a command uses;
``make sync-checkpoints`` refreshes their code copies from ``modeling/``.
"""
