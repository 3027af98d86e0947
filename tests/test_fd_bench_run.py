"""`turneval fd-bench`: FD-Bench run logs in the benchmark's layout, built from the golden cases.

Each golden fdbench case holds the conversations FD-Bench's benchmarking.py was fed (scripted
user rounds, system segments, ground-truth rounds) and its outputs; the tests write them as a
run log and an output_all.jsonl the way FD-Bench does and compare.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from turneval import cli
from turneval.benchmark_runs.fd_bench import evaluate_fd_bench_run, fd_bench_schema
from turneval.dataset_scripts.dialogue import DialogueError
from turneval.dataset_scripts.readers.fd_bench_logs import BenchmarkLayoutError, read_fd_bench_log


GOLDEN = Path(__file__).resolve().parent / "golden" / "fdbench"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _literal(segments: list[dict]) -> str:
    """Python literal syntax, as FD-Bench writes the timestamps."""
    return repr([{"start": s["start"], "end": s["end"]} for s in segments])


def build_run(root: Path, case: str, model: str = "Freeze-omni", dataset: str = "cosyvoice2-easy") -> Path:
    """data/<MODEL>-output/<dataset>.txt and openai/data_gen/output_all.jsonl from a golden case."""
    conversations = _golden(case)["input"]["conversations"]
    out = root / "data" / f"{model}-output"
    out.mkdir(parents=True)
    lines, truth = [], []
    for conv in conversations:
        tokens, text = "[3, 3, 3]", repr([" Hello", "."])
        lines.append(" || ".join([conv["conversation_id"], tokens, text, _literal(conv["user_timestamps"]), _literal(conv["ai_timestamps"])]))
        truth.append(repr(conv["ground_truth_rounds"]))
    (out / f"{dataset}.txt").write_text("\n".join(lines) + "\n")
    (root / "openai" / "data_gen").mkdir(parents=True)
    (root / "openai" / "data_gen" / "output_all.jsonl").write_text("\n".join(truth) + "\n")
    return out


@pytest.mark.parametrize("case", CASES)
def test_scores_match_the_reference_outputs(tmp_path, case):
    out = build_run(tmp_path, case)
    result = evaluate_fd_bench_run(out)
    expected = _golden(case)["output"]
    (log,) = result.logs
    assert log.scores == expected["metrics_scores"]
    for conv_id, marks in expected["VAD_marks"].items():
        assert log.conversations[conv_id]["marks"] == marks
    assert log.metrics["srr"] == pytest.approx(expected["metrics_raw"]["Success Respond Rate"])
    assert log.metrics["ird_ms"] == pytest.approx(expected["metrics_raw"]["Interruption Delays"])
    inconsistent = [c for c, row in log.conversations.items() if not row["consistent"]]
    assert inconsistent == expected["strict_assertion_failures_printed_for"]
    assert result.model_name == "Freeze-omni" and not result.settings["drop_first_system_segment"]
    jsonschema.validate(json.loads(result.to_json()), fd_bench_schema())


def test_hand_computed_clean_interrupt_and_reply(tmp_path):
    """clean_interrupt_and_reply by hand (16 kHz samples; ms = int(samples / 16)).

    Round 1: user 0-32000, system starts 40000: a reply after 8000 samples = 500 ms (FSED).
    Round 2: the user starts 80000 while the system talks (40000-96000): an interruption; the
    system stops at 96000, 16000 samples (1000 ms) into the user's round: yielded. It replies
    at 121600, 9600 samples (600 ms) after the user's end 112000. Round 3 likewise: interrupted
    at 184000, yields at 192000 (8000 = 500 ms), replies at 214400 (6400 = 400 ms).
    SRR 1/3, SIR 2/2, SRIR 2/2; FSED = median(500, 600, 400) = 500; IRD = median(1000, 500) = 750.
    """
    result = evaluate_fd_bench_run(build_run(tmp_path, "clean_interrupt_and_reply"))
    scores = result.logs[0].scores
    assert (scores["SRR(%)"], scores["SIR(%)"], scores["SRIR(%)"]) == ("33.33", "100.00", "100.00")
    assert (scores["FSED(ms)"], scores["IRD(ms)"]) == ("500.00", "750.00")
    conv = result.logs[0].conversations["conversation_1.wav"]
    assert conv["round_types"] == ["First Inquiry", "Further Inquiry", "Topic Shift"]


def test_moshi_preamble_is_dropped_by_default_for_moshi(tmp_path):
    # the same conversation with a greeting segment in front: dropped for Moshi, as main_moshi does
    out = build_run(tmp_path, "clean_interrupt_and_reply", model="Moshi")
    log_file = next(out.glob("*.txt"))
    name, tokens, text, user, ai = log_file.read_text().strip().split(" || ")
    log_file.write_text(" || ".join([name, tokens, text, user, "[{'start': 1000, 'end': 20000}, " + ai[1:]]) + "\n")
    result = evaluate_fd_bench_run(out)
    assert result.model_name == "Moshi" and result.settings["drop_first_system_segment"]
    assert result.logs[0].scores == _golden("clean_interrupt_and_reply")["output"]["metrics_scores"]
    kept = evaluate_fd_bench_run(out, preamble="keep")
    assert kept.logs[0].scores["SRR(%)"] != result.logs[0].scores["SRR(%)"]


def test_cli_tables_and_files(tmp_path, capsys):
    out = build_run(tmp_path, "multi_conversation")
    dest = tmp_path / "results"
    assert cli.main(["fd-bench", str(out), "--out", str(dest), "--quiet"]) == 0
    printed = capsys.readouterr().out
    row = "| Freeze-omni | cosyvoice2-easy | 3 | 42.86 | 100.00 | 100.00 | 0.00 | 0.00 | 400.00 | 0.00 | 0.00 | 550.00 |"
    assert row in printed
    assert "| Denial and Discontent | 1 | 1 | 1 |" in printed
    data = json.loads((dest / "fdbench.json").read_text())
    assert data["logs"][0]["scores"]["SRR(%)"] == "42.86"
    assert (dest / "fdbench.md").read_text().startswith("# FD-Bench: Freeze-omni")


def test_ground_truth_option_and_single_log_file(tmp_path):
    out = build_run(tmp_path, "third_party_noise")
    moved = tmp_path / "gt.jsonl"
    (tmp_path / "openai" / "data_gen" / "output_all.jsonl").rename(moved)
    with pytest.raises(BenchmarkLayoutError, match=r"scripted rounds were not found.*--ground-truth"):
        evaluate_fd_bench_run(out)
    result = evaluate_fd_bench_run(next(out.glob("*.txt")), ground_truth=moved)
    assert result.logs[0].scores["NIR(%)"] == "50.00"


def test_round_count_mismatch_is_named_and_can_be_skipped(tmp_path):
    out = build_run(tmp_path, "multi_conversation")
    truth = tmp_path / "openai" / "data_gen" / "output_all.jsonl"
    lines = truth.read_text().splitlines()
    lines[1] = repr({"round-1": {"user": "only one round", "interruption": None}})
    truth.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkLayoutError, match=r"conversation_2.wav has 2 user rounds logged but 1 scripted in .*output_all.jsonl:2"):
        evaluate_fd_bench_run(out)
    result = evaluate_fd_bench_run(out, skip_missing=True)
    assert result.logs[0].n_conversations == 2
    assert [s["conversation"] for s in result.logs[0].skipped] == ["conversation_2.wav"]


def test_not_a_log_folder(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("just some notes\n")
    with pytest.raises(BenchmarkLayoutError, match=r"no FD-Bench run log found\. Expected .*Found: notes.txt"):
        evaluate_fd_bench_run(tmp_path)
    assert cli.main(["fdbench", str(tmp_path)]) == 1  # the earlier name, an alias that says the new one
    err = capsys.readouterr().err
    assert "no FD-Bench run log found" in err and "turneval fdbench is now called turneval fd-bench" in err


def test_malformed_log_line_names_file_and_line(tmp_path):
    log = tmp_path / "run.txt"
    log.write_text("conversation_1.wav || [] || [] || [{'start': 0, 'end': 32000}] || [{'start': 0}]\n")
    with pytest.raises(DialogueError, match=r"run.txt:1: AI timestamps \(field 5\)\[0\] must be \{'start'"):
        read_fd_bench_log(log)
    log.write_text("conversation_1.wav || [] || [] || [{'start': 0.5, 'end': 3.2}] || []\n")
    with pytest.raises(DialogueError, match=r"integer 16 kHz sample indices"):
        read_fd_bench_log(log)


REPO = Path(__file__).resolve().parents[1]


def test_docs_worked_example_is_what_the_command_prints(capsys):
    assert cli.main(["fd-bench", str(REPO / "tests" / "data" / "fdbench_run" / "data" / "Toy-output"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    docs = (REPO / "docs" / "fd_bench.md").read_text()
    for line in (
        "| Toy | easy | 3 | 50.00 | 75.00 | 100.00 | 0.00 | 20.00 | 500.00 | 250.00 | 0.00 | 500.00 |",
        "| Third-Party Noise | 1 | 0 | 0 |",
        "| conversation_2.wav | 3 | 2 | 0 | 1 | 0 | 0 | 1 | True |",
    ):
        assert line in printed and line in docs
