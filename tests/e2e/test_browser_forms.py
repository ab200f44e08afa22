"""The mark form (``studyapp.views.components.mark_form``) of imSitu correctness and CrossHOI curation
in a real headless browser: keys after mouse choices, one true key hint, every candidate marked
before Enter submits, searchable pickers that add one action per Enter, revision labels, the
image zoom, and answers from an out-of-date tab refused. What is stored is checked per item
against what was shown and pressed. One server for the module with a study of each test in its
database; the restart test starts its own (fixtures and helpers: ``test_browser``)."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from sqlmodel import select
from test_browser import (  # noqa: F401
    app,
    browser,
    button,
    choose,
    new_slug,
    own_database,
    press,
    ratings,
    renamed,
    running_app,
    start,
    start_in_two_tabs,
    wait_idle,
    wait_ratings,
    wait_text,
)

from metrics import hico
from studyapp.core import storage
from studyapp.core.models import Assignment, Event, Item, Rating
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import exports, studies
from studyapp.studytypes.crosshoi_curation import crosshoi

pytestmark = pytest.mark.slow


def fields_of(study: int, key: str) -> dict:
    with storage.read_session() as session:
        item = session.exec(select(Item).where(Item.study_id == study, Item.item_key == key)).one()
        return json.loads(item.fields_json)


def form(driver):
    return driver.find_element(By.CSS_SELECTOR, ".mark-form")


def rows(driver) -> list[str]:
    """The text of each row of the form (a verb, or a candidate's name)."""
    selector = ".mark-form .verb, .mark-form .candidate .name"
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]


def chosen(driver) -> list[str]:
    return [b.text for b in driver.find_elements(By.CSS_SELECTOR, ".mark-form button.on")]


def labels_with_enter(driver) -> list[str]:
    return [b.text for b in driver.find_elements(By.TAG_NAME, "button") if "Enter" in b.text]


def test_crosshoi_marks_by_mouse_and_keys_pickers_and_revision(app, tmp_path, browser):
    """Enter after a mouse choice names the unmarked candidates; arrows / digits and c / i / a
    mark (moving on to an unmarked candidate); Enter in a picker adds the one chosen match; Enter submits once all are marked. In
    revision only Submit is Enter, and Continue stores nothing."""
    from studyhelpers import curation_spec

    curation_spec(tmp_path)
    study = studies.create_study(load_spec(renamed(tmp_path / "cur.toml", new_slug("cur"))))
    (invite,) = studies.invite(study, 1)
    table = hico().classes
    ride_second = [i for i, verb in enumerate(table["verb"]) if verb == "ride"][1]
    (feed_horse,) = [i for i, (v, o) in enumerate(zip(table["verb"], table["object"]))
                     if (v, o) == ("feed", "horse")]
    start(browser, f"{app}/?token={invite.token}", "Item 1 of ")
    wait_idle(browser)
    body = browser.find_element(By.TAG_NAME, "body").text
    assert body.count("Keys:") == 1 and "0–0" not in body
    assert ("Keys: 1–3 or ↑ ↓ choose a candidate · c correct · i incorrect · a ambiguous · "
            "Enter submits") in form(browser).text
    assert chosen(browser) == []  # nothing preselected
    shown = rows(browser)
    press(browser, Keys.ENTER)
    wait_text(browser, f"Not yet marked: {shown[0]}; {shown[1]}; {shown[2]}.")
    choose(browser, 0, "correct")  # by mouse; then Enter must still reach the form
    press(browser, Keys.ENTER)
    wait_text(browser, f"Not yet marked: {shown[1]}; {shown[2]}.")
    press(browser, Keys.ARROW_DOWN)  # from candidate 2 (the next unmarked) to 3
    press(browser, "a")
    press(browser, "i")  # the form moved on to the first unmarked one, 2
    plus, minus = browser.find_elements(By.CSS_SELECTOR, ".mark-form .picker input")
    plus.send_keys("ride", Keys.ARROW_DOWN, Keys.ENTER)  # the second match, only it
    minus.send_keys("feed horse", Keys.ENTER, Keys.ESCAPE)
    wait_idle(browser)
    assert ratings(study) == {}  # Enter in a search field added, never submitted
    assert [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".mark-form .chip")] == [
        crosshoi.class_phrase(ride_second) + " ×", crosshoi.class_phrase(feed_horse) + " ×"]
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of ")
    (key,) = ratings(study)
    candidates = fields_of(study, key)["question"]["candidates"]
    assert [row.split(" (")[0] for row in shown] == [f"{k}. {crosshoi.phrase(c)}"
                                                     for k, c in enumerate(candidates, 1)]
    first = crosshoi.encode_response(["correct", "incorrect", "ambiguous"], [ride_second], [feed_horse])
    wait_ratings(study, {key: [first]})

    press(browser, Keys.BACKSPACE)  # revise: the stored answer comes back
    wait_text(browser, "Revising an earlier answer")
    wait_idle(browser)
    assert chosen(browser) == ["✓ correct (c)", "✓ incorrect (i)", "✓ ambiguous (a)"]
    assert labels_with_enter(browser) == ["Submit (Enter)"]   # the key's name in a span touch screens hide
    assert "Enter" not in button(browser, "Continue where I stopped").text
    press(browser, "1")
    press(browser, "a")
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of ")
    revised = crosshoi.encode_response(["ambiguous", "incorrect", "ambiguous"], [ride_second], [feed_horse])
    wait_ratings(study, {key: [first, revised]})
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "Revising an earlier answer")
    button(browser, "Continue where I stopped").click()
    wait_text(browser, "Item 2 of ")
    wait_idle(browser)
    assert "Revising" not in browser.find_element(By.TAG_NAME, "body").text
    assert ratings(study) == {key: [first, revised]}


def test_imsitu_one_hint_marks_in_green_enter_after_click_and_zoom(app, tmp_path, browser):
    """One key hint naming the real keys; a marked verb is a green check, not red; Enter works
    after a click; z enlarges the image and the choice holds on the next item."""
    from studyhelpers import write_imsitu_study as write_study

    study = studies.create_study(load_spec(renamed(write_study(tmp_path), new_slug("verbs"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 6")
    wait_idle(browser)
    body = browser.find_element(By.TAG_NAME, "body").text
    assert body.count("Keys:") == 1
    assert "Keys: 1–3 mark or unmark a verb · z larger or smaller image · Enter submits" in body
    verbs = rows(browser)
    button(browser, "2. ").click()
    wait_text(browser, "✓ correct")
    (marked,) = browser.find_elements(By.CSS_SELECTOR, ".mark-form .verb.on")
    assert marked.text == f"{verbs[1]} ✓ correct"
    red, green, _blue = (int(c) for c in marked.value_of_css_property("border-color")
                         .removeprefix("rgb(").removesuffix(")").split(","))
    assert green > red  # green, not the theme's red
    width = lambda: browser.execute_script(
        "return document.querySelector('.item-content img').clientWidth")
    assert width() == 64  # the generated image's own size
    press(browser, "z")
    assert width() == 768
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of 6")
    (key,) = ratings(study)
    assert [v.replace("_", " ") for v in fields_of(study, key)["predictions"]] == [
        row.split(". ", 1)[1] for row in verbs]
    wait_ratings(study, {key: ["010"]})
    wait_idle(browser)
    assert width() == 768
    button(browser, "Smaller image (z)").click()
    assert width() == 64


def test_imsitu_answer_from_an_out_of_date_tab_is_refused(app, tmp_path, browser):
    """Two tabs on item 1: it is answered in the second; marks and Enter in the first are
    refused (logged), stored neither as a revision of item 1 nor as an answer to item 2."""
    from studyhelpers import write_imsitu_study as write_study

    study = studies.create_study(load_spec(renamed(write_study(tmp_path), new_slug("verbs"))))
    (invite,) = studies.invite(study, 1)
    first = start_in_two_tabs(browser, f"{app}/?token={invite.token}", "Item 1 of 6")
    press(browser, "1")
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 2 of 6")
    (key,) = ratings(study)
    wait_ratings(study, {key: ["100"]})
    browser.switch_to.window(first)
    press(browser, "3")
    press(browser, Keys.ENTER)  # meant for item 1, answered in the other tab
    wait_text(browser, "already answered")
    wait_text(browser, "Item 2 of 6")
    wait_idle(browser)
    assert ratings(study) == {key: ["100"]}
    with storage.read_session() as session:
        (event,) = session.exec(select(Event).where(Event.study_id == study,
                                                    Event.kind == "stale_answer_refused")).all()
    assert json.loads(event.detail)["response"] == "001"


def test_imsitu_answer_given_while_the_server_restarts_is_kept(tmp_path, browser):
    """The mark form shares the answer bar's delivery: marks and Enter while the server is down
    say "reconnecting…", and the answer is stored for that item once the server is back."""
    from studyhelpers import write_imsitu_study as write_study
    from test_browser import free_port

    study = studies.create_study(load_spec(write_study(tmp_path)))
    (invite,) = studies.invite(study, 1)
    port = free_port()
    with running_app(tmp_path, port) as base:
        start(browser, f"{base}/?token={invite.token}", "Item 1 of 6")
        wait_idle(browser)
        first = browser.find_element(By.CSS_SELECTOR, ".mark-form").get_attribute("data-item")
    browser.find_element(By.TAG_NAME, "body").send_keys("1")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
    wait_text(browser, "reconnecting…")
    assert "Connection error" not in browser.find_element(By.TAG_NAME, "body").text
    with running_app(tmp_path, port):
        wait_text(browser, "Item 2 of 6")
        with storage.read_session() as session:
            on_screen = session.get(Item, session.get(Assignment, int(first)).item_id).item_key
        wait_ratings(study, {on_screen: ["100"]})


ANSWERS = '[answers]\ncant_judge = true\ncomments = true\n'


def stored_answers(study: int) -> list[tuple[str, str | None]]:
    with storage.read_session() as session:
        return [(r.response, r.comment) for r in session.exec(
            select(Rating).where(Rating.study_id == study).order_by(Rating.id))]


def test_imsitu_cant_judge_and_a_comment_by_keys(app, tmp_path, browser):
    """With ``[answers]`` on, the mark form takes a comment (typed digits are text, Esc leaves
    the box) and "can't judge" by x; both go with the item on screen; revisiting shows the
    comment and the can't-judge choice; the export lists it apart from the marks."""
    from studyhelpers import write_imsitu_study as write_study

    spec = load_spec(renamed(write_study(tmp_path, extra=ANSWERS), new_slug("verbs")))
    study = studies.create_study(spec)
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of 6")
    wait_idle(browser)
    assert "Enter submits · x can't judge" in form(browser).text
    box = browser.find_element(By.CSS_SELECTOR, ".mark-form textarea")
    box.send_keys("image 2 too dark")  # the 2 is text, not a mark
    box.send_keys(Keys.ESCAPE)
    assert chosen(browser) == []
    press(browser, "x")
    wait_text(browser, "Item 2 of 6")
    first, = ratings(study)
    wait_idle(browser)
    press(browser, "1")
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 3 of 6")
    wait_idle(browser)
    second = next(key for key in ratings(study) if key != first)
    wait_ratings(study, {first: ["cant_judge"], second: ["100"]})
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave")
    wait_idle(browser)
    press(browser, Keys.BACKSPACE)
    wait_text(browser, "you gave can't judge")
    wait_idle(browser)
    assert "✓ Can't judge (x)" in chosen(browser)
    assert browser.find_element(By.CSS_SELECTOR, ".mark-form textarea").get_attribute(
        "value") == "image 2 too dark"
    assert stored_answers(study) == [("cant_judge", "image 2 too dark"), ("100", None)]
    tables = exports.study_tables(spec.slug)
    assert tables["cant_judge.csv"][["item_id", "comment"]].values.tolist() == [
        [first, "image 2 too dark"]]
    assert tables["ratings.csv"]["item_id"].tolist() == [second]


def test_crosshoi_cant_judge_by_key_and_a_comment_with_marks(app, tmp_path, browser):
    """CrossHOI curation with ``[answers]``: x stores "can't judge" with no candidate marked;
    the next item's marks go with the comment typed in its box (c / i / a in the box are text)."""
    from studyhelpers import curation_spec

    curation_spec(tmp_path, extra=ANSWERS)
    study = studies.create_study(load_spec(renamed(tmp_path / "cur.toml", new_slug("cur"))))
    (invite,) = studies.invite(study, 1)
    start(browser, f"{app}/?token={invite.token}", "Item 1 of ")
    wait_idle(browser)
    assert "· x can't judge" in form(browser).text
    press(browser, "x")
    wait_text(browser, "Item 2 of ")
    first, = ratings(study)
    wait_idle(browser)
    box = browser.find_element(By.CSS_SELECTOR, ".mark-form textarea")
    box.send_keys("a cat, I think")
    box.send_keys(Keys.ESCAPE)
    assert chosen(browser) == []
    for key in "cia":
        press(browser, key)
    press(browser, Keys.ENTER)
    wait_text(browser, "Item 3 of ")
    second = next(key for key in ratings(study) if key != first)
    wait_ratings(study, {first: ["cant_judge"],
                         second: [crosshoi.encode_response(["correct", "incorrect", "ambiguous"],
                                                           [], [])]})
    assert [c for _, c in stored_answers(study)] == [None, "a cat, I think"]
