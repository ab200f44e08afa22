"""What is stored is what the annotator had on screen, in all four study types, in a
real headless Chromium, one server for the module with a study of each test in its database
(fixtures and helpers: ``test_browser``).

Keyboard-only: Tab to a control and Enter (or Space) does what a click on it does. Fast typing
("digit digit Enter" at 100–200 ms, digits at 0–300 ms, Backspace + Tab + Enter, with a CPU
burner): a listener in the page, registered before the app's own, records for every key the item
on screen, whether its controls were live, what they showed (the marks, the chosen value) and,
after the app handled the key, whether the screen went to "saving" (an answer was sent) or
dropped the key ("too fast"). The database must then hold, for each item, exactly the answers
that were on screen when they were sent; every key pressed while an answer was saving must have
been dropped, said so on the screen where it was pressed, and counted in the events.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from sqlmodel import select
from studyhelpers import make_study
from test_browser import (  # noqa: F401
    app,
    browser,
    button,
    image_pass,
    new_slug,
    own_database,
    press,
    ratings,
    renamed,
    start,
    wait_idle,
    wait_ratings,
    wait_text,
)

from studyapp.core import storage
from studyapp.core.models import Event, Rating
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

pytestmark = pytest.mark.slow

# Registered in the capture phase on window: runs before the app's document listener. After
# the app handled the key (a task queued behind it), it records what the key did.
KEY_LOG = """
window.__keys = [];
const screenNow = () => {
  const c = document.querySelector('.answer-bar, .mark-form');
  if (!c) return {item: null, state: null, marks: null, chosen: null};
  const verbs = [...c.querySelectorAll('.verb')];
  const cands = [...c.querySelectorAll('.candidate')];
  let marks = null;
  if (verbs.length) marks = verbs.map((b) => b.classList.contains('on') ? '1' : '0').join('');
  if (cands.length) marks = cands.map((row) => {
      const on = row.querySelector('button.mark.on');
      return on ? on.textContent.replace('✓ ', '')[0] : '-'; }).join('');
  const chosen = c.querySelector('.values button.chosen');
  return {item: Number(c.dataset.item), state: c.dataset.state, marks,
          chosen: chosen ? chosen.textContent.split(' ')[0] : null,
          revising: document.body.innerText.includes('Revising an earlier answer')};
};
window.addEventListener('keydown', (e) => {
  const before = screenNow();
  const f = document.activeElement;
  const entry = {key: e.key, before, focus: f && f.tagName === 'BUTTON' ? f.textContent.slice(0, 40) : null};
  entry.droppedBefore = window.__studyappNotApplied || 0;
  // the cue of the screen the key was pressed on: read later even if that screen was replaced
  const screenEl = document.querySelector('.answer-bar, .mark-form');
  const cueNode = screenEl ? screenEl.querySelector('.cue') : null;
  window.__keys.push(entry);
  setTimeout(() => {
    entry.after = screenNow();
    const said = /Too fast — nothing was recorded|Nothing was recorded for/;
    entry.cue = said.test(cueNode ? cueNode.textContent : '') || said.test(document.body.innerText);
    entry.cueText = [...document.querySelectorAll('.cue')].map((c) => c.textContent).join(' | ');
  }, 0);
}, true);
// bubbling on window: right after the app's own listener handled this key, before any other key
window.addEventListener('keydown', () => {
  const entry = window.__keys[window.__keys.length - 1];
  entry.dropped = (window.__studyappNotApplied || 0) > entry.droppedBefore;
});
"""


def log_keys(driver):
    driver.execute_script(KEY_LOG)


def keys_logged(driver) -> list[dict]:
    time.sleep(0.1)
    return driver.execute_script("return window.__keys")


def stored(study: int) -> list[tuple[int, int, str]]:
    """(assignment, revision, response) of every rating, oldest first."""
    with storage.read_session() as session:
        return [(r.assignment_id, r.revision, r.response) for r in session.exec(
            select(Rating).where(Rating.study_id == study).order_by(Rating.id))]


def events(study: int, kind: str) -> list[dict]:
    with storage.read_session() as session:
        return [json.loads(e.detail) for e in session.exec(
            select(Event).where(Event.study_id == study, Event.kind == kind))]


def tab_to(driver, label_start: str | None = None, element=None, limit: int = 60):
    """Press Tab until the focused control's label starts with ``label_start`` (or it is
    ``element``), as a keyboard user does; fails when it is not reached in ``limit`` presses."""
    wait_idle(driver)
    for _ in range(limit):
        focused = driver.switch_to.active_element
        if element is not None and focused == element:
            return focused
        if label_start is not None and focused.tag_name == "button" \
                and focused.text.strip().startswith(label_start):
            return focused
        focused.send_keys(Keys.TAB)
    raise AssertionError(f"Tab never reached {label_start!r}")


def sent(entries: list[dict]) -> list[dict]:
    """The keys after which the screen of a live item went to "saving": the answers sent."""
    return [e for e in entries if e["before"]["state"] == "ready" and e.get("after")
            and e["after"]["item"] == e["before"]["item"] and e["after"]["state"] == "saving"]


def on_screen_answer(entry: dict) -> str | None:
    """What the screen showed as the answer when the key was pressed: the digit's value on the
    answer bar, the chosen (preselected) value for Enter, the marks shown for a mark form."""
    before = entry["before"]
    focused = re.match(r"(\d) — ", entry.get("focus") or "")
    if entry["key"] in ("Enter", " ") and focused:  # a value button reached with Tab: its value
        return focused.group(1)
    if before["marks"] is not None:
        return before["marks"] if entry["key"] == "Enter" else None
    if entry["key"].isdigit():
        return entry["key"]
    if entry["key"] == "Enter":
        return before["chosen"]
    return None


# ------------------------------------------------------------------------ keyboard = mouse
def test_text_revising_tab_to_a_value_and_enter_stores_it(app, tmp_path, browser):
    """Text study while revising: Tab to "0" and Enter stores 0 (it used to act as Continue)."""
    study = make_study(tmp_path, n_items=3, raters=1, slug=new_slug(), extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 3")
    press(browser, "3")
    wait_text(browser, "Item 2 of 3")
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave 3")
    tab_to(browser, "0 —").send_keys(Keys.ENTER)
    wait_ratings(study, {"i01": ["3", "0"]})
    wait_text(browser, "Item 2 of 3")
    tab_to(browser, "4 —").send_keys(" ")  # Space is a click too
    wait_ratings(study, {"i01": ["3", "0"], "i02": ["4"]})


def test_with_image_tab_to_zero_and_enter_stores_zero_not_the_preselected(app, tmp_path, browser):
    study, token = image_pass(tmp_path)
    start(browser, f"{app}/?token={token}", "Item 1 of 3")
    wait_text(browser, "Your earlier rating (without the image): 2")
    focused = tab_to(browser, "0 —")
    assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused) != "none"
    focused.send_keys(Keys.ENTER)
    wait_text(browser, "Item 2 of 3")
    wait_ratings(study, {"i01": ["0"]})
    press(browser, Keys.ENTER)  # Enter on the page keeps the preselected rating
    wait_text(browser, "Item 3 of 3")
    wait_ratings(study, {"i01": ["0"], "i02": ["2"]})


def test_imsitu_tab_to_a_verb_and_enter_toggles_it(app, tmp_path, browser):
    from studyhelpers import write_imsitu_study

    study = studies.create_study(load_spec(renamed(write_imsitu_study(tmp_path), new_slug("verbs"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 6")
    verb = tab_to(browser, "1. ")
    verb.send_keys(Keys.ENTER)  # toggles, never submits
    wait_text(browser, "✓ correct")
    verb.send_keys(" ")  # and Space toggles back
    time.sleep(0.3)
    assert "✓ correct" not in browser.find_element(By.TAG_NAME, "body").text
    verb.send_keys(Keys.ENTER)
    assert ratings(study) == {}
    tab_to(browser, "Submit").send_keys(Keys.ENTER)
    wait_text(browser, "Item 2 of 6")
    (key,) = ratings(study)
    wait_ratings(study, {key: ["100"]})


def test_crosshoi_tab_to_marks_and_enter_marks_them(app, tmp_path, browser):
    from studyhelpers import curation_spec

    from studyapp.studytypes.crosshoi_curation import crosshoi

    curation_spec(tmp_path)
    study = studies.create_study(load_spec(renamed(tmp_path / "cur.toml", new_slug("cur"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of ")
    wait_idle(browser)
    for row, mark in enumerate(("incorrect", "ambiguous", "correct")):
        target = next(b for b in browser.find_elements(By.CSS_SELECTOR, ".mark-form .candidate")[row]
                      .find_elements(By.TAG_NAME, "button") if b.text.startswith(mark))
        tab_to(browser, element=target).send_keys(Keys.ENTER)
        time.sleep(0.2)
    tab_to(browser, "Submit").send_keys(Keys.ENTER)
    wait_text(browser, "Item 2 of ")
    (key,) = ratings(study)
    wait_ratings(study, {key: [crosshoi.encode_response(["incorrect", "ambiguous", "correct"], [], [])]})


# ------------------------------------------------------------------------ fast typing
FRAMES = """
window.__frames = [];
let last = '';
const sample = () => {
  const screens = document.querySelectorAll('.answer-bar, .mark-form');
  const c = screens[0];
  const p = c ? c.querySelector('.progress-text') : null;
  const now = JSON.stringify([screens.length, c ? c.dataset.item : null, c ? c.dataset.state : null,
                              p ? p.textContent.split(' · ')[0] : null]);
  if (now !== last) { window.__frames.push(JSON.parse(now)); last = now; }
  requestAnimationFrame(sample);
};
requestAnimationFrame(sample);
"""
ACTING = set("0123456789xcia") | {"Enter", "Backspace"}


def burner():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def type_keys(driver, plan: list[tuple[str, float]]):
    """Each key after its gap (seconds), to whatever has the focus (as a person types)."""
    from selenium.webdriver.common.action_chains import ActionChains
    for key, gap in plan:
        time.sleep(gap)
        ActionChains(driver).send_keys(key).perform()


KEY_NAMES = {Keys.ENTER: "Enter", Keys.BACKSPACE: "Backspace", Keys.TAB: "Tab"}


def check_typed_equals_stored(driver, study: int, marks_prefix: str = "") -> dict:
    """The stored-what-was-seen property over what the page logged (``KEY_LOG``, ``FRAMES``) and what the
    database holds; returns the counts for the report."""
    wait_idle(driver)
    entries = keys_logged(driver)
    frames = driver.execute_script("return window.__frames")
    pending = driver.execute_script(
        "return JSON.parse(sessionStorage.getItem('studyapp.not-applied') || '[]').length")
    answers = []  # (assignment, answer) sent from a live screen, as it was on screen
    for e in sent(entries):
        answer = on_screen_answer(e)
        if e["key"] == "Enter" and e["before"]["revising"] and e["before"]["marks"] is None \
                and not re.match(r"\d — ", e.get("focus") or ""):
            answer = None  # Enter while revising on the bar is "Continue"
        if e["key"] == "x":
            answer = "cant_judge"
        if answer is not None:
            answers.append((e["before"]["item"], answer))
    deadline = time.monotonic() + 30
    while True:  # the last answer may still be on its way
        rows = stored(study)
        if len(rows) >= len({(a, v) for a, v in answers}) - 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    expected: dict[int, list[str]] = {}
    for item, answer in answers:  # the same answer again is not a new revision
        seq = expected.setdefault(item, [])
        if not seq or seq[-1] != answer:
            seq.append(answer)
    got: dict[int, list[str]] = {}
    for a, _rev, response in rows:
        got.setdefault(a, []).append(response.split(";")[0].removeprefix("m=") if marks_prefix else response)
    on_locked = [e for e in entries if e["key"] in ACTING and e["before"]["state"] not in ("ready", None)]
    dropped = [e for e in entries if e.get("dropped")]
    # keys pressed on the last item's screen after its answer: no item is left to press them
    # again for, and the completion page replaces that screen (which said "too fast")
    finished = "Thank you!" in driver.find_element(By.TAG_NAME, "body").text
    last = max((e["before"]["item"] for e in entries if e["before"]["item"] is not None), default=None)
    after_end = [e for e in on_locked if finished and e["before"]["item"] == last
                 and e["before"]["state"] == "saving"]
    silent = [e for e in on_locked if not (e.get("dropped") and e.get("cue")) and e not in after_end]
    counted = sum(ev["count"] for ev in events(study, "keys_not_applied"))
    # no frame shows a screen beside another one, and a live screen's counter is its own item's
    two = [f for f in frames if f[0] > 1]
    numbers = numbers_of(study)
    mismatched = [f for f in frames if f[2] == "ready" and f[1] is not None and f[3]
                  and not f[3].lower().endswith(f"item {numbers.get(int(f[1]))} of "
                                                + f[3].split(" of ")[-1])]
    report = {"keys": len(entries), "answers sent": len(answers), "stored": len(rows),
              "stored == on screen": sum(got.get(a) == v for a, v in expected.items()),
              "items": len(expected), "keys dropped (cue shown)": len(dropped), "on a locked screen": len(on_locked),
              "silently lost": len(silent), "after the last answer": len(after_end),
              "counted in events": counted, "pending": pending,
              "frames": len(frames)}
    print("\ntyped vs stored:", json.dumps(report))
    assert got == expected, (got, expected)
    assert not silent, [(e["key"], e["before"]["state"], e["after"]["state"], e.get("cueText"))
                        for e in silent]
    assert counted + pending == len(dropped), (counted, pending, len(dropped))
    assert not events(study, "stale_answer_refused")
    assert not two, two
    assert not mismatched, mismatched[:5]
    return report


def numbers_of(study: int) -> dict[int, int]:
    """assignment id -> its number in the annotator's sequence (1-based, by position)."""
    from studyapp.core.models import Assignment
    with storage.read_session() as session:
        rows = session.exec(select(Assignment).where(Assignment.study_id == study)
                            .order_by(Assignment.annotator_id, Assignment.position)).all()
    out, count = {}, {}
    for a in rows:
        count[a.annotator_id] = count.get(a.annotator_id, 0) + 1
        out[a.id] = count[a.annotator_id]
    return out


def gaps(rng, n, low=0.1, high=0.2):
    return [rng.uniform(low, high) for _ in range(n)]


def test_text_fast_digits_backspace_tab_enter_under_load(app, tmp_path, browser):
    """Text study, a CPU burner running: digits at 0–300 ms, then Backspace + Tab + Enter on a
    value (a revision by keyboard), then more digits at 100–200 ms."""
    study = make_study(tmp_path, n_items=40, raters=1, slug=new_slug(), extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    rng = random.Random(29)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 40")
    wait_idle(browser)
    browser.execute_script(KEY_LOG + FRAMES)
    hog = burner()
    try:
        type_keys(browser, [(str(rng.randrange(5)), g) for g in [0, 0.05, 0.1, 0.15, 0.2, 0.3] * 3])
        wait_idle(browser)
        type_keys(browser, [(Keys.BACKSPACE, 0)])
        wait_text(browser, "Revising item")
        tab_to(browser, "1 —")
        type_keys(browser, [(Keys.ENTER, 0)] + [(str(rng.randrange(5)), g) for g in gaps(rng, 12)])
        report = check_typed_equals_stored(browser, study)
    finally:
        hog.kill()
        hog.wait()
    assert report["stored"] >= 8


def test_with_image_fast_digits_and_enter_under_load(app, tmp_path, browser):
    """With-image pass (earlier rating preselected), a CPU burner running: digits and Enter at
    100–200 ms; Tab + Enter on a value."""
    study, token = image_pass(tmp_path, n_items=12)
    rng = random.Random(7)
    start(browser, f"{app}/?token={token}", "Item 1 of 12")
    wait_idle(browser)
    browser.execute_script(KEY_LOG + FRAMES)
    hog = burner()
    try:
        tab_to(browser, "0 —")
        type_keys(browser, [(Keys.ENTER, 0)])
        keys = [rng.choice([Keys.ENTER, "0", "1", "3", "4"]) for _ in range(14)]
        type_keys(browser, list(zip(keys, gaps(rng, len(keys)))))
        report = check_typed_equals_stored(browser, study)
    finally:
        hog.kill()
        hog.wait()
    assert report["stored"] >= 4


def write_big_imsitu(folder, n_images: int = 8):
    """An imsitu_correctness study: ``n_images`` generated images, two models' top-5 verbs."""
    from PIL import Image
    verbs = ["jumping", "leaping", "falling", "riding", "racing", "driving", "eating", "lying",
             "resting", "sleeping", "plunging", "carrying"]
    (folder / "images").mkdir()
    pred, images = {"m1": {}, "m2": {}}, {}
    for k in range(n_images):
        name = f"{verbs[k % len(verbs)]}_{k}.jpg"
        Image.new("RGB", (64, 48), (20 * k % 255, 120, 200)).save(folder / "images" / name)
        pred["m1"][name] = [verbs[(k + j) % len(verbs)] for j in range(5)]
        pred["m2"][name] = [verbs[(k + 2 * j + 1) % len(verbs)] for j in range(5)]
        images[name] = ["c1"]
    (folder / "pred.json").write_text(json.dumps(pred))
    (folder / "clusters.json").write_text(json.dumps({"clusters": {"c1": ["jumping", "leaping"]},
                                                      "images": images}))
    spec = folder / "verbs.toml"
    spec.write_text('''title = "Verb check"
study_type = "imsitu_correctness"
instructions = "Mark the verbs that describe the image."
raters_per_item = 2
order = "fixed"
[items]
source = "sampler"
predictions = "pred.json"
image_root = "images"
clusters = "clusters.json"
k = 5
seed = 1
''')
    return spec


def test_imsitu_digit_digit_enter_at_100_to_200_ms_under_load(app, tmp_path, browser):
    """The issue's pattern: "digit digit Enter" for item after item at 100–200 ms, a CPU
    burner running. Stored marks are those on screen at the Enter that sent them; digits
    pressed while the last answer was saving were dropped ("too fast") and counted."""
    study = studies.create_study(load_spec(renamed(write_big_imsitu(tmp_path), new_slug("verbs"))))
    (invite,) = studies.invite(study, 1)
    rng = random.Random(150)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 16")
    wait_idle(browser)
    browser.execute_script(KEY_LOG + FRAMES)
    hog = burner()
    try:
        plan = []
        for _ in range(10):
            plan += [(str(rng.randint(1, 5)), rng.uniform(0.1, 0.2)),
                     (str(rng.randint(1, 5)), rng.uniform(0.1, 0.2)),
                     (Keys.ENTER, rng.uniform(0.1, 0.2))]
        type_keys(browser, plan)
        report = check_typed_equals_stored(browser, study)
    finally:
        hog.kill()
        hog.wait()
    assert report["stored"] >= 3


def test_crosshoi_fast_marks_and_enter_under_load(app, tmp_path, browser):
    """CrossHOI curation: "c i a Enter" (and other marks) at 100–200 ms, a CPU burner running."""
    from studyhelpers import curation_spec

    curation_spec(tmp_path, n_images=8)
    study = studies.create_study(load_spec(renamed(tmp_path / "cur.toml", new_slug("cur"))))
    (invite,) = studies.invite(study, 1)
    rng = random.Random(3)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of ")
    wait_idle(browser)
    browser.execute_script(KEY_LOG + FRAMES)
    hog = burner()
    try:
        plan = []
        for _ in range(8):
            plan += [(rng.choice("cia"), rng.uniform(0.1, 0.2)) for _ in range(3)]
            plan.append((Keys.ENTER, rng.uniform(0.1, 0.2)))
        type_keys(browser, plan)
        report = check_typed_equals_stored(browser, study, marks_prefix="m=")
    finally:
        hog.kill()
        hog.wait()
    assert report["stored"] >= 3
