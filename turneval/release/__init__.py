"""The Hugging Face release: every repo of turneval written as the Hub holds it.

``turneval release --org ORG --out hub/`` writes one folder per repo, as
``huggingface_hub.upload_folder`` would send it, and ``hub/release.json`` listing each repo id,
kind, licence and the sha256 of every file:

================  =========================================================  ===================
kind              repos                                                       module
================  =========================================================  ===================
model             the judge, the predictor, the word-reading predictor        :mod:`.model_repo`
dataset           turn_taking_chunks, _perturbations, _questions (parquet)    :mod:`.dataset_repo`
metric            one Space per ``evaluate`` module of ``metrics/``           :mod:`.space_repos`
space             the demo Space (``space/assemble.py``)                      :mod:`.space_repos`
================  =========================================================  ===================

What goes where is :mod:`.plan` and :mod:`.planning`; which conversations a data set may be built from (and their
licences) is :mod:`.dataset_sources`. ``--as-cache DIR`` lays the same repos out as a
Hugging Face home folder (:mod:`.hub_cache`), so that ``from_pretrained``, ``load_dataset`` and
``evaluate.load`` find them by repo id offline; ``--push`` uploads them (:mod:`.push`).
The release runs from a source checkout: it reads ``model_cards/``, ``space/`` and ``examples/``.
"""
from .plan import RepoPlan
from .planning import release_plan


__all__ = ["RepoPlan", "release_plan"]
