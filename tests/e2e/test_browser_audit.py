"""A viewer's download of report.html is in the audit log: a viewer account
signs into the console in headless Chromium, looks at a simulated study's dashboard and
downloads the report; the owner's audit log then names the viewer, the view and the file."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from studyhelpers import make_study
from test_browser import WAIT_S, audit_entries, browser, button, running_app, wait_text  # noqa: F401
from test_browser_researcher import downloaded, widget

from studyapp.core import accounts
from studyapp.platform.records.simulate import simulate_study

pytestmark = pytest.mark.slow


def test_a_viewers_report_download_is_audited(tmp_path, browser):
    study = make_study(tmp_path, n_items=8, raters=3, slug="t")
    simulate_study("t", k=3, noise=0.5, seed=1)
    accounts.add_account("vera", "viewer", "vera-password")
    with running_app(tmp_path) as base:
        browser.get(f"{base}/console")
        wait_text(browser, "Researcher console")
        widget(browser, "stTextInput", "Account").find_element(By.TAG_NAME, "input").send_keys("vera")
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']")).send_keys("vera-password")
        button(browser, "Sign in").click()
        button(browser, "Download report.html").click()
        assert b"<html" in downloaded(browser, "report.html")[:2000].lower()
        entries = audit_entries(study, {"downloaded", "data_viewed"}, 2)
    assert entries == [("data_viewed", "vera", {"what": "dashboard, progress, preview"}),
                       ("downloaded", "vera", {"file": "report.html"})]
    log = accounts.audit_log(accounts.FIRST_OWNER)
    assert [(r["who"], r["action"], r["study"]) for r in log.to_dict("records")][:2] == [
        ("vera", "downloaded", "t"), ("vera", "viewed data", "t")]
