"""Frozen backbones read out linearly at the (a)/(d) decision on real speech: smart-turn's encoder vs tiny.en.

    python benchmarks/experiments/backbone_readout.py      # the real dev calls: $TURNEVAL_SPOKENWOZ_ROOT, $TURNEVAL_AMI_ROOT

Every (a)/(d) pause decision of the real dev recordings (speech by VAD, as the report reads
them), the audio of the pausing speaker's own channel up to the decision. Two frozen encoders
give pooled states: the bundled judge's turn-completion cue (smart-turn v3.2's encoder; last
layer over the last 0.5 s and 0.1 s of its 8 s window) and its tiny.en tower (the turn-end
head's three pooled views over 4 s). A standardised logistic regression on each, fitted with
each recording left out in turn, scores the held-out decisions; ROC-AUC pooled, on SpokenWOZ,
and per recording. Measured 2026-11-26: smart-turn 0.921 pooled / 0.937 SpokenWOZ (C 0.01),
tiny.en 0.886 / 0.782.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pooled_states(judge, dialogues) -> dict[str, np.ndarray]:
    """Per decision: both encoders' pooled states, smart-turn's own logit, the decision and its recording."""
    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.modeling.modeling_turn_taking_judge import cue_segment, pause_window
    from turneval.pause_decision import judge_pause_records

    cue = judge.turn_completion_cue
    rows: dict[str, list] = {"smart_turn": [], "tiny_en": [], "cue_logit": [], "shift": [], "recording": []}
    for dialogue in dialogues:
        view = conversation_view(replace(dialogue, words=None, system_speaker=1))
        dialogue = view.dialogue
        taken = {i.chunk: i.decision for i in view.pause_instances}
        for chunk, r in judge_pause_records(judge, view).items():
            end = max(r.horizon, r.time)
            clip = dialogue.audio[r.pauser, int(max(0.0, r.turn_start - 0.5) * 16000) : int(round(end * 16000))]
            segment = torch.from_numpy(cue_segment(clip, 8.0))[None]
            segment = (segment - segment.mean()) / torch.sqrt(segment.var(unbiased=False) + 1e-7)
            window = torch.from_numpy(pause_window(dialogue.audio[r.pauser], end, 4.0, 16000))[None]
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
                features = judge.log_mel(segment, causal=False)
                hidden = cue.encode(features).float()
                rows["smart_turn"].append(torch.cat([hidden[:, -25:].mean(1), hidden[:, -5:].mean(1)], -1)[0].numpy())
                rows["cue_logit"].append(float(cue(features).float()[0]))
                rows["tiny_en"].append(judge.turn_end_head.pooled(judge.encoder, judge.log_mel(window, causal=False)).float()[0].numpy())
            rows["shift"].append(taken[chunk] == "T")
            rows["recording"].append(dialogue.id)
    return {k: np.asarray(v) for k, v in rows.items()}


def held_out_scores(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float) -> np.ndarray:
    """Each recording's decisions scored by a read-out fitted on the others."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scores = np.zeros(len(y))
    for g in np.unique(groups):
        test = groups == g
        readout = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
        scores[test] = readout.fit(x[~test], y[~test]).decision_function(x[test])
    return scores


def main() -> int:
    from _real_calls import real_recordings
    from sklearn.metrics import roc_auc_score

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge

    torch.set_num_threads(2)
    judge = load_judge(default_checkpoint("judge"))
    dialogues, missing = real_recordings()
    if not dialogues:
        print("no real recordings:", "; ".join(missing))
        return 1
    table = pooled_states(judge, dialogues)
    y, groups = table["shift"].astype(int), table["recording"]
    phone = np.array([not g.startswith("ES2004a") for g in groups])
    print(f"{len(y)} decisions, {y.sum()} shifts, {phone.sum()} from SpokenWOZ")
    for name in ("smart_turn", "tiny_en"):
        for c in (0.001, 0.01):
            s = held_out_scores(table[name], y, groups, c)
            per = {g: round(roc_auc_score(y[groups == g], s[groups == g]), 3) for g in np.unique(groups) if 0 < y[groups == g].sum() < (groups == g).sum()}
            print(f"{name} frozen, C={c}: pooled {roc_auc_score(y, s):.3f}, SpokenWOZ {roc_auc_score(y[phone], s[phone]):.3f}, per recording {per}")
    print(f"smart-turn's own head, nothing fitted: pooled {roc_auc_score(y, table['cue_logit']):.3f}, SpokenWOZ {roc_auc_score(y[phone], table['cue_logit'][phone]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
