"""The README's picture shows today's figures: docs/report_first_screen.json (written with the
picture by `make screenshot`, tools/report_screenshot.py) must match what the report of the same
example prints now, and the picture must be the one made with it."""
from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("turneval_report_screenshot", REPO / "tools" / "report_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_picture_shows_todays_figures():
    tool = _tool()
    recorded = json.loads(tool.FIGURES.read_text(encoding="utf-8"))
    assert recorded.pop("picture_sha256") == hashlib.sha256(tool.PICTURE.read_bytes()).hexdigest(), (
        "docs/report_first_screen.png is not the picture made with its figures: run `make screenshot`")
    today = tool.first_screen(tool.todays_report())
    assert today["figures"], "the bundled example's report has no verdict"
    assert recorded == today, "the README's picture shows other figures than today's report: run `make screenshot`"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "](docs/report_first_screen.png)" in readme and "make screenshot" in readme
