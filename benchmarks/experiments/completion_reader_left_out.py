"""The completion reader (8 s window, distilled) against Whisper's 30 s cue on the real dev pauses, each corpus left out.

    python benchmarks/experiments/completion_reader_left_out.py --reader checkpoints/whisper_completion_reader
    python benchmarks/experiments/completion_reader_left_out.py --readers-left-out DIR   # DIR/<corpus>/: fitted without it
    ... --cache runs/whisper_cue_clips.npz   # the dev clips and decisions (whisper_cue_cost.py's cache)

The clips are the report's at every (a)/(d) decision of the real dev corpora (SpokenWOZ, Harper
Valley, the AMI channel pairs; speech by VAD; ``whisper_cue_cost.collect``), with smart-turn v3.2's
logit 200 ms after the IPU end beside them. For each cue (Whisper's 30 s reader, the teacher; the
completion reader, its student) it prints the CPU seconds a pause (1 torch thread), the student's
correlation with the teacher on these real clips, each cue's ROC-AUC alone, and the rule over
(log silence, cue) fitted on two corpora and judged on the third
(``training/fit_pause_decision``'s protocol, its strength chosen the same way), with 95 % intervals
resampling recordings: against the silence's length and between the two cues, per corpus and
pooled over the three left-out corpora. Where a cue is NaN (a silent clip; for the teacher also a
clip where Whisper heard no word) it counts as 0, as the report's rule does without its fallback.

With ``--readers-left-out DIR`` (readers fitted with real clips, ``distill_completion_reader fit
--real --leave-out CORPUS``), each decision's cue comes from ``DIR/<its corpus>/``, the reader
that never heard that corpus. docs/validation.md records what each run printed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from whisper_cue_cost import DEFAULT_CACHE, collect  # noqa: E402


def cue_values(name: str, reader: object, clips: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """``reader.logits`` on every clip and its CPU seconds a clip."""
    start = time.process_time()
    values = np.asarray(reader.logits(clips), dtype=np.float64)
    cost = (time.process_time() - start) / max(1, len(clips))
    print(f"{name}: {cost:.3f} CPU s a pause, {int(np.isnan(values).sum())} clips unread")
    return values, cost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--reader", type=Path, help="the completion reader's checkpoint folder")
    which.add_argument("--readers-left-out", type=Path, help="a folder of readers, one per corpus, each fitted without it (DIR/<corpus>/)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    import torch

    from turneval.modeling.modeling_completion_reader import CompletionReader
    from turneval.modeling.modeling_turn_taking_judge import log_silence
    from turneval.training.fit_pause_decision import DEFAULT_C, auc_summary, leave_one_corpus_out, paired_summary
    from turneval.whisper_completion import WhisperCompletion

    torch.set_num_threads(1)
    table, clips = collect(args.cache)
    if "teacher" not in table:
        table["teacher"], _ = cue_values("Whisper 30 s (teacher)", WhisperCompletion(), clips)
        np.savez(args.cache, **table, clip_samples=np.concatenate(clips), clip_lengths=np.array([len(c) for c in clips]))
    if args.reader is not None:
        table["student"], _ = cue_values("completion reader 8 s (student)", CompletionReader(args.reader), clips)
    else:
        table["student"] = np.full(len(clips), np.nan)
        for corpus in sorted(set(table["corpus"].astype(str))):
            rows = np.flatnonzero(table["corpus"].astype(str) == corpus)
            reader = CompletionReader(args.readers_left_out / corpus)
            table["student"][rows], _ = cue_values(f"completion reader 8 s without {corpus}", reader, [clips[i] for i in rows])
    both = np.isfinite(table["teacher"]) & np.isfinite(table["student"])
    print(f"{len(clips)} decisions; student against teacher where both read ({int(both.sum())}): "
          f"r = {np.corrcoef(table['student'][both], table['teacher'][both])[0, 1]:.3f}")
    for cue in ("teacher", "student"):
        table[cue] = np.nan_to_num(table[cue], nan=0.0)
    silence = log_silence(table["silence_elapsed_s"])
    held = {cue: leave_one_corpus_out(table, ["log_silence_s", cue], DEFAULT_C) for cue in ("teacher", "student")}
    corpora = sorted(set(table["corpus"].astype(str)))
    for where in [*corpora, "pooled"]:
        rows = np.ones(len(silence), bool) if where == "pooled" else table["corpus"].astype(str) == where
        line = [f"{where} ({int(rows.sum())} decisions, {int(table['shift'][rows].sum())} shifts):",
                f"silence {auc_summary(table, silence, rows)['roc_auc']:.3f}"]
        if "smart_turn_logit" in table:
            line.append(f"smart-turn {auc_summary(table, table['smart_turn_logit'], rows)['roc_auc']:.3f}")
        for cue in ("teacher", "student"):
            rule = auc_summary(table, held[cue]["held_out"], rows)
            d = paired_summary(table, held[cue]["held_out"], silence, rows)
            line.append(f"{cue}: alone {auc_summary(table, table[cue], rows)['roc_auc']:.3f}, rule left out {rule['roc_auc']:.3f} "
                        f"{rule['ci95']} (C={held[cue]['c']:g}), minus silence {d['difference']:+.3f} {d['ci95']}")
        d = paired_summary(table, held["student"]["held_out"], held["teacher"]["held_out"], rows)
        line.append(f"student rule minus teacher rule {d['difference']:+.3f} {d['ci95']}")
        print("\n    ".join(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
