"""training/recipes: one recipe per bundled checkpoint runs every stage in order.

CI runs each recipe's --quick form here (made-up data, a tiny random Whisper, a few steps; about
a minute for the three together on a free 2-core machine) and checks what its stages must have
made; the shipped sizes are checked as plans (--dry-run) against the model cards.
"""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from turneval.training.recipes.stages import KINDS, RecipeError, Stage, run_stages


REPO = Path(__file__).resolve().parents[1]
RECIPES = {
    "turn_taking_judge_swb_revoiced": "turn_taking_judge",
    "future_activity_predictor_demo": "future_activity_predictor",
    "future_activity_predictor_switchboard": "future_activity_predictor_switchboard",
    "future_activity_predictor_words": "future_activity_predictor_words",
    "future_activity_predictor_lookahead": "future_activity_predictor_lookahead",
}
"""recipe (= checkpoint folder: bundled, or an earlier generation in benchmarks/baselines/) -> its model card folder"""


def _recipe(name: str):
    return importlib.import_module(f"turneval.training.recipes.{name}")


def _quick(tmp_path_factory, name: str) -> Path:
    out = tmp_path_factory.mktemp(name)
    assert _recipe(name).main(["--out", str(out), "--quick"]) == 0
    return out


def _shipped_plan(name: str, out: Path) -> list[Stage]:
    recipe = _recipe(name)
    if name == "future_activity_predictor_demo":
        return recipe.stages(out)
    if name == "future_activity_predictor_words":
        return recipe.stages(out, Path("SWB"), Path("SPLITS"), Path("checkpoints/future_activity_predictor_lookahead"))
    if name == "future_activity_predictor_lookahead":
        return recipe.stages(out, Path("SWB"), Path("SPLITS"), Path("benchmarks/baselines/future_activity_predictor_switchboard"))
    return recipe.stages(out, Path("SWB"), Path("SPLITS"))


def test_every_checkpoint_has_a_recipe_and_only_one_model_per_job_ships():
    bundled = {p.name for p in (REPO / "checkpoints").iterdir() if (p / "config.json").is_file()}
    assert bundled == {"turn_taking_judge_swb_revoiced", "future_activity_predictor_lookahead", "future_activity_predictor_words"}
    earlier = {p.name for p in (REPO / "benchmarks" / "baselines").iterdir() if p.name in RECIPES}
    assert bundled | earlier == set(RECIPES) and not bundled & earlier


def test_quick_judge_recipe_makes_a_judge_with_its_heads_and_tuned_thresholds(tmp_path_factory):
    from turneval.modeling.judge_loading import load_judge

    out = _quick(tmp_path_factory, "turn_taking_judge_swb_revoiced")
    final = out / "judge_4eng" / "final"
    config = json.loads((final / "config.json").read_text())
    # the second training stage continued the first on all four feature caches
    assert [Path(c).name for c in config["training_summary"]["train_cache"]] == ["train", "rest", "pico_a", "pico_b"]
    assert config["interruption_head"]["features"] and config["interruption_head"]["train_manifest"]
    assert "tune_judge_thresholds" in config["agreement_thresholds_source"]
    assert set(config["agreement_thresholds"]) >= {"a", "b", "c", "e"}
    judge = load_judge(final)
    assert judge.turn_end_head is not None


def test_quick_demo_predictor_recipe_trains_both_models_and_benchmarks_them(tmp_path_factory):
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    out = _quick(tmp_path_factory, "future_activity_predictor_demo")
    assert FutureActivityPredictorModel.from_pretrained(out / "fap_audio" / "final").config.input_type == "audio"
    assert FutureActivityPredictorModel.from_pretrained(out / "fap_vad" / "final").config.input_type == "vad"
    result = json.loads((out / "naturalness_eval" / "naturalness.json").read_text())
    assert result["n_pairs"] > 0 and len(result["results"]) >= 2


@pytest.fixture(scope="module")
def quick_switchboard(tmp_path_factory) -> Path:
    return _quick(tmp_path_factory, "future_activity_predictor_switchboard")


def test_quick_switchboard_predictor_recipe_trains_on_cached_voice_activity(quick_switchboard):
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    out = quick_switchboard
    assert sorted(p.name for p in (out / "cache").iterdir()) == ["swb_va_test.npz", "swb_va_train.npz", "swb_va_val.npz"]
    config = FutureActivityPredictorModel.from_pretrained(out / "fap_swb" / "final").config
    assert (config.input_type, config.vad_features) == ("vad", "timing")


def test_quick_words_predictor_recipe_fits_the_cue_and_trains_from_the_lookahead_model(tmp_path_factory):
    import numpy as np

    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    out = _quick(tmp_path_factory, "future_activity_predictor_words")
    assert sorted(p.name for p in (out / "cache").iterdir()) == ["swb_words_test.npz", "swb_words_train.npz", "swb_words_val.npz"]
    model = FutureActivityPredictorModel.from_pretrained(out / "fap_words" / "final")
    # started from the bundled look-ahead predictor: it reads the words and each speaker's activity 1 s ahead
    assert model.reads_words and (model.config.vad_features, model.lookahead_frames) == ("timing+words+ends", 50)
    with np.load(out / "word_cue.npz") as cue:  # the fitted cue is the model's, up to its 2 training steps (a buffer: not trained)
        assert np.array_equal(model.word_cue.weights.numpy(), cue["weights"])


def test_quick_lookahead_predictor_recipe_widens_the_voice_activity_model_and_trains_it(tmp_path_factory, quick_switchboard):
    """Started from the quick Switchboard recipe's model: the shipped Switchboard predictor no longer ships."""
    from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel

    out = tmp_path_factory.mktemp("future_activity_predictor_lookahead")
    init = quick_switchboard / "fap_swb" / "final"
    assert _recipe("future_activity_predictor_lookahead").main(["--out", str(out), "--quick", "--init-checkpoint", str(init)]) == 0
    assert sorted(p.name for p in (out / "cache").iterdir()) == ["swb_va_test.npz", "swb_va_train.npz", "swb_va_val.npz"]
    model = FutureActivityPredictorModel.from_pretrained(out / "fap_lookahead" / "final")
    assert (model.config.vad_features, model.config.end_lookahead_s, model.lookahead_frames) == ("timing+ends", 1.0, 50)


@pytest.mark.parametrize("name, kinds", [
    ("turn_taking_judge_swb_revoiced", {"data", "features", "training", "heads", "thresholds"}),
    ("future_activity_predictor_demo", {"data", "training", "evaluation"}),
    ("future_activity_predictor_switchboard", {"data", "training"}),
    ("future_activity_predictor_words", {"data", "heads", "backbone", "training"}),
    ("future_activity_predictor_lookahead", {"data", "backbone", "training"}),
])
def test_shipped_plan_runs_the_scripts_its_card_names(name, kinds, tmp_path):
    plan = _shipped_plan(name, tmp_path)
    assert {s.kind for s in plan} == kinds
    card = (REPO / "model_cards" / RECIPES[name] / "README.md").read_text(encoding="utf-8")
    assert f"turneval.training.recipes.{name}" in card, f"model_cards/{RECIPES[name]}/README.md must name its recipe"
    # every training script the card's commands name (python -m ..., training/<script>.py) is a stage
    named = set(re.findall(r"python -m (turneval\.training\.\w+)\b", card))
    named |= {f"turneval.training.{s}" for s in re.findall(r"python training/(\w+)\.py", card)}
    named.discard("turneval.training.recipes")
    assert named <= {s.module for s in plan}, f"the card names scripts the recipe does not run: {named - {s.module for s in plan}}"


def test_the_bundled_copy_of_the_judge_card_names_the_recipe_too():
    card = (REPO / "checkpoints" / "turn_taking_judge_swb_revoiced" / "README.md").read_text(encoding="utf-8")
    assert "turneval.training.recipes.turn_taking_judge_swb_revoiced" in card


def test_dry_run_prints_every_command_and_runs_nothing(tmp_path, capsys):
    assert _recipe("future_activity_predictor_demo").main(["--out", str(tmp_path / "r"), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not (tmp_path / "r").exists()
    assert printed.count("$ python -m ") == 6 and "--max_train_steps 1000" in printed


def test_shipped_switchboard_runs_need_the_alignments(tmp_path, capsys):
    for name in ("turn_taking_judge_swb_revoiced", "future_activity_predictor_switchboard", "future_activity_predictor_words",
                 "future_activity_predictor_lookahead"):
        with pytest.raises(SystemExit):
            _recipe(name).main(["--out", str(tmp_path), "--dry-run"])
        assert "needs --swb-root and --splits-dir" in capsys.readouterr().err


def test_from_stage_skips_earlier_stages_and_a_failing_stage_says_how_to_continue(tmp_path):
    log: list[str] = []
    ok = Stage("write", "data", "turneval.training.recipes.quick_data", (str(tmp_path / "w"),), function="tiny_whisper")
    bad = Stage("va", "data", "turneval.training.switchboard_va", ("--split", "nope"))
    assert run_stages([ok, bad], dry_run=True, from_stage="va", log=log.append) == ["va"]
    with pytest.raises(RecipeError, match="no such stage; the stages are: write, va"):
        run_stages([ok, bad], from_stage="typo", log=log.append)
    with pytest.raises(RecipeError, match=r"stage 'va' ended with exit code 2 .*: python -m turneval.training.switchboard_va .*--from-stage va"):
        run_stages([bad], log=log.append)
    with pytest.raises(ValueError, match="kind"):
        Stage("x", "cooking", "m", ())
    assert KINDS.index("data") < KINDS.index("training") < KINDS.index("thresholds")


def test_a_recipe_whose_start_no_longer_ships_says_which_recipe_rebuilds_it(tmp_path, monkeypatch, capsys):
    from turneval import checkpoints

    monkeypatch.setattr(checkpoints, "EARLIER_GENERATIONS", tmp_path / "no_baselines")
    with pytest.raises(SystemExit):
        _recipe("future_activity_predictor_lookahead").main(["--out", str(tmp_path / "r"), "--quick", "--dry-run"])
    assert "python -m turneval.training.recipes.future_activity_predictor_switchboard" in capsys.readouterr().err
