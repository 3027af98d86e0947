"""No function of the turneval namespace (turneval/ and the folders setup.py maps into it:
modeling/, dataset_scripts/, metrics/, training/) is over 80 lines or takes over 8 parameters
(the developers' guide: a function does one thing).

Read from the source with ``ast``: a function's lines run from its ``def`` (decorators
excluded) to its last line, docstring and comments included; its parameters are the positional
and keyword-only ones, ``self`` and ``cls`` of a method excluded, ``*args`` and ``**kwargs`` not
counted. Nested functions are measured on their own (and within their enclosing function's lines).

Not measured: the generated copies ``metrics/<name>/turneval_*.py`` (their source is measured),
and the parameter count of two signatures a framework fixes: a transformers config's
``__init__`` (every field a keyword argument, as ``PretrainedConfig`` wants) and an ``evaluate``
module's ``_compute`` (each input column a keyword argument); their lines are still measured.
"""
from __future__ import annotations

import ast
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 80
MAX_PARAMETERS = 8


def function_sizes(path: Path, root: Path) -> dict[str, tuple[int, int]]:
    """``file:Class.function`` -> (lines, parameters) of every function in the file."""
    sizes: dict[str, tuple[int, int]] = {}
    rel = path.relative_to(root).as_posix()

    def walk(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = child.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                if in_class and names and names[0] in ("self", "cls"):
                    names = names[1:]
                sizes[f"{rel}:{prefix}{child.name}"] = (child.end_lineno - child.lineno + 1, len(names))
                walk(child, f"{prefix}{child.name}.", False)
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.", True)
            else:
                walk(child, prefix, in_class)

    walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "", False)
    return sizes


FOLDERS = ("turneval", "modeling", "dataset_scripts", "metrics", "training")


def _framework_signature(name: str) -> bool:
    """A signature whose parameters a framework fixes (see the module docstring)."""
    path, _, function = name.partition(":")
    config_init = path.startswith("modeling/configuration_") and function.endswith("Config.__init__")
    return config_init or function.endswith("._compute")


def oversized(root: Path, folders: tuple[str, ...] = FOLDERS) -> dict[str, tuple[int, int]]:
    """``file:function`` -> (lines, parameters) of every function over either limit."""
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            if path.parent.parent.name == "metrics" and path.name.startswith("turneval_"):
                continue
            for name, (lines, params) in function_sizes(path, root).items():
                if _framework_signature(name):
                    params = 0
                if lines > MAX_LINES or params > MAX_PARAMETERS:
                    found[name] = (lines, params)
    return found


def test_no_long_function_and_no_long_parameter_list() -> None:
    found = oversized(REPO)
    assert not found, f"shorten these (at most {MAX_LINES} lines, {MAX_PARAMETERS} parameters): {found}"


def test_the_measure_counts_lines_and_parameters(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "turneval").mkdir()
    (tmp_path / "turneval" / "m.py").write_text(
        f"def long():\n{body}\n\n\nclass C:\n    def method(self, a, b, c, d, e, f, g, h, *args, **kw):\n        pass\n\n"
        "    def wide(self, a, b, c, d, e, f, g, *, h, i):\n        pass\n"
    )
    assert oversized(tmp_path, ("turneval",)) == {"turneval/m.py:long": (MAX_LINES + 1, 0), "turneval/m.py:C.wide": (2, 9)}
