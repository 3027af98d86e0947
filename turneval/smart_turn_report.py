"""The report's section for smart-turn: its agreement with the (a)/(d) decisions taken, beside the
TurnTakingJudge's on the same pauses (``turneval report --turn-end-judge smart-turn``)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from turneval.dataset_scripts.agreement_instances import AgreementInstance
from turneval.metrics.agreement import agreement
from turneval.pause_decision.features import smart_turn_clip
from turneval.pause_decision.records import ipu_pauses
from turneval.smart_turn import NAME, VAD_STOP_S, SmartTurnV3


if TYPE_CHECKING:  # pragma: no cover - typing only
    from turneval.dataset_scripts.conversation_view import ConversationView


RULE = (
    f"{NAME} hears the pausing speaker's own channel from the start of their turn (minus 0.5 s) to 200 ms after "
    "their IPU ends (pipecat's VAD stop_secs; earlier if the other party speaks first), the last 8 s of it; "
    "P(turn complete) > 0.5 is the label T (the other party takes the turn), else C. Instances: the report's (a) and "
    "(d) instances whose silence follows the pauser's IPU. The TurnTakingJudge figures beside it are on the same "
    "instances, at its own decision time (the end of the silence)."
)


def turn_end_judge_section(
    view: "ConversationView",
    model: SmartTurnV3,
    judge_agreement: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Agreement of ``model`` with the (a)/(d) decisions of ``view`` taken where the silence follows
    the pauser's IPU (:func:`~turneval.pause_decision.records.ipu_pauses`), and the
    TurnTakingJudge's on the same instances (from the report's ``agreement`` section, when the judge ran)."""
    from tqdm.auto import tqdm

    dialogue = view.dialogue
    if dialogue.audio is None:
        raise ValueError(f"dialogue {dialogue.id!r} has no audio for the turn-end judge")
    decisions = ipu_pauses(view, VAD_STOP_S)
    judged = {}
    if judge_agreement is not None:
        judged = {(row["metric"], row["chunk"]): row for row in judge_agreement.get("instances", []) if row["metric"] in ("a", "d")}
    ours, judge_same, rows = [], [], []
    for d in tqdm(decisions, desc=NAME, unit="pause", disable=not progress or len(decisions) < 2, leave=False, file=sys.stderr):
        p = model.probability(smart_turn_clip(dialogue, d))
        # p_T = P(complete), p_C = 1 - p: the metrics' rule p_T - p_C > 0 is exactly p > 0.5.
        ours.append(AgreementInstance(d.metric, d.decision, (0.0, 0.0, 0.0, p, 1.0 - p), d.session, d.time, d.chunk))
        label = "T" if p > 0.5 else "C"
        row = {"metric": d.metric, "time": d.time, "chunk": d.chunk, "decision": d.decision, "ipu_end": round(d.speech_end, 4),
               "horizon": round(d.horizon, 4), "turn_start": round(d.turn_start, 4), "p_complete": round(p, 4),
               "label": label, "agrees": label == d.decision}
        judge_row = judged.get((d.metric, d.chunk))
        if judge_row is not None:
            judge_same.append(judge_row)
            row.update(judge_label=judge_row["judge_label"], judge_agrees=judge_row["agrees"])
        rows.append(row)
    return {
        "name": NAME,
        "model_file": str(model.path),
        "rule": RULE,
        "n_instances": len(rows),
        "metrics": agreement(ours) if ours else {},
        "judge_same_instances": (agreement(judge_same) if judge_same else {}) if judge_agreement is not None else None,
        "instances": rows,
    }


__all__ = ["RULE", "turn_end_judge_section"]
