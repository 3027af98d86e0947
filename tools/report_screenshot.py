"""The README's picture: the first screen of today's report on a bundled example.

    python tools/report_screenshot.py            # what `make screenshot` runs
    python tools/report_screenshot.py --check    # exit 1 when the recorded figures differ from today's report

Runs the report (bundled judge and predictor, as ``turneval report EXAMPLE --system-channel 1``),
opens its HTML page in headless Chromium at 1280 x 1000 and saves the first screen as
``docs/report_first_screen.png``. Beside it, ``docs/report_first_screen.json`` records the
figures that screen shows (the verdict sentence, each headline figure, its human range and
mark, as printed), the command and the picture's sha256; tests/test_report_screenshot.py fails
when they differ from what the report prints today, so the picture is remade (``make screenshot``) whenever a
model or a range changes. Needs Chromium (``$TURNEVAL_CHROMIUM``, default /usr/bin/chromium)
and the playwright package (never ``playwright install``: it uses the system's Chromium).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any


REPO = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/cascaded_like.wav"
SYSTEM_CHANNEL = 1
PICTURE = REPO / "docs" / "report_first_screen.png"
FIGURES = PICTURE.with_suffix(".json")
WINDOW = {"width": 1280, "height": 1000}


def todays_report(example: str = EXAMPLE) -> Any:
    """The report of ``example`` (relative to the repository, as the page shows it) with the
    bundled models, as ``turneval report`` run from the repository's root makes it."""
    from turneval.reporting import report

    here = Path.cwd()
    os.chdir(REPO)
    try:
        return report(example, system_channel=SYSTEM_CHANNEL, progress=False)
    finally:
        os.chdir(here)


def first_screen(rep: Any, example: str = EXAMPLE) -> dict[str, Any]:
    """The record written beside the picture: the command and the figures its screen shows."""
    from turneval.reporting.verdict import shown_figures

    return {"command": f"turneval report {example} --system-channel {SYSTEM_CHANNEL}", **shown_figures(rep)}


def screenshot(html: Path, out: Path) -> None:
    """The first screen (``WINDOW``) of the page ``html`` as a PNG at ``out``."""
    from playwright.sync_api import sync_playwright

    if str(REPO) not in sys.path:  # run as `python tools/report_screenshot.py`: tools/ is on the path, not the repository
        sys.path.insert(0, str(REPO))
    from tools.chromium import CHROMIUM, MISSING, launch

    if not CHROMIUM.exists():
        raise SystemExit(MISSING)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(viewport=WINDOW)
            page.goto(html.resolve().as_uri())
            page.screenshot(path=str(out))
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the recorded figures with today's report; write nothing")
    args = parser.parse_args(argv)
    rep = todays_report()
    record = first_screen(rep)
    if args.check:
        recorded = json.loads(FIGURES.read_text(encoding="utf-8"))
        recorded.pop("picture_sha256", None)
        if recorded != record:
            print(f"{FIGURES}: the screenshot shows other figures than today's report; run `make screenshot`", file=sys.stderr)
            return 1
        print(f"{FIGURES}: the figures are today's")
        return 0
    with tempfile.TemporaryDirectory(prefix="turneval-screenshot-") as work:
        from turneval.reporting import save_report

        save_report(rep, work)
        png = Path(work) / PICTURE.name
        screenshot(Path(work) / "report.html", png)
        shutil.move(str(png), str(PICTURE))
    record["picture_sha256"] = hashlib.sha256(PICTURE.read_bytes()).hexdigest()  # which picture shows these figures
    FIGURES.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {PICTURE.relative_to(REPO)} and {FIGURES.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
