"""No circles among the project's modules: the import graph of the ``turneval`` namespace
(turneval/ and the folders setup.py maps into it: modeling/, dataset_scripts/, metrics/,
training/) has no cycle.

The rule, read from the source with ``ast`` (nothing is imported):

- An edge A -> B is any ``import`` in A's file that names B, at module level or inside a function
  or method: a function-level import is a dependency all the same (it only postpones the
  circle to run time), so both count. Imports under ``if TYPE_CHECKING:`` do not count: they
  exist for the type checker only; nor do those under ``if __name__ == "__main__":``, which run
  only when the file is a script (``python -m turneval.cli`` imports the module it runs as).
- ``from P import n`` is an edge to the module ``P.n`` when it is a module, else to ``P``.
  Relative imports resolve against the importing module's package; setup.py's ``package_dir``
  maps ``turneval.modeling`` to modeling/ and so on.
- Importing ``P.Q`` also runs ``P/__init__.py``, but that implicit edge to the parent package
  is not counted: a package's ``__init__`` re-exporting its submodules is not a circle.
- Modules outside the namespace (the standard library, torch, ...) are not in the graph.

A cycle is a strongly connected component of more than one module (or a module importing itself).
"""
from __future__ import annotations

import ast
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
NAMESPACE_DIRS = {
    "turneval": "turneval",
    "turneval.modeling": "modeling",
    "turneval.dataset_scripts": "dataset_scripts",
    "turneval.metrics": "metrics",
    "turneval.training": "training",
}
"""setup.py's package_dir, less the checkpoint folders (their code copies are generated)."""

def module_files(root: Path, dirs: dict[str, str]) -> dict[str, Path]:
    """Every module of the namespace by dotted name: the .py files of each mapped folder and of
    its subfolders that are packages (have an __init__.py)."""
    found = {}
    for name, folder in dirs.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if any(part.startswith((".", "__")) for part in rel.parts[:-1]):
                continue
            if any(not (base.joinpath(*rel.parts[: i + 1]) / "__init__.py").is_file() for i in range(len(rel.parts) - 1)):
                continue
            parts = list(rel.parts[:-1]) + ([] if path.stem == "__init__" else [path.stem])
            found[".".join([name, *parts])] = path
    return found


def _not_imported(node: ast.If) -> bool:
    """Whether the body of ``node`` runs for the type checker or a script only."""
    test = node.test
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
        return True
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in the tree, skipping the bodies :func:`_not_imported` names."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.If) and _not_imported(node):
            children = node.orelse
        todo.extend(children)
    return found


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The namespace modules that the module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {t for t in targets if t in modules and t != name} | ({name} & targets)


def import_graph(root: Path = REPO, dirs: dict[str, str] = NAMESPACE_DIRS) -> dict[str, set[str]]:
    modules = module_files(root, dirs)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with a cycle (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(component)
    return found


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert found == [], "break these import cycles (move the shared piece to a lower module): " + "; ".join(
        " <-> ".join(sorted(c)) for c in found
    )


def test_only_the_command_line_imports_the_command_line() -> None:
    """Layers in one direction: the library (readers, models, metrics, the report, batch, probe)
    never imports ``turneval.cli`` or a command; errors live where the layer that raises them lives."""
    cli = {"turneval.cli"} | {m for m in import_graph() if m.startswith("turneval.commands")}
    upward = {name: sorted(targets & cli) for name, targets in import_graph().items() if name not in cli and targets & cli}
    assert upward == {}, f"these library modules import the CLI: {upward}"


def test_the_walk_finds_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    (pkg / "d.py").write_text("import pkg.c\nif __name__ == '__main__':\n    from pkg.d import x\n")
    graph = import_graph(tmp_path, {"pkg": "pkg"})
    assert graph["pkg"] == {"pkg.a"} and graph["pkg.c"] == set() and graph["pkg.d"] == {"pkg.c"}
    assert cycles(graph) == [{"pkg.a", "pkg.sub.b"}]
