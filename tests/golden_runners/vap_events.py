"""golden/vap_events: VAP's zero-shot turn-taking events on 50 Hz voice activity."""
from __future__ import annotations

import numpy as np

from turneval.dataset_scripts import vap_events as ve


SET = "vap_events"

# Reference key names of the deterministic lists (turneval calls the unsampled lists hold /
# pred_hold; the golden files add "_all" to tell them from the sampled ones).
_GOLDEN_NAMES = {"hold": "hold_all", "pred_hold": "pred_hold_all"}


def _config(params: dict) -> ve.EventConfig:
    return ve.EventConfig(**params.get("EventConfig", {}))


def _as_lists(events):
    return [list(e) for e in events]


def run_case(case: dict) -> dict:
    config = _config(case.get("params", {}))
    va = np.asarray(case["input"]["vad_frames"], dtype=np.int8)

    islands = ve.find_islands(ve.dialog_states(va))
    filled = ve.fill_pauses(va, islands)
    events = ve.turn_taking_events(va, config)
    deterministic = {_GOLDEN_NAMES.get(k, k): _as_lists(v) for k, v in events.items()}
    sampled = ve.BalancedEventSampler(config, seed=0)(events)

    return {
        "dialog_state_islands": {
            "start": islands.start.tolist(),
            "duration": islands.duration.tolist(),
            "state": islands.value.tolist(),
            "state_meaning": ve.DIALOG_STATE_MEANING,
        },
        "filled_vad_frames_changed": np.argwhere(filled != va).tolist(),
        "deterministic": deterministic,
        "counts": {k: len(v) for k, v in deterministic.items()},
        "turn_taking_events_sampled_seed0": {k: _as_lists(v) for k, v in sampled.items()},
    }
