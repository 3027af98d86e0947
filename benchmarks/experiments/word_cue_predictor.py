"""Do the words help the naturalness predictor, and when must it read them? Switchboard test pairs, with and without words.

    python benchmarks/experiments/word_cue_predictor.py --swb-root SWB/swb_ms98_transcriptions.tar.gz \\
        --splits shared/real/switchboard_ms98/splits [--predictor CKPT ...] [--pair-calls 100] [--json OUT]

TurnNat's perturbation pairs cut from the first ``--pair-calls`` Switchboard test calls (the pairs
of ``benchmarks/validation/predictor_switchboard.py``: the five types, seed 0, the edits move the words
with the speech), scored by each predictor twice: reading the calls' words (the ms98
transcripts), and with the words withheld (all-zero cues: what a word-reading predictor does
with a recording that has no transcript). A predictor that does not read words gives the same
figure twice. Default predictors: the bundled look-ahead one (where the word-reading one starts)
and the bundled word-reading one. Pairwise accuracy overall and per type, with Wilson 95 % intervals; the same pairs for
every predictor and view.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence


HERE = Path(__file__).resolve().parents[1]
for path in (HERE, HERE / "validation"):  # the shared helpers, the validation scripts it reuses
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import emit_result, limit_threads  # noqa: E402
from _switchboard import map_calls  # noqa: E402
from predictor_switchboard import pair_results  # noqa: E402

from turneval.checkpoints import bundled_root  # noqa: E402


DEFAULT_PREDICTORS = ("future_activity_predictor_lookahead", "future_activity_predictor_words")


def evaluate(swb_root: str, splits: str, predictors: Sequence[str], pair_calls: int = 100) -> dict[str, Any]:
    """``{predictor: {"words": pair figures, "no words": pair figures}}``."""
    import turneval.naturalness_inference as inference
    from turneval.dataset_scripts.readers import read_split_ids

    ids = read_split_ids(splits, "test")[:pair_calls]
    out: dict[str, Any] = {"pair_calls": len(ids), "predictors": {}}
    for path in predictors:
        model = inference.load_predictor(path)
        views = {}
        for view, read_words in (("words", True), ("no words", False)):
            dialogues = [d for _, d in map_calls(swb_root, ids, lambda d: d)]
            r = pair_results(dialogues, model, read_words=read_words)
            views[view] = {"pairwise_accuracy": r["pairwise_accuracy"], "ci95": [r["pairwise_accuracy_ci_low"], r["pairwise_accuracy_ci_high"]],
                           "n_pairs": r["n_pairs"], "per_type": {k: {"accuracy": v["pairwise_accuracy"], "n_pairs": v["n_pairs"]}
                                                                  for k, v in r["per_type"].items()}}
            if not inference.reads_words(model):
                views["no words"] = views["words"]  # nothing to withhold
                break
        out["predictors"][Path(path).name] = views
    return out


def markdown(result: dict[str, Any]) -> str:
    types = sorted({t for views in result["predictors"].values() for v in views.values() for t in v["per_type"]})
    lines = [f"Pairs from the first {result['pair_calls']} Switchboard test calls; pairwise accuracy [Wilson 95 % CI].", "",
             "| predictor | view | all | " + " | ".join(types) + " |", "|---|---|---|" + "---|" * len(types)]
    for name, views in result["predictors"].items():
        for view, v in views.items():
            cells = [f"{v['per_type'][t]['accuracy']:.3f} ({v['per_type'][t]['n_pairs']})" if t in v["per_type"] else "" for t in types]
            lines.append(f"| {name} | {view} | {v['pairwise_accuracy']:.3f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}], n = {v['n_pairs']} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--swb-root", required=True, help="the ms98 folder or swb_ms98_transcriptions.tar.gz")
    p.add_argument("--splits", required=True, help="the VAP split lists")
    p.add_argument("--predictor", action="append", default=[], metavar="PATH", help="a predictor checkpoint (repeatable; default: the bundled two)")
    p.add_argument("--pair-calls", type=int, default=100)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    limit_threads()
    predictors = args.predictor or [str(bundled_root() / name) for name in DEFAULT_PREDICTORS]
    return emit_result(evaluate(args.swb_root, args.splits, predictors, args.pair_calls), args.json, markdown)


if __name__ == "__main__":
    sys.exit(main())
