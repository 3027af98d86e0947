"""Golden conformance: every case under tests/golden/ (or TURNEVAL_GOLDEN_DIR) that a runner covers.

The repository keeps its own copy of the golden cases (tests/golden/, with their README), so a
fresh clone tests itself; TURNEVAL_GOLDEN_DIR points the suite at another copy (for example the
held-back cases). A case whose set has a runner must pass; it is never skipped. Cases listed in
tests/golden_deviations.json (reference bugs where turneval does the right thing instead)
are compared with the documented output there instead of the reference's.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import pkgutil
from pathlib import Path

import pytest

from tests import golden_runners


HERE = Path(__file__).resolve().parent
GOLDEN_DIR = Path(os.environ.get("TURNEVAL_GOLDEN_DIR", HERE / "golden"))
SHARED_GOLDEN_DIR = HERE.parent.parent / "shared" / "golden"
"""The project's shared copy beside the repository, when there is one (never required)."""
DEVIATIONS = json.loads((HERE / "golden_deviations.json").read_text())
PROSE_KEYS = frozenset({"note", "description", "frames_conversion", "sampled_note"})
"""Keys of golden outputs that hold the reference author's prose, not results: never compared."""


def _runners():
    for info in pkgutil.iter_modules(golden_runners.__path__):
        module = importlib.import_module(f"tests.golden_runners.{info.name}")
        yield module


def _cases():
    cases = []
    for runner in _runners():
        folder = GOLDEN_DIR / runner.SET
        prefixes = getattr(runner, "PREFIXES", ("",))
        for path in sorted(folder.glob("*.json")):
            if path.name.startswith(tuple(prefixes)):
                cases.append(pytest.param(runner, path, id=f"{runner.SET}/{path.stem}"))
    return cases


def decode_nonfinite(value):
    """JSON has no NaN: the golden files write "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if isinstance(value, list):
        return [decode_nonfinite(v) for v in value]
    if isinstance(value, dict):
        return {k: decode_nonfinite(v) for k, v in value.items()}
    return value


def assert_matches(actual, expected, path="output", rel=1e-9, abs_=1e-12):
    """Deep comparison; floats with tolerance, NaN equals NaN, ints/strings exact."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, got {type(actual).__name__}"
        for key, value in expected.items():
            if key in PROSE_KEYS and isinstance(value, str):
                continue
            assert key in actual, f"{path}: missing key {key!r}"
            assert_matches(actual[key], value, f"{path}.{key}", rel, abs_)
    elif isinstance(expected, (list, tuple)):
        actual = list(actual) if isinstance(actual, tuple) else actual
        assert isinstance(actual, list), f"{path}: expected a list, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_matches(a, e, f"{path}[{i}]", rel, abs_)
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
    elif isinstance(expected, float) or isinstance(actual, float):
        a, e = float(actual), float(expected)
        if math.isnan(e):
            assert math.isnan(a), f"{path}: {a!r} != NaN"
        else:
            assert a == pytest.approx(e, rel=rel, abs=abs_), f"{path}: {a!r} != {e!r}"
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


@pytest.mark.parametrize("runner, path", _cases())
def test_golden_case(runner, path: Path) -> None:
    case = decode_nonfinite(json.loads(path.read_text()))
    case_id = f"{runner.SET}/{path.stem}"
    expected = case["output"]
    if case_id in DEVIATIONS:
        expected = decode_nonfinite(DEVIATIONS[case_id]["expected_output"])
    actual = runner.run_case(case)
    tolerance = getattr(runner, "TOLERANCE", {})
    assert_matches(actual, expected, rel=tolerance.get("rel", 1e-9), abs_=tolerance.get("abs", 1e-12))


def test_golden_dir_has_cases() -> None:
    assert GOLDEN_DIR.is_dir(), f"golden directory {GOLDEN_DIR} not found (set TURNEVAL_GOLDEN_DIR)"
    assert any(GOLDEN_DIR.glob("*/*.json"))


def deviation_problems(deviations: dict) -> list[str]:
    """What is wrong with a deviations table: each entry needs a reason and the output we give."""
    problems = []
    for case_id, entry in deviations.items():
        if not isinstance(entry, dict):
            problems.append(f"deviation {case_id}: expected an object with reason and expected_output")
            continue
        if not str(entry.get("reason", "")).strip():
            problems.append(f"deviation {case_id} needs a reason")
        if "expected_output" not in entry:
            problems.append(f"deviation {case_id} needs expected_output")
    return problems


def test_every_deviation_names_a_reason() -> None:
    assert deviation_problems(DEVIATIONS) == []


def test_deviation_check_rejects_a_missing_reason() -> None:
    """The check above must be able to fail (the table is empty today)."""
    assert deviation_problems({"vap_events/x": {"expected_output": {}}}) == ["deviation vap_events/x needs a reason"]
    assert deviation_problems({"vap_events/x": {"reason": "  ", "expected_output": {}}})
    assert deviation_problems({"vap_events/x": {"reason": "float edge"}}) == [
        "deviation vap_events/x needs expected_output"
    ]
    assert deviation_problems({"vap_events/x": {"reason": "float edge", "expected_output": 1}}) == []


def test_every_deviation_names_a_known_case() -> None:
    known = {f"{runner.SET}/{path.stem}" for runner, path in (p.values for p in _cases())}
    assert set(DEVIATIONS) <= known, f"deviations for unknown cases: {sorted(set(DEVIATIONS) - known)}"


@pytest.mark.skipif(not SHARED_GOLDEN_DIR.is_dir(), reason="no shared/golden beside the repository")
def test_repository_copy_matches_shared_golden() -> None:
    """tests/golden/ is a copy of shared/golden/: a changed reference case must be copied again."""
    ours = {p.relative_to(HERE / "golden"): p for p in (HERE / "golden").rglob("*") if p.is_file()}
    theirs = {p.relative_to(SHARED_GOLDEN_DIR): p for p in SHARED_GOLDEN_DIR.rglob("*") if p.is_file()}
    assert sorted(theirs) == sorted(ours), "copy shared/golden into tests/golden again"
    changed = [str(rel) for rel, path in theirs.items() if path.read_bytes() != ours[rel].read_bytes()]
    assert not changed, f"tests/golden differs from shared/golden in {changed}: copy it again"


def _behaviour_case(inp: dict) -> dict:
    return {"source": {"path": "v1_v1.5/evaluation/eval_behavior.py"}, "params": {}, "input": inp}


def test_fdb_behaviour_runner_checks_every_word_chunk_pair_beside_the_tag_statistics() -> None:
    """The golden copy holds no v1.5 behaviour case (they are held back): the runner must still
    compute check_overlap of each pair, in whatever shape a case gives the pairs, and the tag
    statistics. Expected values worked by hand: words touching at 1.4 s do not overlap."""
    from tests.golden_runners import fdb as runner

    user = [{"text": "wait", "timestamp": [1.0, 1.4]}]
    touching = [{"text": "ok", "timestamp": [1.4, 1.8]}]
    overlapping = [{"text": "sure", "timestamp": [1.2, 1.5]}]
    records = [{"behaviour": ["C_RESPOND"]}, {"behaviour": ["C_RESPOND", "C_RESUME"]}, {}]
    listed = runner.run_case(_behaviour_case({"description": "pairs", "chunk_pairs": [[user, overlapping], [user, touching], [[], user]], "records": records}))
    assert_matches(listed, {
        "check_overlap": [1, 0, 0], "chunk_pairs": [1, 0, 0], "check_overlap(list_a, list_b)": [1, 0, 0],
        "counts": {"C": {"C_RESPOND": 2, "C_RESUME": 1}}, "totals": {"C": 3},
        "stats_by_axis": {"ratios": {"C": {"C_RESPOND": 2 / 3, "C_RESUME": 1 / 3}}}, "fmt_ratios": {"C": {"C_RESPOND": 0.67, "C_RESUME": 0.33}},
    })
    named = {"touching": {"list_a": user, "list_b": touching}, "overlapping": {"list_a": {"chunks": user}, "list_b": {"text": "sure", "chunks": overlapping}}}
    assert_matches(runner.run_case(_behaviour_case({"pairs": named})), {"overlap": {"touching": 0, "overlapping": 1}, "totals": {"C": 0}})
    records_in = [{"name": "touching", "a": user, "b": touching}, {"name": "overlapping", "a": user, "b": overlapping}]
    assert_matches(runner.run_case(_behaviour_case({"cases": records_in})), {
        "check_overlap": [0, 1], "cases": [{"name": "touching", "check_overlap": 0}, {"name": "overlapping", "overlap": 1}]})
    assert runner.run_case(_behaviour_case({"list_a": user, "list_b": overlapping}))["check_overlap"] == 1
    # a sample's four ASR files: the noisy input.json against output.json (the clean pair only touches)
    sample = {"clean_input": {"chunks": touching}, "input": {"chunks": user}, "clean_output": {"chunks": user},
              "output": {"chunks": overlapping}, "content_tag": {"behaviour": ["C_RESUME"]}}
    assert_matches(runner.run_case(_behaviour_case({"samples": {"7": sample}})), {"per_sample": {"7": {"check_overlap": 1}}, "counts": {"C": {"C_RESUME": 1}}})
    assert runner.run_case(_behaviour_case({"records": [{"behaviour": ["R_RUDE"]}]}))["error"] == "KeyError: 'R'"
    with pytest.raises(AssertionError, match="missing key"):  # a pair the runner cannot find fails the case
        assert_matches(runner.run_case(_behaviour_case({"records": records})), {"check_overlap": [0]})
