"""The six `evaluate` modules stand alone: the turneval code they carry equals turneval's source,
they compute their card and docstring examples where `turneval` cannot be imported, and
`turneval metrics install` makes `evaluate.load("<name>")` work by bare name, offline, anywhere."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import turneval.evaluate_modules as em
from turneval.cli import main


REPO = Path(__file__).resolve().parents[1]
NAMES = list(em.MODULE_NEEDS)

ISOLATED = r'''
import doctest, importlib.abc, json, os, sys


class NoTurneval(importlib.abc.MetaPathFinder):
    """What a machine without turneval sees: importing it fails."""

    def find_spec(self, name, path=None, target=None):
        if name == "turneval" or name.startswith("turneval."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, NoTurneval())
import evaluate

job = json.loads(sys.stdin.read())
out = {}
for name, blocks in job["cards"].items():
    os.chdir(job["empty"])  # the bare name, from a directory that holds nothing
    for k, block in enumerate(blocks):
        exec(compile(block, f"metrics/{name}/README.md block {k + 1}", "exec"), {})
    os.chdir(job["root"])  # the docstring examples load metrics/<name> from here
    module = evaluate.load(f"metrics/{name}")
    test = doctest.DocTestParser().get_doctest(module.inputs_description, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    report = []
    runner.run(test, out=report.append)
    out[name] = {"blocks": len(blocks), "examples": runner.tries, "failed": runner.failures, "report": "".join(report)[-1500:]}
out["turneval_modules"] = sorted(m for m in sys.modules if m.split(".")[0] == "turneval")
print("RESULT " + json.dumps(out))
'''


def card_blocks(name: str) -> list[str]:
    """The Python blocks of a metric card."""
    text = (REPO / "metrics" / name / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_every_module_folder_is_known_and_released() -> None:
    from turneval.release.plan import METRIC_REPOS

    folders = {p.parent.name for p in (REPO / "metrics").glob("*/*.py") if p.stem == p.parent.name}
    assert set(NAMES) == folders == set(METRIC_REPOS)


@pytest.mark.parametrize("name", NAMES)
def test_copies_equal_turneval_source(name: str) -> None:
    assert em.stale_copies(name) == [], f"metrics/{name}/: run make sync-metrics"


def test_a_stale_copy_is_found_and_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO / "metrics" / "rubric_pass_rate", tmp_path / "rubric_pass_rate")
    monkeypatch.setattr(em, "metrics_folder", lambda: tmp_path)
    copy = tmp_path / "rubric_pass_rate" / "turneval_rubric.py"
    copy.write_text(copy.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    (tmp_path / "rubric_pass_rate" / "turneval_gone.py").write_text("", encoding="utf-8")
    (tmp_path / "rubric_pass_rate" / "turneval_files.py").unlink()
    assert em.stale_copies("rubric_pass_rate") == ["turneval_files.py", "turneval_gone.py", "turneval_rubric.py"]
    em.sync_copies("rubric_pass_rate")
    assert em.stale_copies("rubric_pass_rate") == [] and not (tmp_path / "rubric_pass_rate" / "turneval_gone.py").exists()


def test_a_copy_points_its_imports_at_the_other_copies() -> None:
    text = em.render_copy("turneval.metrics.scorer_discrimination")
    assert "from .turneval_intervals import Z95" in text and "from .intervals import" not in text
    assert "turneval.metrics.scorer_discrimination" in text.splitlines()[0]


@pytest.mark.parametrize("name", NAMES)
def test_module_imports_every_copy_and_no_turneval(name: str) -> None:
    """evaluate copies only the files a script imports relatively, so every copy is imported there."""
    script = REPO / "metrics" / name / f"{name}.py"
    tree = ast.parse(script.read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    relative = {node.module for node in imports if isinstance(node, ast.ImportFrom) and node.level == 1}
    absolute = {node.module for node in imports if isinstance(node, ast.ImportFrom) and not node.level}
    absolute |= {alias.name for node in imports if isinstance(node, ast.Import) for alias in node.names}
    assert relative == {p.stem for p in script.parent.glob("turneval_*.py")}
    assert not {m for m in absolute if m.split(".")[0] == "turneval"}
    requirements = (script.parent / "requirements.txt").read_text(encoding="utf-8").split()
    assert "turneval" not in requirements and requirements[0].startswith("evaluate")


DISTRIBUTIONS = {"sklearn": "scikit-learn"}
"""Import name -> the name requirements.txt gives, where they differ."""


@pytest.mark.parametrize("name", NAMES)
def test_requirements_name_every_package_the_folder_imports(name: str) -> None:
    """Every import of the module and its copies, lazy ones included, is the standard library, a
    neighbouring copy, or a package its requirements.txt names (gradio: the Space's SDK brings it)."""
    folder = REPO / "metrics" / name
    requirements = {re.split(r"[<>=@ ]", line)[0] for line in (folder / "requirements.txt").read_text(encoding="utf-8").split()}
    unlisted = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = {node.module.split(".")[0]}
            elif isinstance(node, ast.Import):
                tops = {alias.name.split(".")[0] for alias in node.names}
            else:
                continue
            tops -= set(sys.stdlib_module_names) | {"gradio"}
            unlisted |= {f"{path.name}: {top}" for top in tops if DISTRIBUTIONS.get(top, top) not in requirements}
    assert not unlisted, f"metrics/{name}/requirements.txt lacks {sorted(unlisted)}"


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    """What a process that cannot import turneval finds: each card's blocks (bare names, after
    `turneval metrics install`) and each module's docstring examples (loading metrics/<name>)."""
    root = tmp_path_factory.mktemp("isolated")
    for name in NAMES:  # only the module folders: what a Space holds
        shutil.copytree(REPO / "metrics" / name, root / "metrics" / name, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "empty").mkdir()
    assert main(["metrics", "install", "--modules-cache", str(root / "modules")]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TURNEVAL_", "PYTHONPATH"))}
    env.update(HF_HOME=str(root / "home"), HF_MODULES_CACHE=str(root / "modules"), HF_EVALUATE_OFFLINE="1", HF_HUB_OFFLINE="1")
    job = {"cards": {name: card_blocks(name) for name in NAMES}, "empty": str(root / "empty"), "root": str(root)}
    result = subprocess.run([sys.executable, "-c", ISOLATED], input=json.dumps(job), capture_output=True, text=True,
                            env=env, cwd=str(root / "empty"), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("name", NAMES)
def test_module_computes_its_examples_without_turneval(isolated, name: str) -> None:
    found = isolated[name]
    assert found["blocks"] >= 1 and found["examples"] >= 2, found
    assert found["failed"] == 0, found["report"]
    assert isolated["turneval_modules"] == []


def test_the_isolation_blocks_turneval(tmp_path: Path) -> None:
    code = ISOLATED.split("import evaluate")[0] + "import turneval\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 1 and "No module named 'turneval'" in result.stderr


def test_install_replaces_an_earlier_copy(tmp_path: Path) -> None:
    path_before = list(sys.path)
    first = em.install_bare_names(tmp_path)
    # a second modules cache on sys.path would shadow the default one for later evaluate.load calls
    assert sys.path == path_before
    assert sorted(first) == sorted(NAMES)
    folder = tmp_path / "evaluate_modules" / "metrics" / "evaluate-metric--turn_naturalness"
    stale = folder / ("0" * 64)
    shutil.copytree(first["turn_naturalness"].parent, stale)
    em.install_bare_names(tmp_path)
    assert [p.name for p in folder.iterdir() if p.is_dir()] == [first["turn_naturalness"].parent.name]
