"""Peer comparison on metric (a)'s decision: after the user's IPU ends, shift (T) or continue (C)?

On held-out synthetic conversations (corpus seed 2026; the eSpeak demo judge was trained on seed 0, the bundled judge on re-voiced Switchboard),
every metric (a) instance of ``dialogue_agreement_instances`` whose silence starts where one of
the user's IPUs ends is one decision (silences entered otherwise, e.g. after an overlap, are
left out), taken in both directions (each speaker in turn plays the user). Contestants, all deciding from the same audio,
which ends at the *decision time*: 200 ms after the user's IPU ends (pipecat's VAD
``stop_secs``, after which it asks smart-turn), or earlier if the other party speaks before:

* smart-turn v3.2 (pipecat-ai's ONNX model; ``turneval.smart_turn`` replicates pipecat's input
  pipeline, the same code as ``turneval report --turn-end-judge smart-turn``): the user's own channel since the turn started, last 8 s; P(complete) vs 0.5;
* our TurnTakingJudge (the bundled checkpoint when installed, else UNTRAINED random weights, and
  the figure names say so): the mono mix, one pass over its context window ending at the
  decision time; score ``p_T - p_C`` vs metric (a)'s threshold 0; and, when the judge has one,
  its turn-end head as the report reads it (the pauser's own channel up to the same time, and
  the timing), P(shift) vs the judge's own (a) threshold;
* fixed silence thresholds (200/500/700 ms), what most deployed voice agents use: shift iff
  the user stays silent that long. They decide *at* the threshold, not at the decision time.

Balanced accuracy and ROC-AUC (T positive) for each, and the latency per decision.

Reading the numbers: the conversations are eSpeak speech with planned timing, in which a user's
pause inside a turn (C) is short by design and often follows a complete clause. Silence
thresholds therefore do well once they wait 500-700 ms, while smart-turn, trained on real
speech, hears little difference at 200 ms; none of this transfers to human speech as is.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

from _harness import figure, limit_threads, timed  # noqa: E402


HELD_OUT_SEED = 2026
SILENCE_THRESHOLDS_MS = (200, 500, 700)


def metric_a_decisions(dialogue, system_speaker: int) -> tuple:
    """The metric (a) pause decisions of ``dialogue`` with ``system_speaker`` as the system
    (:func:`turneval.pause_decision.records.ipu_pauses`, the report's owner of this geometry),
    and the conversation view they were read from."""
    from dataclasses import replace as dc_replace

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import ipu_pauses
    from turneval.smart_turn import VAD_STOP_S

    view = conversation_view(dc_replace(dialogue, system_speaker=system_speaker))
    return [d for d in ipu_pauses(view, VAD_STOP_S) if d.metric == "a"], view


def _judge():
    """The bundled judge if installed, else the demo configuration with random weights."""
    import torch

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
    from turneval.modeling.judge_loading import load_judge
    from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge

    path = default_checkpoint("judge")
    if path is not None:
        judge = load_judge(path)
        return judge, f"judge ({judge.config.context_mode} {judge.config.context_s:g} s, bundled checkpoint)"
    torch.manual_seed(0)
    judge = TurnTakingJudge(TurnTakingJudgeConfig(context_mode="causal", context_s=10.0, stream_hop_s=5.0)).eval()
    return judge, "judge (UNTRAINED: random weights, no checkpoint installed)"


def judge_probabilities(judge, mono: np.ndarray, horizon: float) -> np.ndarray:
    """The judge's distribution for the chunk after ``horizon``, from the audio before it:
    one pass over the context window that ends there (zero-padded in window mode, as
    ``score`` does)."""
    import torch

    spc = judge.config.samples_per_chunk
    width = judge.config.context_chunks * spc
    end = int(round(horizon * judge.config.sample_rate)) // spc * spc
    window = mono[max(0, end - width) : end]
    if judge.config.context_mode == "window" and window.size < width:
        window = np.pad(window, (width - window.size, 0))
    with torch.inference_mode():
        out = judge(input_values=torch.from_numpy(np.ascontiguousarray(window, dtype=np.float32))[None])
    return out.probabilities[0, -1].numpy()


def _median_ms(rows: list, column: int, field: str) -> float:
    return 1000 * float(np.median([getattr(r[column], field) for r in rows]))


def _scores(y: np.ndarray, predicted: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    if len(set(y.tolist())) < 2:
        return float("nan"), float("nan")
    return float(balanced_accuracy_score(y, predicted)), float(roc_auc_score(y, score))


def run(quick: bool) -> list[dict]:
    from turneval.dataset_scripts.synthetic import conversation_seed, generate_dialogue
    from turneval.metrics.agreement import DEFAULT_THRESHOLDS, judge_scores, pause_decision_threshold
    from turneval.pause_decision import smart_turn_clip, turn_end_head_probabilities
    from turneval.smart_turn import SmartTurnUnavailable, SmartTurnV3

    threads = limit_threads()
    n_conversations, duration_s = (3, 60.0) if quick else (24, 120.0)
    try:
        smart_turn, missing = SmartTurnV3(threads=threads), None
    except SmartTurnUnavailable as err:  # the judge and the baselines still run; say what is missing
        smart_turn, missing = None, str(err)
    judge, judge_name = _judge()
    has_head = bool(getattr(judge.config, "turn_end_head", None))
    rows = []  # (decision, judge score, smart-turn probability, judge seconds, smart-turn seconds, head probability)
    for i in range(n_conversations):
        seed = conversation_seed(HELD_OUT_SEED, i)
        dialogue = generate_dialogue(seed, duration_s=duration_s, style="human", dialogue_id=f"heldout_{i}")
        mono = dialogue.mono()
        for system in (0, 1):
            decisions, view = metric_a_decisions(dialogue, system)
            for d in decisions:
                judged = timed(lambda: judge_probabilities(judge, mono, d.horizon))
                user_audio = smart_turn_clip(dialogue, d)
                smart = timed(lambda: smart_turn.probability(user_audio) if smart_turn is not None else float("nan"))
                head = float(turn_end_head_probabilities(judge, view, [d])[0]) if has_head else float("nan")
                rows.append((d, float(judge_scores("a", judged.result[None])[0]), smart.result, judged, smart, head))
    if not rows:
        raise RuntimeError("the held-out conversations gave no metric (a) decisions")
    y = np.array([r[0].decision == "T" for r in rows], dtype=int)
    n_t, n_c = int(y.sum()), int((1 - y).sum())
    judge_score = np.array([r[1] for r in rows])
    smart = np.array([r[2] for r in rows])
    # The user never speaking again waits forever (the last IPU of a conversation): a very long wait.
    silence = np.minimum(np.array([r[0].until_pauser_resumes_s for r in rows]), 1e6)
    where = (f"{len(rows)} decisions ({n_t} T, {n_c} C) from {n_conversations} held-out synthetic conversations "
             f"of {duration_s:g} s, both directions")

    smart_ba, smart_auc = _scores(y, (smart > 0.5).astype(int), smart) if missing is None else (float("nan"), float("nan"))
    judge_ba, judge_auc = _scores(y, (judge_score > DEFAULT_THRESHOLDS["a"]).astype(int), judge_score)
    silence_auc = _scores(y, (silence >= 0.5).astype(int), silence)[1]
    head_figures = []
    if has_head:
        head = np.array([r[5] for r in rows])
        cut = pause_decision_threshold(judge.config.agreement_thresholds)
        head_ba, head_auc = _scores(y, (head > cut).astype(int), head)
        head_figures = [
            figure(f"metric (a) balanced accuracy: {judge_name}, turn-end head", head_ba, "", headline=True,
                   reference="metric (a) balanced accuracy: smart-turn v3.2", note=f"P(shift) > {cut:.3f} (its tuned (a) threshold)"),
            figure(f"metric (a) ROC-AUC: {judge_name}, turn-end head", head_auc, "", headline=True,
                   reference="metric (a) ROC-AUC: smart-turn v3.2", note="what the report's (a)/(d) agreement reads"),
        ]
    out = [
        figure("metric (a) decisions", len(rows), "decisions", note=where),
        figure("metric (a) balanced accuracy: smart-turn v3.2", smart_ba, "", headline=True,
               note=missing or "P(complete) > 0.5 at 200 ms after the IPU end"),
        figure(f"metric (a) balanced accuracy: {judge_name}", judge_ba, "", headline=True,
               reference="metric (a) balanced accuracy: smart-turn v3.2", note="p_T - p_C > 0 at the same time"),
        figure("metric (a) ROC-AUC: smart-turn v3.2", smart_auc, "", headline=True),
        figure(f"metric (a) ROC-AUC: {judge_name}", judge_auc, "", headline=True,
               reference="metric (a) ROC-AUC: smart-turn v3.2"),
        *head_figures,
    ]
    for ms in SILENCE_THRESHOLDS_MS:
        ba = _scores(y, (silence >= ms / 1000).astype(int), silence)[0]
        out.append(figure(f"metric (a) balanced accuracy: silence >= {ms} ms", ba, "", headline=True,
                          reference="metric (a) balanced accuracy: smart-turn v3.2",
                          note=f"decides {ms} ms after the IPU end"))
    out.append(figure("metric (a) ROC-AUC: silence length (any threshold)", silence_auc, "",
                      note="needs to wait for the whole silence: an upper bound for fixed thresholds"))
    # CPU time is what an idle machine's wall-clock latency is with one thread; the wall time
    # measured here (in the note) also holds the waits of a shared machine.
    smart_cpu, smart_wall = (_median_ms(rows, 4, "cpu_s"), _median_ms(rows, 4, "wall_s")) if missing is None else (float("nan"),) * 2
    judge_cpu, judge_wall = _median_ms(rows, 3, "cpu_s"), _median_ms(rows, 3, "wall_s")
    out += [
        figure("latency per decision: smart-turn v3.2", smart_cpu, "CPU ms (median)", headline=True,
               note=f"features + ONNX, {threads} thread(s); median wall {smart_wall:.0f} ms"),
        figure(f"latency per decision: {judge_name}", judge_cpu, "CPU ms (median)", headline=True,
               reference="latency per decision: smart-turn v3.2",
               note=f"one pass over {judge.config.context_s:g} s, {threads} thread(s); median wall {judge_wall:.0f} ms"),
    ]
    return out
