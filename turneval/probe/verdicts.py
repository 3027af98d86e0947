"""Pass or fail, with its figures, for each of turneval's own calls (``calls/``: barge-in, backchannel, pause-hold,
dialogue), read from where the caller's parts played and the agent's sound in the recording.

The agent's speech is found as the probe's timing finds it (5 ms windows above -42 dBFS, joined
across gaps under 0.2 s: :func:`turneval.probe.energy.sound_spans`). What each call checks
(thresholds from the sample's ``expect``, defaults below):

- ``barge_in``: the caller talks over the agent's reply ``delay`` s after it starts. Passes when the
  agent was talking then and stopped within ``max_yield_s`` (1.0). Figures: when the barge-in left
  against its plan (agent's first sound plus the delay), the time to yield.
- ``backchannel``: the caller backchannels while the agent talks. Passes when at least one
  backchannel fell inside the agent's speech and the agent did not stop within ``stop_window_s``
  (1.0) of any (an answer that ends by itself that soon after one reads as a stop too).
- ``pause_hold``: the caller pauses mid-sentence. Passes when the agent does not start speaking in
  the pause.
- ``dialogue``: caller turns started by the agent's end of turn. Per turn: the agent's response
  time, whether it cut the caller off (started while the caller spoke), the caller's gap against
  its plan. Passes when every turn was answered within ``max_response_s`` (2.0), with no cut-off.

A part that waited for the agent in vain (``timeout``) fails its call.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from turneval.probe.energy import sound_spans


MAX_YIELD_S = 1.0
STOP_WINDOW_S = 1.0
MAX_RESPONSE_S = 2.0


def _ms(value: float | None) -> float | None:
    return None if value is None else round(1000 * value, 1)


def _talking(spans: list[tuple[float, float]], t: float) -> tuple[float, float] | None:
    return next(((float(a), float(b)) for a, b in spans if a <= t < b), None)


def _first_start(spans: list[tuple[float, float]], t: float) -> float | None:
    return next((float(a) for a, _ in spans if a >= t), None)


def _occurrences(outcome: Any, part: int) -> list[dict[str, Any]]:
    return outcome.parts[part]["left"] if part < len(outcome.parts) else []


def _barge_in(outcome: Any, agent: list[tuple[float, float]], expect: dict[str, Any]) -> dict[str, Any]:
    part = outcome.sample.mark
    spec = outcome.parts[part]["plan"] if part < len(outcome.parts) else {}
    left = _occurrences(outcome, part)
    if not left:
        return {"passed": False, "why": "the barge-in never played"}
    at = left[0]["left_s"]
    before = max((b for a, b, i in outcome.spans if i < part), default=0.0)
    onset = _first_start(agent, before)
    delay = spec.get("delay") if isinstance(spec.get("delay"), (int, float)) else None
    out: dict[str, Any] = {"delay_s": delay, "left_s": at,
                           "left_after_agent_start_s": None if onset is None else round(at - onset, 4),
                           "leave_error_ms": None if onset is None or delay is None else _ms(at - onset - delay)}
    span = _talking(agent, at)
    out["overlapped"] = span is not None
    if span is None:
        out.update(passed=None, why="the agent was not talking when the barge-in began (it had finished, or never started)")
        return out
    out["time_to_yield_s"] = round(span[1] - at, 4)
    limit = float(expect.get("max_yield_s", MAX_YIELD_S))
    out["passed"] = bool(out["time_to_yield_s"] <= limit)
    out["why"] = f"stopped {1000 * out['time_to_yield_s']:.0f} ms into the barge-in (limit {1000 * limit:.0f} ms)"
    return out


def _backchannel(outcome: Any, agent: list[tuple[float, float]], expect: dict[str, Any]) -> dict[str, Any]:
    window = float(expect.get("stop_window_s", STOP_WINDOW_S))
    during = [i for i, p in enumerate(outcome.parts) if p["plan"].get("during")]
    starts = [e["left_s"] for i in during for e in _occurrences(outcome, i) if not e.get("timed_out")]
    inside = [t for t in starts if _talking(agent, t) is not None]
    track_end = outcome.caller.size / outcome.recording.sample_rate - 0.05  # speech cut by the recording's end is no stop
    stops = [t for t in inside if _talking(agent, t)[1] - t <= window and _talking(agent, t)[1] < track_end]
    out = {"backchannels": len(starts), "inside_agent_speech": len(inside), "agent_stopped_after": len(stops),
           "stop_after_backchannel_s": [round(_talking(agent, t)[1] - t, 4) for t in stops]}
    out["passed"] = bool(inside) and not stops
    out["why"] = (f"{len(inside)} of {len(starts)} backchannels inside the agent's speech; it stopped within "
                  f"{window:g} s of {len(stops)}")
    return out


def _pause_hold(outcome: Any, agent: list[tuple[float, float]], expect: dict[str, Any]) -> dict[str, Any]:
    mark = outcome.sample.mark
    spans = sorted(outcome.spans)
    firsts = [i for _, _, i in spans]
    if mark not in firsts or firsts.index(mark) == 0:
        return {"passed": None, "why": "no pause before the marked part"}
    k = firsts.index(mark)
    pause = (spans[k - 1][1], spans[k][0])
    jump = next((a for a, _ in agent if pause[0] <= a < pause[1]), None)
    out = {"pause_s": round(pause[1] - pause[0], 4), "agent_started_in_pause_after_s": None if jump is None else round(jump - pause[0], 4)}
    out["passed"] = jump is None
    out["why"] = "held" if jump is None else f"the agent started {1000 * (jump - pause[0]):.0f} ms into the pause"
    return out


def _dialogue_turn(outcome: Any, agent: list[tuple[float, float]], k: int, spans: list, limit: float) -> dict[str, Any]:
    start, end, part = spans[k]
    nxt = spans[k + 1][0] if k + 1 < len(spans) else float("inf")
    response = _first_start(agent, end)
    cut = next((a for a, _ in agent if start < a < end), None)
    turn: dict[str, Any] = {"turn": k + 1, "start_s": start, "end_s": end,
                            "response_s": None if response is None or response >= nxt else round(response - end, 4),
                            "cut_off_at_s": None if cut is None else round(cut, 4)}
    left = _occurrences(outcome, part)
    event = left[0].get("event") if left else None
    if event and event.get("name") == "agent_end":
        gap = outcome.parts[part]["gap_s"]
        ended = max((b for a, b in agent if b <= start + 1e-3), default=None)
        turn.update(planned_gap_s=gap, gap_s=None if ended is None else round(start - ended, 4),
                    gap_error_ms=None if ended is None or gap is None else _ms(start - ended - gap))
    turn["passed"] = bool(turn["response_s"] is not None and turn["response_s"] <= limit and cut is None)
    return turn


def _dialogue(outcome: Any, agent: list[tuple[float, float]], expect: dict[str, Any]) -> dict[str, Any]:
    limit = float(expect.get("max_response_s", MAX_RESPONSE_S))
    spans = sorted(outcome.spans)
    turns = [_dialogue_turn(outcome, agent, k, spans, limit) for k in range(len(spans))]
    failed = [t["turn"] for t in turns if not t["passed"]]
    return {"turns": turns, "passed": not failed,
            "why": "every turn answered in time, none cut off" if not failed else
            f"turn(s) {', '.join(map(str, failed))}: no answer within {limit:g} s, or the caller was cut off"}


JUDGES = {"barge_in": _barge_in, "backchannel": _backchannel, "pause_hold": _pause_hold, "dialogue": _dialogue}


def judge(outcome: Any, agent_track: np.ndarray, sample_rate: int) -> dict[str, Any]:
    """The verdict of one complete call of turneval's own tasks ({} for a Full-Duplex-Bench task)."""
    rule = JUDGES.get(outcome.sample.task)
    timed_out = [p["part"] for p in outcome.parts if p.get("timed_out")]
    if rule is None:
        return {"timed_out_parts": timed_out} if timed_out else {}
    agent = sound_spans(agent_track, sample_rate)
    verdict = rule(outcome, agent, outcome.sample.expect)
    if timed_out:
        verdict.update(passed=False, timed_out_parts=timed_out,
                       why=f"part(s) {', '.join(map(str, timed_out))} waited for the agent in vain; " + verdict.get("why", ""))
    return verdict


def response_times(outcome: Any) -> list[float]:
    """Every response time of a call: each dialogue turn's, else the call's response latency."""
    turns = (outcome.verdict or {}).get("turns")
    if turns:
        return [t["response_s"] for t in turns if t.get("response_s") is not None]
    value = (outcome.timing or {}).get("response_latency_s")
    return [] if value is None else [value]
