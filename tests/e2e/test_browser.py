"""End to end in a real headless browser (Debian's chromium + chromedriver, via selenium).

The app runs on 127.0.0.1 on a free port, one server per module (``app``) whose tests each
make a study of their own in its database; a test that restarts the server or needs a database
to itself starts its own. One Chromium per module, started with networking features off and a
fresh profile, gives each test a fresh tab; it only ever opens loopback addresses. One run
is an annotator (invite link, instructions, three ratings by click and by digit key, back and
change, reload and continue, the database checked); the other signs into the console and
downloads an export. On failure, screenshots and page sources go to ``test-artifacts/browser/``
(the path is printed). Skipped without chromium outside CI; under ``CI=true`` it fails instead.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browserhelpers import (
    CHROMEDRIVER,
    CHROMIUM,
    POLL_S,
    WAIT_S,
    free_port,
    fresh_tab,
    module_database,
    no_dashboard_warm_up,
    running_app,
    scroll_to_read,
)
from projectpaths import ROOT
from sqlmodel import select
from studyhelpers import make_study

from studyapp.core import storage
from studyapp.core.models import Event, Item, Rating
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

pytestmark = pytest.mark.slow
FLOOR_MS = 300   # the default seen floor ([answers] min_seen_ms)
ARTIFACTS = ROOT / "test-artifacts" / "browser"


def _browser_available() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()


if not _browser_available():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but chromium / chromedriver are missing (scripts/ci_browser.sh)")
    pytest.skip("chromium and chromium-driver are not installed", allow_module_level=True)

selenium = pytest.importorskip("selenium")
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The module's server over the module's database: its base URL."""
    folder = tmp_path_factory.mktemp("app")
    with module_database(folder), running_app(folder) as base:
        yield base
    storage.dispose_all()


@pytest.fixture(autouse=True)
def own_database(request, monkeypatch):
    """A test on the module's server (``app``) makes its study in the module's database; any
    other test gets a database of its own. No server of the module warms dashboards."""
    if "app" not in request.fixturenames:
        request.getfixturevalue("isolated_database")
    no_dashboard_warm_up(monkeypatch)
    yield


_SLUGS = itertools.count(1)


def new_slug(prefix: str = "t") -> str:
    """A study slug no other study of this test session has (studies share ``app``'s database)."""
    return f"{prefix}{next(_SLUGS)}"


def renamed(spec: Path, slug: str) -> Path:
    """The spec file moved to ``slug``.toml beside it: the study it makes has that slug."""
    return spec.rename(spec.with_name(f"{slug}.toml"))


def image_pass(folder: Path, n_items: int = 3) -> tuple[int, str]:
    """``studyhelpers.earlier_study`` and the with-image study linked to it (``image_spec``),
    under slugs of their own: (the with-image study's id, alice's token)."""
    from studyhelpers import image_spec, invite_same, rate_all

    earlier_slug = new_slug("first")
    earlier = make_study(folder, n_items=n_items, raters=2, slug=earlier_slug, extra='order = "fixed"\n')
    raters = {name: person[0] for name, person in invite_same(earlier, ["alice", "bob"]).items()}
    rate_all(raters["alice"], 2)
    rate_all(raters["bob"], 3)
    spec = image_spec(folder, n_items=n_items)
    spec.write_text(spec.read_text().replace('linked_study = "first"', f'linked_study = "{earlier_slug}"'))
    study = studies.create_study(load_spec(renamed(spec, new_slug("second"))))
    return study, invite_same(study, ["alice"])["alice"][1]


@pytest.fixture
def server(app, tmp_path):
    """(base URL, study id, invite token): a study of its own on the module's server."""
    study = make_study(tmp_path, n_items=4, raters=1, slug=new_slug(), extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    return app, study, invite.token


@pytest.fixture
def browser(chromium, tmp_path, request):
    """The module's Chromium on a fresh tab, with no cookies and a downloads folder of the test's
    own (``driver.downloads``)."""
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    fresh_tab(chromium, downloads)
    chromium.downloads = downloads
    failures_before = request.session.testsfailed
    yield chromium
    if request.session.testsfailed > failures_before:  # the call phase failed
        folder = ARTIFACTS / request.node.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        chromium.save_screenshot(str(folder / "final.png"))
        (folder / "final.html").write_text(chromium.page_source)
        print(f"\nbrowser artifacts: {folder}")


def wait_text(driver, text: str, timeout: float = WAIT_S):
    WebDriverWait(driver, timeout, poll_frequency=POLL_S).until(lambda d: text in d.find_element(By.TAG_NAME, "body").text,
                                         message=f"waiting for {text!r}")


def button(driver, label_start: str):
    """The enabled button whose label starts so, once Streamlit has finished its rerun (a click
    on the controls of an item being replaced is lost, like a press)."""
    wait_idle(driver)

    def find(d):
        for b in d.find_elements(By.TAG_NAME, "button"):
            if b.text.strip().startswith(label_start) and b.is_displayed() and b.is_enabled():
                return b
        return False
    # a rerun (or the console dashboard's timed refresh) may replace a button while it is read
    return WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        find, message=f"waiting for button {label_start!r}")


def open_tab(driver, name: str) -> None:
    """Click the shown tab labelled ``name`` (a console area or a study's tab) and wait for its run."""
    tab = WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: next((t for t in d.find_elements(By.CSS_SELECTOR, "[role='tab']")
                        if t.text.strip() == name and t.is_displayed()), False), message=f"tab {name}")
    tab.click()
    wait_idle(driver)


SCRIPT_FINISHED = """return document.querySelector('[data-testid="stApp"]')
                          ?.dataset.testScriptState === 'notRunning'"""
CONTROLS_READY = """return [...document.querySelectorAll('.answer-bar, .mark-form')]
                         .every((c) => c.dataset.state === 'ready' && c.dataset.answerable !== 'soon')"""


def wait_idle(driver):
    """Until Streamlit has finished its rerun and the answer controls on the page have run their
    script and been drawn for the study's seen floor (a key pressed before that reaches no
    controls, or is dropped as too soon, as it would for a person)."""
    WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S).until(lambda d: d.execute_script(SCRIPT_FINISHED) and not [
        e for e in d.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]') if e.is_displayed()],
        message="waiting for the app to finish running")
    time.sleep(0.5)
    WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S).until(lambda d: d.execute_script(CONTROLS_READY),
                                                               message="waiting for the answer controls to be ready")


def start(driver, link: str, first_item: str):
    """Open an annotator link, press Start, wait for the first item."""
    driver.get(link)
    button(driver, "Start").click()
    wait_text(driver, first_item)


def start_in_two_tabs(driver, link: str, first_item: str) -> str:
    """Start the link in this tab, then open it in a second one (showing the same item, which
    is now on screen); returns the first tab's handle."""
    start(driver, link, first_item)
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(link)
    wait_text(driver, first_item)
    return first


def press(driver, key: str):
    wait_idle(driver)
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def ratings(study_id) -> dict[str, list[str]]:
    with storage.read_session() as session:
        keys = {i.id: i.item_key for i in session.exec(select(Item).where(Item.study_id == study_id))}
        out: dict[str, list[str]] = {}
        for r in session.exec(select(Rating).where(Rating.study_id == study_id).order_by(Rating.id)):
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
    wait_text(browser, "you gave 4")
    press(browser, "0")
    wait_text(browser, "Item 4 of 4")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"], "i03": ["4", "0"]})
    browser.refresh()  # reload: resumes at the first unanswered item
    wait_text(browser, "Item 4 of 4")
    button(browser, "1 —").click()
    wait_text(browser, "Thank you!")
    wait_ratings(study, {"i01": ["2"], "i02": ["3"], "i03": ["4", "0"], "i04": ["1"]})
    with storage.read_session() as session:
        revised = session.exec(select(Rating).where(Rating.study_id == study, Rating.revision == 1)).one()
        assert revised.supersedes_id is not None and revised.response == "0"


def test_console_sign_in_and_export_download(tmp_path, browser, monkeypatch):
    """On a server of its own: the console shows the one study of its database."""
    from studyapp.platform import assignment

    study = make_study(tmp_path, n_items=4, raters=1, extra='order = "fixed"\n')
    studies.invite(study, 1)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "browser-pw")
    with running_app(tmp_path) as base:
        annotator = studies.invite(study, labels=["alice"])[0]
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
        wait_text(browser, "only one annotator")   # the dashboard, first tab
        tab = WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(
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
        audited = audit_entries(study, {"downloaded", "data_viewed"}, 2)   # the download and the view, by whom
        assert audited == [("data_viewed", "owner", {"what": "dashboard, progress, preview"}),
                           ("downloaded", "owner", {"file": "ratings.csv"})]


def without_session(detail: dict) -> dict:
    """An entry's detail without the signed-in session's hash (a view is audited once per session)."""
    return {k: v for k, v in detail.items() if k != "login"}


def audit_entries(study_id: int, kinds: set[str], count: int) -> list[tuple[str, str, dict]]:
    """The study's first ``count`` audit entries of these kinds (waited for: the download's
    entry is written by the click's rerun)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        with storage.read_session() as session:
            found = [(e.kind, e.actor, without_session(json.loads(e.detail))) for e in session.exec(
                select(Event).where(Event.study_id == study_id, Event.kind.in_(kinds)).order_by(Event.id))]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


PRESS_LOG = """
window.__presses = [];
window.addEventListener('keydown', (e) => {
  const bar = document.querySelector('.answer-bar');
  const shown = (window.__studyappKeys || {}).shownAt || 0;
  window.__presses.push({key: e.key, item: bar ? Number(bar.dataset.item) : null,
                         state: bar ? bar.dataset.state : null, t: performance.now(),
                         since: performance.now() - shown});
}, true);
"""


def test_fast_typing_on_a_loaded_server_never_misapplies(app, tmp_path, browser):
    """Digits pressed 0, 50, 150 and 300 ms after the previous one while a process keeps a core
    busy. A press counts for the item whose answer bar was on screen and ready when it happened,
    drawn for at least the seen floor (logged in the page, before the bar sees the key); every
    stored answer must be the first such press for its item, with no revision, and a press on a
    bar already saving, or before its item was drawn for the floor, stores nothing."""
    study = make_study(tmp_path, n_items=60, raters=1, slug=new_slug(), extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 60")
    wait_idle(browser)
    browser.execute_script(PRESS_LOG)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        body = browser.find_element(By.TAG_NAME, "body")
        rng = random.Random(13)
        gaps = [0.0, 0.05, 0.15, 0.3] * 12
        for gap in gaps:
            time.sleep(gap)
            body.send_keys(str(rng.randrange(5)))
        wait_idle(browser)
        presses = browser.execute_script("return window.__presses")
    finally:
        burner.kill()
        burner.wait()
    # a press while the bar's script is still loading has no controls to reach; on a ready bar the
    # first press drawn for the floor is the item's answer; a press at the floor, give or take a
    # frame (25 ms), may count or not, so the answer is one of those up to the first clear one
    allowed, settled = {}, set()
    for p in presses:
        if p["state"] == "ready" and p["item"] not in settled and p["since"] >= FLOOR_MS - 25:
            allowed.setdefault(p["item"], []).append(p["key"])
            if p["since"] >= FLOOR_MS + 25:
                settled.add(p["item"])
    deadline = time.monotonic() + WAIT_S
    while True:  # the last answer may still be on its way
        with storage.read_session() as session:
            stored = [(r.assignment_id, r.revision, r.response) for r in session.exec(
                select(Rating).where(Rating.study_id == study).order_by(Rating.id))]
            refused = len(session.exec(select(Event).where(Event.study_id == study,
                                                            Event.kind == "stale_answer_refused")).all())
        if len(stored) >= len(settled) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    misapplied = [(a, v) for a, _, v in stored if v not in allowed.get(a, [])]
    print(f"\nrace: {len(presses)} presses, {len(stored)} stored answers, {len(misapplied)} "
          f"misapplied, {sum(p['state'] == 'ready' and p['since'] < FLOOR_MS for p in presses)} under the floor, "
          f"{refused} refused stale presses, "
          f"{sum(p['state'] == 'saving' for p in presses)} presses on a saving bar, "
          f"{sum(p['state'] == 'loading' for p in presses)} on a bar still loading")
    assert len(presses) == len(gaps)
    assert not misapplied, [(a, v, [(p["key"], p["state"], round(p["since"])) for p in presses if p["item"] == a])
                            for a, v in misapplied]
    assert all(revision == 0 for _, revision, _ in stored), stored
    assert len({a for a, _, _ in stored}) == len(stored)  # each item answered once
    assert settled <= {a for a, _, _ in stored} <= set(allowed)  # every clear press stored


def test_a_tab_out_of_date_refuses_the_press_and_moves_on(server, browser):
    """Two tabs on the same link: item 1 answered in the second, then a key pressed in the
    first (still showing item 1) is refused and counted, never stored as a revision."""
    base, study, token = server
    first = start_in_two_tabs(browser, f"{base}/?token={token}", "Item 1 of 4")
    press(browser, "2")
    wait_ratings(study, {"i01": ["2"]})
    browser.switch_to.window(first)
    press(browser, "4")  # meant for item 1, which the other tab answered
    wait_text(browser, "already answered")
    wait_text(browser, "Item 2 of 4")
    assert ratings(study) == {"i01": ["2"]}
    with storage.read_session() as session:
        assert len(session.exec(select(Event).where(Event.study_id == study,
                                                    Event.kind == "stale_answer_refused")).all()) == 1


def test_with_image_pass_by_keys_and_mouse_back_reload_finish(app, tmp_path, browser):
    """hoi_similarity_image: alice's 3 pairs with her earlier rating 2 preselected; Enter keeps
    it, a click changes it, Back and a digit revise, reload resumes, the last answer finishes."""
    study, token = image_pass(tmp_path)
    start(browser, f"{app}/?token={token}", "Item 1 of 3")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script(
        "return [...document.images].some(i => i.complete && i.naturalWidth > 100)"),
        message="waiting for the class image")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {  # a 1280 x 800 viewport
        "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    bottom, height = browser.execute_script(  # item and controls fit in one screen
        "return [document.querySelector('.answer-bar').getBoundingClientRect().bottom,"
        " window.innerHeight]")
    assert bottom <= height, f"the answer bar ends at {bottom} px, below the fold ({height} px)"
    with_boxes = image_source(browser)
    button(browser, "Hide the boxes").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: image_source(d) not in (None, with_boxes),
                                         message="waiting for the image without boxes")
    assert "Show the boxes" in button(browser, "Show the boxes").text
    press(browser, Keys.ENTER)  # keep the earlier rating (the switch does not take the key)
    wait_text(browser, "Item 2 of 3")
    button(browser, "4 —").click()  # change it by mouse
    wait_text(browser, "Item 3 of 3")
    wait_ratings(study, {"i01": ["2"], "i02": ["4"]})
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave 4")
    press(browser, "1")
    wait_text(browser, "Item 3 of 3")
    wait_ratings(study, {"i01": ["2"], "i02": ["4", "1"]})
    browser.refresh()
    wait_text(browser, "Item 3 of 3")
    press(browser, "0")
    wait_text(browser, "Thank you!")
    wait_ratings(study, {"i01": ["2"], "i02": ["4", "1"], "i03": ["0"]})


def image_source(driver) -> str | None:
    images = [i for i in driver.find_elements(By.CSS_SELECTOR, '.item-content img')
              if i.is_displayed()]
    return images[0].get_attribute("src") if images else None


def test_imsitu_correctness_by_keys_and_mouse_back_reload_finish(app, tmp_path, browser):
    """imsitu_correctness: marks toggled by digit key and by click, submitted with Enter; Back
    revises; reload resumes; six items finish the study. Stored marks are checked per item."""
    from studyhelpers import write_imsitu_study as write_study

    study = studies.create_study(load_spec(renamed(write_study(tmp_path), new_slug("verbs"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 6")
    press(browser, "1")  # mark prediction 1 correct
    wait_text(browser, "✓ correct")
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of 6")
    button(browser, "2. ").click()  # mark prediction 2 by mouse
    wait_text(browser, "✓ correct")
    button(browser, "Submit").click()
    wait_text(browser, "Item 3 of 6")
    assert sorted(ratings(study).values()) == [["010"], ["100"]]  # stored before item 3 shows
    button(browser, "Back").click()
    wait_text(browser, "Revising an earlier answer (you gave")
    press(browser, "3")
    wait_text(browser, "Revising item 2 of 6 · 2 answered · 4 left")  # counts the answers
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 3 of 6")
    browser.refresh()
    wait_text(browser, "Item 3 of 6")
    for number in range(3, 7):
        wait_text(browser, f"Item {number} of 6")
        press(browser, Keys.ENTER)  # nothing marked: all three wrong
    wait_text(browser, "Thank you!")
    got = ratings(study)
    assert sorted(got.values()) == [["000"]] * 4 + [["010", "011"], ["100"]]


def choose(driver, group: int, mark: str):
    """Click ``mark`` (correct / incorrect / ambiguous) for the ``group``-th candidate."""
    wait_idle(driver)
    candidate = driver.find_elements(By.CSS_SELECTOR, ".mark-form .candidate")[group]
    next(b for b in candidate.find_elements(By.TAG_NAME, "button")
         if b.text.removeprefix("✓ ").startswith(f"{mark} (")).click()


def test_crosshoi_curation_by_mouse_back_reload_finish(app, tmp_path, browser):
    """crosshoi_curation: every candidate marked by mouse (nothing preselected; Submit without a
    mark is refused), Back revises, reload resumes, the last question finishes."""
    from studyhelpers import curation_spec
    curation_spec(tmp_path)
    study = studies.create_study(load_spec(renamed(tmp_path / "cur.toml", new_slug("cur"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of ")
    total = int(browser.find_element(By.TAG_NAME, "body").text.split("Item 1 of ")[1].split()[0])
    button(browser, "Submit").click()
    wait_text(browser, "Mark every candidate")
    assert ratings(study) == {}
    for number in range(1, total + 1):
        wait_text(browser, f"Item {number} of {total}")
        for group, mark in enumerate(("correct", "incorrect", "ambiguous")):
            choose(browser, group, mark)
        button(browser, "Submit").click()
        if number == 1:
            wait_text(browser, f"Item 2 of {total}")
            button(browser, "Back").click()
            wait_text(browser, "Revising an earlier answer (you gave")
            choose(browser, 0, "incorrect")
            button(browser, "Submit").click()
            wait_text(browser, f"Item 2 of {total}")
            browser.refresh()
    wait_text(browser, "Thank you!")
    got = ratings(study)
    assert len(got) == total and sum(len(v) for v in got.values()) == total + 1
    revised = next(v for v in got.values() if len(v) == 2)
    assert revised[0].startswith("m=cia") and revised[1].startswith("m=iia")


def test_shoes_own_study_runs_in_the_browser(app, tmp_path, browser, shared_data, monkeypatch):
    """SHOE's pairs from its own file (499 of its 500: pair 135 shows an excluded sense) —
    glosses and the prediction's lemma on screen, a key press stored for the pair that was shown."""
    study = studies.create_study(load_spec(ROOT / "studies" / "shoe_study.toml"))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 499")
    wait_idle(browser)
    shown = browser.find_element(By.TAG_NAME, "body").text
    press(browser, "3")
    wait_text(browser, "Item 2 of 499")
    got = ratings(study)
    assert list(got.values()) == [["3"]]
    (key,) = got
    with storage.read_session() as session:
        item = session.exec(select(Item).where(Item.study_id == study, Item.item_key == key)).one()
    display = json.loads(item.fields_json)["display"]
    for part in ("gt_verb", "gt_object", "pred_verb", "pred_object"):
        assert display[part] in shown, part
    assert display["pred_object_gloss"][:40] in shown


def test_a_press_while_the_server_restarts_is_kept_and_says_reconnecting(tmp_path, browser):
    """The server stops; the annotator presses 2; the page says "reconnecting…" (not
    Streamlit's "Connection error" dialog); once the server is back on the same port the press
    is stored for the item that was on screen, once, and the next item comes."""
    study = make_study(tmp_path, n_items=3, raters=1, extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    port = free_port()
    with running_app(tmp_path, port) as base:
        start(browser, f"{base}/?token={invite.token}", "Item 1 of 3")
    browser.find_element(By.TAG_NAME, "body").send_keys("2")
    wait_text(browser, "reconnecting…")
    dialogs = [d for d in browser.find_elements(By.CSS_SELECTOR, '[data-testid="stDialog"]')
               if d.is_displayed()]
    assert not dialogs and "Connection error" not in browser.find_element(By.TAG_NAME, "body").text
    assert ratings(study) == {}
    with running_app(tmp_path, port):
        wait_ratings(study, {"i01": ["2"]})
        wait_text(browser, "Item 2 of 3")
        assert "reconnecting" not in browser.find_element(By.TAG_NAME, "body").text
        press(browser, "3")
        wait_ratings(study, {"i01": ["2"], "i02": ["3"]})


def test_cant_judge_and_a_comment_by_keys(app, tmp_path, browser):
    """With ``[answers]`` on: a comment typed in the bar goes with the answer; Esc leaves the
    box, X answers "can't judge"; digits typed in the box are text, not answers."""
    study = make_study(tmp_path, n_items=3, raters=1, slug=new_slug(),
                       extra='order = "fixed"\n[answers]\ncant_judge = true\ncomments = true\n')
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 3")
    wait_text(browser, "X can't judge")
    wait_idle(browser)
    box = browser.find_element(By.CSS_SELECTOR, ".answer-bar textarea")
    box.send_keys("verb 2 unclear")
    box.send_keys(Keys.ESCAPE)
    press(browser, "x")
    wait_text(browser, "Item 2 of 3")
    press(browser, "3")
    wait_text(browser, "Item 3 of 3")
    wait_ratings(study, {"i01": ["cant_judge"], "i02": ["3"]})
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave 3")
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave can't judge")
    WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        # the bar of the revisited item shows its comment (a rerun may replace the bar while it is read)
        lambda d: d.find_element(By.CSS_SELECTOR, ".answer-bar textarea").get_attribute("value")
        == "verb 2 unclear", message="waiting for the stored comment in the box")
    with storage.read_session() as session:
        stored = [(r.response, r.comment) for r in session.exec(
            select(Rating).where(Rating.study_id == study).order_by(Rating.id))]
    assert stored == [("cant_judge", "verb 2 unclear"), ("3", None)]


def test_opening_the_instructions_keeps_the_item_and_a_typed_comment(app, tmp_path, browser):
    """The instructions above an item are sent only while their expander is open: opening it runs
    the page again with them, and the item stays on screen, unanswered, with the comment being
    typed in its bar; the answer then goes with that comment."""
    study = make_study(tmp_path, n_items=2, raters=1, slug=new_slug(),
                       extra='order = "fixed"\n[answers]\ncomments = true\n')
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 2")
    wait_idle(browser)
    reminder = '.st-key-instructions-open'
    assert "Rate the pair." not in browser.find_element(By.CSS_SELECTOR, reminder).get_attribute("textContent")
    box = browser.find_element(By.CSS_SELECTOR, ".answer-bar textarea")
    box.send_keys("half a thought")
    browser.find_element(By.CSS_SELECTOR, f"{reminder} summary").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: "Rate the pair." in d.find_element(
        By.CSS_SELECTOR, reminder).get_attribute("textContent"), message="waiting for the instructions")
    wait_idle(browser)
    WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.CSS_SELECTOR, ".answer-bar textarea").get_attribute("value")
        == "half a thought", message="waiting for the typed comment in the box")
    assert "Item 1 of 2" in browser.find_element(By.CSS_SELECTOR, ".answer-bar").text
    browser.find_element(By.CSS_SELECTOR, ".answer-bar textarea").send_keys(Keys.ESCAPE)
    press(browser, "2")
    wait_text(browser, "Item 2 of 2")
    wait_ratings(study, {"i01": ["2"]})
    with storage.read_session() as session:
        assert session.exec(select(Rating.comment).where(Rating.study_id == study)).all() == ["half a thought"]


def scrolled(driver) -> float:
    """How far the page is scrolled down: the window and every container around the bar."""
    return driver.execute_script(
        "let total = window.scrollY;"
        "for (let n = document.querySelector('.answer-bar'); n; n = n.parentElement)"
        " total += n.scrollTop;"
        "return total;")


def test_on_a_phone_a_tap_brings_the_next_item_into_view(server, browser):
    """At 390 x 700 the item is taller than the screen and the answer buttons stay in view at
    its bottom (sticky): after a tap on one with the page scrolled down, the next item is shown
    from its top, not left scrolled down."""
    base, study, token = server
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 390, "height": 700, "deviceScaleFactor": 2, "mobile": True})
    start(browser, f"{base}/?token={token}", "Item 1 of 4")
    last = button(browser, "4 —")
    for side in browser.find_elements(By.CSS_SELECTOR, ".item-content .side"):  # the pair read first
        scroll_to_read(browser, side)
    assert browser.execute_script("return arguments[0].getBoundingClientRect().bottom", last) <= 700
    browser.execute_script("for (let n = arguments[0]; n; n = n.parentElement) n.scrollTop = n.scrollHeight;"
                           "window.scrollTo(0, document.body.scrollHeight);", last)
    assert scrolled(browser) > 0
    last.click()
    wait_text(browser, "Item 2 of 4")
    wait_idle(browser)
    assert scrolled(browser) == 0
    wait_ratings(study, {"i01": ["4"]})


def test_a_practice_item_shows_its_feedback_before_the_main_items(app, tmp_path, browser):
    from studyhelpers import write_practice
    extra = 'order = "fixed"\n' + write_practice(tmp_path, ["p1,ride,horse,feed,horse,1,Feeding is not riding."])
    study = make_study(tmp_path, n_items=2, raters=1, slug=new_slug(), extra=extra)
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Practice item: after your answer")
    wait_text(browser, "Item 1 of 3")
    press(browser, "3")
    wait_text(browser, "the expected answer is 1")
    wait_text(browser, "Feeding is not riding.")
    assert "You answered 3" in browser.find_element(By.TAG_NAME, "body").text
    press(browser, "2")  # no answer bar on the feedback page: nothing is stored
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of 3")
    assert "Practice item" not in browser.find_element(By.TAG_NAME, "body").text
    press(browser, "4")
    wait_text(browser, "Item 3 of 3")
    wait_ratings(study, {"p1": ["3"], "i01": ["4"]})
