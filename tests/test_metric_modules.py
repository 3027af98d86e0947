"""The `evaluate` modules of metrics-a: offline loading, computing, docstring examples, cards.

``run_module_doctests`` and ``load_metric_module`` are meant for reuse by every metric module
test: they execute a module file's docstring examples from the repository root (where the
examples' ``evaluate.load("metrics/<name>")`` paths resolve) and load modules offline.
"""
from __future__ import annotations

import doctest
import importlib.util
import math
import socket
import sys
from pathlib import Path

import evaluate
import pytest
import yaml


REPO_ROOT = Path(__file__).resolve().parents[1]
METRICS_DIR = REPO_ROOT / "metrics"
MODULES = ("turn_naturalness", "full_duplex_timing")


def module_file(name: str) -> Path:
    return METRICS_DIR / name / f"{name}.py"


def run_module_doctests(path: Path, monkeypatch: pytest.MonkeyPatch) -> doctest.TestResults:
    """Run every docstring example of the evaluate module file ``path`` from the repo root.

    The module is the one evaluate itself imports (from its modules cache, with the turneval
    copies it carries beside it), so the examples run against exactly this file.
    """
    monkeypatch.chdir(REPO_ROOT)
    metric = evaluate.load(str(path.parent))
    module = sys.modules[type(metric).__module__]
    return doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)


def load_metric_module(
    name: str, monkeypatch: pytest.MonkeyPatch, absolute: bool = False, config_name: str | None = None
) -> evaluate.EvaluationModule:
    """``evaluate.load`` of metrics/<name> with the network cut off (any connect raises)."""

    def no_network(*args, **kwargs):
        raise OSError("network access attempted while loading a metric module")

    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", no_network)
    path = str(METRICS_DIR / name) if absolute else f"metrics/{name}"
    return evaluate.load(path, config_name) if config_name else evaluate.load(path)


@pytest.mark.parametrize("absolute", [False, True])
def test_turn_naturalness_loads_offline_and_computes(absolute: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("turn_naturalness", monkeypatch, absolute=absolute)
    results = metric.compute(natural_scores=[1.0, 2.0, 3.0], perturbed_scores=[2.0, 2.5, 2.9])
    assert results["c_index"] == pytest.approx(5 / 8)
    assert results["pairwise_accuracy"] == pytest.approx(2 / 3)
    assert results["n_pairs"] == 3 and results["per_type"] == {}
    assert results["pairwise_accuracy_ci_low"] < 2 / 3 < results["pairwise_accuracy_ci_high"]


def test_turn_naturalness_matches_functions_and_drops_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    from turneval.metrics.scorer_discrimination import evaluate_pairs

    natural = [1.0, float("nan"), 2.0, 0.5]
    perturbed = [2.0, 1.0, 1.5, 0.7]
    metric = load_metric_module("turn_naturalness", monkeypatch)
    results = metric.compute(natural_scores=natural, perturbed_scores=perturbed, higher_is_better=True)
    expected = evaluate_pairs(natural, perturbed, higher_is_better=True).to_dict()
    assert results["n_dropped"] == 1
    for key in ("c_index", "pairwise_accuracy", "mean_delta", "mean_delta_ci_low", "pairwise_accuracy_ci_high"):
        assert results[key] == pytest.approx(expected[key])


def test_turn_naturalness_add_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("turn_naturalness", monkeypatch)
    metric.add_batch(natural_scores=[1.0, 2.0], perturbed_scores=[2.0, 1.0])
    metric.add_batch(natural_scores=[3.0], perturbed_scores=[4.0])
    assert metric.compute()["pairwise_accuracy"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("absolute", [False, True])
def test_full_duplex_timing_fd_bench(absolute: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("full_duplex_timing", monkeypatch, absolute=absolute)
    seconds = metric.compute(
        user_segments=[[[0.0, 2.0], [5.0, 7.0]]],
        system_segments=[[[2.5, 6.0], [7.6, 10.0]]],
        round_types=[["First Inquiry", "Topic Shift"]],
    )
    samples = metric.compute(
        user_segments=[[[0, 32000], [80000, 112000]]],
        system_segments=[[[40000, 96000], [121600, 160000]]],
        round_types=[["First Inquiry", "Topic Shift"]],
        time_unit="samples",
    )
    assert seconds == samples
    assert (seconds["srr"], seconds["sir"], seconds["srir"], seconds["eir"], seconds["nir"]) == (0.5, 1.0, 1.0, 0.0, 0.0)
    assert seconds["interruptions_by_category"]["Topic Shift"] == 1
    assert seconds["inconsistent_conversations"] == []


def test_full_duplex_timing_fd_bench_wer_and_bad_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("full_duplex_timing", monkeypatch)
    kwargs = dict(user_segments=[[[0.0, 2.0]]], system_segments=[[[2.5, 3.0]]], round_types=[["First Inquiry"]])
    results = metric.compute(**kwargs, transcript_references=["hello there"], transcript_hypotheses=["hello their"])
    assert results["wer"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="time_unit"):
        metric.compute(**kwargs, time_unit="frames")


def test_full_duplex_timing_full_duplex_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("full_duplex_timing", monkeypatch, config_name="full_duplex_bench")
    words = dict(words=[["mm"], []], word_starts=[[4.5], []], word_ends=[[None], []], reference_time=[4.0, 4.0])
    results = metric.compute(**words, task="user_interruption")
    assert results["take_over_rate"] == 0.0 and results["mean_latency"] is None
    pause = metric.compute(**words, task="pause_handling")
    assert pause["tor"] == [0, 0]
    with pytest.raises(ValueError, match="task"):
        metric.compute(**words, task="backchannel_dance")
    with pytest.raises(ValueError, match="'fd_bench' configuration"):
        metric.compute(**words, transcript_references=["mm", ""], transcript_hypotheses=["mm", ""])


def test_full_duplex_timing_unknown_config(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KeyError, match="fd_bench"):
        load_metric_module("full_duplex_timing", monkeypatch, config_name="nope")


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{readme} needs YAML front matter"
    return yaml.safe_load(text.split("---\n")[1])


EVALUATE_MODULES = sorted(p.parent.name for p in METRICS_DIR.glob("*/*.py") if p.stem == p.parent.name)
CARD_SECTIONS = ("Description", "How to Use", "Inputs", "Output Values", "Limitations and Bias", "Citation")
"""The headings of evaluate's metric-card template that every card must have (## or ###)."""


def card_problems(name: str) -> list[str]:
    """What a metric card of metrics/<name> lacks, so that a failing test says what to add."""
    folder = METRICS_DIR / name
    readme = folder / "README.md"
    problems = []
    meta = _front_matter(readme)
    if meta.get("sdk") != "gradio" or meta.get("app_file") != "app.py":
        problems.append("front matter: sdk gradio with app_file app.py")
    problems += [f"front matter needs {key}" for key in ("title", "emoji", "description") if not meta.get(key)]
    tags = set(meta.get("tags") or ())
    if "evaluate" not in tags or not tags & {"metric", "measurement"}:
        problems.append("tags need evaluate and metric (or measurement)")
    body = readme.read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in body.splitlines() if line.startswith("#")]
    for section in CARD_SECTIONS:
        if not any(h.endswith(section) for h in headings):
            problems.append(f"section {section!r} missing")
    requirements = folder / "requirements.txt"
    if not requirements.is_file() or "evaluate" not in requirements.read_text(encoding="utf-8"):
        problems.append("requirements.txt must name evaluate and what the module imports")
    elif "turneval" in requirements.read_text(encoding="utf-8").split():
        problems.append("requirements.txt names turneval, which no package index serves")
    if f'evaluate.load("{name}")' not in body or "turneval metrics install" not in body:
        problems.append("How to Use must load the module by its name and say how that name is installed")
    if "metric" in tags and "better" not in body:
        problems.append("a metric card says which direction is better")
    return problems


def _feature_names(name: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    module = load_metric_module(name, monkeypatch)
    names = set()
    for features in module.features if isinstance(module.features, list) else [module.features]:
        names |= set(features)
    return names


@pytest.mark.parametrize("name", EVALUATE_MODULES)
def test_metric_card(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert card_problems(name) == []
    body = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    undocumented = sorted(
        f for f in _feature_names(name, monkeypatch) if f"`{f}`" not in body and f"**{f}**" not in body
    )
    assert not undocumented, f"metrics/{name}/README.md: inputs not described: {undocumented}"


def test_card_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A card without sections or requirement is reported, so the check above is not vacuous."""
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "README.md").write_text("---\ntitle: Bare\nsdk: gradio\napp_file: app.py\ntags: [evaluate, metric]\n---\n# Bare\n")
    monkeypatch.setattr(sys.modules[__name__], "METRICS_DIR", tmp_path)
    problems = card_problems("bare")
    assert "front matter needs emoji" in problems and "section 'Citation' missing" in problems
    assert "requirements.txt must name evaluate and what the module imports" in problems


APP_MODULES = sorted(p.parent.name for p in METRICS_DIR.glob("*/app.py"))


@pytest.mark.parametrize("name", APP_MODULES)
def test_app_builds_and_launches_widget_for_its_module(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app.py builds a real Gradio widget for its own module (launch itself replaced)."""
    import gradio

    launched = []
    monkeypatch.setattr(gradio.Interface, "launch", lambda self, **kwargs: launched.append(self))
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: (_ for _ in ()).throw(OSError("network")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(METRICS_DIR)  # the app must not depend on the working directory
    path = METRICS_DIR / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"_app_{name}", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert len(launched) == 1 and isinstance(launched[0], gradio.Interface)
    assert name in launched[0].title


def test_nan_result_is_float() -> None:
    # C-index of fully tied scores is NaN, not an error, through the module's function
    from turneval.metrics.scorer_discrimination import evaluate_pairs

    assert math.isnan(evaluate_pairs([1.0, 1.0], [1.0, 1.0]).to_dict()["c_index"])


def test_full_duplex_timing_samples_at_other_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric_module("full_duplex_timing", monkeypatch)
    kwargs = dict(round_types=[["First Inquiry", "Topic Shift"]])
    at_16k = metric.compute(user_segments=[[[0.0, 2.0], [5.0, 7.0]]], system_segments=[[[2.5, 6.0], [7.6, 10.0]]], **kwargs)
    at_8k = metric.compute(
        user_segments=[[[0, 16000], [40000, 56000]]],
        system_segments=[[[20000, 48000], [60800, 80000]]],
        time_unit="samples",
        sample_rate=8000,
        **kwargs,
    )
    assert at_8k == at_16k
