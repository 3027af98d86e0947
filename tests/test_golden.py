"""Golden conformance: every case under TURNEVAL_GOLDEN_DIR that a runner covers.

A case whose set has a runner must pass; it is never skipped. Cases listed in
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
GOLDEN_DIR = Path(os.environ.get("TURNEVAL_GOLDEN_DIR", HERE.parent.parent / "shared" / "golden"))
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


def test_every_deviation_names_a_reason() -> None:
    for case_id, entry in DEVIATIONS.items():
        assert entry.get("reason"), f"deviation {case_id} needs a reason"
        assert "expected_output" in entry, f"deviation {case_id} needs expected_output"
