"""A figure in the front-door pages names only models and pause-rule features the code ships.

README.md, the model cards (model_cards/ and the copies in checkpoints/), the checkpoints'
provenance.json and the generated performance pages quote figures by model name. When a model
leaves checkpoints/ and benchmarks/baselines/, or the judge's pause rule stops reading a feature,
a page that still quotes it describes code that is gone (issue 53: one source per figure).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parent.parent
MODEL_NAME = re.compile(r"\b(?:turn_taking_judge|future_activity_predictor)_[a-z0-9_]*[a-z0-9]")
JUDGE_CONFIG = REPO / "checkpoints" / "turn_taking_judge_swb_revoiced" / "config.json"
FEATURES_SOURCE = REPO / "turneval" / "pause_decision" / "features.py"


def shipped_models() -> set[str]:
    """Checkpoints the wheel ships, and the earlier generations a source checkout keeps as baselines."""
    folders = [*(REPO / "checkpoints").iterdir(), *(REPO / "benchmarks" / "baselines").iterdir()]
    return {folder.name for folder in folders if (folder / "config.json").is_file()}


def pause_rule_vocabulary() -> set[str]:
    """Every feature name a pause rule can read: those ``pause_decision_features`` computes."""
    source = FEATURES_SOURCE.read_text(encoding="utf-8")
    body = source[source.index("def pause_decision_features"):]
    body = body[: body.index("\ndef ", 1)]
    names = set(re.findall(r'"(\w+)" in names', body)) | set(re.findall(r'out\["(\w+)"\]', body))
    if "completion_cue(names)" in body:  # Whisper's turn-completion cue, under the name of whichever reader the rule reads
        from turneval.modeling.configuration_turn_taking_judge import COMPLETION_CUE_FEATURES

        names |= set(COMPLETION_CUE_FEATURES)
    return names


def shipped_rule_features() -> set[str]:
    config = json.loads(JUDGE_CONFIG.read_text(encoding="utf-8"))
    features = set(config["pause_decision"]["features"])
    if config.get("pause_decision_fallback"):
        features |= set(config["pause_decision_fallback"]["features"])
    return features


def front_door_pages() -> list[Path]:
    return sorted([
        REPO / "README.md",
        *(REPO / "model_cards").glob("*/README.md"),
        *(REPO / "checkpoints").glob("*/README.md"),
        *(REPO / "checkpoints").glob("*/provenance.json"),
        REPO / "docs" / "performance.md",
        REPO / "docs" / "performance_figures.md",
    ])


def test_the_vocabularies_are_read():
    assert {"turn_taking_judge_swb_revoiced", "future_activity_predictor_lookahead"} <= shipped_models()
    assert {"log_silence_s", "whisper_complete_logit", "log_silence_vs_call"} <= pause_rule_vocabulary()
    assert shipped_rule_features() <= pause_rule_vocabulary()


@pytest.mark.parametrize("page", front_door_pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_a_page_names_only_what_ships(page: Path):
    text = page.read_text(encoding="utf-8")
    gone_models = sorted(set(MODEL_NAME.findall(text)) - shipped_models())
    named_features = set(re.findall(r"\b\w+\b", text)) & pause_rule_vocabulary()
    gone_features = sorted(named_features - shipped_rule_features() - {"silence_elapsed_s"})
    assert not gone_models and not gone_features, (
        f"{page.relative_to(REPO)} quotes figures of what the code no longer ships: models {gone_models} "
        f"(not in checkpoints/ or benchmarks/baselines/), pause-rule features {gone_features} (not in "
        f"{JUDGE_CONFIG.relative_to(REPO)}'s pause_decision); regenerate the figure or drop it"
    )
