"""The system's Chromium, launched one way for the README's picture (tools/report_screenshot.py)
and the browser tests (tests/test_space_browser.py).

It is Debian's ``chromium`` (``$TURNEVAL_CHROMIUM``, default /usr/bin/chromium) driven by the
playwright package; never ``playwright install``, which downloads a browser of its own.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any


CHROMIUM = Path(os.environ.get("TURNEVAL_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root in a container, where Chromium's sandbox cannot start
    "--disable-gpu",
    # nothing reaches the network on its own: a run offline neither waits nor differs
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
MISSING = f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) or set $TURNEVAL_CHROMIUM"


def launch(playwright: Any) -> Any:
    """A headless browser of ``CHROMIUM`` from a started ``sync_playwright()``; the caller closes it."""
    if not CHROMIUM.exists():
        raise FileNotFoundError(MISSING)
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
