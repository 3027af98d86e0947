"""Recipe of the bundled judge, ``checkpoints/turn_taking_judge_swb_revoiced``: every stage, in order.

    python -m turneval.training.recipes.turn_taking_judge_swb_revoiced --out runs/judge_recipe \\
        --swb-root SWB/swb_ms98_transcriptions --splits-dir shared/real/switchboard_ms98/splits
    python -m turneval.training.recipes.turn_taking_judge_swb_revoiced --out runs/judge_quick --quick   # CI: ~1 min

Stages (model_cards/turn_taking_judge, "Training procedure" and "Reproduce"):

1. data: re-voice Switchboard (``dataset_scripts.synthetic.revoice``): the train calls in two
   ranges (the 10 h judge's first 400, then the other 883), val and test (Flite voices, a
   held-out engine), and 300 more train excerpts with SVOX Pico (seed 1);
2. features: the frozen causal tiny.en encoder's states of every excerpt, once
   (``training.judge_features``);
3. training: layers 3-4 + head on the cached states (``training.train_judge_cached``), first the
   10 h judge, then from its weights one epoch of everything;
4. heads: the turn-end head (``training.fit_turn_end_head``, on the 32 h; the checkpoint compacted
   after it) and the interruption head (``training.fit_interruption_head``);
5. thresholds: the val calls voiced a second time by SVOX Pico, and the agreement thresholds
   tuned on both voicings (``training.tune_judge_thresholds --write``);
6. real speech: smart-turn v3.2 converted into the judge as its turn-completion cue
   (``training.convert_smart_turn``; needs ``pip install --no-deps pipecat-ai onnx``), the
   (a)/(d) pause-decision rule fitted on the SpokenWOZ dev calls (``training.fit_pause_decision``,
   three numbers), and the thresholds tuned again on the real dev recordings (SpokenWOZ and the
   AMI ES2004a channel pairs) where both decisions of a metric have at least 5 instances
   (``--real-root``, default ``../shared/real`` beside the repository).

The result is ``OUT/judge_4eng/final``, the bundled checkpoint's weights and config; the folder
under ``checkpoints/`` adds the card, ``provenance.json`` (the benchmarks' figures, written by
hand) and the code copies (``make sync-checkpoints``). Needs ``make synth-deps`` (Festival,
Flite, SVOX Pico) and about 4 h on 2 CPU cores (the card's compute table).
``--quick`` runs the same stages on made-up calls with eSpeak NG alone, a tiny random Whisper and
a few steps: it checks the recipe, not the model.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from turneval.training.recipes.stages import (
    QUICK_DATA,
    Stage,
    add_switchboard_arguments,
    recipe_parser,
    run_stages,
    switchboard_inputs,
)


REVOICE = "turneval.dataset_scripts.synthetic.revoice"
TRAIN_CACHED = "turneval.training.train_judge_cached"
FEATURES = "turneval.training.judge_features"


@dataclass(frozen=True)
class JudgeSize:
    """The numbers that differ between the shipped run and the --quick run."""

    calls_10h: int = 400
    calls_rest: int = 883
    calls_val: int = 24
    calls_test: int = 36
    calls_pico: int = 150
    """per each of the two Pico call ranges"""
    excerpt_s: str = "90"
    engines: str = "espeak,festival"
    test_engines: tuple[str, ...] = ("--engines", "flite", "--voices", "flite:awb,rms,slt")
    pico_engines: str = "pico,pico,espeak,festival"
    val_pico_engines: str = "pico"
    offsets_s: tuple[str, ...] = ("0", "5")
    context_s: tuple[str, ...] = ()
    """judge_features' window (default 10 s)"""
    first_training: tuple[str, ...] = ("--num_train_epochs", "2", "--checkpointing_steps", "413")
    second_training: tuple[str, ...] = ("--num_train_epochs", "1", "--threads", "2", "--checkpointing_steps", "545", "--eval_steps", "545")
    turn_end_window_s: str = "4"


SHIPPED = JudgeSize()
QUICK = JudgeSize(
    calls_10h=3, calls_rest=3, calls_val=2, calls_test=2, calls_pico=1, excerpt_s="0",
    engines="espeak", test_engines=("--engines", "espeak"), pico_engines="espeak", val_pico_engines="espeak",
    offsets_s=("0", "2"), context_s=("--context_s", "4"),
    first_training=("--max_train_steps", "2", "--per_device_train_batch_size", "2", "--eval_steps", "2"),
    second_training=("--max_train_steps", "2", "--per_device_train_batch_size", "2", "--eval_steps", "2"),
    turn_end_window_s="2",
)


REAL_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "real"
AMI_PAIRS = ("0+1", "0+2", "0+3", "1+2", "1+3", "2+3")


def real_dev_recordings(real_root: Path) -> tuple[list[str], list[str]]:
    """(the telephone dev calls: SpokenWOZ and Harper Valley, the AMI ES2004a close-talk channel
    pairs as ``LEFT+RIGHT``)."""
    calls = sorted(str(p) for p in (real_root / "spokenwoz" / "audio").glob("*.flac"))
    calls += sorted(str(p) for p in (real_root / "harper_valley" / "audio").glob("*.flac"))
    ami = real_root / "ami" / "ES2004a_excerpt"
    pairs = [f"{ami}/source{a}.flac+{ami}/source{b}.flac" for a, b in (p.split("+") for p in AMI_PAIRS)]
    return calls, pairs


def corpus_arguments(calls: Sequence[str], pairs: Sequence[str]) -> tuple[str, ...]:
    """``--corpus NAME RECORDING...`` per corpus of the real dev recordings (a call's corpus is
    its folder two levels up: spokenwoz/audio/X.flac), the AMI pairs as one corpus; made-up
    calls of one folder are one corpus, and the rule is then fitted leaving each call out."""
    by_corpus: dict[str, list[str]] = {}
    for call in calls:
        by_corpus.setdefault(Path(call).parent.parent.name or "calls", []).append(call)
    if pairs and len(by_corpus) > 1:
        by_corpus["ami"] = list(pairs)
    return tuple(arg for name, recs in by_corpus.items() for arg in ("--corpus", name, *recs))


def stages(out: Path, swb_root: Path, splits_dir: Path, backbone: str = "tiny.en", size: JudgeSize = SHIPPED,
           real: tuple[Sequence[str], Sequence[str]] | None = None) -> list[Stage]:
    """The judge's stages in order, writing below ``out``; ``real``: (calls the pause rule is fitted
    on, recordings that only check it), default :func:`real_dev_recordings` of :data:`REAL_ROOT`."""
    calls, check = real if real is not None else real_dev_recordings(REAL_ROOT)
    r = {name: str(out / name) for name in ("revoice", "revoice_rest", "revoice_pico_a", "revoice_pico_b", "revoice_val_pico")}
    feats = {name: str(out / "feats" / name) for name in ("train", "rest", "val", "pico_a", "pico_b")}
    judge_10h, judge = out / "judge_10h", out / "judge_4eng"
    final = str(judge / "final")
    source = ("--swb-root", str(swb_root), "--splits-dir", str(splits_dir), "--excerpt-s", size.excerpt_s, "--quiet")

    def revoice(name: str, split: str, out_dir: str, engines: Sequence[str], calls: int, *extra: str) -> Stage:
        return Stage(name, "data", REVOICE, (*source, "--split", split, *engines, "--out", out_dir, "--max-calls", str(calls), *extra))

    def features(name: str, data: str, split: str, *extra: str) -> Stage:
        return Stage(f"features-{name}", "features", FEATURES,
                     ("--data", data, "--split", split, "--out", feats[name], "--backbone", backbone, *size.context_s, *extra, "--splits", "2"))

    train_sets = (f"{r['revoice']}/train", f"{r['revoice_rest']}/train")
    evals = ("--eval", f"val={r['revoice']}/val", "--eval", f"test={r['revoice']}/test")
    return [
        revoice("revoice-train-10h", "train", r["revoice"], ("--engines", size.engines), size.calls_10h),
        revoice("revoice-train-rest", "train", r["revoice_rest"], ("--engines", size.engines), size.calls_rest,
                "--first-call", str(size.calls_10h)),
        revoice("revoice-val", "val", r["revoice"], ("--engines", size.engines), size.calls_val),
        revoice("revoice-test", "test", r["revoice"], size.test_engines, size.calls_test),
        revoice("revoice-train-pico-a", "train", r["revoice_pico_a"], ("--engines", size.pico_engines), size.calls_pico, "--seed", "1"),
        revoice("revoice-train-pico-b", "train", r["revoice_pico_b"], ("--engines", size.pico_engines), size.calls_pico, "--seed", "1",
                "--first-call", str(size.calls_pico)),
        features("train", f"{r['revoice']}/train", "train", "--offsets_s", *size.offsets_s),
        features("rest", f"{r['revoice_rest']}/train", "train", "--offsets_s", *size.offsets_s),
        features("val", f"{r['revoice']}/val", "validation"),
        features("pico_a", f"{r['revoice_pico_a']}/train", "train", "--offsets_s", *size.offsets_s),
        features("pico_b", f"{r['revoice_pico_b']}/train", "train", "--offsets_s", *size.offsets_s),
        Stage("train-10h", "training", TRAIN_CACHED,
              ("--train", feats["train"], "--validation", feats["val"], "--mode", "partial", "--split_layer", "2",
               *size.first_training, "--output_dir", str(judge_10h))),
        Stage("train-all", "training", TRAIN_CACHED,
              ("--train", feats["train"], feats["rest"], feats["pico_a"], feats["pico_b"], "--validation", feats["val"],
               "--mode", "partial", "--split_layer", "2", "--backbone", str(judge_10h / "final"), "--learning_rate", "2e-4",
               "--head_learning_rate", "2e-3", "--num_warmup_steps", "50", *size.second_training, "--output_dir", str(judge))),
        Stage("turn-end-head", "heads", "turneval.training.fit_turn_end_head",
              ("--train", *train_sets, *evals, "--backbone", backbone, "--cache", str(out / "turn_end_features"),
               "--window_s", size.turn_end_window_s, "--timing", "--c", "0.003", "--install_into", final)),
        Stage("compact", "heads", "turneval.modeling.judge_loading", (final,), function="compact_checkpoint"),
        Stage("interruption-head", "heads", "turneval.training.fit_interruption_head",
              ("--train", *train_sets, *evals, "--c", "0.1", "--install_into", final)),
        revoice("revoice-val-pico", "val", r["revoice_val_pico"], ("--engines", size.val_pico_engines), size.calls_val, "--seed", "1"),
        Stage("thresholds", "thresholds", "turneval.training.tune_judge_thresholds",
              ("--judge", final, "--data", f"{r['revoice']}/val", f"{r['revoice_val_pico']}/val", "--write")),
        Stage("smart-turn-cue", "heads", "turneval.training.convert_smart_turn", ("--install_into", final)),
        Stage("pause-decision", "thresholds", "turneval.training.fit_pause_decision",
              ("--judge", final, *corpus_arguments(calls, check), "--install_into", final)),
        Stage("thresholds-real", "thresholds", "turneval.training.tune_judge_thresholds",
              ("--judge", final, "--recordings", *calls, *check, "--min_per_decision", "5", "--write")),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = recipe_parser(__doc__.split("\n\n")[0])
    add_switchboard_arguments(parser)
    parser.add_argument("--real-root", type=Path, default=REAL_ROOT, help="the real dev recordings: shared/real (spokenwoz/, ami/)")
    args = parser.parse_args(argv)
    first, swb_root, splits_dir, backbone = switchboard_inputs(args, parser, backbone=True)
    if args.quick:
        made_up = args.out / "quick_inputs" / "calls"
        first.append(Stage("made-up-calls", "data", QUICK_DATA, (str(made_up),), function="made_up_two_party_calls"))
        paths = [str(made_up / f"call{k}.wav") for k in range(3)]
        real = (paths, paths[:1])
    else:
        real = real_dev_recordings(args.real_root)
        missing = [p for spec in real[0] + real[1] for p in spec.split("+") if not Path(p).is_file()]
        if missing or not real[0]:
            parser.error(f"the real dev recordings are not under {args.real_root} (missing: {missing[:3] or 'spokenwoz/audio/*.flac'}); pass --real-root")
    plan = first + stages(args.out, swb_root, splits_dir, backbone, QUICK if args.quick else SHIPPED, real)
    run_stages(plan, dry_run=args.dry_run, from_stage=args.from_stage)
    if not args.dry_run:
        print(f"the judge: {args.out / 'judge_4eng' / 'final'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
