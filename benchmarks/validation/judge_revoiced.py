"""Judge quality on held-out re-voiced Switchboard (Flite voices), beside the eSpeak demo judge.

The test split of the re-voiced Switchboard corpus (real ISIP word times and words of held-out
test calls, spoken by Flite voices that no training conversation used; docs/revoicing.md) is
scored by

* the bundled judge (``turneval.checkpoints.default_checkpoint("judge")``),
* today's baseline, the eSpeak-trained demo judge (``benchmarks/baselines/turn_taking_judge_espeak_demo``),

on every 40 ms chunk (one-vs-rest ROC-AUC per class and the macro mean, Talking Turns Table 1;
targets: overall >= 0.90, every class >= 0.80; the paper reaches 92.0 on real Switchboard audio)
and on metric (a)'s decision 200 ms after an IPU ends (shift vs hold after a pause of >= 200 ms,
``turn_end_decisions``; the judge's score is metric (a)'s ``p_T - p_C`` from the audio up to the
decision time; target ROC-AUC >= 0.85), and on metric (e)'s decision (does an interruption of
the floor holder take the floor? the chunk head's ``p_T - p_C`` beside the interruption head's
P(floor taken), ``judge_interruption_probabilities``). Beside them on the (a) decisions: the text-only
logistic regression (last two words, first word, IPU length) trained on 600 real Switchboard
train calls (anchor 0.79 on 200 real test calls), when the Switchboard alignments are found.

Speed: the default ``turneval report`` (judge + predictor, bundled checkpoints, 2 threads) on a
5-minute two-channel conversation, as CPU seconds per audio second (target <= 0.1).

Data: ``$TURNEVAL_REVOICED`` or ``../cache/revoice`` beside the repository (a folder with
``test/manifest.jsonl``); without it the benchmark says why and returns no figure.
"""
from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared _harness and data readers

import _revoiced  # noqa: E402
import numpy as np  # noqa: E402
from _harness import figure, limit_threads  # noqa: E402


REPO = Path(__file__).resolve().parents[2]
BASELINE_JUDGE = REPO / "benchmarks" / "baselines" / "turn_taking_judge_espeak_demo"
DECISION_DELAY_S = 0.2
REPORT_SECONDS = 300.0


def load_dialogues(manifest: Path, limit: int | None = None) -> list:
    """The manifest's Dialogues (segments and words; audio read later)."""
    from itertools import islice

    from turneval.dataset_scripts.builders.manifest import read_dialogue_manifest

    return [dialogue for _, dialogue in islice(read_dialogue_manifest(manifest), limit)]


def decision_rows(scores, decisions) -> np.ndarray:
    """Row of the judge's causal scores whose observed audio ends at the decision time
    (``ipu_end + 200 ms``, on the 40 ms grid, never later)."""
    chunk_s = 0.04
    return np.array([max(0, int(math.floor((d.ipu_end + DECISION_DELAY_S) / chunk_s + 1e-9)) - 1) for d in decisions])


def turn_end_head_scores(judge, stereo: np.ndarray, dialogue, decisions) -> np.ndarray:
    """The judge's turn-end head at each decision (the pausing speaker's channel up to 200 ms
    after the IPU end, and the timing when the head reads it), as the report reads it; NaN
    without a head."""
    from dataclasses import replace

    from turneval.dataset_scripts.conversation_view import conversation_view
    from turneval.pause_decision import asked_pauses, turn_end_head_probabilities

    if not getattr(judge.config, "turn_end_head", None) or not len(decisions):
        return np.full(len(decisions), np.nan)
    asked = asked_pauses(str(dialogue.id), [(d.speaker, d.ipu_end, d.ipu_end + DECISION_DELAY_S, 0.0) for d in decisions])
    return turn_end_head_probabilities(judge, conversation_view(replace(dialogue, audio=stereo)), asked)


def interruption_scores(judge, probabilities: np.ndarray, stereo: np.ndarray, dialogue, labels) -> np.ndarray:
    """``[n, 3]`` at each metric (e) decision: took the floor (1/0), the chunk head's
    ``p_T - p_C`` (the paper's score) and the interruption head's P(floor taken) (NaN without one)."""
    from dataclasses import replace

    from turneval.dataset_scripts.interruption_outcomes import interruption_readings
    from turneval.metrics.agreement import judge_scores
    from turneval.reporting import judge_interruption_probabilities

    chunks = [c for c in interruption_readings(labels) if 0 < c <= probabilities.shape[0]]
    if not chunks:
        return np.zeros((0, 3))
    heard = judge_interruption_probabilities(judge, replace(dialogue, audio=stereo), labels)
    return np.stack([[float(labels.labels[c] == "T") for c in chunks], judge_scores("e", probabilities[[c - 1 for c in chunks]]),
                     [heard.get(c, np.nan) for c in chunks]], axis=1)


def interruption_figures(name: str, rows: np.ndarray, headline: bool) -> list[dict]:
    """Metric (e)'s decision (does the interruption take the floor?) ranked by each reader."""
    from sklearn.metrics import roc_auc_score

    y = rows[:, 0].astype(int)
    if not 0 < y.sum() < len(y):
        return []
    where = f"{len(y)} interruptions of a floor holder ({int(y.sum())} took the floor)"
    out = [figure(f"revoiced test metric (e) floor-taken ROC-AUC: {name}", float(roc_auc_score(y, rows[:, 1])), "",
                  note=f"the chunk head's p_T - p_C in the last overlapped chunk (the paper's score); {where}")]
    if np.isfinite(rows[:, 2]).all():
        out.append(figure(f"revoiced test metric (e) floor-taken ROC-AUC, interruption head: {name}", float(roc_auc_score(y, rows[:, 2])), "",
                          headline=headline, note=f"the judge's interruption head (overlap length, level changes of each speaker's own channel), which the report's (e) reads; {where}"))
    return out


def judge_figures(name: str, judge, dialogues, decisions_per_dialogue, headline: bool) -> tuple[list[dict], np.ndarray]:
    """Chunk ROC-AUC, metric (e)'s decisions and the metric (a) decision scores of one judge on the test dialogues."""
    from turneval.dataset_scripts.audio import load_stereo
    from turneval.dataset_scripts.labels import chunk_labels
    from turneval.metrics.agreement import judge_scores
    from turneval.training.evaluate_judge import roc_auc_table

    labels_all, probs_all, decision_scores, interruptions = [], [], [], []
    cpu = time.process_time()
    for dialogue, decisions in zip(dialogues, decisions_per_dialogue):
        stereo = load_stereo(dialogue.audio_path)
        scores = judge.score(stereo.mean(axis=0) if stereo.ndim == 2 else stereo)
        chunked = chunk_labels(dialogue)
        labels = np.asarray(chunked.label_ids(), dtype=np.int64)
        n = min(len(labels), scores.probabilities.shape[0] + 1)
        labels_all.append(labels[1:n])
        probs_all.append(scores.probabilities[: n - 1])
        rows = np.minimum(decision_rows(scores, decisions), scores.probabilities.shape[0] - 1)
        picked = scores.probabilities[rows]
        t, c = list(judge.config.label_names).index("T"), list(judge.config.label_names).index("C")
        decision_scores.append(np.stack([judge_scores("a", picked), np.log(picked[:, t] + 1e-12) - np.log(picked[:, c] + 1e-12),
                                         turn_end_head_scores(judge, stereo, dialogue, decisions)], axis=1)
                               if len(rows) else np.zeros((0, 3)))
        interruptions.append(interruption_scores(judge, scores.probabilities, stereo, dialogue, chunked))
    cpu = time.process_time() - cpu
    labels, probs = np.concatenate(labels_all), np.concatenate(probs_all)
    keep = labels >= 0
    table = roc_auc_table(labels[keep], probs[keep], list(judge.config.label_names))
    out = [figure(f"revoiced test ROC-AUC overall: {name}", table["overall"], "", headline=headline,
                  reference="revoiced test ROC-AUC overall: eSpeak demo judge (baseline)" if headline else None,
                  note=f"{int(keep.sum())} chunks; target >= 0.90 (paper 0.920 on real audio); judge scoring {cpu:.0f} CPU s")]
    out += [figure(f"revoiced test ROC-AUC {label}: {name}", table[label], "", note="target >= 0.80")
            for label in ("C", "BC", "T", "I", "NA")]
    out += interruption_figures(name, np.concatenate(interruptions), headline)
    return out, np.concatenate(decision_scores)


def report_rtf(seconds: float) -> tuple[float, str]:
    """CPU seconds per audio second of ``turneval report`` (bundled models, 2 threads)."""
    from _harness import synthetic_conversation

    from turneval.dataset_scripts.audio import write_audio

    dialogue = synthetic_conversation(seconds, seed=21)
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "conversation.wav"
        write_audio(wav, dialogue.audio, 16000)
        env = {**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "HF_HUB_OFFLINE": "1"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "turneval.cli", "report", str(wav), "--out", str(Path(tmp) / "out"), "--no-html", "--quiet"],
                              env=env, capture_output=True, text=True)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"turneval report failed: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu / seconds, f"{cpu:.1f} CPU s (wall {wall:.1f} s) for {seconds / 60:g} min, process start and imports included"


def run(quick: bool) -> list[dict]:
    from sklearn.metrics import roc_auc_score

    from turneval.checkpoints import default_checkpoint
    from turneval.modeling.judge_loading import load_judge

    limit_threads()
    out: list[dict] = []
    rtf, note = report_rtf(60.0 if quick else REPORT_SECONDS)
    out.append(figure(f"turneval report RTF (judge + predictor), {(60.0 if quick else REPORT_SECONDS) / 60:g}-min conversation", rtf,
                      "CPU s per audio s", headline=True, note=f"bundled checkpoints, 2 threads; {note}; target <= 0.1"))
    root = _revoiced.revoiced_root()
    if root is None:
        print(f"judge_revoiced: no re-voiced Switchboard corpus (set {_revoiced.ENV_VAR} to a folder with test/manifest.jsonl); quality skipped")
        return out
    from turneval.dataset_scripts.turn_end_decisions import turn_end_decisions

    dialogues = load_dialogues(root / "test" / "manifest.jsonl", 4 if quick else None)
    decisions = [turn_end_decisions(d, DECISION_DELAY_S) for d in dialogues]
    flat = [d for ds in decisions for d in ds]
    y = np.array([d.shift for d in flat], dtype=int)
    where = f"{len(flat)} decisions ({int(y.sum())} shifts) in {len(dialogues)} held-out Flite-voiced excerpts of Switchboard test calls"
    out.append(figure("revoiced test: turn-end decisions", len(flat), "decisions", note=where))
    judges = [("bundled judge", load_judge(default_checkpoint("judge")), True)]
    if (BASELINE_JUDGE / "config.json").is_file():
        judges.append(("eSpeak demo judge (baseline)", load_judge(BASELINE_JUDGE), False))
    for name, judge, headline in judges:
        figures, scores = judge_figures(name, judge, dialogues, decisions, headline)
        out += figures
        both = 0 < y.sum() < len(y)
        auc = float(roc_auc_score(y, scores[:, 0])) if both else float("nan")
        ratio_auc = float(roc_auc_score(y, scores[:, 1])) if both else float("nan")
        out.append(figure(f"revoiced test metric (a) shift-vs-hold ROC-AUC: {name}", auc, "", headline=headline,
                          note="metric (a)'s score p_T - p_C from the audio up to 200 ms after the IPU end; target >= 0.85"))
        out.append(figure(f"revoiced test shift-vs-hold ROC-AUC, log(p_T / p_C): {name}", ratio_auc, "",
                          note="the same decisions ranked by the T/C odds alone (not diluted by p_NA, which dominates in a pause)"))
        if both and np.isfinite(scores[:, 2]).all():
            out.append(figure(f"revoiced test metric (a) shift-vs-hold ROC-AUC, turn-end head: {name}", float(roc_auc_score(y, scores[:, 2])), "",
                              headline=headline, note=f"the judge's turn-end head (the pausing speaker's own channel, last "
                              f"{judge.config.turn_end_head['window_s']:g} s, bidirectional encoder, "
                              f"{len(judge.config.turn_end_head.get('timing_features') or [])} timing features), "
                              "which the report's (a)/(d) agreement reads; target >= 0.85"))
    out += text_baseline(flat, y, quick)
    return out


def text_baseline(test_decisions, y, quick: bool) -> list[dict]:
    """The text-only logistic regression (600 real Switchboard train calls) on the same decisions."""
    try:
        from _switchboard import locate
        from turn_end_baselines import switchboard_decisions

        from turneval.metrics.turn_end_baselines import fit_baselines
    except ImportError as err:
        print(f"judge_revoiced: text baseline skipped ({err})")
        return []
    found = locate()
    if found is None:
        print("judge_revoiced: Switchboard alignments not found; text baseline skipped")
        return []
    swb_root, splits = found
    train = switchboard_decisions(swb_root, splits, "train", 60 if quick else 600)
    results = fit_baselines(train, list(test_decisions))
    text = results.get("text")
    if text is None:
        return []
    return [figure("revoiced test metric (a) shift-vs-hold ROC-AUC: text LR baseline", text["roc_auc"], "", headline=True,
                   note=f"last two words, first word, IPU length; trained on {60 if quick else 600} real Switchboard train calls (anchor 0.79 on real test calls)")]
