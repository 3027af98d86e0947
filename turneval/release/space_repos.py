"""Space repos: one per ``evaluate`` module (module, the turneval code it carries, app, card,
requirements) and the demo Space.

A metric Space is named like its module, so ``evaluate.load("ORG/<name>")`` finds ``<name>.py``
at its root, and beside it the ``turneval_*.py`` copies it imports (``make sync-metrics``): the
module needs only evaluate and its ``requirements.txt``, never turneval. The card's
``evaluate.load("<name>")`` lines (the bare name, for a machine with turneval installed) load
the repo id on the Hub. The demo Space is what ``make space`` assembles (``space/assemble.py``:
the app, the examples and turneval's wheel).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .cards import join_front_matter, split_front_matter
from .plan import REPO_ROOT, ReleaseError, RepoPlan


METRIC_FILES = ("{name}.py", "app.py", "README.md", "requirements.txt")


def metric_space_files(source: Path, name: str) -> list[str]:
    """The files of ``metrics/<name>/`` a metric Space holds: the module, its copies of turneval's
    code, the app, the card and the requirements."""
    missing = [p.format(name=name) for p in METRIC_FILES if not (source / p.format(name=name)).is_file()]
    if missing:
        raise ReleaseError(f"{source}: {', '.join(missing)} missing; an evaluate module's Space needs {', '.join(p.format(name=name) for p in METRIC_FILES)}")
    if "turneval" in [line.strip() for line in (source / "requirements.txt").read_text(encoding="utf-8").splitlines()]:
        raise ReleaseError(f"{source / 'requirements.txt'}: names turneval, which no package index serves; the module carries its turneval code (make sync-metrics)")
    copies = sorted(p.name for p in source.glob("turneval_*.py"))
    return [p.format(name=name) for p in METRIC_FILES] + copies


def write_metric_space(plan: RepoPlan, out: Path) -> Path:
    """Write the Space of the evaluate module ``plan.name`` (``metrics/<name>/``) into ``out``."""
    source = REPO_ROOT / "metrics" / plan.name
    files = metric_space_files(source, plan.name)
    out.mkdir(parents=True)
    for name in files:
        shutil.copyfile(source / name, out / name)
    meta, body = split_front_matter(source / "README.md")
    if meta.get("sdk") != "gradio" or meta.get("app_file") != "app.py":
        raise ReleaseError(f"{source / 'README.md'}: a metric Space card needs 'sdk: gradio' and 'app_file: app.py' in its front matter")
    meta.setdefault("license", plan.licence)
    # on the Hub the module loads by its repo id; the bare name needs turneval installed
    body = body.replace(f'evaluate.load("{plan.name}"', f'evaluate.load("{plan.repo_id}"')
    body = body.replace(f'"ORG/{plan.name}"', f'"{plan.repo_id}"')
    (out / "README.md").write_text(join_front_matter(meta, body), encoding="utf-8")
    return out


def write_demo_space(plan: RepoPlan, out: Path) -> Path:
    """Write the demo Space into ``out``: ``space/assemble.py``'s folder without its marker file, plus
    the pages of ``docs/`` (the released cards link there: :class:`.cards.ReleaseLinks`)."""
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
    (out / "docs").mkdir()
    for page in sorted((REPO_ROOT / "docs").glob("*.md")):
        shutil.copyfile(page, out / "docs" / page.name)
    return out
