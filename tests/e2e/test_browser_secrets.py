"""No secret leaves the server: a researcher's whole session on PostgreSQL —
the commands that set the study up, the console in a real Chromium (dashboard, progress, preview,
invites, exports, the report, matrix versions), a backup — is searched for the secrets it was
configured with: the database password, the platform owner's password and a researcher's
password. Every page the browser showed, every line the server and the commands printed, every
export, download and the backup are searched; none may hold any of them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from projectpaths import ROOT
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from sqlalchemy.engine import make_url
from test_browser import WAIT_S, browser, button, open_tab, running_app, wait_idle, wait_text  # noqa: F401

pytestmark = pytest.mark.slow

OWNER_PASSWORD = "browser-pw"            # running_app's STUDYAPP_ADMIN_PASSWORD
RESEARCHER_PASSWORD = "rita-Secret-7731"


def studyapp(*args: str, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-m", "studyapp", *args], cwd=ROOT, env={**os.environ},
                          input=stdin, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout + done.stderr


def sign_in(driver, base: str, account: str, password: str) -> None:
    driver.get(f"{base}/console")
    WebDriverWait(driver, WAIT_S).until(lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']"))
    if account:
        driver.find_element(By.CSS_SELECTOR, "input[type='text']").send_keys(account)
    driver.find_element(By.CSS_SELECTOR, "input[type='password']").send_keys(password)
    button(driver, "Sign in").click()
    wait_text(driver, "Signed in as")


DOWNLOADS = {"ratings.csv", "items_model.csv", "report.html"}


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_a_whole_session_shows_no_secret(tmp_path, browser, monkeypatch):
    from dbhelpers import postgres_schema, postgres_url_or_skip

    with postgres_schema(postgres_url_or_skip()) as url:
        db_password = make_url(url).password
        assert db_password and len(db_password) >= 8
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.setenv("STUDYAPP_EXPORTS", str(tmp_path / "exports"))
        printed = [studyapp("create", "studies/demo.toml"),
                   studyapp("simulate", "demo", "--k", "3"),
                   studyapp("account", "add", "rita", "--role", "researcher", stdin=RESEARCHER_PASSWORD + "\n"),
                   studyapp("recalibrate", "demo", "--name", "v1", "--folds", "2"),
                   studyapp("list"), studyapp("health"), studyapp("status", "demo"),
                   studyapp("export", "demo"), studyapp("report", "demo"),
                   studyapp("backup", str(tmp_path / "backup.zip"))]
        pages = []
        with running_app(tmp_path) as base:
            sign_in(browser, base, "", OWNER_PASSWORD)
            wait_text(browser, "Krippendorff")                    # the dashboard
            pages.append(browser.page_source)
            for tab in ("Progress", "Preview", "Invite"):
                open_tab(browser, tab)
                pages.append(browser.page_source)
            button(browser, "Create invite links").click()
            wait_text(browser, "Copy these links now")
            pages.append(browser.page_source)
            open_tab(browser, "Export")
            pages.append(browser.page_source)
            button(browser, "ratings.csv").click()
            button(browser, "items_model.csv").click()     # pressed at once: the first must not drop it
            open_tab(browser, "Dashboard")
            button(browser, "Download report.html").click()
            pages.append(browser.page_source)
            # before leaving the page: signing in again loads a new page, which drops a download
            # still being prepared (the report waits for its warm-up, seconds on a loaded machine)
            deadline = time.monotonic() + WAIT_S
            while not DOWNLOADS <= (have := {p.name for p in files_under(browser.downloads)}):
                assert time.monotonic() < deadline, f"downloads missing: {sorted(DOWNLOADS - have)}"
                time.sleep(0.2)
            button(browser, "Sign out").click()
            sign_in(browser, base, "rita", RESEARCHER_PASSWORD)   # a researcher who owns nothing
            wait_text(browser, "is yours")
            pages.append(browser.page_source)
        log = (tmp_path / "server.log").read_text()
        assert "Traceback" not in log and "deprecat" not in log.lower(), log[-3000:]

        searched = {f"page {k}": page for k, page in enumerate(pages)}
        searched |= {f"command output {k}": out for k, out in enumerate(printed)}
        searched["server log"] = log
        for path in files_under(tmp_path / "exports") + files_under(browser.downloads):
            searched[str(path)] = path.read_bytes().decode("utf-8", "replace")
        with zipfile.ZipFile(tmp_path / "backup.zip") as backup:
            for name in backup.namelist():
                searched[f"backup.zip:{name}"] = backup.read(name).decode("utf-8", "replace")
        assert any(name.endswith("report.html") for name in searched) and len(searched) > 20
        for secret in (db_password, OWNER_PASSWORD, RESEARCHER_PASSWORD):
            leaks = [name for name, text in searched.items() if secret in text]
            assert not leaks, f"a configured secret appears in {leaks}"
