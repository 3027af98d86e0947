"""golden/espnet_labels: the ESPnet Talking Turns recipe's two-channel and mono chunk labels.

Feeds the case's ms98 word lines, backchannels.csv lines and duration through
``turneval.dataset_scripts.readers.espnet_switchboard.recipe_labels_from_ms98``.
"""
from __future__ import annotations

from turneval.dataset_scripts.readers.espnet_switchboard import parse_backchannel_csv_lines, recipe_labels_from_ms98


SET = "espnet_labels"


def _lines(inputs: dict, suffix: str) -> list[str]:
    keys = [k for k in inputs if k.endswith(suffix)]
    if len(keys) != 1:
        raise KeyError(f"expected exactly one input key ending in {suffix!r}, found {keys}")
    return inputs[keys[0]]


def run_case(case: dict) -> dict:
    inputs = case["input"]
    rows = parse_backchannel_csv_lines(inputs["backchannels_csv_lines"])
    word_lines = [_lines(inputs, "A-ms98-a-word.text"), _lines(inputs, "B-ms98-a-word.text")]
    labels = recipe_labels_from_ms98(word_lines, rows, float(inputs["duration_s"]))
    return {
        "n_chunks": len(labels),
        "two_channel_columns": ["chunk_start", "chunk_end", "label_A", "label_B"],
        "two_channel_rows": labels.two_channel_rows(),
        "mono_columns": ["chunk_start", "chunk_end", "label", "prev_speaker_before_chunk"],
        "mono_rows": labels.mono_rows(),
    }
