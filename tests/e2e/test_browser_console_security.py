"""The console's sign-in as a researcher meets it in headless Chromium: a reload
keeps the session, sign-out ends it (its address no longer signs in), an idle session expires
by itself, failed sign-ins lock sign-in with a message saying how long, the password rules and
the upload size limits answer in one line, and no password or session token reaches the page
or the server's log. XSRF protection is checked on the served app's upload endpoint. All but
the idle limit's test share one server (``console``)."""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest
from browserhelpers import module_database, no_dashboard_warm_up
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import make_study
from test_browser import WAIT_S, browser, button, open_tab, running_app, wait_text  # noqa: F401

from studyapp.core import accounts, storage
from studyapp.core.models import Event, Researcher, Setting

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    """A server over the module's database, which holds one study: (base URL, server log)."""
    folder = tmp_path_factory.mktemp("console")
    with module_database(folder):
        make_study(folder, n_items=4, slug="t")
        with running_app(folder) as base:
            yield base, folder / "server.log"
    storage.dispose_all()


@pytest.fixture(autouse=True)
def own_database(request, monkeypatch):
    """A test on ``console`` uses the module's database; any other gets a database of its own.
    No server of the module warms dashboards."""
    if "console" not in request.fixturenames:
        request.getfixturevalue("isolated_database")
    no_dashboard_warm_up(monkeypatch)
    yield


def sign_in(driver, base: str, password: str = "browser-pw", account: str = "") -> None:
    driver.get(f"{base}/console")
    field = WebDriverWait(driver, WAIT_S).until(lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']"))
    if account:
        driver.find_element(By.CSS_SELECTOR, "input[aria-label^='Account']").send_keys(account)
    field.send_keys(password)
    button(driver, "Sign in").click()


def session_rows() -> list[Setting]:
    with storage.read_session() as session:
        return list(session.exec(select(Setting).where(Setting.key.startswith(accounts.SESSION_PREFIX))))


def events(kind: str) -> list[Event]:
    with storage.read_session() as session:
        return list(session.exec(select(Event).where(Event.kind == kind)))


def body(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").text


def test_reload_keeps_the_session_and_sign_out_ends_it(console, browser):
    base, server_log = console
    accounts.add_account("alice", "researcher", "alice passphrase 1")
    others = session_rows()                                        # sessions of the other tests
    sign_in(browser, base, "alice passphrase 1", account="alice")
    wait_text(browser, "Signed in as alice (researcher)")
    token = parse_qs(urlsplit(browser.current_url).query)["session"][0]
    assert len(token) >= 32
    (row,) = [r for r in session_rows() if r.key not in {o.key for o in others}]
    assert token not in row.key and token not in row.value     # stored as a hash only
    signed_in_url = browser.current_url

    browser.refresh()                                          # F5
    wait_text(browser, "Signed in as alice (researcher)")
    assert not browser.find_elements(By.CSS_SELECTOR, "input[type='password']")

    button(browser, "Sign out").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "input[type='password']"))
    assert "session=" not in browser.current_url and session_rows() == others

    browser.get(signed_in_url)                                 # the old address signs no one in
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "input[type='password']"))
    time.sleep(1.0)
    assert "Signed in as" not in body(browser)
    page = browser.page_source
    log = server_log.read_text()
    for secret in ("alice passphrase 1", "browser-pw", token):
        assert secret not in page and secret not in log


def test_an_idle_session_ends_by_itself(tmp_path, browser, monkeypatch):
    """With a 3 s idle limit, the open console goes back to the sign-in form on its next refresh
    (the dashboard refreshes every 10 s), saying why; the expired row is gone."""
    monkeypatch.setenv("STUDYAPP_SESSION_IDLE_S", "3")
    make_study(tmp_path, n_items=4, slug="t")
    with running_app(tmp_path) as base:
        sign_in(browser, base)
        wait_text(browser, "Signed in as owner")
        assert len(session_rows()) == 1
        wait_text(browser, "Your session has ended: sign in again.", timeout=40)
        assert browser.find_elements(By.CSS_SELECTOR, "input[type='password']")
        assert session_rows() == []
        browser.refresh()
        WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "input[type='password']"))
        assert "Signed in as" not in body(browser)


def test_failed_sign_ins_lock_sign_in_with_a_message(console, browser):
    """Three wrong passwords are free, then each failure doubles the wait (1, 2, 4 s ...): the
    form says how long; during the wait even the right password is refused; after it, the right
    one signs in (which ends the lock for the tests after this one)."""
    base, _ = console
    signed_in_before = len(events("admin_login"))
    sign_in(browser, base, "wrong password")
    wait = 0
    for _ in range(12):   # press "Sign in" again with the wrong password until a 4 s wait
        text = WebDriverWait(browser, WAIT_S).until(lambda d: next(
            (t for t in [body(d)] if "Wrong account or password." in t or "Too many failed sign-ins" in t), False))
        found = re.search(r"Too many failed sign-ins: wait (\d+) s, then try again\.", text)
        wait = int(found.group(1)) if found else 0
        if wait >= 4:
            break
        time.sleep(wait)   # each press after the wait is checked, and fails
        button(browser, "Sign in").click()
        time.sleep(0.5)
    assert wait >= 4, body(browser)
    field = browser.find_element(By.CSS_SELECTOR, "input[type='password']")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE)
    field.send_keys("browser-pw")
    throttled = len(events("admin_login_throttled"))
    button(browser, "Sign in").click()             # the right password, too early
    WebDriverWait(browser, WAIT_S).until(lambda d: len(events("admin_login_throttled")) > throttled)
    time.sleep(1.0)
    assert "Too many failed sign-ins: wait" in body(browser) and "Signed in as" not in body(browser)
    assert len(events("admin_login")) == signed_in_before
    time.sleep(wait + 1)
    button(browser, "Sign in").click()
    wait_text(browser, "Signed in as owner")


def test_password_rules_and_upload_limits_in_the_console(console, tmp_path, browser):
    """The owner's account form refuses a short password in one line and creates nothing; a spec
    over the 1 MB upload limit is refused before anything is read or created."""
    base, _ = console
    big = tmp_path / "big.toml"
    big.write_text('title = "x"\n' + "# padding\n" * 150_000)   # 1.5 MB
    sign_in(browser, base)
    wait_text(browser, "Signed in as owner")
    open_tab(browser, "Accounts")
    form = browser.find_element(By.CSS_SELECTOR, '[data-testid="stForm"]')
    form.find_element(By.CSS_SELECTOR, "input[aria-label='Name']").send_keys("carl")
    form.find_element(By.CSS_SELECTOR, "input[type='password']").send_keys("carlcarl")
    button(browser, "Create account").click()
    wait_text(browser, "password: at least 12 characters, got 8")
    with storage.read_session() as session:
        assert session.exec(select(Researcher).where(Researcher.name == "carl")).first() is None

    open_tab(browser, "Create")
    open_tab(browser, "Upload")
    uploader = next(e for e in browser.find_elements(By.CSS_SELECTOR, '[data-testid="stFileUploader"]')
                    if e.text.startswith("Spec (TOML"))
    uploader.find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(str(big))
    wait_text(browser, "1.0MB or smaller")
    assert not [b for b in browser.find_elements(By.TAG_NAME, "button") if b.text == "Create from upload"]


def test_uploads_without_the_xsrf_token_are_refused(console):
    """The served app refuses a file upload (PUT) that lacks the XSRF cookie and header pair
    (403), and lets one with the pair past that check (to the session check, 400)."""
    base, _ = console
    url = f"{base}/_stcore/upload_file/no-session/no-file"

    def put(headers: dict) -> int:
        request = urllib.request.Request(url, data=b"--x--\r\n", method="PUT", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=10) as response:
        cookies = [c for c in response.headers.get_all("Set-Cookie") or [] if c.startswith("_streamlit_xsrf=")]
    assert cookies, "the app sets no XSRF cookie"
    value = cookies[0].split(";", 1)[0].split("=", 1)[1]
    assert put({"Content-Type": "multipart/form-data; boundary=x"}) == 403
    assert put({"Content-Type": "multipart/form-data; boundary=x", "X-Xsrftoken": "forged",
                "Cookie": f"_streamlit_xsrf={value}"}) == 403
    assert put({"Content-Type": "multipart/form-data; boundary=x", "X-Xsrftoken": value,
                "Cookie": f"_streamlit_xsrf={value}"}) == 400
