"""Prolific's lifecycle in a real headless Chromium: participants arrive with
Prolific's URL parameters (PROLIFIC_PID, STUDY_ID, SESSION_ID); one fails the comprehension
check twice and is screened out with its code, one passes at the second attempt, rates an item
and is reported RETURNED by `studyapp prolific-status` (a process) mid-session, and the next
participant gets the item that was released and finishes with the completion code. No network:
the app runs on loopback and the Prolific links are only read, never opened."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from projectpaths import ROOT
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import make_study
from test_browser import WAIT_S, browser, button, open_tab, press, running_app, wait_idle, wait_ratings, wait_text  # noqa: F401
from test_browser_researcher import widget

from studyapp.core import storage
from studyapp.core.models import Annotator, Assignment, Item

pytestmark = pytest.mark.slow

SPEC = ('order = "fixed"\n[prolific]\ncompletion_code = "C0MPLETE"\nscreened_out_code = "SCREENED"\n'
        'completion_url = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"\n'
        '[comprehension]\nquestion = "What do you rate?"\n'
        'options = ["The photo quality", "How similar two interactions are"]\n'
        'answer = "How similar two interactions are"\n')
PROLIFIC_STUDY, WRONG, RIGHT = "64a1b2c3d4e5f6a7b8c9d0e1", "The photo quality", "How similar two interactions are"


def prolific_link(base: str, pid: str, session: str) -> str:
    """The study URL as Prolific fills it in (its {{%PROLIFIC_PID%}} ... placeholders)."""
    return f"{base}/?study=t&PROLIFIC_PID={pid}&STUDY_ID={PROLIFIC_STUDY}&SESSION_ID={session}"


def answer_check(driver, option: str) -> None:
    wait_idle(driver)
    label = next(e for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stRadio"] label')
                 if e.text.strip() == option)
    label.click()
    button(driver, "Check my answer and start").click()


def link_back(driver) -> str:
    wait_idle(driver)
    return next(a.get_attribute("href") for a in driver.find_elements(By.TAG_NAME, "a")
                if a.text.strip() == "Return to the study platform")


def annotator(pid: str):
    with storage.read_session() as session:
        found = session.exec(select(Annotator).where(Annotator.prolific_pid == pid)).one()
        claimed = list(session.exec(select(Item.item_key).join(Assignment, Assignment.item_id == Item.id)
                                    .where(Assignment.annotator_id == found.id, Assignment.phase != "released")
                                    .order_by(Assignment.position)))
    return found, claimed


def test_screened_out_returned_and_completed_participants(tmp_path, browser):
    study = make_study(tmp_path, n_items=3, raters=1, per_annotator=2, extra=SPEC)
    pids = ["5f8a1b2c3d4e5f6a7b8c9d01", "5f8a1b2c3d4e5f6a7b8c9d02", "5f8a1b2c3d4e5f6a7b8c9d03"]
    with running_app(tmp_path) as base:
        # 1. two wrong answers: screened out, politely, with the screened-out code and its link
        browser.get(prolific_link(base, pids[0], "aaaaaaaaaaaaaaaaaaaaaaaa"))
        wait_text(browser, "Before you start")
        answer_check(browser, WRONG)
        wait_text(browser, "you have one more attempt")
        answer_check(browser, WRONG)
        wait_text(browser, "Thank you for your interest")
        wait_text(browser, "SCREENED")
        assert link_back(browser) == "https://app.prolific.com/submissions/complete?cc=SCREENED"
        browser.refresh()                                        # the same link again: still screened out
        wait_text(browser, "Thank you for your interest")
        screened, claimed = annotator(pids[0])
        assert (screened.comprehension_failures, screened.started_at, claimed) == (2, None, [])
        assert (screened.prolific_study_id, screened.prolific_session_id) == (PROLIFIC_STUDY, "aaaaaaaaaaaaaaaaaaaaaaaa")

        # 2. passes at the second attempt, rates i01, is returned on Prolific while at i02
        browser.switch_to.new_window("tab")                    # each participant in a tab of their own
        browser.get(prolific_link(base, pids[1], "bbbbbbbbbbbbbbbbbbbbbbbb"))
        answer_check(browser, WRONG)
        wait_text(browser, "you have one more attempt")
        answer_check(browser, RIGHT)
        wait_text(browser, "Item 1 of 2")
        press(browser, "3")
        wait_text(browser, "Item 2 of 2")
        wait_ratings(study, {"i01": ["3"]})
        assert annotator(pids[1])[1] == ["i01", "i02"]
        returned = subprocess.run([sys.executable, "-m", "studyapp", "prolific-status", "t", "--pid", pids[1],
                                   "--status", "RETURNED"], cwd=ROOT, env=dict(os.environ),
                                  capture_output=True, text=True)
        assert returned.returncode == 0, returned.stderr
        assert returned.stdout.splitlines()[0] == (f"{pids[1]} ({annotator(pids[1])[0].pseudonym}): no status -> "
                                                   "RETURNED, 1 unanswered item(s) back in the pool")
        press(browser, "1")                                      # the answer to i02 is refused, politely
        wait_text(browser, "Prolific reports your submission as returned")
        wait_ratings(study, {"i01": ["3"]})
        assert annotator(pids[1])[1] == ["i01"]                  # i02 went back to the pool

        # 3. the next participant gets the released item and finishes with the completion code
        browser.switch_to.new_window("tab")
        browser.get(prolific_link(base, pids[2], "cccccccccccccccccccccccc"))
        answer_check(browser, RIGHT)
        wait_text(browser, "Item 1 of 2")
        press(browser, "2")
        wait_text(browser, "Item 2 of 2")
        press(browser, "4")
        wait_text(browser, "Thank you!")
        wait_ratings(study, {"i01": ["3"], "i02": ["2"], "i03": ["4"]})
        wait_text(browser, "C0MPLETE")
        assert link_back(browser) == "https://app.prolific.com/submissions/complete?cc=C0MPLETE"
        finished, claimed = annotator(pids[2])
        assert claimed == ["i02", "i03"] and finished.completed_at is not None

        # 4. the console counts them, and takes Prolific's submissions export
        browser.switch_to.new_window("tab")
        browser.get(f"{base}/console")
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']")).send_keys("browser-pw")
        button(browser, "Sign in").click()
        open_tab(browser, "Progress")
        wait_text(browser, "Prolific — no status yet: 1, returned: 1, screened out: 1")
        export = tmp_path / "prolific_export.csv"
        export.write_text("Submission id,Participant id,Status,Started at,Completed at,Completion code\n"
                          f"65a0001,{pids[0]},SCREENED OUT,2026-11-25T10:00:00Z,,SCREENED\n"
                          f"65a0002,{pids[1]},RETURNED,2026-11-25T10:01:00Z,,\n"
                          f"65a0003,{pids[2]},APPROVED,2026-11-25T10:02:00Z,2026-11-25T10:09:00Z,C0MPLETE\n")
        widget(browser, "stFileUploader", "Prolific's submissions export").find_element(
            By.CSS_SELECTOR, "input[type=file]").send_keys(str(export))
        wait_text(browser, "prolific_export.csv")
        button(browser, "Apply the statuses").click()
        wait_text(browser, "2 status(es) changed, 1 unchanged, 0 participant(s) never opened this study")
        wait_text(browser, "Prolific — approved: 1, returned: 1, screened out: 1")   # the same run's counts
        with storage.read_session() as session:
            stored = dict(session.exec(select(Annotator.prolific_pid, Annotator.prolific_status)).all())
        assert stored == {pids[0]: "SCREENED OUT", pids[1]: "RETURNED", pids[2]: "APPROVED"}
        browser.refresh()                               # still signed in (the session is in the address)
        wait_text(browser, "Signed in as owner")
        open_tab(browser, "Progress")
        wait_text(browser, "Prolific — approved: 1, returned: 1, screened out: 1")
    with storage.read_session() as session:
        counters = dict(session.exec(select(Item.item_key, Item.n_claims).where(Item.study_id == study)).all())
    assert counters == {"i01": 1, "i02": 1, "i03": 1}
