"""`turneval full-duplex-bench`: Full-Duplex-Bench run folders in the benchmark's layout, built from code.

The fixtures are laid out from the golden fdb cases (the reference scripts' inputs), so the
figures are checked against the reference's own outputs, plus hand-computed values.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from turneval import cli
from turneval.benchmark_runs.full_duplex_bench import evaluate_full_duplex_bench_run, full_duplex_bench_schema
from turneval.dataset_scripts.readers.full_duplex_bench import BenchmarkLayoutError, find_full_duplex_bench_tasks


GOLDEN = Path(__file__).resolve().parent / "golden" / "fdb"


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def build_v1_run(root: Path) -> Path:
    """A v1.0 run folder from the golden pause-handling, smooth turn-taking and interruption cases."""
    for key, asr in _golden("pause_handling_mixed")["input"]["samples_output_json"].items():
        _write(root / "synthetic_pause_handling" / key / "output.json", asr)
        _write(root / "synthetic_pause_handling" / key / "pause.json", [{"text": "[PAUSE]", "timestamp": [1.0, 2.0]}])
    for key, sample in _golden("smooth_turn_taking_mixed")["input"]["samples"].items():
        _write(root / "candor_turn_taking" / key / "output.json", sample["output_json"])
        _write(root / "candor_turn_taking" / key / "turn_taking.json", sample["turn_taking_json"])
    for key, sample in _golden("user_interruption_mixed")["input"]["samples"].items():
        _write(root / "synthetic_user_interruption" / key / "output.json", sample["output_json"])
        _write(root / "synthetic_user_interruption" / key / "interrupt.json", sample["interrupt_json"])
    return root


def _task(result, name):
    return next(t for t in result.tasks if t.name == name)


def test_v1_tasks_match_the_reference_outputs(tmp_path):
    result = evaluate_full_duplex_bench_run(build_v1_run(tmp_path / "run"))
    assert [t.kind for t in result.tasks] == ["pause_handling", "smooth_turn_taking", "user_interruption"]

    pause = _task(result, "synthetic_pause_handling")
    expected = _golden("pause_handling_mixed")["output"]
    assert pause.summary["tor"] == pytest.approx(expected["average_take_turn"])  # 0.4
    assert {k: s["tor"] for k, s in pause.samples.items()} == {k: int(v["TOR"]) for k, v in expected["per_sample"].items()}

    smooth = _task(result, "candor_turn_taking")
    expected = _golden("smooth_turn_taking_mixed")["output"]
    assert smooth.summary["tor"] == pytest.approx(expected["average_take_turn"])
    assert smooth.summary["latency_s"] == pytest.approx(expected["average_latency"])
    for key, row in expected["per_sample"].items():
        assert smooth.samples[key]["tor"] == row["TOR"]
        if row["latency"] is None:
            assert smooth.samples[key]["latency_s"] is None
        else:
            assert smooth.samples[key]["latency_s"] == pytest.approx(row["latency"])

    interruption = _task(result, "synthetic_user_interruption")
    expected = _golden("user_interruption_mixed")["output"]
    assert interruption.summary["tor"] == pytest.approx(expected["average_take_turn"])
    assert interruption.summary["latency_s"] == pytest.approx(expected["average_latency"])
    # no rating.json files: the judge rating is not invented
    assert math.isnan(interruption.summary["rating"]) and any("rating" in n for n in interruption.notes)


def test_v1_hand_computed(tmp_path):
    """Smooth turn-taking by hand: (5.4-5.0)=0.4, (2.6-3.0)<0 -> 0, (2.1-2.0)=0.1; mean 0.5/3."""
    result = evaluate_full_duplex_bench_run(build_v1_run(tmp_path / "run"))
    smooth = _task(result, "candor_turn_taking")
    assert smooth.summary["tor"] == 3 / 4
    assert smooth.summary["latency_s"] == pytest.approx((0.4 + 0.0 + 0.1) / 3)
    assert smooth.samples["1"]["turn_end_s"] == 5.0 and smooth.samples["1"]["first_word_start_s"] == 5.4
    # user interruption: a 6.3-6.0 = 0.3 s, b 3.8-4.0 = -0.2 s counted as 0, c does not take the turn
    interruption = _task(result, "synthetic_user_interruption")
    assert interruption.summary["latency_s"] == pytest.approx((0.3 + 0.0) / 2)
    assert interruption.samples["b"]["latency_s"] == pytest.approx(-0.2)


def test_rating_files_are_averaged_over_samples_that_took_the_turn(tmp_path):
    run = build_v1_run(tmp_path / "run")
    task = run / "synthetic_user_interruption"
    _write(task / "a" / "rating.json", {"analysis": "ok", "rating": 5})
    _write(task / "b" / "rating.json", {"analysis": "ok", "rating": 2})
    _write(task / "c" / "rating.json", {"analysis": "not a turn", "rating": 0})  # TOR 0: not rated
    result = evaluate_full_duplex_bench_run(task)
    assert result.tasks[0].summary["rating"] == pytest.approx(3.5)
    assert result.tasks[0].summary["n_rated"] == 2


def test_no_take_over_gives_no_latency_and_says_why(tmp_path):
    for key, sample in _golden("smooth_turn_taking_no_take_turn")["input"]["samples"].items():
        _write(tmp_path / "candor_turn_taking" / key / "output.json", sample["output_json"])
        _write(tmp_path / "candor_turn_taking" / key / "turn_taking.json", sample["turn_taking_json"])
    task = evaluate_full_duplex_bench_run(tmp_path).tasks[0]
    assert task.summary["tor"] == 0.0 and math.isnan(task.summary["latency_s"])
    assert any("no sample took the turn" in n for n in task.notes)


def test_json_validates_against_the_schema_and_the_schema_can_fail(tmp_path):
    data = json.loads(evaluate_full_duplex_bench_run(build_v1_run(tmp_path / "run")).to_json())
    schema = full_duplex_bench_schema()
    jsonschema.validate(data, schema)
    broken = json.loads(json.dumps(data))
    broken["tasks"][0]["samples"]["1"]["tor"] = 2
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    del broken["tasks"][0]["summary"]["tor"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_cli_writes_json_and_markdown(tmp_path, capsys):
    run = build_v1_run(tmp_path / "run")
    out = tmp_path / "out"
    assert cli.main(["full-duplex-bench", str(run), "--out", str(out), "--model-name", "ToyModel", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "## Full-Duplex-Bench v1.0" in printed and "| ToyModel |" in printed
    assert "Pause Handling (synthetic_pause_handling) TOR ↓" in printed
    data = json.loads((out / "fdb.json").read_text())
    assert data["model_name"] == "ToyModel"
    assert (out / "fdb.md").read_text().startswith("# Full-Duplex-Bench: ToyModel")
    # the paper row holds the figures: pause TOR 0.400, smooth TOR 0.750
    row = next(line for line in printed.splitlines() if line.startswith("| ToyModel |"))
    assert "0.400" in row and "0.750" in row


def test_missing_words_say_what_to_do(tmp_path, capsys):
    run = build_v1_run(tmp_path / "run")
    (run / "candor_turn_taking" / "2" / "output.json").unlink()
    (run / "candor_turn_taking" / "2" / "output.wav").write_bytes(b"")
    with pytest.raises(BenchmarkLayoutError, match=r"output.json .* missing in 1 of 4 .*asr.py.*--skip-missing"):
        evaluate_full_duplex_bench_run(run)
    assert cli.main(["full-duplex-bench", str(run), "--quiet"]) == 1
    assert "get_transcript/asr.py" in capsys.readouterr().err
    # --skip-missing scores the rest and lists the gap
    result = evaluate_full_duplex_bench_run(run, skip_missing=True)
    smooth = _task(result, "candor_turn_taking")
    assert smooth.n_samples == 3 and smooth.skipped == [{"sample": "2", "reason": "missing output.json"}]


def test_missing_metadata_names_the_file(tmp_path):
    run = build_v1_run(tmp_path / "run")
    (run / "synthetic_user_interruption" / "b" / "interrupt.json").unlink()
    with pytest.raises(BenchmarkLayoutError, match=r"interrupt.json is missing in 1 of 3 \(e.g. b; that folder holds: output.json\)"):
        evaluate_full_duplex_bench_run(run / "synthetic_user_interruption", task="user_interruption")


def test_not_a_run_folder(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hello")
    with pytest.raises(BenchmarkLayoutError, match=r"no Full-Duplex-Bench sample folders found.*Found: notes/"):
        find_full_duplex_bench_tasks(tmp_path)
    assert cli.main(["fdb", str(tmp_path / "absent")]) == 1  # the earlier name, an alias that says the new one
    err = capsys.readouterr().err
    assert "no such folder" in err and "turneval fdb is now called turneval full-duplex-bench" in err


def test_unknown_task_folder_asks_for_task(tmp_path):
    _write(tmp_path / "mystery" / "1" / "output.json", {"text": "", "chunks": []})
    with pytest.raises(BenchmarkLayoutError, match="cannot tell which Full-Duplex-Bench task.*--task"):
        find_full_duplex_bench_tasks(tmp_path)
    assert find_full_duplex_bench_tasks(tmp_path, task="pause_handling")[0].kind == "pause_handling"


def test_tasks_found_two_levels_down(tmp_path):
    build_v1_run(tmp_path / "run" / "v1.0")
    tasks = find_full_duplex_bench_tasks(tmp_path / "run")
    assert sorted(t.name for t in tasks) == ["candor_turn_taking", "synthetic_pause_handling", "synthetic_user_interruption"]
    assert [s.sample_id for s in next(t for t in tasks if t.name == "synthetic_pause_handling").samples] == ["1", "2", "3", "4", "5"]


def test_malformed_asr_json_names_the_file(tmp_path):
    _write(tmp_path / "candor_pause_handling" / "1" / "output.json", {"text": "x", "chunks": [{"text": "x"}]})
    with pytest.raises(Exception, match=r"candor_pause_handling/1/output.json: chunks\[0\] needs 'timestamp'"):
        evaluate_full_duplex_bench_run(tmp_path)


REPO = Path(__file__).resolve().parents[1]


def test_docs_worked_example_is_what_the_command_prints(capsys):
    assert cli.main(["full-duplex-bench", str(REPO / "tests" / "data" / "fdb_run"), "--model-name", "Toy", "--quiet"]) == 0
    printed = capsys.readouterr().out
    docs = (REPO / "docs" / "full_duplex_bench.md").read_text()
    row = next(line for line in printed.splitlines() if line.startswith("| Toy |"))
    cells = row.strip("| ").split(" | ")
    # the word-only figures are exact; the backchannel columns (Silero VAD) are checked below
    assert [cells[1], *cells[5:]] == ["0.400", "0.750", "0.167", "0.667", "3.500", "0.150"]
    assert row in docs
    for line in ("| 2 | 1 | -0.400 | 3 | 2.600 | 3.000 |", "| 3 | 0 | n/a | 1 | 4.500 | 4.000 |"):
        assert line in printed and line in docs


def test_real_speech_backchannel_and_v15_by_silero(tmp_path):
    """The committed eSpeak samples, through Silero VAD: figures near the synthesizer's word times."""
    result = evaluate_full_duplex_bench_run(REPO / "tests" / "data" / "fdb_run")
    backchannel = next(t for t in result.tasks if t.kind == "backchannel")
    (predictions,) = [s["backchannel_predictions"] for s in backchannel.samples.values()]
    # "yeah" 1.6-1.96 s and "okay sure" 4.6-5.32 s (output.json, the synthesizer's word times)
    assert len(predictions) == 2
    assert predictions[0] == pytest.approx([1.6, 2.0], abs=0.15) and predictions[1] == pytest.approx([4.6, 5.4], abs=0.15)
    assert backchannel.summary["tor"] == 0 and backchannel.summary["freq_per_s"] == pytest.approx(2 / 8)
    assert 0 < backchannel.summary["jsd"] < 0.6
    overlap = next(t for t in result.tasks if t.kind == "overlap")
    (sample,) = overlap.samples.values()
    assert sample["overlap"] == 1 and sample["behaviour"] == ["C_RESPOND"]
    # the user's interruption (3.6-4.85 s) lies inside the system's answer (2.4-4.87 s)
    (stop,) = sample["latency_stop_list"]
    assert stop == pytest.approx([3.6, 4.87], abs=0.1)
    assert len(sample["latency_resp_list"]) == 2 and sample["latency_resp_list"][1][1] == pytest.approx(6.2, abs=0.1)


# --------------------------------------------------------------------------- backchannel and v1.5


def _silent_wav(path: Path, seconds: float, sr: int = 8000) -> None:
    import numpy as np
    import soundfile as sf

    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.zeros(int(seconds * sr), dtype=np.float32), sr)


def _fixed_vad(segments_by_file: dict[str, list]):
    """A VAD stand-in: the segments the golden case gives per audio file."""
    def vad(path: Path):
        return [tuple(s) for s in segments_by_file[str(path)]]
    return vad


def build_backchannel_run(root: Path, case: str) -> tuple[Path, dict]:
    samples = _golden(case)["input"]["samples"]
    task = root / "icc_backchannel"
    segments, distributions = {}, {}
    for key, sample in samples.items():
        _write(task / key / "output.json", sample["output_json"])
        _silent_wav(task / key / "output.wav", sample["output_wav_duration_s"])
        segments[str(task / key / "output.wav")] = sample["silero_segments_seconds"]
        distributions[key] = sample["gt_distribution"]
    _write(root / "icc_gt_distribution.json", distributions)
    return task, segments


@pytest.mark.parametrize("case", ["backchannel_wordy_short_segment", "backchannel_null_timestamps"])
def test_backchannel_matches_the_reference_outputs(tmp_path, case):
    task, segments = build_backchannel_run(tmp_path, case)
    result = evaluate_full_duplex_bench_run(task, vad=_fixed_vad(segments)).tasks[0]
    expected = _golden(case)["output"]
    assert result.kind == "backchannel"
    assert result.summary["tor"] == pytest.approx(expected["TOR_mean"])
    assert result.summary["freq_per_s"] == pytest.approx(expected["freq_mean"])
    assert result.summary["jsd"] == pytest.approx(expected["JSD_mean"], rel=1e-9)
    assert result.summary["jsd_std"] == pytest.approx(expected["JSD_std"], abs=1e-12)
    assert result.summary["gt_distribution_file"] == str(tmp_path / "icc_gt_distribution.json")
    for key, row in expected["per_sample"].items():
        assert result.samples[key]["tor"] == row["TOR"]
        assert result.samples[key]["jsd"] == pytest.approx(row["JSD"], rel=1e-9)
        assert result.samples[key]["backchannel_predictions"] == row["backchannel_prediction"]


def test_backchannel_without_distribution_has_no_jsd_and_says_where_to_get_it(tmp_path):
    task, segments = build_backchannel_run(tmp_path, "backchannel_wordy_short_segment")
    (tmp_path / "icc_gt_distribution.json").unlink()
    result = evaluate_full_duplex_bench_run(task, vad=_fixed_vad(segments)).tasks[0]
    assert math.isnan(result.summary["jsd"]) and result.summary["tor"] == 1.0
    assert any("icc_gt_distribution.json" in n and "--gt-distribution" in n for n in result.notes)


def test_backchannel_segments_are_rounded_like_silero_seconds(tmp_path):
    """The reference asks Silero for seconds (rounded to 0.1 s): 1.04-1.86 s is 1.0-1.9 s."""
    task = tmp_path / "icc_backchannel"
    _write(task / "1" / "output.json", {"text": "mm", "chunks": [{"text": "mm", "timestamp": [1.1, 1.3]}]})
    _silent_wav(task / "1" / "output.wav", 4.0)
    result = evaluate_full_duplex_bench_run(task, vad=_fixed_vad({str(task / "1" / "output.wav"): [(1.04, 1.86)]})).tasks[0]
    assert result.samples["1"]["backchannel_predictions"] == [[1.0, 1.9]]
    assert result.samples["1"]["tor"] == 0 and result.summary["freq_per_s"] == pytest.approx(0.25)
    assert result.samples["1"]["duration_s"] == pytest.approx(4.0)


def build_v15_run(root: Path) -> tuple[Path, dict]:
    """A v1.5 scenario: sample 1 from the golden timing case with words and tags; sample 2 with
    the benchmark's latency_intervals.json; sample 3 with audio only."""
    timing = _golden("timing_duplicates_and_nesting")["input"]
    task = root / "v1.5" / "user_interruption"
    vad = {}
    s1 = task / "1"
    _write(s1 / "metadata.json", {"context_text": "tell me about Y", "timestamps": [1.8, 2.5]})
    _silent_wav(s1 / "input.wav", 9.0)
    _silent_wav(s1 / "output.wav", 9.0)
    vad[str(s1 / "input.wav")] = timing["user_segments_s"]
    vad[str(s1 / "output.wav")] = timing["model_segments_s"]
    _write(s1 / "input.json", {"text": "wait what", "chunks": [{"text": "wait", "timestamp": [1.8, 2.1]},
                                                               {"text": "what", "timestamp": [2.1, 2.5]}]})
    _write(s1 / "output.json", {"text": "so anyway", "chunks": [{"text": "so", "timestamp": [2.4, 2.6]},
                                                                {"text": "anyway", "timestamp": [2.6, 3.0]}]})
    _write(s1 / "content_tag.json", {"behaviour": ["C_RESPOND"]})
    s2 = task / "2"
    _write(s2 / "metadata.json", {"timestamps": [1.0, 2.0]})
    _write(s2 / "latency_intervals.json", {"latency_stop_list": [[1.0, 1.5]], "latency_resp_list": [[2.0, 2.8]]})
    _write(s2 / "input.json", {"text": "hey", "chunks": [{"text": "hey", "timestamp": [1.0, 2.0]}]})
    _write(s2 / "output.json", {"text": "yes", "chunks": [{"text": "yes", "timestamp": [2.8, 3.2]}]})  # after: no overlap
    _write(s2 / "content_tag.json", {"behaviour": ["C_RESUME"]})
    s3 = task / "3"
    _write(s3 / "metadata.json", {"timestamps": [1.0, 2.0]})
    _silent_wav(s3 / "input.wav", 5.0)
    _silent_wav(s3 / "output.wav", 5.0)
    vad[str(s3 / "input.wav")] = [(0.0, 1.0)]
    vad[str(s3 / "output.wav")] = []
    return task, vad


def test_v15_overlap_behaviour_and_timing(tmp_path):
    task, vad = build_v15_run(tmp_path / "run")
    result = evaluate_full_duplex_bench_run(tmp_path / "run", vad=_fixed_vad(vad))
    (scenario,) = result.tasks
    assert (scenario.kind, scenario.version, scenario.name) == ("overlap", "v1.5", "user_interruption")
    timing = _golden("timing_duplicates_and_nesting")["output"]
    one = scenario.samples["1"]
    assert one["latency_stop_list"] == timing["latency_stop_list"] and one["latency_resp_list"] == timing["latency_resp_list"]
    assert one["timing_source"] == "vad" and scenario.samples["2"]["timing_source"] == "latency_intervals.json"
    # overlap check: sample 1 words overlap (2.4-2.5), sample 2 do not, sample 3 has no words
    assert [scenario.samples[k]["overlap"] for k in "123"] == [1, 0, None]
    summary = scenario.summary
    assert summary["overlap_rate"] == 0.5 and summary["n_overlap_checked"] == 2
    assert summary["behaviour_counts"] == {"C": {"C_RESPOND": 1, "C_RESUME": 1}}
    assert summary["behaviour_ratios_rounded"] == {"C": {"C_RESPOND": 0.5, "C_RESUME": 0.5}}
    # stop intervals 0.5, 0.7, 0.1 (sample 1) and 0.5 (sample 2); response 1.0 (1) and 0.8 (2)
    assert summary["stop_latency_s"] == pytest.approx((0.5 + 0.7 + 0.1 + 0.5) / 4)
    assert summary["response_latency_s"] == pytest.approx((1.0 + 0.8) / 2)
    assert summary["timing_source"] == "latency_intervals.json+vad"
    assert any("sample(s) have no content_tag.json" in n for n in scenario.notes)
    assert any("without input.json and output.json" in n for n in scenario.notes)
    jsonschema.validate(json.loads(result.to_json()), full_duplex_bench_schema())
    markdown = result.to_markdown()
    assert "## Full-Duplex-Bench v1.5" in markdown
    assert "| user_interruption | 3 | 0.500 | 0.50 | 0.50 | 0.450 | 0.900 |" in markdown


def test_v15_without_audio_or_intervals_is_an_error(tmp_path):
    task, vad = build_v15_run(tmp_path / "run")
    (task / "3" / "output.wav").unlink()
    with pytest.raises(BenchmarkLayoutError, match=r"v1.5 timing needs input.wav and the system's output.wav .* 1 of 3"):
        evaluate_full_duplex_bench_run(task, vad=_fixed_vad(vad))
    assert evaluate_full_duplex_bench_run(task, vad=_fixed_vad(vad), skip_missing=True).tasks[0].n_samples == 2


def test_cli_gt_distribution_option_and_json_file(tmp_path, capsys):
    task, segments = build_backchannel_run(tmp_path / "run", "backchannel_wordy_short_segment")
    moved = tmp_path / "elsewhere.json"
    (tmp_path / "run" / "icc_gt_distribution.json").rename(moved)
    # the CLI runs Silero on the (silent) wavs: no speech, no prediction, JSD 1 (the reference's value)
    out = tmp_path / "x.json"
    assert cli.main(["full-duplex-bench", str(task), "--gt-distribution", str(moved), "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    (result,) = data["tasks"]
    assert result["summary"]["gt_distribution_file"] == str(moved)
    assert result["summary"]["jsd"] == 1.0 and result["summary"]["freq_per_s"] == 0.0 and result["summary"]["tor"] == 0.0
    assert "wrote " + str(out) in capsys.readouterr().out


def test_backchannel_scores_only_numeric_sample_folders(tmp_path):
    task, segments = build_backchannel_run(tmp_path, "backchannel_wordy_short_segment")
    _write(task / "notes" / "output.json", {"text": "", "chunks": []})  # not a benchmark sample
    result = evaluate_full_duplex_bench_run(task, vad=_fixed_vad(segments)).tasks[0]
    assert sorted(result.samples) == ["4", "5"]
    assert result.skipped == [{"sample": "notes", "reason": "not a numeric sample folder (the benchmark scores only those)"}]


# --------------------------------------------------------------------------- --transcribe


class _FakeASR:
    """A transcriber stand-in: fixed words per audio file, records the start time it was asked for."""

    def __init__(self, words_by_folder: dict[str, list[tuple[str, float, float]]]):
        self.words_by_folder, self.calls = words_by_folder, []

    def __call__(self, path: Path, start_s: float):
        from turneval.metrics.full_duplex_bench_tasks import WordChunk

        self.calls.append((path.parent.name, path.name, start_s))
        return [WordChunk(t, s, e) for t, s, e in self.words_by_folder[f"{path.parent.name}/{path.name}"] if s >= start_s]


def test_transcribe_fills_missing_word_files_only(tmp_path):
    run = build_v1_run(tmp_path / "run")
    pause = run / "synthetic_pause_handling"
    (pause / "3" / "output.json").unlink()
    _silent_wav(pause / "3" / "output.wav", 3.0)
    interruption = run / "synthetic_user_interruption"
    (interruption / "a" / "output.json").unlink()
    _silent_wav(interruption / "a" / "output.wav", 9.0)
    asr = _FakeASR({
        "3/output.wav": [("a", 1.0, 1.1), ("b", 1.1, 1.3), ("c", 1.3, 1.5), ("d", 1.5, 1.8)],
        # speech before the interruption end (6.0 s) is not transcribed, as the benchmark crops it
        "a/output.wav": [("old", 5.0, 5.5), ("oh", 6.3, 6.5), ("okay", 6.5, 6.9), ("so", 6.9, 7.1), ("then", 7.1, 7.6)],
    })
    with pytest.raises(BenchmarkLayoutError, match="--transcribe"):
        evaluate_full_duplex_bench_run(run)
    result = evaluate_full_duplex_bench_run(run, transcribe=asr)
    # the same figures as from the golden ASR files
    assert _task(result, "synthetic_pause_handling").summary["tor"] == pytest.approx(0.4)
    assert _task(result, "synthetic_user_interruption").summary["latency_s"] == pytest.approx(0.15)
    assert sorted(asr.calls) == [("3", "output.wav", 0.0), ("a", "output.wav", 6.0)]
    assert _task(result, "synthetic_pause_handling").samples["3"]["words_source"] == "transcribed"
    assert _task(result, "synthetic_pause_handling").samples["2"]["words_source"] == "output.json"
    jsonschema.validate(json.loads(result.to_json()), full_duplex_bench_schema())


def test_transcribe_gives_v15_words_for_the_overlap_check(tmp_path):
    task, vad = build_v15_run(tmp_path / "run")
    asr = _FakeASR({"3/input.wav": [("hello", 0.2, 0.8)], "3/output.wav": []})
    scenario = evaluate_full_duplex_bench_run(task, vad=_fixed_vad(vad), transcribe=asr).tasks[0]
    assert scenario.samples["3"]["overlap"] == 0 and scenario.samples["3"]["words_source"] == "transcribed"
    assert scenario.samples["1"]["words_source"] == "input.json+output.json"
    assert scenario.summary["n_overlap_checked"] == 3


def test_transcribe_without_the_recogniser_says_so(monkeypatch):
    import sys

    from turneval.benchmark_runs.full_duplex_bench import whisper_words

    monkeypatch.setitem(sys.modules, "turneval.transcribe", None)
    with pytest.raises(BenchmarkLayoutError, match="--transcribe needs turneval's offline Whisper .*asr.py"):
        whisper_words()


def test_cli_asr_model_needs_transcribe(tmp_path, capsys):
    assert cli.main(["full-duplex-bench", str(build_v1_run(tmp_path / "run")), "--asr-model", "x", "--quiet"]) == 1
    assert "--asr-model goes with --transcribe" in capsys.readouterr().err


def test_task_folders_at_different_depths_are_all_found(tmp_path):
    build_v1_run(tmp_path / "run")  # v1.0 task folders directly in the run folder
    build_v15_run(tmp_path / "run")  # and v1.5/user_interruption one level further down
    tasks = find_full_duplex_bench_tasks(tmp_path / "run")
    assert sorted((t.name, t.kind) for t in tasks) == [
        ("candor_turn_taking", "smooth_turn_taking"),
        ("synthetic_pause_handling", "pause_handling"),
        ("synthetic_user_interruption", "user_interruption"),
        ("user_interruption", "overlap"),
    ]
