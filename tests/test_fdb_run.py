"""`turneval fdb`: Full-Duplex-Bench run folders in the benchmark's layout, built from code.

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
from turneval.benchmark_runs.fdb import evaluate_fdb_run, fdb_schema
from turneval.dataset_scripts.readers.full_duplex_bench import BenchmarkLayoutError, find_fdb_tasks

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
    result = evaluate_fdb_run(build_v1_run(tmp_path / "run"))
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
    result = evaluate_fdb_run(build_v1_run(tmp_path / "run"))
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
    result = evaluate_fdb_run(task)
    assert result.tasks[0].summary["rating"] == pytest.approx(3.5)
    assert result.tasks[0].summary["n_rated"] == 2


def test_no_take_over_gives_no_latency_and_says_why(tmp_path):
    for key, sample in _golden("smooth_turn_taking_no_take_turn")["input"]["samples"].items():
        _write(tmp_path / "candor_turn_taking" / key / "output.json", sample["output_json"])
        _write(tmp_path / "candor_turn_taking" / key / "turn_taking.json", sample["turn_taking_json"])
    task = evaluate_fdb_run(tmp_path).tasks[0]
    assert task.summary["tor"] == 0.0 and math.isnan(task.summary["latency_s"])
    assert any("no sample took the turn" in n for n in task.notes)


def test_json_validates_against_the_schema_and_the_schema_can_fail(tmp_path):
    data = json.loads(evaluate_fdb_run(build_v1_run(tmp_path / "run")).to_json())
    schema = fdb_schema()
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
    assert cli.main(["fdb", str(run), "--out", str(out), "--model-name", "ToyModel", "--quiet"]) == 0
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
        evaluate_fdb_run(run)
    assert cli.main(["fdb", str(run), "--quiet"]) == 1
    assert "get_transcript/asr.py" in capsys.readouterr().err
    # --skip-missing scores the rest and lists the gap
    result = evaluate_fdb_run(run, skip_missing=True)
    smooth = _task(result, "candor_turn_taking")
    assert smooth.n_samples == 3 and smooth.skipped == [{"sample": "2", "reason": "missing output.json"}]


def test_missing_metadata_names_the_file(tmp_path):
    run = build_v1_run(tmp_path / "run")
    (run / "synthetic_user_interruption" / "b" / "interrupt.json").unlink()
    with pytest.raises(BenchmarkLayoutError, match=r"interrupt.json is missing in 1 of 3 \(e.g. b; that folder holds: output.json\)"):
        evaluate_fdb_run(run / "synthetic_user_interruption", task="user_interruption")


def test_not_a_run_folder(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hello")
    with pytest.raises(BenchmarkLayoutError, match=r"no Full-Duplex-Bench sample folders found.*Found: notes/"):
        find_fdb_tasks(tmp_path)
    assert cli.main(["fdb", str(tmp_path / "absent")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_unknown_task_folder_asks_for_task(tmp_path):
    _write(tmp_path / "mystery" / "1" / "output.json", {"text": "", "chunks": []})
    with pytest.raises(BenchmarkLayoutError, match="cannot tell which Full-Duplex-Bench task.*--task"):
        find_fdb_tasks(tmp_path)
    assert find_fdb_tasks(tmp_path, task="pause_handling")[0].kind == "pause_handling"


def test_tasks_found_two_levels_down(tmp_path):
    build_v1_run(tmp_path / "run" / "v1.0")
    tasks = find_fdb_tasks(tmp_path / "run")
    assert sorted(t.name for t in tasks) == ["candor_turn_taking", "synthetic_pause_handling", "synthetic_user_interruption"]
    assert [s.sample_id for s in next(t for t in tasks if t.name == "synthetic_pause_handling").samples] == ["1", "2", "3", "4", "5"]


def test_malformed_asr_json_names_the_file(tmp_path):
    _write(tmp_path / "candor_pause_handling" / "1" / "output.json", {"text": "x", "chunks": [{"text": "x"}]})
    with pytest.raises(Exception, match=r"candor_pause_handling/1/output.json: chunks\[0\] needs 'timestamp'"):
        evaluate_fdb_run(tmp_path)


REPO = Path(__file__).resolve().parents[1]


def test_docs_worked_example_is_what_the_command_prints(capsys):
    assert cli.main(["fdb", str(REPO / "tests" / "data" / "fdb_run"), "--model-name", "Toy", "--quiet"]) == 0
    printed = capsys.readouterr().out
    docs = (REPO / "docs" / "fdb.md").read_text()
    row = "| Toy | 0.400 | 0.750 | 0.167 | 0.667 | 3.500 | 0.150 |"
    assert row in printed and row in docs
    for line in ("| 2 | 1 | -0.400 | 3 | 2.600 | 3.000 |", "| 3 | 0 | n/a | 1 | 4.500 | 4.000 |"):
        assert line in printed and line in docs
