"""The annotator's screens for everyone, on any screen, in a real headless Chromium.

axe-core (``.data/npm``, installed by ``scripts/ci_browser.sh`` from the npm registry; nothing
is downloaded here) runs over the welcome page and the item screen of every study type, a
revised item, the completion page and the console's sign-in: no violation of impact serious or
critical. A screen reader hears each new item (the page's live region) and the focus is on
the answer controls after an answer. At 390 x 844 (a phone, touch) and 1366 x 768 every type's
answer controls are in the viewport without scrolling; screenshots go to
``test-artifacts/screens/``. One server for the module, a study of each type in its database.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from browserhelpers import SIZES, module_database, read_whole_item, running_app, screen_size
from projectpaths import ROOT
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from studyhelpers import (
    curation_spec,
    earlier_study,
    image_spec,
    invite_same,
    make_study,
    write_imsitu_study,
    write_practice,
)
from test_browser import WAIT_S, browser, button, press, start, wait_idle, wait_text  # noqa: F401

from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

pytestmark = pytest.mark.slow

AXE = ROOT / ".data" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "test-artifacts" / "screens"
TYPES = ("text", "image", "imsitu", "crosshoi")
FIRST = {"text": "Item 1 of 3", "image": "Item 1 of 3", "imsitu": "Item 1 of ", "crosshoi": "Item 1 of "}


@pytest.fixture(autouse=True)
def own_database():
    """The module's studies share one database and one server (``app``)."""
    yield


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """A study of each type in one database, and the app over it: (base URL, study ids)."""
    folder = tmp_path_factory.mktemp("a11y")
    with module_database(folder):
        made = {}
        for name in TYPES:
            (folder / name).mkdir()
        made["text"] = make_study(folder / "text", n_items=3, raters=20, slug="text",
                                  extra='order = "fixed"\n')
        earlier_study(folder / "image", n_items=3)  # alice and bob rated its pairs
        made["image"] = studies.create_study(load_spec(image_spec(folder / "image", n_items=3)))
        made["image raters"] = [token for _, token in invite_same(made["image"], ["bob", "alice"]).values()]
        made["imsitu"] = studies.create_study(load_spec(write_imsitu_study(folder / "imsitu")))
        made["crosshoi"] = studies.create_study(curation_spec(folder / "crosshoi", n_images=3))
        (folder / "session").mkdir()   # practice item, two main items and an attention check
        made["session"] = make_study(folder / "session", n_items=2, raters=10, slug="session", extra=(
            'order = "fixed"\n' + write_practice(folder / "session", ["p1,ride,horse,feed,horse,1,Feeding is not riding."])
            + "[quality]\nattention_checks = 1\n"))
        with running_app(folder) as base:
            yield base, made
        from studyapp.core import storage
        storage.dispose_all()


def token_for(made: dict, kind: str) -> str:
    """A new annotator of the study of ``kind`` (the with-image pass: alice, then bob, who
    rated its pairs before; bob's link again after that)."""
    if kind == "image":
        raters = made["image raters"]
        return raters.pop() if len(raters) > 1 else raters[0]
    return studies.invite(made[kind], 1)[0].token


def open_item(driver, link: str, first_item: str) -> None:
    """Open an annotator link and get to its item screen (Start on the welcome page, if it
    is shown: a link opened before resumes at its item)."""
    driver.get(link)
    WebDriverWait(driver, WAIT_S).until(lambda d: first_item in d.find_element(By.TAG_NAME, "body").text
                                        or any(b.text.startswith("Start")
                                               for b in d.find_elements(By.TAG_NAME, "button")))
    if first_item not in driver.find_element(By.TAG_NAME, "body").text:
        button(driver, "Start").click()
    wait_text(driver, first_item)


def axe(driver, screen: str) -> list[dict]:
    """The serious and critical violations axe-core finds on the page (all rules run); the
    others are printed."""
    driver.execute_script(AXE.read_text())
    result = driver.execute_async_script(
        "const done = arguments[0];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(JSON.stringify("
        "r.violations.map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3)})))))"
        ".catch((e) => done(JSON.stringify([{id: 'axe-error', impact: 'critical', nodes: [String(e)]}])));")
    found = json.loads(result)
    if found:
        print(f"\naxe on {screen}:", json.dumps(found))
    return [v for v in found if v["impact"] in ("serious", "critical")]


@pytest.fixture
def axe_available():
    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{AXE} is missing: scripts/ci_browser.sh installs it (npm)")
        pytest.skip("axe-core is not installed (scripts/ci_browser.sh installs it with npm)")


def test_welcome_item_revising_and_completion_pages_pass_axe(app, browser, axe_available):
    base, made = app
    browser.set_script_timeout(60)
    problems = {}
    for kind in TYPES:
        browser.get(f"{base}/?token={token_for(made, kind)}")
        button(browser, "Start")
        wait_idle(browser)
        problems[f"{kind} welcome"] = axe(browser, f"{kind} welcome")
        button(browser, "Start").click()
        wait_text(browser, FIRST[kind])
        wait_idle(browser)
        problems[f"{kind} item"] = axe(browser, f"{kind} item")
        if kind == "text":
            for key in ("3", "\ue003"):  # an answer, then Backspace: revising item 1
                press(browser, key)
            wait_text(browser, "Revising item 1 of 3")
            wait_idle(browser)
            problems["revising"] = axe(browser, "revising")
            press(browser, "\ue007")  # Enter: continue where I stopped
            for _ in range(3):
                wait_text(browser, "Item ")
                press(browser, "1")
            wait_text(browser, "Thank you!")
            time.sleep(0.5)
            problems["completion"] = axe(browser, "completion")
    browser.get(f"{base}/console")
    wait_text(browser, "Researcher console")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_element(By.CSS_SELECTOR, "input[type='password']"))
    problems["console sign-in"] = axe(browser, "console sign-in")
    assert not {k: v for k, v in problems.items() if v}, problems


LIVE = "return (document.getElementById('studyapp-live') || {}).textContent || ''"
FOCUSED = "const a = document.activeElement; return a ? (a.getAttribute('aria-label') || a.className) : null"


def test_screen_reader_hears_each_item_and_focus_is_on_the_answers(app, browser):
    base, made = app
    start(browser, f"{base}/?token={token_for(made, 'text')}", "Item 1 of 3")
    wait_idle(browser)
    press(browser, "2")
    wait_text(browser, "Item 2 of 3")
    wait_idle(browser)
    heard = browser.execute_script(LIVE)
    shown = browser.find_element(By.CSS_SELECTOR, ".answer-bar .item-content").text.split("\n")[0]
    assert heard.startswith("Item 2 of 3") and shown.split()[0] in heard, (heard, shown)
    assert browser.execute_script(FOCUSED) == "Your answer"
    bar = browser.find_element(By.CSS_SELECTOR, ".answer-bar .progress-bar")
    assert bar.get_attribute("aria-label") and bar.get_attribute("aria-valuetext")


CONTROLS = {"text": ".answer-bar .values", "image": ".answer-bar .values",
            "imsitu": ".mark-form .submit", "crosshoi": ".mark-form .candidate.active"}
IN_VIEW = """const r = arguments[0].getBoundingClientRect();
return [r.top, r.bottom, r.left, r.right, innerHeight, innerWidth];"""


@pytest.mark.parametrize("size", SIZES)
def test_answer_controls_are_in_view_at_phone_and_laptop_size(app, browser, axe_available, size):
    """Every type's item screen at both sizes: its answer controls in the viewport, key hints
    only where there is a keyboard, and no serious or critical axe-core violation."""
    base, made = app
    browser.set_script_timeout(60)
    problems = {}
    screen_size(browser, size)
    SHOTS.mkdir(parents=True, exist_ok=True)
    outside = {}
    for kind in TYPES:
        open_item(browser, f"{base}/?token={token_for(made, kind)}", FIRST[kind])
        wait_idle(browser)
        browser.save_screenshot(str(SHOTS / f"{kind}-{size}.png"))
        problems[kind] = axe(browser, f"{kind} item {size}")
        top, bottom, left, right, view_h, view_w = browser.execute_script(
            IN_VIEW, browser.find_element(By.CSS_SELECTOR, CONTROLS[kind]))
        if top < 0 or bottom > view_h or left < 0 or right > view_w + 1:
            outside[kind] = (top, bottom, view_h)
        hints = [h for h in browser.find_elements(By.CSS_SELECTOR, ".hint") if h.is_displayed()]
        if size == "phone":
            assert not hints, f"{kind}: keyboard hints shown on a touch screen"
            small = browser.execute_script(
                "return [...document.querySelectorAll('.answer-bar button, .mark-form button')]"
                ".filter((b) => b.offsetParent && b.getBoundingClientRect().height < 44).length")
            assert small == 0, f"{kind}: {small} buttons smaller than 44 px on a touch screen"
        else:
            assert hints, f"{kind}: no keyboard hints on a laptop"
    assert not outside, outside
    assert not {k: v for k, v in problems.items() if v}, problems


HEADING_FOCUSED = "const a = document.activeElement; return a ? a.tagName : null"
WIDER_THAN_SCREEN = """return [...document.querySelectorAll('[data-testid="stMain"] *')].filter((e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && (r.right > innerWidth + 1 || e.scrollWidth > e.clientWidth + 1
                         && getComputedStyle(e).overflowX !== 'visible');
}).map((e) => e.tagName + '.' + e.className).slice(0, 5)"""


def read_all(driver) -> None:
    """An item taller than the screen read whole (the page takes no answer before)."""
    if driver.execute_script("return (document.querySelector('.answer-bar') || {dataset: {}}).dataset.answerable")\
            == "unseen":
        read_whole_item(driver)
    wait_idle(driver)


@pytest.mark.parametrize("size", SIZES)
def test_a_whole_session_passes_axe_and_each_new_page_takes_the_focus(app, browser, axe_available, size):
    """Welcome, practice item, its feedback (again after F5), the main items with the attention
    check, thank you: at 1366 x 768 and 390 x 844 (touch), axe finds no serious or critical
    violation, nothing on the welcome page needs scrolling sideways, touch screens show no key
    names, and the feedback and thank-you pages take the focus and say themselves."""
    base, made = app
    browser.set_script_timeout(60)
    screen_size(browser, size)
    problems = {}
    browser.get(f"{base}/?token={token_for(made, 'session')}")
    button(browser, "Start")
    wait_idle(browser)
    problems["welcome"] = axe(browser, f"welcome {size}")
    assert not browser.execute_script(WIDER_THAN_SCREEN), browser.execute_script(WIDER_THAN_SCREEN)
    kbd = [k.text for k in browser.find_elements(By.CSS_SELECTOR, "button kbd, .key-name, .st-key-keys-help")
           if k.is_displayed()]
    assert any(k.startswith("Keys: ") for k in kbd) == (size == "laptop"), kbd   # "How to answer"
    assert bool(kbd) == (size == "laptop"), kbd
    button(browser, "Start").click()
    wait_text(browser, "Practice item: after your answer")
    wait_idle(browser)
    problems["practice item"] = axe(browser, f"practice item {size}")
    read_all(browser)
    press(browser, "3")
    wait_text(browser, "the expected answer is 1")
    for attempt in ("feedback", "feedback after F5"):
        wait_idle(browser)
        time.sleep(0.3)
        assert browser.execute_script(HEADING_FOCUSED) in ("H1", "H2", "H3"), attempt
        assert browser.execute_script(LIVE).startswith("Practice item. You answered 3"), browser.execute_script(LIVE)
        problems[attempt] = axe(browser, f"{attempt} {size}")
        browser.refresh()
        wait_text(browser, "the expected answer is 1")
    press(browser, "\ue007")  # Enter: Continue
    for number in (2, 3, 4):
        wait_text(browser, f"Item {number} of 4")
        wait_idle(browser)
        sides = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".item-content .side h3")]
        name = "attention check" if len(set(sides)) == 1 else f"item {number}"
        problems[name] = axe(browser, f"{name} {size}")
        read_all(browser)
        press(browser, "4")
    assert "attention check" in problems
    wait_text(browser, "Thank you!")
    time.sleep(0.5)
    assert browser.execute_script(HEADING_FOCUSED) in ("H1", "H2", "H3")
    assert browser.execute_script(LIVE).startswith("Thank you! You have finished"), browser.execute_script(LIVE)
    problems["thank you"] = axe(browser, f"thank you {size}")
    assert not {k: v for k, v in problems.items() if v}, problems
