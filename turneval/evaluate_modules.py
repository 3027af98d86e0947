"""The six ``evaluate`` modules (``metrics/<name>/<name>.py``): what they carry, and their bare names.

**What they carry.** Each module computes with turneval's own functions, yet must run where
only ``evaluate`` and its ``requirements.txt`` are installed (its Hub Space,
``evaluate.load("ORG/<name>")``). So the turneval modules it needs sit beside it as copies,
``metrics/<name>/turneval_<module>.py``, made here from the package's source with turneval's
imports turned into imports of the neighbouring copies; the module script imports each copy
(``from .turneval_<module> import ...``), because evaluate copies a script together with the
files it imports relatively, and not the files those import. turneval's source stays the one
place to edit; ``make sync-metrics`` rewrites the copies and a test fails on a stale one.

**Bare names.** ``evaluate.load("turn_naturalness")`` asks the Hub for the canonical module
``evaluate-metric/turn_naturalness`` and, when the Hub has none or cannot be reached, falls back
to the module of that name in evaluate's modules cache
(``<HF_MODULES_CACHE>/evaluate_modules/metrics/evaluate-metric--<name>/<hash>/``). A wheel runs
no code when pip installs it, so :func:`install_bare_names` (``turneval metrics install``, run
by ``make install``) writes each module there with evaluate's own loader functions, exactly as
evaluate lays out a canonical module it downloaded.

    python -m turneval.evaluate_modules sync    # rewrite the copies (make sync-metrics)
    python -m turneval.evaluate_modules check   # exit 1 naming each stale copy
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path


MODULE_NEEDS: dict[str, tuple[str, ...]] = {
    "turn_naturalness": ("turneval.metrics.scorer_discrimination",),
    "turn_taking_agreement": ("turneval.metrics.agreement",),
    "turn_taking_statistics": ("turneval.metrics.turn_statistics", "turneval.dataset_scripts.events"),
    "full_duplex_timing": ("turneval.metrics.fd_bench_rounds", "turneval.metrics.full_duplex_bench_tasks"),
    "backchannel_timing": ("turneval.metrics.swoz_backchannels",),
    "rubric_pass_rate": ("turneval.metrics.rubric",),
}
"""Each evaluate module and the turneval modules its script imports (their own imports follow)."""

WIDGET = "turneval.metrics.widget"
"""Every module also carries the Gradio widget its Space's ``app.py`` launches."""

COPY_PREFIX = "turneval_"
"""Copies are named ``turneval_<last part of the module name>.py``."""

BARE_NAME_NAMESPACE = "evaluate-metric"
"""The Hub namespace evaluate tries first for a name without a slash (then its cache of it)."""

_FROM_LINE = re.compile(r"^(\s*from\s+)(\S+)(\s+import\b)")


class EvaluateModulesError(Exception):
    """A copy cannot be made or a module cannot be installed; the message says what to do."""


def metrics_folder() -> Path:
    """The folder holding ``<name>/<name>.py`` (``metrics/`` of a checkout, ``turneval/metrics/`` of a wheel)."""
    return Path(importlib.util.find_spec("turneval.metrics").origin).parent


def module_script(name: str) -> Path:
    """The script of the evaluate module ``name``."""
    if name not in MODULE_NEEDS:
        raise EvaluateModulesError(f"unknown evaluate module {name!r}; turneval has {', '.join(MODULE_NEEDS)}")
    return metrics_folder() / name / f"{name}.py"


def _source_path(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise EvaluateModulesError(f"{module}: not importable; is turneval installed (make install)?")
    return Path(spec.origin)


def _resolve(module: str, level: int, current: str) -> str:
    """The absolute name of ``from <level dots><module> import``, written in module ``current``."""
    if not level:
        return module
    base = current.rsplit(".", level)[0]
    return f"{base}.{module}" if module else base


def _turneval_imports(tree: ast.Module, current: str) -> list[tuple[ast.ImportFrom, str]]:
    """Every ``from <turneval module> import ...`` in the tree, with the module's absolute name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "turneval" for a in node.names):
            raise EvaluateModulesError(f"{current}: 'import turneval...' cannot be copied; use 'from ... import ...'")
        if isinstance(node, ast.ImportFrom):
            target = _resolve(node.module or "", node.level, current)
            if target.split(".")[0] == "turneval":
                found.append((node, target))
    return found


def _runtime_needs(tree: ast.Module, current: str) -> set[str]:
    """The turneval modules imported outside ``if TYPE_CHECKING:`` blocks (those run)."""
    typing_only = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for child in ast.walk(stmt)
    }
    return {target for node, target in _turneval_imports(tree, current) if id(node) not in typing_only}


def needed_modules(name: str) -> list[str]:
    """The turneval modules the evaluate module ``name`` runs, its own needs and theirs, sorted."""
    todo, seen = [*MODULE_NEEDS[name], WIDGET], set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        tree = ast.parse(_source_path(module).read_text(encoding="utf-8"))
        todo.extend(_runtime_needs(tree, module))
    return sorted(seen)


def copy_name(module: str) -> str:
    """``turneval.metrics.agreement`` -> ``turneval_agreement``."""
    return COPY_PREFIX + module.rsplit(".", 1)[1]


def render_copy(module: str) -> str:
    """The text of the copy of ``module``: its source, each turneval import pointing at a copy."""
    source = _source_path(module).read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    for node, target in _turneval_imports(ast.parse(source), module):
        line = lines[node.lineno - 1]
        if not _FROM_LINE.match(line):
            raise EvaluateModulesError(f"{module}, line {node.lineno}: put 'from' and the module on one line to be copied")
        lines[node.lineno - 1] = _FROM_LINE.sub(lambda m: f"{m.group(1)}.{copy_name(target)}{m.group(3)}", line, count=1)
    header = (
        f"# A copy of {module} for the evaluate module beside it, turneval's imports made relative.\n"
        "# Written by `make sync-metrics` (turneval/evaluate_modules.py): edit turneval's source, not this file.\n"
    )
    return header + "".join(lines)


def expected_copies(name: str) -> dict[str, str]:
    """File name -> text of every copy the evaluate module ``name`` needs beside it."""
    modules = needed_modules(name)
    names = [copy_name(m) for m in modules]
    if len(set(names)) != len(names):
        raise EvaluateModulesError(f"{name}: two needed modules share a last name part ({modules}); rename one")
    return {f"{copy_name(m)}.py": render_copy(m) for m in modules}


def stale_copies(name: str) -> list[str]:
    """What differs in ``metrics/<name>/`` from :func:`expected_copies`: missing, changed or extra copies."""
    return _stale(module_script(name).parent, expected_copies(name))


def _stale(folder: Path, expected: dict[str, str]) -> list[str]:
    stale = [f for f, text in expected.items() if not (folder / f).is_file() or (folder / f).read_text(encoding="utf-8") != text]
    stale += [p.name for p in folder.glob(f"{COPY_PREFIX}*.py") if p.name not in expected]
    return sorted(stale)


def sync_copies(name: str) -> list[str]:
    """Write the copies of ``metrics/<name>/`` and remove extra ones; returns the files changed."""
    folder = module_script(name).parent
    expected = expected_copies(name)  # rendered once, for the comparison and the writing
    changed = _stale(folder, expected)
    for file_name in changed:
        if file_name in expected:
            (folder / file_name).write_text(expected[file_name], encoding="utf-8")
        else:
            (folder / file_name).unlink()
    return changed


def install_module(script: Path, cache_name: str, modules_cache: str | Path | None = None) -> Path:
    """Put the evaluate module ``script`` (and the files it imports relatively) into evaluate's
    modules cache under ``cache_name`` (``ORG/NAME``), as ``evaluate.load`` leaves a module it
    downloaded; an earlier copy under that name is replaced. Returns the module file written.

    ``modules_cache``: the ``HF_MODULES_CACHE`` folder (default: evaluate's, from ``HF_HOME``).
    """
    from evaluate.loading import (
        DownloadConfig,
        DownloadMode,
        _create_importable_file,
        _download_additional_modules,
        get_imports,
        init_dynamic_modules,
    )

    if not script.is_file():
        raise EvaluateModulesError(f"{script}: no such evaluate module file")
    # evaluate's own steps for a local script: its relative imports found and gathered, then
    # everything copied into <cache>/evaluate_modules/metrics/ORG--NAME/<hash of the files>/
    local_imports = _download_additional_modules(
        name=cache_name, base_path=str(script.parent), imports=get_imports(str(script)), download_config=DownloadConfig()
    )
    # evaluate's init appends the cache to sys.path for its own import; nothing is imported here, and
    # a second cache on the path would shadow the default one's `evaluate_modules` package for every
    # later evaluate.load in this process (a ModuleNotFoundError)
    path_before = list(sys.path)
    dynamic = init_dynamic_modules(hf_modules_cache=str(modules_cache) if modules_cache is not None else None)
    sys.path[:] = path_before
    module_path, _ = _create_importable_file(
        local_path=str(script.resolve()),
        local_imports=local_imports,
        additional_files=[],
        dynamic_modules_path=dynamic,
        module_namespace="metrics",
        name=cache_name,
        download_mode=DownloadMode.FORCE_REDOWNLOAD,
    )
    return Path(dynamic).parent.joinpath(*module_path.split(".")).with_suffix(".py")


def install_bare_names(modules_cache: str | Path | None = None) -> dict[str, Path]:
    """Every evaluate module of turneval installed under its bare name, so that
    ``evaluate.load("<name>")`` finds it in any directory; returns name -> module file."""
    return {
        name: install_module(module_script(name), f"{BARE_NAME_NAMESPACE}/{name}", modules_cache)
        for name in MODULE_NEEDS
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in (["sync"], ["check"]):
        print("usage: python -m turneval.evaluate_modules sync|check", file=sys.stderr)
        return 2
    if args == ["check"]:
        stale = {name: stale_copies(name) for name in MODULE_NEEDS}
        for name, files in stale.items():
            for file_name in files:
                print(f"metrics/{name}/{file_name}: stale; run make sync-metrics", file=sys.stderr)
        return 1 if any(stale.values()) else 0
    for name in MODULE_NEEDS:
        for file_name in sync_copies(name):
            print(f"metrics/{name}/{file_name}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
