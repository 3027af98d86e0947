"""The Space in a real browser: serve it on 127.0.0.1, drive it with Chromium via Playwright.

Uploads a bundled example, waits for the report, checks the timeline plot and the key
figures against the downloadable report JSON, and saves a screenshot as a test artifact
(``tests/artifacts/`` or ``$TURNEVAL_TEST_ARTIFACTS``). Also: a mono upload gets a clear
message, and a 'Not human' press of the switching backchannel test is stored with its
playback time. Skipped (with the reason) where /usr/bin/chromium or the playwright package
is missing; CI installs both.
"""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import sqlite3
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

REPO_ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
EXAMPLE = REPO_ROOT / "examples" / "cascaded_like.wav"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
START_TIMEOUT_S = 120
ANALYSIS_TIMEOUT_MS = 120_000

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) to run the browser test", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright; never `playwright install`)")
if not EXAMPLE.is_file():
    pytest.skip(f"bundled example {EXAMPLE} missing", allow_module_level=True)


def artifacts_dir() -> Path:
    """Where screenshots go; a .gitignore keeps them out of commits."""
    folder = Path(os.environ.get("TURNEVAL_TEST_ARTIFACTS", REPO_ROOT / "tests" / "artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory):
    """The Space served from this process (Gradio's server thread); yields (url, database path).

    In-process rather than a subprocess: the suite has already paid for importing torch and
    gradio, and the 2-core CI machine should not pay again.
    """
    root = tmp_path_factory.mktemp("space")
    settings = {
        "TURNEVAL_SPACE_DB": str(root / "answers.sqlite3"),
        "TURNEVAL_SPACE_CACHE": str(root / "cache"),
        "TURNEVAL_SPACE_WORK": str(root / "work"),
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in settings.items():
            patch.setenv(key, value)
        spec = importlib.util.spec_from_file_location("turneval_space_app_browser", REPO_ROOT / "space" / "app.py")
        app = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(app)
        demo = app.build_demo(app.ListeningStore(settings["TURNEVAL_SPACE_DB"]))
        port = free_port()
        demo.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **app.launch_kwargs())
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.time() + START_TIMEOUT_S
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    if time.time() > deadline:
                        pytest.fail(f"the Space did not answer at {url} within {START_TIMEOUT_S} s")
                    time.sleep(0.5)
            yield url, root / "answers.sqlite3"
        finally:
            demo.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, space):
    page = browser.new_page(viewport={"width": 1300, "height": 1800})
    page.goto(space[0])
    page.wait_for_selector("#analyse-button", timeout=30_000)
    yield page
    page.close()


def _upload(page, path: Path) -> None:
    page.locator("#stereo-upload input[type=file]").set_input_files(str(path))
    # the upload is done when the component offers the uploaded file for download
    page.wait_for_selector("#stereo-upload a[data-testid=download-link]", timeout=30_000)


def test_analyse_bundled_example(page) -> None:
    _upload(page, EXAMPLE)
    page.click("#analyse-button")
    page.wait_for_selector("#timeline img", timeout=ANALYSIS_TIMEOUT_MS)
    page.wait_for_selector("#report-files a", timeout=10_000)
    screenshot = artifacts_dir() / "space_analyse.png"
    page.screenshot(path=str(screenshot), full_page=True)
    print(f"screenshot: {screenshot}")

    # the plot is a real, loaded image
    assert page.eval_on_selector("#timeline img", "img => img.complete && img.naturalWidth") > 500
    # the figures on the page are the report's
    links = page.eval_on_selector_all("#report-files a", "as => as.map(a => a.href)")
    json_link = next(href for href in links if href.endswith("_report.json"))
    report = json.loads(page.request.get(json_link).body())
    assert report["conversation"]["id"] == "cascaded_like" and report["conversation"]["system_channel"] == 1
    status = page.inner_text("#analysis-status")
    stats = report["statistics"]
    assert "cascaded_like (60.0 s, system = channel 1)" in status
    assert f"{stats['gap_per_min']:.1f}" in status and f"{stats['gap_mean_s']:.2f} s" in status
    assert f"{stats['backchannels_per_min_system']:.1f}" in status
    table = page.inner_text("#summary-table")
    for row in report["summary"][:3]:
        assert row["label"] in table
    assert "Talking Turns" in table  # reference values are shown beside ours
    # the cascaded-like system never backchannels and waits long: both visible on the page
    assert stats["backchannels_per_min_system"] == 0.0 and stats["gap_mean_s"] > 0.5
    assert page.inner_text("#analysis-notes").strip()


def test_mono_upload_gets_a_clear_message(page, tmp_path: Path) -> None:
    mono = tmp_path / "mono_call.wav"
    sf.write(str(mono), (0.1 * np.sin(np.linspace(0, 2000 * np.pi, 16_000))).astype(np.float32), 16_000)
    _upload(page, mono)
    page.click("#analyse-button")
    page.wait_for_function("() => document.querySelector('#analysis-status').innerText.includes('Cannot analyse')", timeout=30_000)
    status = page.inner_text("#analysis-status")
    assert "mono_call.wav has 1 channel(s); a stereo file" in status
    assert page.locator("#timeline img").count() == 0


def test_switching_backchannel_yuck_is_stored(page, space) -> None:
    page.fill("#rater textarea", "browser-test")
    page.get_by_role("tab", name="Switching backchannel test").click()
    page.click("#swoz-start")
    page.wait_for_selector("#swoz-player audio", timeout=60_000)
    page.click("#yuck")
    page.wait_for_function("() => document.querySelector('#swoz-status').innerText.includes('recorded at')", timeout=30_000)
    with sqlite3.connect(space[1]) as conn:
        presses = conn.execute("SELECT time_s, source FROM yuck_presses").fetchall()
        raters = conn.execute("SELECT rater FROM swoz_sessions").fetchall()
    assert raters == [("browser-test",)]
    assert len(presses) == 1 and presses[0][0] == 0.0 and presses[0][1] in ("human", "algorithm")


def test_bundled_example_runs_on_one_click(page) -> None:
    page.get_by_text("human_like.wav", exact=True).click()
    page.wait_for_selector("#timeline img", timeout=ANALYSIS_TIMEOUT_MS)
    assert "human_like (60.0 s, system = channel 1)" in page.inner_text("#analysis-status")


def test_naturalness_pair_answer_is_stored(page, space) -> None:
    page.fill("#rater textarea", "browser-test")
    page.get_by_role("tab", name="Listening test: naturalness").click()
    page.click("#next-pair")
    page.wait_for_selector("#clip-a a[data-testid=download-link]", timeout=60_000)
    page.wait_for_selector("#clip-b a[data-testid=download-link]", timeout=10_000)
    page.locator("#pair-choice").get_by_text("A", exact=True).click()
    page.locator("#rating-a").get_by_text("5 very natural").click()
    page.locator("#rating-b").get_by_text("2", exact=True).click()
    page.click("#submit-pair")
    page.wait_for_function("() => document.querySelector('#pair-feedback').innerText.includes('Saved')", timeout=30_000)
    assert "the other had a" in page.inner_text("#pair-feedback")
    assert "all" in page.inner_text("#preference-results")
    with sqlite3.connect(space[1]) as conn:
        rows = conn.execute("SELECT rater, choice, rating_a, rating_b FROM pair_answers").fetchall()
    assert rows == [("browser-test", "A", 5, 2)]
