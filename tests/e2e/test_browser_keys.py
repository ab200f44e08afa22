"""One physical key press, at most one answer, in a real headless Chromium, for all four study
types: a held key's auto-repeat keydowns (sent as the browser's own, CDP ``autoRepeat``) never
answer, submit or navigate; a key pressed while an answer is being saved is dropped, said on
the screen where it was pressed and never on the next one; a multi-key answer (imSitu, CrossHOI)
never takes keys typed on two screens. One server for the module, a study of each type in its
database; the database must hold only what was on screen.
"""

from __future__ import annotations

import time

import pytest
from browserhelpers import module_database, running_app
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from sqlmodel import select
from studyhelpers import curation_spec, earlier_study, image_spec, invite_same, make_study, write_imsitu_study
from test_browser import browser, start, wait_idle  # noqa: F401

from studyapp.core import storage
from studyapp.core.models import Rating
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.studytypes.crosshoi_curation import crosshoi

pytestmark = pytest.mark.slow

REPEAT_DELAY_S, REPEAT_EVERY_S = 0.5, 0.033  # the usual keyboard auto-repeat
CODES = {"Enter": ("Enter", 13, "\r"), "Backspace": ("Backspace", 8, "")}


@pytest.fixture(autouse=True)
def own_database():
    """The module's studies share one database and one server (``app``)."""
    yield


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """A study of each type in one database, and the app over it: (base URL, study ids)."""
    folder = tmp_path_factory.mktemp("keys")
    with module_database(folder):
        made = {}
        for name in ("text", "image", "imsitu", "crosshoi"):
            (folder / name).mkdir()
        made["text"] = make_study(folder / "text", n_items=6, raters=3, slug="text",
                                  extra='order = "fixed"\n')
        earlier_study(folder / "image", n_items=4)
        made["image"] = studies.create_study(load_spec(image_spec(folder / "image", n_items=4)))
        made["imsitu"] = studies.create_study(load_spec(write_imsitu_study(folder / "imsitu")))
        made["crosshoi"] = studies.create_study(curation_spec(folder / "crosshoi", n_images=4))
        with running_app(folder) as base:
            yield base, made
        from studyapp.core import storage
        storage.dispose_all()


def key_event(driver, key: str, kind: str, repeat: bool = False) -> None:
    """One keyboard event as the browser's input pipeline sends it (``Input.dispatchKeyEvent``)."""
    if key in CODES:
        code, vk, text = CODES[key]
    elif key.isdigit():
        code, vk, text = f"Digit{key}", 48 + int(key), key
    else:
        code, vk, text = f"Key{key.upper()}", ord(key.upper()), key
    event = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk,
             "nativeVirtualKeyCode": vk, "autoRepeat": repeat}
    if kind == "keyDown" and text:
        event["text"] = event["unmodifiedText"] = text
    driver.execute_cdp_cmd("Input.dispatchKeyEvent", event)


def hold(driver, key: str, seconds: float) -> int:
    """Hold ``key`` down as a keyboard does for ``seconds``: a keydown, after the repeat delay
    the auto-repeat keydowns it sends in that time (every one of them, however long a loaded
    machine takes to deliver each), a keyup; returns how many repeats were sent."""
    key_event(driver, key, "keyDown")
    time.sleep(REPEAT_DELAY_S)
    repeats = round((seconds - REPEAT_DELAY_S) / REPEAT_EVERY_S)
    for _ in range(repeats):
        key_event(driver, key, "keyDown", repeat=True)
        time.sleep(REPEAT_EVERY_S)
    key_event(driver, key, "keyUp")
    return repeats


def tap(driver, *keys: str) -> None:
    for key in keys:
        key_event(driver, key, "keyDown")
        key_event(driver, key, "keyUp")


def burst(driver, keys: str) -> None:
    """``keys`` typed back to back in one WebDriver command (no round trip between them, so
    the last ones reach the page while the answer the first ones sent is still being saved)."""
    ActionChains(driver).send_keys(keys).perform()


SCREEN = """const c = document.querySelector('.answer-bar, .mark-form');
return c ? {item: c.dataset.item, state: c.dataset.state,
            cue: (c.querySelector('.cue') || {}).textContent || '',
            text: c.innerText} : null;"""


RECORD_SCREENS = """window.screensSeen = [];
const look = () => { const c = document.querySelector('.answer-bar, .mark-form');
  if (c) window.screensSeen.push({item: c.dataset.item, state: c.dataset.state,
                                  cue: (c.querySelector('.cue') || {}).textContent || ''}); };
new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true,
                                                   attributes: true});"""


def screen(driver) -> dict:
    return driver.execute_script(SCREEN)


def said_too_fast(driver, key: str) -> None:
    """Some screen since ``RECORD_SCREENS`` said "too fast" for ``key``, and no screen said more."""
    said = [s["cue"] for s in driver.execute_script("return window.screensSeen") if s["cue"]]
    assert said and all(cue.startswith(f"Too fast — nothing was recorded for that key ({key})")
                        for cue in said), said


def wait_next_ready(driver, old_item: str) -> dict:
    """Until the screen of another item than ``old_item`` is in place and live."""
    WebDriverWait(driver, 30, poll_frequency=0.005).until(
        lambda d: (s := screen(d)) and s["item"] != old_item and s["state"] == "ready")
    return screen(driver)


def wait_answerable(driver) -> None:
    """Until the screen in place has been seen for the study's floor (a press before that is dropped)."""
    WebDriverWait(driver, 30, poll_frequency=0.01).until(lambda d: d.execute_script(
        "const c = document.querySelector('.answer-bar, .mark-form');"
        "return c && c.dataset.state === 'ready' && c.dataset.answerable === 'yes'"))


def answers(token: str) -> list[list[str]]:
    """The responses of the annotator of ``token``, per item in the order answered (revisions
    in order)."""
    annotator = assignment.resolve_token(token)
    with storage.read_session() as session:
        rows = session.exec(select(Rating).where(Rating.annotator_id == annotator)
                            .order_by(Rating.id)).all()
    out: dict[int, list[str]] = {}
    for r in rows:
        out.setdefault(r.item_id, []).append(r.response)
    return list(out.values())


def stays(token: str, expected: list, seconds: float = 1.5) -> None:
    """The annotator's answers become ``expected`` and still are ``seconds`` later."""
    deadline = time.monotonic() + 30
    while answers(token) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(seconds)
    assert answers(token) == expected


def marked(response: str) -> set[int]:
    """The positions an imSitu answer marks correct."""
    return {k for k, c in enumerate(response) if c == "1"}


def link(base: str, token: str) -> str:
    return f"{base}/?token={token}"


def test_text_held_digit_answers_one_item_and_held_backspace_goes_back_once(app, browser):
    base, made = app
    (invite,) = studies.invite(made["text"], 1)
    start(browser, link(base, invite.token), "Item 1 of 6")
    wait_idle(browser)
    assert hold(browser, "3", 1.5) >= 20
    stays(invite.token, [["3"]])
    assert "Item 2 of 6" in screen(browser)["text"]
    wait_idle(browser)
    hold(browser, "Backspace", 1.2)
    wait_idle(browser)
    assert "Revising item 1 of 6" in screen(browser)["text"]
    assert answers(invite.token) == [["3"]]


def test_text_second_press_right_after_an_answer_is_dropped_and_said_readably(app, browser):
    """"3 4" at once: 3 answers item 1; 4 is dropped — on item 1's screen while its answer is
    saved, or on item 2's screen before item 2 has been seen for the floor — and said where it
    was pressed and in the page's cue, which stays readable for more than a second; nothing is
    stored for item 2."""
    base, made = app
    (invite,) = studies.invite(made["text"], 1)
    start(browser, link(base, invite.token), "Item 1 of 6")
    wait_idle(browser)
    first = screen(browser)["item"]
    browser.execute_script(RECORD_SCREENS)   # a fast server may show item 2 before a look after the keys
    tap(browser, "3", "4")
    nxt = wait_next_ready(browser, first)
    said = [s for s in browser.execute_script("return window.screensSeen") if s["cue"]]
    assert said and all("Too fast — nothing was recorded for that" in s["cue"] and "4" in s["cue"]
                        for s in said), said
    assert all(s["item"] == first and s["state"] == "saving" or s["item"] == nxt["item"] for s in said), said
    assert "Item 2 of 6" in nxt["text"]
    time.sleep(1.0)
    assert "Too fast" in browser.execute_script("return document.getElementById('studyapp-toast').textContent")
    stays(invite.token, [["3"]], seconds=1)


def test_with_image_held_enter_keeps_one_preselected_rating(app, browser):
    base, made = app
    token = invite_same(made["image"], ["alice"])["alice"][1]
    start(browser, link(base, token), "Item 1 of 4")
    wait_idle(browser)
    assert "Your earlier rating (without the image): 2" in screen(browser)["text"]
    hold(browser, "Enter", 1.5)
    stays(token, [["2"]])
    assert "Item 2 of 4" in screen(browser)["text"]


def test_imsitu_held_digit_marks_once_and_held_enter_submits_once(app, browser):
    base, made = app
    (invite,) = studies.invite(made["imsitu"], 1)
    start(browser, link(base, invite.token), "Item 1 of ")
    wait_idle(browser)
    hold(browser, "1", 1.2)  # toggled once: repeats would toggle it on and off
    assert "1. " in screen(browser)["text"] and screen(browser)["text"].count("✓ correct") == 1
    hold(browser, "Enter", 1.5)
    time.sleep(1)
    ((stored,),) = answers(invite.token)
    assert marked(stored) == {0}


def test_imsitu_keys_typed_on_two_screens_never_make_one_answer(app, browser):
    """"1 2 Enter 3 | 2 Enter 1 3 Enter": 3 is pressed while item 1 is saved, 2 on item 2 right
    after it (the rest of that group) and its Enter are dropped; item 2 gets the next group."""
    base, made = app
    (invite,) = studies.invite(made["imsitu"], 1)
    start(browser, link(base, invite.token), "Item 1 of ")
    wait_idle(browser)
    wait_answerable(browser)   # the burst's Enter answers item 1, not a screen still under the floor
    first = screen(browser)["item"]
    browser.execute_script(RECORD_SCREENS)   # a fast server may show item 2 before a look after the keys
    burst(browser, "12" + Keys.ENTER + "3")
    second = wait_next_ready(browser, first)["item"]
    said_too_fast(browser, "3")
    tap(browser, "2")
    assert "Nothing was recorded for 2" in screen(browser)["cue"]
    tap(browser, "Enter")
    wait_answerable(browser)
    tap(browser, "1", "3", "Enter")
    third = wait_next_ready(browser, second)
    assert third["cue"] == ""
    time.sleep(0.5)
    got = answers(invite.token)
    assert [marked(v) for (v,) in got] == [{0, 1}, {0, 2}], got


def test_crosshoi_held_mark_marks_one_candidate_and_groups_stay_apart(app, browser):
    """A held c marks one candidate only; "c i a Enter c | i Enter a a a Enter" stores the
    first group for item 1 and the last for item 2, never c / i from the straddling group."""
    base, made = app
    (invite,) = studies.invite(made["crosshoi"], 1)
    start(browser, link(base, invite.token), "Item 1 of ")
    wait_idle(browser)
    hold(browser, "c", 1.2)
    assert screen(browser)["text"].count("✓ correct") == 1
    tap(browser, "1")
    first = screen(browser)["item"]
    browser.execute_script(RECORD_SCREENS)
    burst(browser, "cia" + Keys.ENTER + "c")
    second = wait_next_ready(browser, first)["item"]
    said_too_fast(browser, "c")
    tap(browser, "i")
    assert "Nothing was recorded for i" in screen(browser)["cue"]
    tap(browser, "Enter")
    wait_answerable(browser)
    tap(browser, "a", "a", "a", "Enter")
    wait_next_ready(browser, second)
    stays(invite.token, [[crosshoi.encode_response(["correct", "incorrect", "ambiguous"])],
                         [crosshoi.encode_response(["ambiguous"] * 3)]], seconds=0.5)
