"""turn_taking_chunks builder, dialogue manifests and the parquet round trip."""
from __future__ import annotations

import json

import numpy as np
import pytest

from turneval.dataset_scripts.builders import (
    TurnTakingChunks,
    export_parquet,
    load_parquet,
    read_dialogue_manifest,
    write_dialogue_manifest,
)
from turneval.dataset_scripts.dialogue import Dialogue, DialogueError, Word
from turneval.dataset_scripts.grids import SAMPLE_RATE
from turneval.dataset_scripts.labels import LABELS, chunk_labels
from turneval.dataset_scripts.sampler import BalancedChunkSampler


def tiny_dialogue(name: str = "d0", seconds: float = 8.0) -> Dialogue:
    """A->B shift, a B backchannel inside A's next turn, and noise-like audio on each channel."""
    rng = np.random.default_rng(0)
    n = int(seconds * SAMPLE_RATE)
    audio = np.zeros((2, n), dtype=np.float32)
    segs = [[(0.5, 2.5), (4.0, 7.0)], [(2.8, 3.6), (5.0, 5.3)]]
    for k, spk in enumerate(segs):
        for s, e in spk:
            audio[k, int(s * SAMPLE_RATE) : int(e * SAMPLE_RATE)] = 0.1 * rng.standard_normal(int(e * SAMPLE_RATE) - int(s * SAMPLE_RATE))
    words = [
        [Word(0.5, 1.5, "so"), Word(1.5, 2.5, "anyway"), Word(4.0, 5.5, "then"), Word(5.5, 7.0, "more")],
        [Word(2.8, 3.6, "really"), Word(5.0, 5.3, "yeah")],
    ]
    return Dialogue(id=name, segments=segs, words=words, audio=audio)


@pytest.fixture
def manifest(tmp_path):
    dialogues = [tiny_dialogue("d0"), tiny_dialogue("d1", 7.5)]
    return write_dialogue_manifest(dialogues, tmp_path / "src", split={"d0": "train", "d1": "test"})


def test_manifest_round_trip(manifest):
    rows = list(read_dialogue_manifest(manifest))
    assert [(s, d.id) for s, d in rows] == [("train", "d0"), ("test", "d1")]
    assert rows[0][1].audio_path.endswith("d0.wav") and rows[0][1].words[1][1].text == "yeah"


def test_synth_manifest_csv_is_a_builder_manifest(tmp_path):
    from turneval.dataset_scripts.synthetic import write_dialogue

    corpus = tmp_path / "corpus"
    _, annotations = write_dialogue(tiny_dialogue("c0"), corpus)
    manifest = corpus / "manifest.csv"
    manifest.write_text(f"id,audio,annotations\nc0,c0.wav,{annotations.name}\n")
    rows = list(read_dialogue_manifest(manifest))
    assert [(s, d.id) for s, d in rows] == [("train", "c0")] and rows[0][1].audio is None
    assert rows[0][1].audio_path == str(corpus / "c0.wav") and not list(read_dialogue_manifest(manifest, split="test"))
    builder = TurnTakingChunks(cache_dir=str(tmp_path / "cache"), manifest=str(manifest))
    builder.download_and_prepare()
    assert builder.as_dataset()["train"][0]["conversation_id"] == "c0"


def test_manifest_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "manifest.jsonl"
    bad.write_text(json.dumps({"id": "x", "segments": [[], []]}) + "\n{not json\n")
    with pytest.raises(DialogueError, match=r"manifest.jsonl:2"):
        list(read_dialogue_manifest(bad))
    with pytest.raises(FileNotFoundError, match="manifest"):
        TurnTakingChunks(cache_dir=str(tmp_path / "c"), data_dir=str(tmp_path / "nowhere")).download_and_prepare()


def test_chunks_builder_rows_match_labels(manifest, tmp_path):
    builder = TurnTakingChunks(cache_dir=str(tmp_path / "cache"), manifest=str(manifest))
    builder.download_and_prepare()
    ds = builder.as_dataset()
    assert set(ds) == {"train", "test"}
    row = ds["train"][0]
    expected = chunk_labels(next(d for _, d in read_dialogue_manifest(manifest)))
    assert row["conversation_id"] == "d0" and row["n_chunks"] == len(expected) == 200
    assert row["labels"] == expected.label_ids().tolist()
    assert row["floor"] == expected.floor_ids().tolist()
    assert "T" in [LABELS[i] for i in row["labels"]]
    assert len(row["voice_activity_a"]) == 200 and row["voice_activity_a"][20] == 1 and row["voice_activity_a"][0] == 0
    assert row["words"][0] == {"speaker": "A", "start": 0.5, "end": 1.5, "text": "so"}
    assert ds["train"].features["labels"].feature.names == list(LABELS)


def test_parquet_export_reads_back_and_feeds_the_sampler(manifest, tmp_path):
    builder = TurnTakingChunks(cache_dir=str(tmp_path / "cache"), manifest=str(manifest))
    builder.download_and_prepare()
    ds = builder.as_dataset()
    paths = export_parquet(ds, tmp_path / "parquet")
    assert set(paths) == {"train", "test"}
    back = load_parquet(tmp_path / "parquet", cache_dir=tmp_path / "pcache")
    assert back["train"][0]["labels"] == ds["train"][0]["labels"]
    assert back["train"].features["labels"].feature.names == list(LABELS)
    sampler = BalancedChunkSampler(back["train"], context_s=2.0)
    ex = next(iter(sampler))
    assert ex["input_values"].shape == (2 * SAMPLE_RATE,)
    assert ex["labels"] == back["train"][0]["labels"][ex["chunk_index"] + 1]


def test_perturbations_builder_pairs_and_parquet(tmp_path):
    from tests.test_perturbations import scripted_dialogue
    from turneval.dataset_scripts.builders import TurnTakingPerturbations, decode_audio

    manifest = write_dialogue_manifest([scripted_dialogue("talk")], tmp_path / "src")
    builder = TurnTakingPerturbations(
        cache_dir=str(tmp_path / "cache"), manifest=str(manifest), types=("late_response", "hold_instead_of_shift"), seed=0,
        edit_params={"late_response": {"min_delay_ms": 1500.0, "max_delay_ms": 1500.0}},
    )
    builder.download_and_prepare()
    ds = builder.as_dataset()["train"]
    assert ds.num_rows == 2
    names = ds.features["perturbation_type"].names
    assert sorted(names[i] for i in ds["perturbation_type"]) == ["hold_instead_of_shift", "late_response"]
    row = ds[0]
    natural, perturbed = decode_audio(row["natural_audio"]), decode_audio(row["perturbed_audio"])
    assert natural.shape[0] == perturbed.shape[0] == 2
    assert perturbed.shape[1] == pytest.approx(row["perturbed_duration"] * SAMPLE_RATE, abs=1)
    assert len(row["perturbed_voice_activity"]) == 2 and row["description"]
    edits = {names[r["perturbation_type"]]: json.loads(r["edit"]) for r in ds}
    assert all(e["edit_type"] == name for name, e in edits.items())
    assert edits["late_response"]["delay_ms"] == 1500.0  # edit_params reach the edit
    export_parquet(builder.as_dataset(), tmp_path / "pq")
    back = load_parquet(tmp_path / "pq", cache_dir=tmp_path / "pcache")["train"]
    assert back[1]["pair_id"] == ds[1]["pair_id"] and back.features["perturbation_type"].names == names
    np.testing.assert_array_equal(decode_audio(back[1]["natural_audio"]), decode_audio(ds[1]["natural_audio"]))


def test_perturbations_builder_rejects_bad_config(tmp_path):
    from turneval.dataset_scripts.builders import TurnTakingPerturbations

    manifest = write_dialogue_manifest([tiny_dialogue()], tmp_path / "src")
    with pytest.raises(ValueError, match="unknown perturbation"):
        TurnTakingPerturbations(cache_dir=str(tmp_path / "c"), manifest=str(manifest), types=("nope",)).download_and_prepare()


def test_cli_builds_and_exports_parquet(tmp_path, capsys):
    import soundfile as sf

    from tests.test_perturbations import scripted_dialogue
    from turneval.cli import main

    d = scripted_dialogue("talk")
    sf.write(str(tmp_path / "talk.wav"), d.audio.T, SAMPLE_RATE, subtype="FLOAT")
    d.audio_path = "talk.wav"  # relative to the annotation file, as the synthetic corpus writes it
    d.save_annotations(tmp_path / "talk.json")
    out = tmp_path / "pairs"
    assert main([
        "dataset", "perturbations", str(tmp_path / "talk.json"), "--out", str(out), "--types", "late_response",
        "--edit-params", '{"late_response": {"min_delay_ms": 1300, "max_delay_ms": 1300}}',
    ]) == 0
    assert "train: 1 rows" in capsys.readouterr().out
    back = load_parquet(out, cache_dir=tmp_path / "pc")["train"]
    assert back[0]["pair_id"] == "talk__late_response" and json.loads(back[0]["edit"])["delay_ms"] == 1300.0
    assert main(["dataset", "chunks", str(out / "src" / "manifest.jsonl"), "--out", str(tmp_path / "chunks")]) == 0
    assert main(["dataset", "questions", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "p")]) == 1


@pytest.mark.parametrize("name", ["turn_taking_chunks", "turn_taking_perturbations", "turn_taking_questions"])
def test_dataset_cards_parse_and_name_real_features(name):
    import pathlib

    import yaml

    from turneval.dataset_scripts.builders.turn_taking_chunks import chunk_features
    from turneval.dataset_scripts.builders.turn_taking_perturbations import perturbation_features
    from turneval.dataset_scripts.builders.turn_taking_questions import question_features

    card = pathlib.Path(__file__).resolve().parent.parent / "model_cards" / "datasets" / name / "README.md"
    meta = yaml.safe_load(card.read_text(encoding="utf-8").split("---")[1])
    features = {"turn_taking_chunks": chunk_features, "turn_taking_perturbations": perturbation_features,
                "turn_taking_questions": question_features}[name]()
    listed = [f["name"] for f in meta["dataset_info"]["features"]]
    assert listed and set(listed) <= set(features), set(listed) - set(features)
    assert meta["license"] and "turneval" in meta["tags"]


def _silent_b(name: str = "mute", seconds: float = 8.0) -> Dialogue:
    """A recording whose channel B never speaks (a dead microphone)."""
    d = tiny_dialogue(name, seconds)
    d.audio[1] = 0.0
    return Dialogue(id=name, segments=[d.segments[0], []], words=[d.words[0], []], audio=d.audio)


@pytest.mark.parametrize("builder_name", ["TurnTakingChunks", "TurnTakingPerturbations", "TurnTakingQuestions"])
def test_missing_audio_file_fails_before_generation_and_names_it(builder_name, tmp_path):
    from turneval.dataset_scripts import builders

    manifest = write_dialogue_manifest([tiny_dialogue("d0"), tiny_dialogue("d1")], tmp_path / "src")
    missing = next(p for p in (tmp_path / "src").rglob("d1.wav"))
    missing.unlink()
    builder = getattr(builders, builder_name)(cache_dir=str(tmp_path / "cache"), manifest=str(manifest))
    with pytest.raises(FileNotFoundError, match=r"manifest.jsonl: dialogue 'd1': audio file .*d1\.wav not found"):
        builder.download_and_prepare()


def test_silent_channel_is_a_counted_skip_in_the_chunks_and_questions_builders(tmp_path):
    from turneval.dataset_scripts.builders import TurnTakingQuestions

    manifest = write_dialogue_manifest([tiny_dialogue("d0"), _silent_b(), tiny_dialogue("d2")], tmp_path / "src")
    builder = TurnTakingChunks(cache_dir=str(tmp_path / "cache"), manifest=str(manifest))
    builder.download_and_prepare()
    assert builder.as_dataset()["train"]["conversation_id"] == ["d0", "d2"]
    assert dict(builder.skipped) == {"silent_channel": 1}
    questions = TurnTakingQuestions(cache_dir=str(tmp_path / "pcache"), manifest=str(manifest), embed_audio=False)
    questions.download_and_prepare()
    assert dict(questions.skipped) == {"silent_channel": 1}
    assert "mute" not in set(questions.as_dataset()["train"]["conversation_id"])


def test_perturbation_builder_counts_silent_channels_and_crops_too_short(tmp_path):
    from tests.test_perturbations import scripted_dialogue
    from turneval.dataset_scripts.builders import TurnTakingPerturbations

    manifest = write_dialogue_manifest([_silent_b(), scripted_dialogue("talk")], tmp_path / "src")
    # 8 s crops cannot hold a 1.2-2 s delay with 5 s of context before and 2 s after it
    builder = TurnTakingPerturbations(
        cache_dir=str(tmp_path / "cache"), manifest=str(manifest), types=("late_response", "hold_instead_of_shift"),
        min_context_s=6.0, max_context_s=8.0,
    )
    builder.download_and_prepare()
    assert builder.info.splits["train"].num_examples == 0  # nothing usable, and no crash
    assert dict(builder.skipped) == {"silent_channel": 1, "crop_too_short": 2}
    # the same conversation with room for its context builds: the skip was about the crop
    ok = TurnTakingPerturbations(cache_dir=str(tmp_path / "cache2"), manifest=str(manifest), types=("late_response",))
    ok.download_and_prepare()
    assert ok.as_dataset()["train"].num_rows == 1 and dict(ok.skipped) == {"silent_channel": 1}


def test_no_candidate_and_crop_reasons_on_make_pair():
    from tests.test_perturbations import scripted_dialogue
    from turneval.dataset_scripts.perturbations.edits import NoCandidateError
    from turneval.dataset_scripts.perturbations.pairs import make_pair

    with pytest.raises(NoCandidateError) as err:
        make_pair(scripted_dialogue(), "late_response", min_context_s=6.0, max_context_s=8.0)
    assert err.value.reason == "crop_too_short"
    with pytest.raises(NoCandidateError) as err:
        make_pair(_silent_b(seconds=30.0), "late_response")
    assert err.value.reason == "no_candidate"


def test_build_failing_halfway_leaves_no_dataset_and_the_next_build_is_complete(tmp_path, monkeypatch):
    import datasets

    from turneval.dataset_scripts.builders import turn_taking_chunks

    manifest = write_dialogue_manifest([tiny_dialogue(f"d{i}") for i in range(4)], tmp_path / "src")
    real_row, calls = turn_taking_chunks.conversation_row, []

    def crash_on_third(dialogue, **kwargs):
        calls.append(dialogue.id)
        if len(calls) == 3:
            raise RuntimeError("disk full")
        return real_row(dialogue, **kwargs)

    monkeypatch.setattr(turn_taking_chunks, "conversation_row", crash_on_third)
    cache = tmp_path / "cache"
    with pytest.raises(datasets.exceptions.DatasetGenerationError):
        TurnTakingChunks(cache_dir=str(cache), manifest=str(manifest)).download_and_prepare()
    assert calls == ["d0", "d1", "d2"]  # it did fail in the middle, after two rows were written
    assert not list(cache.rglob("*.arrow")) and not list(cache.rglob("dataset_info.json"))
    with pytest.raises(FileNotFoundError):
        TurnTakingChunks(cache_dir=str(cache), manifest=str(manifest)).as_dataset()

    monkeypatch.setattr(turn_taking_chunks, "conversation_row", real_row)
    builder = TurnTakingChunks(cache_dir=str(cache), manifest=str(manifest))
    builder.download_and_prepare()
    ds = builder.as_dataset()["train"]
    assert ds["conversation_id"] == ["d0", "d1", "d2", "d3"] and all(n == 200 for n in ds["n_chunks"])


def test_chunk_rows_follow_a_manifest_that_grows(tmp_path):
    from turneval.training.judge_data import load_chunk_rows

    manifest = write_dialogue_manifest([tiny_dialogue("d0")], tmp_path / "src")
    assert [r["conversation_id"] for r in load_chunk_rows(manifest, "train", tmp_path / "hf")] == ["d0"]
    write_dialogue_manifest([tiny_dialogue("d0"), tiny_dialogue("d1")], tmp_path / "src")  # same path, one more dialogue
    assert [r["conversation_id"] for r in load_chunk_rows(manifest, "train", tmp_path / "hf")] == ["d0", "d1"]
