"""End to end in a real headless browser (Debian's chromium + chromedriver, via selenium).

The app runs on 127.0.0.1 on a free port with a fresh database; the browser is started with
networking features off and a fresh profile, and only ever opens loopback addresses. One run
is an annotator (invite link, instructions, three ratings by click and by digit key, back and
change, reload and continue, the database checked); the other signs into the console and
downloads an export. On failure, screenshots and page sources go to ``test-artifacts/browser/``
(the path is printed). Skipped without chromium outside CI; under ``CI=true`` it fails instead.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sqlmodel import select

from conftest import ROOT
from studyapp import cli, storage, studies
from studyapp.models import Item, Rating
from studyhelpers import make_study

pytestmark = pytest.mark.slow
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
WAIT_S = 60


def _browser_available() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()


if not _browser_available():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but chromium / chromedriver are missing (scripts/ci_browser.sh)")
    pytest.skip("chromium and chromium-driver are not installed", allow_module_level=True)

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path, monkeypatch):
    """(base URL, study id, invite token) of a running app on a fresh database."""
    study = make_study(tmp_path, n_items=4, raters=1, extra='order = "fixed"\n')
    yield from _serve(tmp_path, monkeypatch, study)


@pytest.fixture
def race_server(tmp_path, monkeypatch):
    """A 16-item study served while two processes burn the CPU (a loaded 2-core server)."""
    study = make_study(tmp_path, n_items=16, raters=1, extra='order = "fixed"\n')
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield from _serve(tmp_path, monkeypatch, study)
    finally:
        for b in burners:
            b.kill()


@pytest.fixture
def shoe_server(tmp_path, monkeypatch, shared_data):
    """The app serving SHOE's own 500-pair study, created from studies/shoe_study.toml."""
    from studyapp.specs import load_spec
    study = studies.create_study(load_spec(ROOT / "studies" / "shoe_study.toml"))
    yield from _serve(tmp_path, monkeypatch, study)


def _serve(tmp_path, monkeypatch, study):
    (invite,) = studies.invite(study, 1)
    storage.dispose_all()
    port = free_port()
    env = {**os.environ, "STUDYAPP_DB": str(tmp_path / "studyapp.sqlite"),
           "STUDYAPP_EXPORTS": str(tmp_path / "exports"), "STUDYAPP_ADMIN_PASSWORD": "browser-pw",
           "STUDYAPP_BASE_URL": f"http://127.0.0.1:{port}"}
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(cli.streamlit_command(port, "127.0.0.1"), cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the app did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
        time.sleep(0.25)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "browser-pw")
    yield base, study, invite.token
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def browser(tmp_path, request):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-default-apps", "--disable-extensions", "--window-size=1400,1200",
                f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(arg)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(WAIT_S)
    driver.downloads = downloads
    failures_before = request.session.testsfailed
    yield driver
    if request.session.testsfailed > failures_before:  # the call phase failed
        folder = ARTIFACTS / request.node.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        driver.save_screenshot(str(folder / "final.png"))
        (folder / "final.html").write_text(driver.page_source)
        print(f"\nbrowser artifacts: {folder}")
    driver.quit()


def wait_text(driver, text: str, timeout: float = WAIT_S):
    WebDriverWait(driver, timeout).until(lambda d: text in d.find_element(By.TAG_NAME, "body").text,
                                         message=f"waiting for {text!r}")


def button(driver, label_start: str):
    def find(d):
        for b in d.find_elements(By.TAG_NAME, "button"):
            if b.text.strip().startswith(label_start) and b.is_displayed() and b.is_enabled():
                return b
        return False
    return WebDriverWait(driver, WAIT_S).until(find, message=f"waiting for button {label_start!r}")


def wait_idle(driver):
    """Until Streamlit has finished its rerun: a key pressed during a rerun can be lost."""
    WebDriverWait(driver, WAIT_S).until(
        lambda d: not [e for e in d.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
                       if e.is_displayed()], message="waiting for the app to finish running")
    time.sleep(0.5)


def press(driver, key: str):
    wait_idle(driver)
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def ratings(study_id) -> dict[str, list[str]]:
    with storage.read_session() as session:
        keys = {i.id: i.item_key for i in session.exec(select(Item).where(Item.study_id == study_id))}
        out: dict[str, list[str]] = {}
        for r in session.exec(select(Rating).order_by(Rating.id)):
            out.setdefault(keys[r.item_id], []).append(r.response)
    return out


def wait_ratings(study_id, expected, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while (got := ratings(study_id)) != expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"database has {got}, expected {expected}")
        time.sleep(0.2)


def test_annotator_rates_goes_back_reloads_and_continues(server, browser):
    base, study, token = server
    browser.get(f"{base}/?token={token}")
    wait_text(browser, "Rate the pair.")  # the instructions
    button(browser, "Start").click()
    wait_text(browser, "Item 1 of 4")
    button(browser, "2 —").click()  # by clicking
    wait_text(browser, "Item 2 of 4")
    wait_ratings(study, {"i01": ["2"]})
    press(browser, "3")  # by keyboard
    wait_text(browser, "Item 3 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"]})
    press(browser, "4")
    wait_text(browser, "Item 4 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"], "i03": ["4"]})
    button(browser, "Back").click()  # revise item 3
    wait_text(browser, "you gave: 4")
    press(browser, "0")
    wait_text(browser, "Item 4 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"], "i03": ["4", "0"]})
    browser.refresh()  # reload: resumes at the first unanswered item
    wait_text(browser, "Item 4 of 4")
    button(browser, "1 —").click()
    wait_text(browser, "Thank you!")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"], "i03": ["4", "0"], "i04": ["1"]})
    with storage.read_session() as session:
        revised = session.exec(select(Rating).where(Rating.revision == 1)).one()
        assert revised.supersedes_id is not None and revised.response == "0"


def test_console_sign_in_and_export_download(server, browser):
    base, study, token = server
    annotator = studies.invite(study, labels=["alice"])[0]
    from studyapp import assignment
    annotator_id = assignment.resolve_token(annotator.token)
    for value in (3, 1):
        task = assignment.next_item(annotator_id)
        assignment.submit(annotator_id, task.assignment_id, value, 2.0)
    browser.get(f"{base}/console")
    wait_text(browser, "Researcher console")
    field = WebDriverWait(browser, WAIT_S).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']"))
    field.send_keys("browser-pw")
    button(browser, "Sign in").click()
    wait_text(browser, "Per annotator")
    tab = WebDriverWait(browser, WAIT_S).until(
        lambda d: next((t for t in d.find_elements(By.CSS_SELECTOR, "[role='tab']")
                        if t.text.strip() == "Export"), False))
    tab.click()
    button(browser, "ratings.csv").click()
    target = browser.downloads / "ratings.csv"
    deadline = time.monotonic() + WAIT_S
    while not target.exists() or target.stat().st_size == 0:
        assert time.monotonic() < deadline, f"no download in {browser.downloads}: {list(browser.downloads.iterdir())}"
        time.sleep(0.2)
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert [(r["item_id"], r["annotator"], r["rating"]) for r in rows] == [("i01", "alice", "3"),
                                                                          ("i02", "alice", "1")]


def test_shoes_own_study_runs_in_the_browser(shoe_server, browser):
    """SHOE's 500 pairs: glosses and the prediction's lemma on screen, a key press stored for
    the pair that was shown."""
    base, study, token = shoe_server
    browser.get(f"{base}/?token={token}")
    button(browser, "Start").click()
    wait_text(browser, "Item 1 of 500")
    shown = browser.find_element(By.TAG_NAME, "body").text
    press(browser, "3")
    wait_text(browser, "Item 2 of 500")
    got = ratings(study)
    assert list(got.values()) == [["3"]]
    (key,) = got
    with storage.read_session() as session:
        item = session.exec(select(Item).where(Item.study_id == study, Item.item_key == key)).one()
    display = json.loads(item.fields_json)["display"]
    for part in ("gt_verb", "gt_object", "pred_verb", "pred_object"):
        assert display[part] in shown, part
    assert display["pred_object_gloss"][:40] in shown


def test_fast_key_presses_on_a_loaded_server_land_only_on_the_item_on_screen(race_server, browser):
    """Issue 13 race test: digits pressed 0, 50, 150 and 300 ms after the previous one. Every
    stored answer must be a first answer (no unrequested revision), the items answered must be
    the first ones in the fixed order (nothing skipped or applied elsewhere), and presses that
    reached a control of an item already answered are refused and counted."""
    from studyapp.models import Event
    base, study, token = race_server
    browser.get(f"{base}/?token={token}")
    button(browser, "Start").click()
    wait_text(browser, "Item 1 of 16")
    wait_idle(browser)
    body = browser.find_element(By.TAG_NAME, "body")
    delays = [0.0, 0.05, 0.15, 0.3] * 5
    for k, delay in enumerate(delays):
        body.send_keys(str(k % 5))
        time.sleep(delay)
    wait_idle(browser)
    time.sleep(2)
    with storage.read_session() as session:
        rows = session.exec(select(Rating).order_by(Rating.id)).all()
        keys = {i.id: i.item_key for i in session.exec(select(Item).where(Item.study_id == study))}
        refused = session.exec(select(Event).where(Event.kind == "stale_answer_refused")).all()
    stored = [keys[r.item_id] for r in rows]
    print(f"\nrace: {len(delays)} presses, {len(stored)} answers stored, {len(refused)} stale presses refused, "
          f"{sum(r.revision > 0 for r in rows)} revisions")
    assert all(r.revision == 0 for r in rows), "an answer was stored as an unrequested revision"
    assert stored == [f"i{k:02d}" for k in range(1, len(stored) + 1)], stored
    assert 1 <= len(stored) <= len(delays)
    wait_text(browser, f"Item {len(stored) + 1} of 16")
