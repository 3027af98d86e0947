"""Assemble a self-sufficient Space folder: the app, the examples, and turneval built into it.

    python space/assemble.py build/space          # what `make space` runs
    cd build/space && git init && git lfs track "*.whl" "*.wav" && ...   # push as a Gradio Space

turneval is not on PyPI, so a Space cannot `pip install turneval`. The assembled folder carries
the wheel of this checkout (with the bundled demo checkpoints inside it) under ``wheels/``, and
its ``requirements.txt`` names that file by a relative path, which pip resolves from the Space's
root, where the Space installs it. Layout::

    build/space/
        README.md             Space front matter (sdk: gradio, app_file: app.py)
        app.py, analysis.py, listening.py, stimuli.py, swoz.py
        requirements.txt      the pins of space/requirements.txt, turneval -> ./wheels/turneval-*.whl
        wheels/turneval-<version>-py3-none-any.whl
        examples/             the bundled conversations (<name>.wav + <name>.json)

``tests/test_space_assemble.py`` installs the folder into a fresh virtual environment and checks
that the app serves its page from there.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

SPACE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SPACE_DIR.parent
APP_FILES = ("README.md", "app.py", "analysis.py", "listening.py", "stimuli.py", "swoz.py")
MARKER = ".turneval-space"
"""Marks a folder this script made, so that re-assembling may replace it (and nothing else)."""


class AssembleError(RuntimeError):
    """The Space folder cannot be assembled; the message says why."""


def build_wheel(out: Path) -> Path:
    """``pip wheel`` of this checkout into ``out`` (no dependencies); returns the wheel."""
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO_ROOT)]
    build = subprocess.run(command[:4] + ["--no-build-isolation"] + command[4:], capture_output=True, text=True)
    if build.returncode != 0 and "bdist_wheel" in build.stderr:  # no `wheel` package here: build isolated
        build = subprocess.run(command, capture_output=True, text=True)
    if build.returncode != 0:
        raise AssembleError(f"building the turneval wheel failed:\n{build.stderr[-3000:]}")
    wheels = sorted(out.glob("turneval-*.whl"))
    if len(wheels) != 1:
        raise AssembleError(f"expected one turneval wheel in {out}, found {[w.name for w in wheels]}")
    return wheels[0]


def space_requirements(wheel_name: str) -> str:
    """space/requirements.txt with its ``turneval`` line pointing at the bundled wheel."""
    lines = []
    for line in (SPACE_DIR / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() == "turneval":
            line = f"./wheels/{wheel_name}"
        lines.append(line)
    if f"./wheels/{wheel_name}" not in lines:
        raise AssembleError(f"{SPACE_DIR / 'requirements.txt'}: no line 'turneval' to replace with the wheel")
    return "\n".join(lines) + "\n"


def assemble(out: str | Path) -> Path:
    """Write the Space folder ``out`` (replacing one this script made before)."""
    out = Path(out).resolve()
    if out.exists():
        if not (out / MARKER).is_file():
            raise AssembleError(f"{out} exists and was not made by this script; choose an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    wheel = build_wheel(out / "wheels")
    for name in APP_FILES:
        shutil.copy2(SPACE_DIR / name, out / name)
    (out / "requirements.txt").write_text(space_requirements(wheel.name), encoding="utf-8")
    examples = out / "examples"
    examples.mkdir()
    for path in sorted((REPO_ROOT / "examples").glob("*")):
        if path.suffix in (".wav", ".json"):
            shutil.copy2(path, examples / path.name)
    (out / MARKER).write_text("assembled by space/assemble.py\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Assemble a self-sufficient Gradio Space folder (app, examples, turneval wheel).")
    parser.add_argument("out", nargs="?", default=str(REPO_ROOT / "build" / "space"), help="output folder (default build/space)")
    args = parser.parse_args(argv)
    try:
        out = assemble(args.out)
    except AssembleError as err:
        print(f"space/assemble.py: error: {err}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20
    print(f"assembled the Space in {out} ({size:.0f} MB); push it as a Gradio Space (git lfs for the wheel and wav files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
