"""Every answer given to what was seen, in a real headless Chromium, for all four study types.

Double presses: a double tap (touch, at 390 x 844), a double click and a fast second key, each
60–350 ms after the first, sent as the browser's own input events (CDP) to the point or key of
the first, so that the second reaches whatever is drawn by then. A listener in the page,
registered before the app's own, records for every press the item on screen, its state, how
long it had been drawn and what it showed (the value pressed, the marks). The database must
then hold exactly one answer per round, for the item on screen at the round's first press and
as it showed it, every stored answer drawn for at least the floor (``seen_ms`` >= 300) with all
its rows in view; no press made under the floor stored anything, and each was counted.

Everything in view: at 1366 x 768 and 390 x 844 each answer row and control of each type is
hit-tested (``elementFromPoint``); a row covered at first view (under the sticky answer bar,
below the fold) must not be answerable: the answer is refused and that row brought into view.
One server for the module, a study of each type in its database.
"""

from __future__ import annotations

import random
import time

import pytest
from browserhelpers import (
    ANSWER_ROWS,
    module_database,
    press_at,
    read_whole_item,
    running_app,
    screen_size,
    scroll_to_read,
)
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import curation_spec, image_spec, invite_same, make_study
from test_browser import browser, start, wait_idle  # noqa: F401
from test_browser_keys import key_event
from test_browser_typed import write_big_imsitu

from studyapp.core import storage
from studyapp.core.models import Event, Rating
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.studytypes.crosshoi_curation import crosshoi

pytestmark = pytest.mark.slow
FLOOR_MS = 300          # the default [answers] min_seen_ms
MARGIN_MS = 25          # the page's clock for a press and the screen's may differ by a frame
TYPES = ("text", "image", "imsitu", "crosshoi")


@pytest.fixture(autouse=True)
def own_database():
    """The module's studies share one database and one server (``app``)."""
    yield


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """A study of each type in one database, and the app over it: (base URL, study ids)."""
    folder = tmp_path_factory.mktemp("seen")
    with module_database(folder):
        made = {}
        for name in TYPES:
            (folder / name).mkdir()
        made["text"] = make_study(folder / "text", n_items=8, raters=40, slug="text", extra='order = "fixed"\n')
        made["image raters"] = pass_with_image(folder / "image", n_raters=10)
        made["image"] = studies.create_study(load_spec(image_spec(folder / "image", n_items=6, raters=10)))
        verbs = write_big_imsitu(folder / "imsitu")   # five verbs an image, as imSitu's top 5
        verbs.write_text(verbs.read_text().replace("raters_per_item = 2", "raters_per_item = 40"))
        made["imsitu"] = studies.create_study(load_spec(verbs))
        curation = curation_spec(folder / "crosshoi", n_images=6)
        curation.raters_per_item = 40
        made["crosshoi"] = studies.create_study(curation)
        with running_app(folder) as base:
            yield base, made
        storage.dispose_all()


def pass_with_image(folder, n_raters: int) -> list[str]:
    """The no-image study ("first") of 6 pairs, which ``n_raters`` raters rated 2 each: their
    pseudonyms (each may then take the with-image pass once)."""
    from studyapp.platform import assignment
    study = make_study(folder, n_items=6, raters=n_raters, slug="first", extra='order = "fixed"\n')
    names = [f"r{k}" for k in range(n_raters)]
    for annotator, _ in invite_same(study, names).values():
        while (task := assignment.next_item(annotator)) is not None:
            assignment.submit(annotator, task.assignment_id, 2, 1.0)
    return names


def token(made: dict, kind: str) -> str:
    """A new annotator of the study of ``kind``."""
    if kind == "image":
        name = made["image raters"].pop()
        return invite_same(made["image"], [name])[name][1]
    return studies.invite(made[kind], 1)[0].token


PRESS_LOG = """
window.__presses = [];
const screenNow = () => {
  const c = document.querySelector('.answer-bar, .mark-form');
  if (!c) return {item: null, state: null, marks: null};
  const verbs = [...c.querySelectorAll('.verb')], cands = [...c.querySelectorAll('.candidate')];
  let marks = null;
  if (verbs.length) marks = verbs.map((b) => b.classList.contains('on') ? '1' : '0').join('');
  if (cands.length) marks = cands.map((row) => {
    const on = row.querySelector('button.mark.on'); return on ? on.className.split(' ')[1] : '-'; }).join(',');
  const chosen = c.querySelector('.values button.chosen');
  return {item: Number(c.dataset.item), state: c.dataset.state, marks,
          chosen: chosen ? chosen.textContent.split(' ')[0] : null};
};
const log = (kind, e) => {
  const K = window.__studyappKeys || {};
  const b = e.target && e.target.closest ? e.target.closest('button') : null;
  window.__presses.push({kind, key: e.key || null, ...screenNow(), since: performance.now() - (K.shownAt || 0),
                         target: b ? b.textContent : null, droppedBefore: window.__studyappNotApplied || 0});
};
window.addEventListener('keydown', (e) => { if (!e.repeat) log('key', e); }, true);
window.addEventListener('pointerdown', (e) => log(e.pointerType, e), true);
"""
READY = """const c = document.querySelector('.answer-bar, .mark-form');
return c && c.dataset.state === 'ready' ? {item: Number(c.dataset.item), answerable: c.dataset.answerable} : null"""
CENTER = """const r = arguments[0].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]"""


def ready(driver, answerable: str | None = None, other_than: int | None = None, timeout: float = 30) -> int:
    """Until a screen is ready (and ``answerable`` is what it says, if given), of another item than
    ``other_than``; returns its item."""
    def look(d):
        s = d.execute_script(READY)
        return s and s["item"] != other_than and (answerable is None or s["answerable"] == answerable) and s
    return WebDriverWait(driver, timeout, poll_frequency=0.01).until(look)["item"]


def center(driver, css: str, index: int = 0, text: str | None = None) -> tuple[float, float]:
    """The viewport centre of the ``index``-th element matching ``css`` (whose text starts with
    ``text``), scrolled into view first when it is not."""
    els = [e for e in driver.find_elements("css selector", css) if text is None or e.text.startswith(text)]
    el = els[index]
    x, y = driver.execute_script(CENTER, el)
    if not driver.execute_script("const e = document.elementFromPoint(arguments[1], arguments[2]);"
                                 "return !!e && arguments[0].contains(e)", el, x, y):
        scroll_to_read(driver, el, 0.2)
        x, y = driver.execute_script(CENTER, el)
    return x, y


def press(driver, how: str, *, key: str | None = None, at: tuple[float, float] | None = None, second=False):
    """One press: ``how`` "key" (``key``), "mouse" or "touch" (at point ``at``)."""
    if how == "key":
        key_event(driver, key, "keyDown")
        key_event(driver, key, "keyUp")
    else:
        press_at(driver, *at, pointer=how, clicks=2 if second and how == "mouse" else 1)


def double(driver, how: str, gap_s: float, *, key: str | None = None, at=None) -> None:
    press(driver, how, key=key, at=at)
    time.sleep(gap_s)
    press(driver, how, key=key, at=at, second=True)


def round_of(driver, kind: str, how: str, gap_s: float, rng) -> str:
    """One answer as a hurried annotator gives it: the item read (all in view, the floor
    passed), then the answer's last press doubled; returns the answer it stands for."""
    ready(driver)
    if driver.execute_script(READY)["answerable"] == "unseen":   # asked to bring the rest into view
        read_whole_item(driver)
    ready(driver, answerable="yes")
    if kind == "text":
        value = str(rng.randrange(5))
        at = None if how == "key" else center(driver, ".answer-bar .values button", text=f"{value} —")
        ready(driver, answerable="yes")
        double(driver, how, gap_s, key=value, at=at)
        return value
    if kind == "image":
        value = rng.choice(["keep", "1", "3"])
        key = "Enter" if value == "keep" else value
        at = None if how == "key" else center(driver, ".answer-bar .values button",
                                              text=f"{'2' if value == 'keep' else value} —")
        ready(driver, answerable="yes")
        double(driver, how, gap_s, key=key, at=at)
        return "2" if value == "keep" else value
    if kind == "imsitu":
        k = rng.randrange(3)
        if how == "key":
            press(driver, "key", key=str(k + 1))
        else:
            press(driver, how, at=center(driver, ".mark-form .verb", k))
        time.sleep(0.1)
        marks = driver.execute_script("return [...document.querySelectorAll('.mark-form .verb')]"
                                      ".map((b) => b.classList.contains('on') ? '1' : '0').join('')")
        double(driver, how, gap_s, key="Enter", at=None if how == "key" else center(driver, ".mark-form .submit"))
        return marks
    n = len(driver.find_elements("css selector", ".mark-form .candidate"))
    chosen = [rng.choice(["correct", "incorrect", "ambiguous"]) for _ in range(n)]
    for k, mark in enumerate(chosen):
        if how == "key":
            press(driver, "key", key=str(k + 1))
            press(driver, "key", key=mark[0])
        else:
            press(driver, how, at=center(driver, f".mark-form .candidate:nth-child({k + 1}) button.mark.{mark}"))
        time.sleep(0.05)
    ready(driver, answerable="yes")
    double(driver, how, gap_s, key="Enter", at=None if how == "key" else center(driver, ".mark-form .submit"))
    return crosshoi.encode_response(chosen)


def shown_answer(press: dict, kind: str) -> str | None:
    """The answer a logged press stood for on the screen it was made on: its digit or the value
    button under it, the preselected value for Enter, the marks shown for a Submit."""
    if kind == "imsitu":
        return press["marks"]
    if kind == "crosshoi":
        return crosshoi.encode_response(press["marks"].split(","))
    if press["key"] == "Enter":
        return press["chosen"]
    return press["key"] if press["kind"] == "key" else (press["target"] or "").split(" ")[0]


def stored(study: int, annotator_token: str) -> list[Rating]:
    from studyapp.platform import assignment
    annotator = assignment.resolve_token(annotator_token)
    with storage.read_session() as session:
        return list(session.exec(select(Rating).where(Rating.study_id == study, Rating.annotator_id == annotator)
                                 .order_by(Rating.id)))


@pytest.mark.parametrize("how", ["key", "mouse", "touch"])
@pytest.mark.parametrize("kind", TYPES)
def test_double_presses_never_answer_an_item_not_yet_seen(app, browser, kind, how):
    """Rounds of "read the item, then answer with a double press" (the second 60–350 ms after
    the first); the database is checked against what the page showed at each press."""
    base, made = app
    rng = random.Random(f"{kind}-{how}")
    if how == "touch":
        screen_size(browser, "phone")
    link_token = token(made, kind)
    start(browser, f"{base}/?token={link_token}", "Item 1 of ")
    wait_idle(browser)
    browser.execute_script(PRESS_LOG)
    rounds = 3 if kind in ("imsitu", "crosshoi") else 4
    intended = []   # (item on screen at the round's first press, the answer it stands for)
    for _ in range(rounds):
        item = ready(browser)
        gap = rng.uniform(0.06, 0.35)
        intended.append((item, round_of(browser, kind, how, gap, rng)))
        ready(browser, other_than=item)
    time.sleep(1.0)
    presses = browser.execute_script("return window.__presses")
    dropped_total = browser.execute_script("return window.__studyappNotApplied || 0")
    rows = stored(made[kind], link_token)
    # every stored answer: drawn for the floor, everything in view, once per item
    assert rows and all(r.seen_ms is not None and r.seen_ms >= FLOOR_MS and r.in_view for r in rows), \
        [(r.response, r.seen_ms, r.in_view) for r in rows]
    got = {r.assignment_id: r.response for r in rows}
    assert len(got) == len(rows)
    # what each round meant is what was stored for its item
    assert [(item, got.get(item)) for item, _ in intended] == intended, (intended, got, presses)
    # presses made under the floor on a live screen of an item other than a round's: nothing stored
    round_items = {item for item, _ in intended}
    early = [p for p in presses if p["state"] == "ready" and p["since"] < FLOOR_MS - MARGIN_MS
             and (p["kind"] == "key" or p["target"] is not None)]   # a press on a control, or a key
    assert not [p for p in early if p["item"] not in round_items and p["item"] in got], (early, got)
    # any other answer came from a press (the second of a double press) made after the floor
    late = {}
    for p in presses:
        if p["state"] == "ready" and p["since"] >= FLOOR_MS - MARGIN_MS:
            late.setdefault(p["item"], p)
    assert set(got) - round_items <= set(late), (got, intended, presses)
    # ... and is what that press meant on the screen it was made on
    assert all(got[item] == shown_answer(late[item], kind) for item in set(got) - round_items), (got, late)
    print(f"\n{kind} {how}: {len(presses)} presses in {len(intended)} rounds, {len(early)} under the floor "
          f"on a live screen, {dropped_total} dropped (counted), {len(rows)} stored "
          f"({len(set(got) - round_items)} by a second press after the floor)")
    # each key under the floor was dropped and counted (a tap or click the browser itself
    # swallowed, e.g. as part of a double-tap gesture, reached no control: nothing to count)
    assert dropped_total >= len([p for p in early if p["kind"] == "key"]), early
    if how == "touch":
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# ------------------------------------------------------------------------ everything in view
CONTROLS = {"text": ".item-content .side, .answer-bar .values button, .answer-bar .nav-button",
            "image": ".item-content .side, .answer-bar .values button, .answer-bar .nav-button",
            "imsitu": ".mark-form .verb, .mark-form .submit, .mark-form .nav-button",
            "crosshoi": ".mark-form .candidate button.mark, .mark-form .submit, .mark-form .nav-button"}
UNCOVERED = """return [...document.querySelectorAll(arguments[0])].map((el, i) => {
  const r = el.getBoundingClientRect(), x = r.left + r.width / 2;
  const hit = (y) => { const e = document.elementFromPoint(x, y); return !!e && el.contains(e); };
  const ok = x >= 0 && x < innerWidth && [r.top + 3, r.top + r.height / 2, r.bottom - 3]
    .every((y) => y >= 0 && y < innerHeight && hit(y));
  return {i, text: (el.getAttribute('aria-label') || el.textContent).slice(0, 40), ok};
});"""
ANSWER_KEY = {"text": "2", "image": "Enter", "imsitu": "Enter", "crosshoi": "Enter"}


@pytest.mark.parametrize("size", ["laptop", "phone"])
@pytest.mark.parametrize("kind", TYPES)
def test_every_answer_row_is_uncovered_or_brought_into_view_before_an_answer(app, browser, kind, size):
    """At first view every row and control is uncovered (hit-tested), or an answer is refused,
    said, and the first covered row brought into view; once all were seen the answer is stored."""
    base, made = app
    screen_size(browser, size)
    link_token = token(made, kind)
    start(browser, f"{base}/?token={link_token}", "Item 1 of ")
    wait_idle(browser)
    first = browser.execute_script(UNCOVERED, CONTROLS[kind])
    covered = [c["text"] for c in first if not c["ok"]]
    rows_covered = [c for c in browser.execute_script(UNCOVERED, ANSWER_ROWS) if not c["ok"]]
    print(f"\n{kind} at {size}: {len(first)} controls, covered at first view: {covered}")
    if kind == "crosshoi":   # every candidate marked first: a covered one only once brought into view
        time.sleep(FLOOR_MS / 1000 + 0.1)
        rows = browser.find_elements("css selector", ".mark-form .candidate")
        if rows_covered:   # the last covered one chosen and marked at once: refused, brought into view
            k = max(c["i"] for c in rows_covered)
            for key in (str(k + 1), "c"):
                key_event(browser, key, "keyDown")
                key_event(browser, key, "keyUp")
            time.sleep(0.1)
            assert "on" not in rows[k].find_element("css selector", "button.mark.correct").get_attribute("class")
            toast = browser.execute_script("return document.getElementById('studyapp-toast').textContent")
            assert "not yet in view" in toast or "Too fast" in toast, toast
        for k, row in enumerate(rows):   # then each in turn, read (uncovered for the floor) and marked
            key_event(browser, str(k + 1), "keyDown")
            key_event(browser, str(k + 1), "keyUp")
            WebDriverWait(browser, 10).until(lambda d, k=k: d.execute_script(UNCOVERED, ANSWER_ROWS)[k]["ok"])
            time.sleep(FLOOR_MS / 1000 + 0.2)
            key_event(browser, "c", "keyDown")
            key_event(browser, "c", "keyUp")
            time.sleep(0.2)
            assert "on" in row.find_element("css selector", "button.mark.correct").get_attribute("class"), k
    before = len(stored(made[kind], link_token))
    if rows_covered:
        assert browser.execute_script(READY)["answerable"] in ("unseen", "yes")
    if rows_covered and kind != "crosshoi":
        key_event(browser, ANSWER_KEY[kind], "keyDown")
        key_event(browser, ANSWER_KEY[kind], "keyUp")
        time.sleep(0.6)
        assert len(stored(made[kind], link_token)) == before, f"{kind}: answered with rows not yet seen"
        toast = browser.execute_script("return document.getElementById('studyapp-toast').textContent")
        assert "not yet in view" in toast, toast
        read_whole_item(browser)
    else:
        assert not covered or kind == "crosshoi", covered
    ready(browser, answerable="yes")
    key_event(browser, ANSWER_KEY[kind], "keyDown")
    key_event(browser, ANSWER_KEY[kind], "keyUp")
    deadline = time.monotonic() + 20
    while len(rows := stored(made[kind], link_token)) == before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(rows) == before + 1 and rows[-1].in_view and rows[-1].seen_ms >= FLOOR_MS
    with storage.read_session() as session:
        assert not session.exec(select(Event).where(Event.kind == "answer_under_floor")).all()
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
