"""Packaging: one `turneval` namespace, a light `import turneval`, model registration with turneval.modeling."""
import importlib.util
import subprocess
import sys


def test_nothing_generic_at_the_top_of_site_packages(tmp_path):
    # run outside the repository, whose folders are importable from its root by design
    code = "import importlib.util; print([n for n in ('modeling', 'metrics', 'dataset_scripts', 'training') if importlib.util.find_spec(n)])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr


def test_subpackages_live_in_the_namespace():
    for name in ("turneval.modeling", "turneval.metrics", "turneval.dataset_scripts", "turneval.training"):
        assert importlib.util.find_spec(name) is not None


def test_import_turneval_loads_neither_torch_nor_transformers():
    code = (
        "import sys, turneval, turneval.cli\n"
        "turneval.cli.build_parser()\n"
        "from turneval import Dialogue, Word\n"
        "from turneval.dataset_scripts.readers import read_dialogue\n"
        "print(sorted(m for m in ('torch', 'transformers', 'datasets', 'evaluate') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]", f"heavy modules loaded at import: {result.stdout}"


def test_lazy_names_resolve_and_unknown_names_fail():
    import pytest

    import turneval

    assert turneval.Dialogue.__name__ == "Dialogue" and callable(turneval.report)
    assert set(turneval.__all__) <= set(dir(turneval))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        turneval.nope  # noqa: B018


def test_importing_modeling_registers_both_model_types_with_the_auto_classes():
    code = (
        "import turneval.modeling\n"
        "from transformers import AutoConfig, AutoModel\n"
        "for model_type in ('turn_taking_judge', 'future_activity_predictor'):\n"
        "    config = AutoConfig.for_model(model_type)\n"
        "    print(model_type, type(AutoModel.from_config(config)).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "turn_taking_judge TurnTakingJudge" in result.stdout
    assert "future_activity_predictor FutureActivityPredictorModel" in result.stdout


def test_checkpoint_code_copies_match_the_package(repo_root):
    """Checkpoints carry modeling code for trust_remote_code; it must be the package's own."""
    copies = sorted((repo_root / "checkpoints").glob("*/*.py")) + sorted((repo_root / "benchmarks" / "baselines").glob("*/*.py"))
    assert copies, "no demo checkpoint code found"
    for copy in copies:
        original = repo_root / "modeling" / copy.name
        assert original.exists(), f"{copy} has no counterpart in modeling/"
        assert copy.read_text() == original.read_text(), f"{copy} is stale: copy {original} over it"


def test_a_bundled_checkpoint_card_is_its_model_card(repo_root):
    """The card a local from_pretrained reader opens is the one the release publishes."""
    from turneval.release.plan import MODEL_REPOS

    copies = [p for p in sorted((repo_root / "checkpoints").glob("*/README.md")) if p.parent.name in MODEL_REPOS]
    assert copies, "the bundled judge carries its card"
    for copy in copies:
        card = repo_root / "model_cards" / MODEL_REPOS[copy.parent.name] / "README.md"
        assert copy.read_text() == card.read_text(), f"{copy} is stale: run make sync-checkpoints"


# -- layering: data flows readers -> events and labels -> datasets -> models -> metrics -> reports
_CORE = ("dialogue", "grids", "vocabulary", "files", "events", "labels", "vap_events", "vap_targets", "agreement_instances")
_ABOVE_CORE = ("readers", "builders", "synthetic", "perturbations", "turneval.reporting", "turneval.commands", "turneval.cli", "turneval.io_utils")


def _imports(path) -> set[str]:
    """Every module a file imports, relative imports written with their dots."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def _imports_any(path, forbidden) -> list[str]:
    return sorted(n for n in _imports(path) for f in forbidden if n.lstrip(".").startswith(f) or f"dataset_scripts.{f}" in n)


def test_the_core_depends_only_downward(repo_root):
    core = repo_root / "dataset_scripts"
    problems = {name: _imports_any(core / f"{name}.py", _ABOVE_CORE) for name in _CORE}
    assert not {k: v for k, v in problems.items() if v}, problems


def test_readers_use_the_vocabulary_not_the_events(repo_root):
    readers = sorted((repo_root / "dataset_scripts" / "readers").glob("*.py"))
    problems = {p.name: _imports_any(p, ("events",)) for p in readers}
    assert not {k: v for k, v in problems.items() if v}, problems


def test_layering_check_can_fail(tmp_path):
    bad = tmp_path / "events.py"
    bad.write_text("from .readers.switchboard import parse_ms98_lines\nimport turneval.reporting\n", encoding="utf-8")
    assert _imports_any(bad, _ABOVE_CORE) == [".readers.switchboard", "turneval.reporting"]
