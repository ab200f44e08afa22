"""Issue 29: what is stored is what the annotator had on screen, in all four study types, in a
real headless Chromium (fixtures and helpers: ``test_browser``).

Keyboard-only: Tab to a control and Enter (or Space) does what a click on it does. Fast typing
("digit digit Enter" at 100–200 ms, digits at 0–300 ms, Backspace + Tab + Enter, with a CPU
burner): a listener in the page, registered before the app's own, records for every key the item
on screen, whether its controls were live, what they showed (the marks, the chosen value) and,
after the app handled the key, whether the screen went to "saving" (an answer was sent) or said
"Not applied". The database must then hold, for each item, exactly the answers that were on
screen when they were sent; every key pressed while an answer was saving must have been said
"not applied" on screen and counted in the events.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from sqlmodel import select

from studyapp import storage, studies
from studyapp.models import Event, Item, Rating
from studyapp.specs import load_spec
from studyhelpers import make_study
from test_browser import (browser, button, press, ratings, running_app, start,  # noqa: F401
                          wait_idle, wait_ratings, wait_text)

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
  const entry = {key: e.key, before, focus: document.activeElement ? document.activeElement.textContent.slice(0, 40) : null};
  window.__keys.push(entry);
  setTimeout(() => {
    entry.after = screenNow();
    entry.cue = document.body.innerText.includes('Not applied — press again');
  }, 0);
}, true);
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


def events(kind: str) -> list[dict]:
    with storage.read_session() as session:
        return [json.loads(e.detail) for e in session.exec(select(Event).where(Event.kind == kind))]


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
    if before["marks"] is not None:
        return before["marks"] if entry["key"] == "Enter" else None
    if entry["key"].isdigit():
        return entry["key"]
    if entry["key"] == "Enter":
        return before["chosen"]
    return None


# ------------------------------------------------------------------------ keyboard = mouse
def test_text_revising_tab_to_a_value_and_enter_stores_it(tmp_path, browser):
    """Text study while revising: Tab to "0" and Enter stores 0 (it used to act as Continue)."""
    study = make_study(tmp_path, n_items=3, raters=1, extra='order = "fixed"\n')
    (invite,) = studies.invite(study, 1)
    with running_app(tmp_path) as base:
        start(browser, f"{base}/?token={invite.token}", "Item 1 of 3")
        press(browser, "3")
        wait_text(browser, "Item 2 of 3")
        press(browser, Keys.BACKSPACE)
        wait_text(browser, "you gave 3")
        tab_to(browser, "0 —").send_keys(Keys.ENTER)
        wait_ratings(study, {"i01": ["3", "0"]})
        wait_text(browser, "Item 2 of 3")
        tab_to(browser, "4 —").send_keys(" ")  # Space is a click too
        wait_ratings(study, {"i01": ["3", "0"], "i02": ["4"]})


def test_with_image_tab_to_zero_and_enter_stores_zero_not_the_preselected(tmp_path, browser):
    from studyhelpers import earlier_study, image_spec, invite_same

    earlier_study(tmp_path)
    study = studies.create_study(load_spec(image_spec(tmp_path)))
    token = invite_same(study, ["alice"])["alice"][1]
    with running_app(tmp_path) as base:
        start(browser, f"{base}/?token={token}", "Item 1 of 3")
        wait_text(browser, "Your earlier rating (without the image): 2")
        focused = tab_to(browser, "0 —")
        assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused) != "none"
        focused.send_keys(Keys.ENTER)
        wait_text(browser, "Item 2 of 3")
        wait_ratings(study, {"i01": ["0"]})
        press(browser, Keys.ENTER)  # Enter on the page keeps the preselected rating
        wait_text(browser, "Item 3 of 3")
        wait_ratings(study, {"i01": ["0"], "i02": ["2"]})


def test_imsitu_tab_to_a_verb_and_enter_toggles_it(tmp_path, browser):
    from studyhelpers import write_imsitu_study

    study = studies.create_study(load_spec(write_imsitu_study(tmp_path)))
    (invite,) = studies.invite(study, 1)
    with running_app(tmp_path) as base:
        start(browser, f"{base}/?token={invite.token}", "Item 1 of 6")
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


def test_crosshoi_tab_to_marks_and_enter_marks_them(tmp_path, browser):
    from studyhelpers import curation_spec
    from studyapp.studytypes.crosshoi_curation import crosshoi

    study = studies.create_study(curation_spec(tmp_path))
    (invite,) = studies.invite(study, 1)
    with running_app(tmp_path) as base:
        start(browser, f"{base}/?token={invite.token}", "Item 1 of ")
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
