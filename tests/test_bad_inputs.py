"""Bad and unusual inputs (issue 12 items 3-7): each answered with an exit code, a message that
names the file and the problem, no traceback and nothing half-written; docs/inputs.md is the
table of these answers (tests/bad_inputs.py renders it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.bad_inputs import CASES, render_table, run_all


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    return run_all(tmp_path_factory.mktemp("bad_inputs"))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.input for c in CASES])
def test_case_is_answered_cleanly(outcomes, index):
    case, outcome = outcomes[index]
    assert outcome.traceback is None, f"{case.input}: traceback\n{outcome.traceback}"
    answer = outcome.answer(case)
    assert outcome.code == case.code, f"{case.input}: exit {outcome.code}, expected {case.code}: {answer}"
    for part in case.expect:
        assert part in answer, f"{case.input}: {part!r} not in the answer {answer!r}"
    assert "Traceback" not in outcome.stderr
    assert not outcome.leftovers, f"{case.input}: left {outcome.leftovers} behind after failing"


def test_docs_table_matches_the_answers(outcomes, repo_root: Path):
    page = repo_root / "docs" / "inputs.md"
    expected = render_table(outcomes)
    assert page.read_text(encoding="utf-8") == expected, (
        "docs/inputs.md is out of date; regenerate it: HF_HUB_OFFLINE=1 python tests/bad_inputs.py docs/inputs.md"
    )


def test_quiet_silences_warnings_and_loading_bars(tmp_path, capsys, monkeypatch):
    """--quiet prints errors only: no "Loading weights" bars, no NaturalnessUndefinedWarning, no summary."""
    from tests.bad_inputs import make_inputs
    from turneval.cli import main

    make_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["report", "short.wav", "--annotations", "short.json", "--out", "out"]
    assert main(args + ["--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # --quiet prints errors only
    assert "Naturalness undefined" in (tmp_path / "out" / "report.json").read_text()  # the report's note stays
    # (the provenance WARNING lines of a model trained on synthetic sound are kept on purpose)
    assert "turneval report: warning" not in captured.err and "undefined" not in captured.err, captured.err
    assert "Loading weights" not in captured.err, captured.err
