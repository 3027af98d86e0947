"""What every recipe shares: its stages in order, its command line, and the loop that runs them.

A recipe is a list of :class:`Stage` s. Each stage is one call of a real script of the project
(``python -m turneval.training.judge_features ...``, ``python -m
turneval.dataset_scripts.synthetic.revoice ...``): the recipe only fills in the arguments and
the order, so what a recipe runs is exactly what the model card's commands run, and nothing is
trained here that the stage's own script would not train. Stages run in this process (torch
and the models are imported once, which is what makes a ``--quick`` run fit in CI); every stage
prints the command line that runs it alone, so a long run can be continued by hand or with
``--from-stage``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence


KINDS = ("data", "backbone", "features", "training", "heads", "thresholds", "evaluation")
"""What a stage makes, in the order a recipe makes them."""


QUICK_DATA = "turneval.training.recipes.quick_data"


class RecipeError(RuntimeError):
    """A stage failed, or the recipe's command line is wrong; the message says which and what next."""


@dataclass(frozen=True)
class Stage:
    """One step of a recipe: ``module.function(argv)`` (a script's ``main``) or ``module.function(*argv)``.

    Attributes:
        name: short and unique within the recipe (``--from-stage`` names it).
        kind: one of :data:`KINDS`.
        module: the module that holds the stage's code.
        argv: its command-line arguments (or, for a plain function, its positional arguments).
        function: ``"main"`` for a script, else a function of ``module`` called with ``*argv``.
    """

    name: str
    kind: str
    module: str
    argv: tuple[str, ...]
    function: str = "main"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"stage {self.name!r}: kind {self.kind!r} is not one of {KINDS}")

    def command(self) -> str:
        """The shell command that runs this stage alone."""
        if self.function == "main":
            return shlex.join(["python", "-m", self.module, *self.argv])
        call = f"from {self.module} import {self.function}; {self.function}({', '.join(map(json.dumps, self.argv))})"
        return shlex.join(["python", "-c", call])

    def run(self) -> None:
        """Run the stage; raises RecipeError when its script ends with a non-zero exit code."""
        target: Callable = getattr(importlib.import_module(self.module), self.function)
        _as_in_a_fresh_process()
        try:
            status = target(list(self.argv)) if self.function == "main" else target(*self.argv)
        except SystemExit as err:  # argparse and some scripts exit instead of returning
            status = err.code
        except Exception as err:
            raise RecipeError(f"stage {self.name!r} failed ({type(err).__name__}: {err}); fix it and continue "
                              f"with --from-stage {self.name}, or run it alone: {self.command()}") from err
        if self.function == "main" and status not in (0, None):
            raise RecipeError(f"stage {self.name!r} ended with exit code {status} (its message is above): {self.command()}; "
                              f"once fixed, continue with --from-stage {self.name}")


def _as_in_a_fresh_process() -> None:
    """Stages are scripts written to run in a process of their own; accelerate keeps one state per
    process, which a second training stage (or a --cpu one after another) must not inherit."""
    if "accelerate.state" in sys.modules:
        from accelerate.state import AcceleratorState, GradientState

        AcceleratorState._reset_state(True)
        GradientState._reset_state()


def recipe_parser(description: str) -> argparse.ArgumentParser:
    """The options every recipe takes; a recipe adds the paths of its own data."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="working folder: every stage's output goes below it")
    parser.add_argument("--quick", action="store_true",
                        help="the CI size: made-up data, a tiny random backbone, a few steps (a minute or two); "
                             "checks that every stage runs in order, makes nothing worth shipping")
    parser.add_argument("--dry-run", action="store_true", help="print the stages' commands and stop")
    parser.add_argument("--from-stage", metavar="NAME", help="skip the stages before NAME (their outputs are already there)")
    return parser


def add_switchboard_arguments(parser: argparse.ArgumentParser) -> None:
    """The inputs of a recipe that reads Switchboard: its ms98 alignments and the VAP split lists."""
    parser.add_argument("--swb-root", type=Path, help="the extracted swb_ms98_transcriptions folder (not with --quick)")
    parser.add_argument("--splits-dir", type=Path, help="the VAP split lists: shared/real/switchboard_ms98/splits (not with --quick)")


def switchboard_inputs(args: argparse.Namespace, parser: argparse.ArgumentParser,
                       backbone: bool = False) -> tuple[list[Stage], Path, Path, str]:
    """(stages that make the inputs, ms98 root, splits folder, backbone) of a Switchboard recipe.

    The shipped run reads the given alignments (none to make) and tiny.en; ``--quick`` first
    writes made-up calls in the ms98 layout and, with ``backbone``, a tiny random Whisper
    (:mod:`~turneval.training.recipes.quick_data`).
    """
    if not args.quick:
        if args.swb_root is None or args.splits_dir is None:
            parser.error("the shipped run needs --swb-root and --splits-dir (Switchboard's ms98 alignments); --quick needs neither")
        return [], args.swb_root, args.splits_dir, "tiny.en"
    quick = args.out / "quick_inputs"
    made = [Stage("made-up-switchboard", "data", QUICK_DATA, (str(quick),), function="made_up_switchboard")]
    if backbone:
        made.append(Stage("tiny-whisper", "backbone", QUICK_DATA, (str(quick / "tiny_whisper"),), function="tiny_whisper"))
    return made, quick / "swb_ms98_transcriptions", quick / "splits", str(quick / "tiny_whisper") if backbone else "tiny.en"


def run_warm_started_recipe(doc: str, make_stages: Callable[..., list[Stage]], sizes: tuple, final_dir: str,
                            argv: Sequence[str] | None = None, init_from: str = "future_activity_predictor_switchboard") -> int:
    """``main`` of a Switchboard recipe that starts from a voice-activity predictor (``--init-checkpoint``,
    default ``init_from``, bundled or kept in the checkout's ``benchmarks/baselines/``):
    ``make_stages(out, swb_root, splits_dir, init_checkpoint, size)`` with ``sizes = (shipped, quick)``;
    prints where the trained predictor is (``OUT/final_dir/final``)."""
    from turneval.checkpoints import named_checkpoint

    parser = recipe_parser(doc.split("\n\n")[0])
    add_switchboard_arguments(parser)
    parser.add_argument("--init-checkpoint", type=Path, default=named_checkpoint(init_from),
                        help=f"the voice-activity predictor to start from (default: {init_from})")
    args = parser.parse_args(argv)
    if args.init_checkpoint is None:
        parser.error(f"--init-checkpoint: {init_from} is not installed (it no longer ships); rebuild it with "
                     f"python -m turneval.training.recipes.{init_from} and pass its final folder")
    first, swb_root, splits_dir, _ = switchboard_inputs(args, parser)
    shipped, quick = sizes
    run_stages(first + make_stages(args.out, swb_root, splits_dir, args.init_checkpoint, quick if args.quick else shipped),
               dry_run=args.dry_run, from_stage=args.from_stage)
    if not args.dry_run:
        print(f"the predictor: {args.out / final_dir / 'final'}")
    return 0


def run_stages(stages: Sequence[Stage], *, dry_run: bool = False, from_stage: str | None = None,
               log: Callable[[str], object] = print) -> list[str]:
    """Run ``stages`` in order (from ``from_stage`` on); returns the names of the stages run.

    Raises:
        RecipeError: ``from_stage`` names no stage, or a stage failed.
    """
    names = [s.name for s in stages]
    if len(set(names)) != len(names):
        raise RecipeError(f"stage names repeat: {names}")
    if from_stage is not None and from_stage not in names:
        raise RecipeError(f"--from-stage {from_stage!r}: no such stage; the stages are: {', '.join(names)}")
    todo = list(stages[names.index(from_stage):] if from_stage else stages)
    for i, stage in enumerate(todo, 1):
        log(f"[{i}/{len(todo)}] {stage.kind}: {stage.name}\n$ {stage.command()}")
        if dry_run:
            continue
        started = time.time()
        stage.run()
        log(f"[{i}/{len(todo)}] {stage.name}: done in {time.time() - started:.1f} s")
        sys.stdout.flush()
    return [s.name for s in todo]


__all__ = ["KINDS", "RecipeError", "Stage", "add_switchboard_arguments", "recipe_parser", "run_stages", "switchboard_inputs"]
