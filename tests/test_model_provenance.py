"""The report names its models: checkpoint, training data, measured quality, synthetic-sound warning."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import torch

from turneval.checkpoints import BUNDLED, bundled_checkpoint
from turneval.cli import main
from turneval.dataset_scripts.synthetic import generate_dialogue, write_dialogue
from turneval.model_provenance import (
    PROVENANCE_FILE,
    ProvenanceError,
    describe_checkpoint,
    models_html,
    models_section,
    provenance_warnings,
    read_provenance,
)
from turneval.modeling.configuration_future_activity_predictor import FutureActivityPredictorConfig
from turneval.modeling.configuration_turn_taking_judge import TurnTakingJudgeConfig
from turneval.modeling.modeling_future_activity_predictor import FutureActivityPredictorModel
from turneval.modeling.modeling_turn_taking_judge import TurnTakingJudge
from turneval.reporting import report, report_schema


TINY_WHISPER = {"d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 128, "max_source_positions": 1500}
TINY_PREDICTOR = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, num_mel_bins=32, num_channel_layers=1, num_cross_layers=1)
SYNTHETIC = {
    "training_data": "tiny test corpus spoken by eSpeak NG",
    "trained_on_synthetic_sound": True,
    "sound_sources": ["eSpeak NG"],
    "measured": {"ROC-AUC macro, test split": 0.61},
}
REAL = {"training_data": "re-voiced? no: real recordings", "trained_on_synthetic_sound": False, "measured": {"loss": 2.0}}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """Tiny random judge and predictor; the judge says it learned synthetic sound, the predictor real."""
    root = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    TurnTakingJudge(TurnTakingJudgeConfig(encoder_config=TINY_WHISPER, context_mode="causal", context_s=4.0)).save_pretrained(root / "judge")
    FutureActivityPredictorModel(FutureActivityPredictorConfig(**TINY_PREDICTOR)).save_pretrained(root / "predictor")
    (root / "judge" / PROVENANCE_FILE).write_text(json.dumps(SYNTHETIC))
    (root / "predictor" / PROVENANCE_FILE).write_text(json.dumps(REAL))
    return {"judge": root / "judge", "predictor": root / "predictor"}


@pytest.fixture(scope="module")
def conversation(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("conversation")
    wav, annotations = write_dialogue(generate_dialogue(5, duration_s=12.0, style="cascaded", system_speaker=1), root)
    return {"wav": wav, "json": annotations}


@pytest.mark.parametrize("kind", sorted(BUNDLED))
def test_bundled_checkpoints_state_their_provenance(kind):
    folder = bundled_checkpoint(kind)
    data = read_provenance(folder)
    assert data is not None, f"{folder} needs a {PROVENANCE_FILE}"
    assert data["training_data"] and data["measured"], "training data and measured quality are stated"
    assert data.get("model") in (None, kind)
    if data["trained_on_synthetic_sound"]:
        assert provenance_warnings({kind: describe_checkpoint(kind, folder)}), "a synthetic-sound model warns"


def test_malformed_provenance_names_the_file_and_field(tmp_path):
    (tmp_path / PROVENANCE_FILE).write_text(json.dumps({"training_data": "x", "measured": {}}))
    with pytest.raises(ProvenanceError, match=r"provenance\.json.*trained_on_synthetic_sound"):
        read_provenance(tmp_path)
    (tmp_path / PROVENANCE_FILE).write_text(json.dumps({**REAL, "measured": {"auc": "high"}}))
    with pytest.raises(ProvenanceError, match=r"measured\['auc'\]"):
        read_provenance(tmp_path)
    (tmp_path / PROVENANCE_FILE).write_text("{not json")
    with pytest.raises(ProvenanceError, match="invalid JSON"):
        read_provenance(tmp_path)
    info = describe_checkpoint("judge", tmp_path)
    assert info["provenance"].startswith("invalid:")
    assert "malformed provenance" in provenance_warnings({"judge": info})[0]


def test_config_fields_serve_when_there_is_no_provenance_file(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "x", **SYNTHETIC}))
    assert describe_checkpoint("predictor", tmp_path)["provenance"] == "config"
    (tmp_path / PROVENANCE_FILE).write_text(json.dumps(REAL))
    info = describe_checkpoint("predictor", tmp_path)
    assert info["provenance"] == "file" and info["trained_on_synthetic_sound"] is False
    assert provenance_warnings({"predictor": info}) == []


def test_unknown_provenance_warns(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "x"}))
    info = describe_checkpoint("judge", tmp_path)
    assert info["provenance"] == "unknown" and info["name"] == tmp_path.name
    assert "no provenance.json" in provenance_warnings({"judge": info})[0]
    assert models_section(None, ("x", None)) == {"judge": None, "predictor": None}


def test_report_json_html_and_cli_name_the_models(checkpoints, conversation, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["report", str(conversation["json"]), "--judge", str(checkpoints["judge"]),
                 "--predictor", str(checkpoints["predictor"]), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.count("About the models: ") == 1 and "synthetic sound" in captured.out  # once, in the verdict
    assert "WARNING" not in captured.out + captured.err
    data = json.loads((out / "report.json").read_text())
    jsonschema.validate(data, report_schema())
    judge, predictor = data["models"]["judge"], data["models"]["predictor"]
    assert judge["name"] == "judge" and judge["path"] == str(checkpoints["judge"])
    assert judge["trained_on_synthetic_sound"] is True and judge["measured"] == SYNTHETIC["measured"]
    assert predictor["trained_on_synthetic_sound"] is False and predictor["training_data"] == REAL["training_data"]
    warnings = [n for n in data["notes"] if n.startswith("WARNING")]
    assert len(warnings) == 1 and "eSpeak NG" in warnings[0]
    page = (out / "report.html").read_text()
    assert "tiny test corpus spoken by eSpeak NG" in page and "ROC-AUC macro, test split" in page
    assert "About the models: " + warnings[0].removeprefix("WARNING: ") in page  # folded into the one note


def test_api_with_loaded_models_and_skipped_stages(checkpoints, conversation, tmp_path):
    from transformers import AutoModel

    import turneval.modeling  # noqa: F401  (registers the model types)

    loaded = AutoModel.from_pretrained(str(checkpoints["judge"]))
    rep = report(conversation["json"], judge=loaded, predictor=False, progress=False)
    assert rep.models["predictor"] is None
    assert rep.models["judge"]["path"] == str(checkpoints["judge"]), "a loaded model is traced to its folder"
    assert rep.models["judge"]["trained_on_synthetic_sound"] is True
    schema = report_schema()
    data = json.loads(rep.to_json())
    jsonschema.validate(data, schema)
    data["models"]["judge"]["trained_on_synthetic_sound"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)
    assert "skipped" in models_html(rep.models)
    # a copy without the provenance file: unknown, and the report says so
    bare = tmp_path / "bare_judge"
    shutil.copytree(checkpoints["judge"], bare)
    (bare / PROVENANCE_FILE).unlink()
    rep = report(conversation["json"], judge=bare, predictor=False, progress=False)
    assert rep.models["judge"]["provenance"] == "unknown"
    assert any("no provenance.json" in n for n in rep.notes)
