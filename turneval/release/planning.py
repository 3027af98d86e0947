"""The repos of a release under one Hub namespace: models, data sets, the demo Space, metric Spaces."""
from __future__ import annotations

from .cards import card_licence
from .dataset_sources import check_sources, dataset_licence
from .plan import CODE_LICENCE, DATASET_REPOS, DEMO_SPACE, METRIC_REPOS, MODEL_REPOS, REPO_ROOT, RepoPlan, check_org


def release_plan(org: str, *, sources: tuple[str, ...] | None = None, demo: bool = True) -> list[RepoPlan]:
    """Every repo of the release under ``org``: models, data sets, the demo Space, metric Spaces.

    ``sources`` picks the conversations the data sets are built from (default: every one whose
    licence allows shipping, see :mod:`.dataset_sources`); ``demo`` False leaves out the demo Space.
    """
    check_org(org)
    chosen = check_sources(sources)
    plans = [
        RepoPlan(f"{org}/{name}", "model", name, card_licence(REPO_ROOT / "model_cards" / card / "README.md"))
        for name, card in MODEL_REPOS.items()
    ]
    plans += [RepoPlan(f"{org}/{name}", "dataset", name, dataset_licence(chosen), chosen) for name in DATASET_REPOS]
    if demo:
        plans.append(RepoPlan(f"{org}/{DEMO_SPACE}", "demo", DEMO_SPACE, card_licence(REPO_ROOT / "space" / "README.md")))
    plans += [RepoPlan(f"{org}/{name}", "metric", name, CODE_LICENCE) for name in METRIC_REPOS]
    return plans

