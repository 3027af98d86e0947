"""The Space in a real browser: serve it on 127.0.0.1, drive it with Chromium via Playwright.

Uploads a bundled example, waits for the report, checks the timeline plot and the key
figures against the downloadable report JSON. Also: a mono upload and a 0.5 s upload get clear
messages; the naturalness test is blind (nothing on the page or in the browser's requests names
the condition of a clip, both clips are equally long, the results stay hidden until Finish); a
'Not human' press of the switching backchannel test is stored with its playback time, and Finish
stops the audio and the counting; the HTML report the Space offers leads with the verdict on its
first screen. Every state is saved as a screenshot (``tests/artifacts/``
or ``$TURNEVAL_TEST_ARTIFACTS``). Skipped (with the reason) where Chromium
(``$TURNEVAL_CHROMIUM``, default /usr/bin/chromium) or the playwright package is missing; CI
installs both.
"""
from __future__ import annotations

import importlib.util
import io
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

from tools.chromium import CHROMIUM, MISSING, launch


REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = REPO_ROOT / "examples" / "cascaded_like.wav"
START_TIMEOUT_S = 120
ANALYSIS_TIMEOUT_MS = 120_000

if not CHROMIUM.exists():
    pytest.skip(f"{MISSING}, to run the browser test", allow_module_level=True)
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
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, space):
    page = browser.new_page(viewport={"width": 1300, "height": 1800})
    page.goto(space[0])
    page.wait_for_selector("#analyse-button", timeout=30_000)
    yield page
    page.close()


PERTURBATION_NAMES = ("late_response", "early_entry", "hold_instead_of_shift", "shift_instead_of_hold", "excessive_backchannel")
CONDITION_WORDS = ("natural.", "natural_", "_natural", "perturbed", *PERTURBATION_NAMES, *(n.replace("_", " ") for n in PERTURBATION_NAMES))


def screenshot(page, name: str, full_page: bool = True) -> None:
    path = artifacts_dir() / f"space_{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    print(f"screenshot: {path}")


def _upload(page, path: Path) -> None:
    page.locator("#stereo-upload input[type=file]").set_input_files(str(path))
    # the upload is done when the component offers the uploaded file for download
    page.wait_for_selector("#stereo-upload a[data-testid=download-link]", timeout=30_000)


def test_analyse_bundled_example(page) -> None:
    _upload(page, EXAMPLE)
    page.click("#analyse-button")
    page.wait_for_selector("#timeline img", timeout=ANALYSIS_TIMEOUT_MS)
    page.wait_for_selector("#report-files a", timeout=10_000)
    screenshot(page, "analyse")

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
    # the verdict leads: every headline figure with its gate name, the cascaded system's slow answers marked
    assert "Verdict:" in status and "About the models" in status
    rows = {r["name"]: r for r in report["headline"]["verdict"]}
    assert all(name in status for name in rows) and rows["response_latency_s"]["mark"] == "above" and "ABOVE" in status
    colours = page.eval_on_selector_all("#analysis-status span[class^=mark-]", "spans => spans.map(s => [s.textContent, getComputedStyle(s).color])")
    assert ["ABOVE", "rgb(198, 40, 40)"] in colours and ["within", "rgb(46, 125, 50)"] in colours, colours
    assert page.eval_on_selector("#gaps img", "img => img.complete && img.naturalWidth") > 300

    table = page.inner_text("#summary-table")
    for row in report["summary"][:3]:
        assert row["label"] in table
    assert "Talking Turns" in table  # reference values are shown beside ours
    # the table shows every row: nothing inside it scrolls vertically (the page does)
    inner_scroll = page.eval_on_selector("#summary-table", """t => Array.from(t.querySelectorAll('*')).filter(e => {
        const s = getComputedStyle(e); return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 2; }).length""")
    assert inner_scroll == 0, "the metrics table scrolls inside itself"
    # the cascaded-like system never backchannels and waits long: both visible on the page
    assert stats["backchannels_per_min_system"] == 0.0 and stats["gap_mean_s"] > 0.5
    assert rows["backchannels_per_min"]["mark"] == "below" and "BELOW" in status
    assert page.inner_text("#analysis-notes").strip()

    # the HTML report the Space offers opens with the verdict: on the first screen of a 1280 x 1000 window
    html_link = next(href for href in links if href.endswith("_report.html"))
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.set_content(page.request.get(html_link).text())  # Gradio serves it as a download; the page is self-contained
    first_h2 = page.inner_text("h2")
    assert first_h2.startswith("Verdict")
    box = page.locator("table.verdict").bounding_box()
    assert box is not None and box["y"] + box["height"] < 1000, "the verdict table is not on the first screen"
    assert page.eval_on_selector("img.gaps", "img => img.complete && img.naturalWidth") > 300
    screenshot(page, "report_first_screen", full_page=False)
    # it fits the window (no sideways scroll) and no two worst-unit labels of the timeline overlap
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    labels = page.eval_on_selector_all('svg.timeline [id^="unit-label-"]', """gs => gs.map(g => {
        const r = g.getBoundingClientRect(); return [g.id, r.left, r.right, r.top, r.bottom]; })""")
    assert labels and all(right > left for _, left, right, _, _ in labels)
    for i, (a, al, ar, at, ab) in enumerate(labels):
        for b, bl, br, bt, bb in labels[i + 1:]:
            assert ar <= bl or br <= al or ab <= bt or bb <= at, f"timeline labels {a} and {b} overlap"


def test_mono_upload_gets_a_clear_message(page, tmp_path: Path) -> None:
    mono = tmp_path / "mono_call.wav"
    sf.write(str(mono), (0.1 * np.sin(np.linspace(0, 2000 * np.pi, 16_000))).astype(np.float32), 16_000)
    _upload(page, mono)
    page.click("#analyse-button")
    page.wait_for_function("() => document.querySelector('#analysis-status').innerText.includes('Cannot analyse')", timeout=30_000)
    status = page.inner_text("#analysis-status")
    assert "mono_call.wav has 1 channel(s); a stereo file" in status
    assert page.locator("#timeline img").count() == 0
    screenshot(page, "mono_upload")


def test_half_second_upload_gets_a_clear_message(page, tmp_path: Path) -> None:
    short = tmp_path / "half_second.wav"
    sf.write(str(short), 0.1 * np.ones((8000, 2), dtype=np.float32), 16_000)
    _upload(page, short)
    page.click("#analyse-button")
    page.wait_for_function("() => document.querySelector('#analysis-status').innerText.includes('Cannot analyse')", timeout=30_000)
    assert "half_second.wav is only 0.5 s long" in page.inner_text("#analysis-status")
    screenshot(page, "short_upload")


def test_switching_backchannel_yuck_is_stored(page, space) -> None:
    page.get_by_role("tab", name="Switching backchannel test").click()
    page.fill("#swoz-rater textarea", "browser-test")
    assert page.locator("#yuck-results").count() == 0 or not page.locator("#yuck-results").is_visible()
    page.click("#swoz-start")
    page.wait_for_selector("#swoz-player audio", timeout=60_000)
    page.click("#yuck")
    page.wait_for_function("() => document.querySelector('#swoz-status').innerText.includes('recorded at')", timeout=30_000)
    screenshot(page, "swoz_started")
    with sqlite3.connect(space[1]) as conn:
        presses = conn.execute("SELECT time_s, source FROM yuck_presses").fetchall()
        raters = conn.execute("SELECT rater FROM swoz_sessions").fetchall()
    assert raters == [("browser-test",)]
    assert len(presses) == 1 and presses[0][0] == 0.0 and presses[0][1] in ("human", "algorithm")
    # Finish stops the audio and the counting
    page.eval_on_selector("#swoz-player audio", "a => { a.muted = true; return a.play().catch(() => null); }")
    page.click("#swoz-finish")
    page.wait_for_function("() => document.querySelector('#swoz-status').innerText.includes('The sources were')", timeout=30_000)
    assert page.eval_on_selector("#swoz-player audio", "a => a.paused")
    assert page.locator("#yuck").is_disabled()
    page.wait_for_selector("#yuck-results", state="visible", timeout=10_000)
    screenshot(page, "swoz_finished")
    with sqlite3.connect(space[1]) as conn:
        assert len(conn.execute("SELECT time_s FROM yuck_presses").fetchall()) == 1


def test_bundled_example_runs_on_one_click(page) -> None:
    page.get_by_text("human_like.wav", exact=True).click()
    page.wait_for_selector("#timeline img", timeout=ANALYSIS_TIMEOUT_MS)
    assert "human_like (60.0 s, system = channel 1)" in page.inner_text("#analysis-status")


def _names_no_condition(text: str, where: str) -> None:
    lowered = text.lower()
    for word in CONDITION_WORDS:
        assert word not in lowered, f"{where} names the condition: {word!r}"


def test_naturalness_test_is_blind_until_finish(page, space) -> None:
    requests: list[str] = []
    headers: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("response", lambda response: headers.append(response.headers.get("content-disposition", "")))
    page.get_by_role("tab", name="Listening test: naturalness").click()
    page.fill("#rater textarea", "browser-test")
    page.click("#next-pair")
    page.wait_for_selector("#clip-a a[data-testid=download-link]", timeout=60_000)
    page.wait_for_selector("#clip-b a[data-testid=download-link]", timeout=10_000)
    # what the browser downloads: opaque names, equally long clips
    lengths = []
    for clip, name in (("#clip-a", "clip_A.wav"), ("#clip-b", "clip_B.wav")):
        link = page.locator(f"{clip} a[data-testid=download-link]")
        assert name in (link.get_attribute("download") or "") + (link.get_attribute("href") or "")
        body = page.request.get(link.get_attribute("href")).body()
        lengths.append(sf.info(io.BytesIO(body)).frames)
    assert lengths[0] == lengths[1], f"clip lengths differ: {lengths}"
    screenshot(page, "naturalness_pair")
    page.locator("#pair-choice").get_by_text("A", exact=True).click()
    page.locator("#rating-a").get_by_text("5 very natural").click()
    page.locator("#rating-b").get_by_text("2", exact=True).click()
    page.click("#submit-pair")
    page.wait_for_function("() => document.querySelector('#pair-feedback').innerText.includes('Saved')", timeout=30_000)
    # nothing on the page, in the requests or in their download names says which clip was which
    # the page: its text and every attribute (sources, links, download names), not the app's script config
    attributes = page.evaluate("() => Array.from(document.querySelectorAll('body *')).filter(e => e.tagName !== 'SCRIPT')"
                               ".flatMap(e => Array.from(e.attributes).map(a => a.value)).join(' ')")
    _names_no_condition(page.inner_text("body") + " " + attributes, "the page")
    _names_no_condition(" ".join(requests), "a request URL")
    _names_no_condition(" ".join(headers), "a download name")
    assert not page.locator("#preference-results").is_visible()
    with sqlite3.connect(space[1]) as conn:
        rows = conn.execute("SELECT rater, choice, rating_a, rating_b FROM pair_answers").fetchall()
    assert rows == [("browser-test", "A", 5, 2)]
    page.click("#finish-pairs")
    page.wait_for_function("() => document.querySelector('#pair-feedback').innerText.includes('the natural clip was')", timeout=30_000)
    page.wait_for_selector("#preference-results", state="visible", timeout=10_000)
    assert "all" in page.inner_text("#preference-results")
    screenshot(page, "naturalness_finished")
