"""An adaptive study (spec ``[adaptive]``) in a real headless Chromium: annotators
rate by keys until the items whose rater-model SE reached the target retire; the database
shows the retired items got no further rating, and the console's progress tab counts the items
done (retired, or at max_raters). The server refits the rater model in the background, so the test waits, by polling the
database, until its refits have caught up before the next annotator starts."""

from __future__ import annotations

import json

import pytest
from browserhelpers import POLL_S
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import EASY, HARD_BASE, answer, ratings_per_item, write_adaptive_spec
from test_browser import WAIT_S, browser, button, running_app, wait_idle, wait_text  # noqa: F401

from studyapp.core import storage
from studyapp.core.models import Assignment, Item, Study
from studyapp.platform.assignment import adaptive
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.platform.specs.spec_model import spec_of

pytestmark = pytest.mark.slow
STALE = (StaleElementReferenceException,)   # the bar is replaced by each rerun


def bar_item(driver) -> int | None:
    """The assignment id the answer bar on screen carries, or None when there is no bar."""
    bars = driver.find_elements(By.CSS_SELECTOR, ".answer-bar")
    return int(bars[0].get_attribute("data-item")) if bars else None


def item_on_screen(driver) -> tuple[int, str]:
    """(assignment id, item key) of the item whose answer bar is on screen (on a page that is
    idle: ``wait_idle``)."""
    assignment_id = WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S, ignored_exceptions=STALE).until(bar_item)
    with storage.read_session() as session:
        return assignment_id, session.exec(select(Item.item_key).join(Assignment, Assignment.item_id == Item.id)
                                           .where(Assignment.id == assignment_id)).one()


def rate_in_browser(driver, link: str, rating) -> list[str]:
    """Open the link and answer every item shown, by key (``rating(item key)``), until the end."""
    driver.get(link)
    button(driver, "Start").click()
    shown = []
    while True:
        wait_idle(driver)
        if "Thank you!" in driver.find_element(By.TAG_NAME, "body").text:
            return shown
        before, key = item_on_screen(driver)
        shown.append(key)
        driver.find_element(By.TAG_NAME, "body").send_keys(str(rating(key)))   # idle since the loop's wait_idle
        WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S, ignored_exceptions=STALE).until(   # the next bar, or the end
            lambda d, before=before: "Thank you!" in d.find_element(By.TAG_NAME, "body").text or bar_item(d) != before)


def wait_for_server_refits(study_id: int) -> None:
    """Until the server's stored fit is fewer than ``refit_every`` ratings behind (no refit due:
    those asked for have run; the server is another process, so only the database tells)."""
    def caught_up(_) -> bool:
        with storage.read_session() as session:
            study = session.get(Study, study_id)
        spec = spec_of(study)
        fitted = json.loads(study.rater_model)["n_ratings"] if study.rater_model else None
        ratings = adaptive.adaptive_progress(study, spec)["ratings"]
        return fitted is not None and ratings - fitted < spec.adaptive["refit_every"]
    WebDriverWait(None, WAIT_S, poll_frequency=POLL_S).until(
        caught_up, message="waiting for the server's rater-model refits")


def test_an_adaptive_study_retires_items_at_the_target_in_the_browser(tmp_path, browser):
    study_id = studies.create_study(load_spec(write_adaptive_spec(tmp_path, extra='order = "fixed"\n')))
    invites = studies.invite(study_id, 3)
    with running_app(tmp_path) as base:
        first = rate_in_browser(browser, f"{base}/?token={invites[0].token}",
                                 lambda key: answer(key, 0))
        second = rate_in_browser(browser, f"{base}/?token={invites[1].token}",
                                 lambda key: answer(key, 1))
        assert sorted(first) == sorted(second) == sorted(EASY | set(HARD_BASE))  # none had min_raters
        wait_for_server_refits(study_id)
        third = rate_in_browser(browser, f"{base}/?token={invites[2].token}",
                                 lambda key: answer(key, 2))
        wait_for_server_refits(study_id)
        counts = ratings_per_item()
        with storage.read_session() as session:
            se = dict(session.exec(select(Item.item_key, Item.model_se)).all())
        done = sum(1 for k in se if (se[k] is not None and se[k] <= 0.4 and counts[k] >= 2) or counts[k] == 4)
        # the console's progress counts items done (retired or at max_raters), not ratings of 12 × 4
        browser.get(f"{base}/console")
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']")).send_keys("browser-pw")
        button(browser, "Sign in").click()
        wait_idle(browser)
        WebDriverWait(browser, WAIT_S).until(
            lambda d: [t for t in d.find_elements(By.CSS_SELECTOR, "[role='tab']") if t.text == "Progress"])[0].click()
        wait_text(browser, "Items done")
        wait_text(browser, f"{done} / 12")
    with storage.read_session() as session:
        se = dict(session.exec(select(Item.item_key, Item.model_se)).all())
        study = session.get(Study, study_id)
    retired = {k for k in se if se[k] is not None and se[k] <= 0.4 and counts[k] >= 2}
    assert EASY <= retired                               # everyone agreed on these: SE at target
    assert third and set(third) <= set(HARD_BASE)       # the third annotator saw only open items
    assert {k: counts[k] for k in EASY} == {k: 2 for k in EASY}
    progress = adaptive.adaptive_progress(study, spec_of(study))
    assert progress["retired"] >= len(EASY) and progress["ratings"] == 24 + len(third)
