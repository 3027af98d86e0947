"""Space repos: one per ``evaluate`` module (module, app, card, requirements) and the demo Space.

A metric Space is named like its module, so ``evaluate.load("ORG/<name>")`` finds ``<name>.py``
at its root. The demo Space is what ``make space`` assembles (``space/assemble.py``: the app,
the examples and turneval's wheel). turneval is not on PyPI, so when the release holds the demo
Space, each metric Space's ``turneval`` requirement becomes the URL of the wheel the demo Space
carries (:func:`demo_wheel_url`).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .cards import join_front_matter, split_front_matter
from .plan import REPO_ROOT, ReleaseError, RepoPlan


METRIC_FILES = ("{name}.py", "app.py", "README.md", "requirements.txt")


def demo_wheel_url(demo_repo_id: str, demo_folder: Path) -> str:
    """Where the demo Space ``demo_repo_id`` (written in ``demo_folder``) serves turneval's wheel."""
    wheels = sorted((demo_folder / "wheels").glob("turneval-*.whl"))
    if len(wheels) != 1:
        raise ReleaseError(f"{demo_folder / 'wheels'}: expected one turneval wheel, found {[w.name for w in wheels]}")
    return f"https://huggingface.co/spaces/{demo_repo_id}/resolve/main/wheels/{wheels[0].name}"


def _requirements(path: Path, wheel_url: str | None) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    if wheel_url is not None:
        if "turneval" not in [line.strip() for line in lines]:
            raise ReleaseError(f"{path}: no line 'turneval' to point at the demo Space's wheel")
        lines = [f"turneval @ {wheel_url}" if line.strip() == "turneval" else line for line in lines]
    return "\n".join(lines) + "\n"


def write_metric_space(plan: RepoPlan, out: Path, *, wheel_url: str | None = None) -> Path:
    """Write the Space of the evaluate module ``plan.name`` (``metrics/<name>/``) into ``out``;
    ``wheel_url``, when given, replaces the ``turneval`` requirement."""
    source = REPO_ROOT / "metrics" / plan.name
    out.mkdir(parents=True)
    for pattern in METRIC_FILES:
        name = pattern.format(name=plan.name)
        if not (source / name).is_file():
            raise ReleaseError(f"{source / name}: missing; an evaluate module's Space needs {', '.join(p.format(name=plan.name) for p in METRIC_FILES)}")
        shutil.copyfile(source / name, out / name)
    meta, body = split_front_matter(source / "README.md")
    if meta.get("sdk") != "gradio" or meta.get("app_file") != "app.py":
        raise ReleaseError(f"{source / 'README.md'}: a metric Space card needs 'sdk: gradio' and 'app_file: app.py' in its front matter")
    meta.setdefault("license", plan.licence)
    (out / "README.md").write_text(join_front_matter(meta, body), encoding="utf-8")
    (out / "requirements.txt").write_text(_requirements(source / "requirements.txt", wheel_url), encoding="utf-8")
    return out


def write_demo_space(plan: RepoPlan, out: Path) -> Path:
    """Write the demo Space into ``out``: ``space/assemble.py``'s folder without its marker file."""
    import importlib.util

    script = REPO_ROOT / "space" / "assemble.py"
    spec = importlib.util.spec_from_file_location("turneval_space_assemble", script)
    if spec is None or spec.loader is None:
        raise ReleaseError(f"{script}: cannot load the Space assembler; the release runs from a source checkout")
    assemble = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(assemble)
    try:
        assemble.assemble(out)
    except assemble.AssembleError as err:
        raise ReleaseError(f"{script}: {err}") from None
    (out / assemble.MARKER).unlink()
    return out
