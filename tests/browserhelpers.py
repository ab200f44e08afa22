"""The app as a real server process for browser tests and ``benchmarks.annotate_latency``:
``running_app`` starts ``python -m studyapp serve``'s Streamlit command on a free port over a
given folder's database and stops it afterwards. ``start_chromium`` / ``fresh_tab``: the
headless browser the tests drive; ``screen_size`` emulates a laptop or a touch phone and
``press_at`` clicks or taps a point as the browser's input pipeline does."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from studyapp.core import storage
from studyapp.platform.commands import cli

ROOT = Path(__file__).resolve().parents[1]
# Debian's headless shell: Chromium's renderer (Blink, V8, the input pipeline) without the
# browser's UI; a browser test file costs about a third less CPU in it than in the full browser
CHROMIUM, CHROMEDRIVER = "/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromedriver"
WAIT_S = 60
POLL_S = 0.1   # how often a wait on the browser looks again (WebDriverWait's own default: 0.5 s)
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-default-apps", "--disable-extensions", "--window-size=1400,1200")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_health_check(base: str) -> bool:
    """Whether the server at ``base`` answers Streamlit's health check (False while it is not
    listening yet)."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def running_app(tmp_path, port: int | None = None):
    """The app on ``port`` (default: a free one) over the database of the test; yields its
    base URL. It logs to ``tmp_path / "server.log"``."""
    storage.dispose_all()
    port = port or free_port()
    env = {**os.environ, "STUDYAPP_DB": str(tmp_path / "studyapp.sqlite"),
           "STUDYAPP_EXPORTS": str(tmp_path / "exports"), "STUDYAPP_ADMIN_PASSWORD": "browser-pw",
           "STUDYAPP_BASE_URL": f"http://127.0.0.1:{port}",
           "PYTHONUNBUFFERED": "1"}  # the log holds all that was printed, also while the server runs
    log = open(tmp_path / "server.log", "a")
    proc = subprocess.Popen(cli.streamlit_command(port, "127.0.0.1"), cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + WAIT_S
    while not answers_health_check(base):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the app did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
        time.sleep(0.25)
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def module_database(folder: Path):
    """One SQLite database and export folder in ``folder`` for a whole test module, whose
    studies then share one server (no report or dashboard warm-up processes: see
    ``no_dashboard_warm_up``)."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DATABASE_URL", raising=False)
        mp.setenv("STUDYAPP_DB", str(folder / "studyapp.sqlite"))
        mp.setenv("STUDYAPP_EXPORTS", str(folder / "exports"))
        mp.setenv("STUDYAPP_UPLOADS", str(folder / "uploads"))
        mp.setenv("STUDYAPP_REPORT_WARMUP", "0")
        mp.setenv("STUDYAPP_DASHBOARD_WARMUP", "0")
        yield


def start_chromium(*args: str, script_timeout: float = WAIT_S):
    """Headless Chromium (``CHROMIUM_ARGS``, then ``args``: a later ``--window-size`` wins) with a
    throw-away profile, driven by chromedriver."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (*CHROMIUM_ARGS, *args):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"download.prompt_for_download": False})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT_S)
    driver.set_script_timeout(script_timeout)
    return driver


def fresh_tab(driver, downloads: Path) -> None:
    """Leave ``driver`` on a new blank tab, its only one (a tab's sessionStorage and device
    emulation go with it), with no cookies, saving downloads to ``downloads``."""
    driver.switch_to.new_window("tab")
    fresh = driver.current_window_handle
    for handle in driver.window_handles:
        if handle != fresh:
            driver.switch_to.window(handle)
            driver.close()
    driver.switch_to.window(fresh)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    allow_downloads(driver, downloads)


def allow_downloads(driver, folder: Path) -> None:
    """Save ``driver``'s downloads to ``folder`` without asking."""
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})


def no_dashboard_warm_up(monkeypatch) -> None:
    """Servers started from now on skip the dashboard warm-up: a child process that computes the
    dashboards of the studies with ratings and costs ~3 s of CPU even for none. A test that
    shows a dashboard then has the console compute it, as it does for a study rated after the
    start."""
    monkeypatch.setenv("STUDYAPP_DASHBOARD_WARMUP", "0")


SIZES = {"phone": (390, 844), "laptop": (1366, 768)}


def screen_size(driver, size: str) -> None:
    """Emulate ``size`` (``SIZES``) on the tab: "phone" is a touch screen (coarse pointer)."""
    width, height = SIZES[size]
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": size == "phone"})
    if size == "phone":
        driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})


def press_at(driver, x: float, y: float, pointer: str = "mouse", clicks: int = 1) -> None:
    """A click (``pointer`` "mouse"; ``clicks``: 2 for the second click of a double click) or a
    tap ("touch") at viewport point (x, y), sent as input events (CDP), so that it reaches
    whatever is drawn there at that moment."""
    if pointer == "touch":
        driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        return
    for kind in ("mousePressed", "mouseReleased"):
        driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                            "clickCount": clicks})


# As a person scrolls to read a part of the screen: into the band that Streamlit's header and the
# item screen's sticky answer bar leave uncovered
UNCOVERED_BAND = """const row = arguments[0], bar = document.querySelector('.sticky-bar, .answer-bar > .controls');
const header = document.querySelector('[data-testid="stHeader"]');
row.style.scrollMarginBottom = `${(bar ? bar.getBoundingClientRect().height : 0) + 8}px`;
row.style.scrollMarginTop = `${(header ? Math.max(header.getBoundingClientRect().bottom, 0) : 0) + 8}px`;
row.scrollIntoView({block: 'nearest'});"""


def scroll_to_read(driver, element, pause_s: float = 0.4) -> None:
    """Scroll ``element`` into the uncovered part of the screen and stay there ``pause_s``."""
    import time as _time
    driver.execute_script(UNCOVERED_BAND, element)
    _time.sleep(pause_s)


ANSWER_ROWS = ".item-content .side, .mark-form .verb, .mark-form .candidate"  # what an answer records


def read_whole_item(driver, pause_s: float = 0.15) -> None:
    """As an annotator reads an item taller than the screen: each row an answer records scrolled
    into view in turn (``scroll_to_read``), then the first again."""
    rows = driver.find_elements("css selector", ANSWER_ROWS)
    for row in rows + rows[:1]:
        scroll_to_read(driver, row, pause_s)
