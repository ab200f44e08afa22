"""The Streamlit pages, headless with AppTest: annotator flow and researcher console."""

import json
import uuid

import pytest
from projectpaths import ROOT
from sqlmodel import select
from streamlit.testing.v1 import AppTest
from studyhelpers import console_page, make_study, open_tab

from studyapp.core import auth, storage
from studyapp.core.models import Annotator, Event, Item, Rating
from studyapp.platform.records import studies

APP = str(ROOT / "studyapp" / "views" / "app.py")
PROLIFIC = '[prolific]\ncompletion_code = "C0MPL3TE"\n'


@pytest.fixture
def study(tmp_path):
    return make_study(tmp_path, n_items=3, raters=1, extra='order = "fixed"\naccess_code = "open sesame"\n' + PROLIFIC)


def open_app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def screen_components(at: AppTest) -> list:
    """The page's item screen components (answer bar or mark form; not the page's style sheet,
    which every page mounts)."""
    return [c for c in at.get("bidi_component") if c.proto.component_name != "studyapp.page_style"]


def answer_bar(at: AppTest) -> dict:
    """The data the answer bar of the page was mounted with (item id, values, current, ...)."""
    (bar,) = screen_components(at)
    return json.loads(bar.proto.json)


def press(at: AppTest, kind: str = "answer", value=None, item_id: int | None = None,
          seen_ms: int | None = 1500) -> AppTest:
    """What the answer bar sends when a key is pressed or one of its buttons clicked:
    ``{item_id, kind, value, nonce, seen_ms, in_view}`` as the component's trigger (``item_id``:
    the one shown; ``seen_ms``: how long it had been drawn, None for a page that does not say)."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    (bar,) = screen_components(at)
    shown = json.loads(bar.proto.json)["item_id"]
    action = {"item_id": shown if item_id is None else item_id, "kind": kind, "value": value,
              "nonce": uuid.uuid4().hex, "seen_ms": seen_ms, "in_view": True}
    states = WidgetStates()
    state = states.widgets.add()
    state.id = _make_trigger_id(bar.proto.id, "events")
    state.json_trigger_value = json.dumps([{"event": "action", "value": action}])
    return at._run(states)


class _Rating:
    """A rating "button" of the answer bar: ``rating_button(at, 2).click().run()``."""

    def __init__(self, at: AppTest, value: int):
        self.at, self.value = at, value
        assert value in answer_bar(at)["values"]

    def click(self):
        return self

    def run(self) -> AppTest:
        return press(self.at, "answer", self.value)


def rating_button(at: AppTest, value: int) -> _Rating:
    return _Rating(at, value)


def ratings_by_item(study_id):
    """item key -> [(revision, response, supersedes)] from the database."""
    keys = {}
    with storage.read_session() as session:
        for item in session.exec(select(Item).where(Item.study_id == study_id)):
            keys[item.id] = item.item_key
        out = {}
        for r in session.exec(select(Rating).order_by(Rating.id)):
            out.setdefault(keys[r.item_id], []).append((r.revision, r.response, r.supersedes_id))
    return out


def started(study_id) -> AppTest:
    (invite,) = studies.invite(study_id, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    assert not at.exception
    return at


def screen(at: AppTest) -> dict:
    """What the item screen shows besides its controls (one payload): ``progress``
    ``{text, fraction}``, ``notices`` ``[(kind, text)]`` or ``[(kind, text, keys)]`` and the item's
    ``content`` nodes."""
    return answer_bar(at)["screen"]


def notices(at: AppTest, kind: str) -> list[str]:
    """The texts of the screen's notices of ``kind`` (info, error, warning), with what the keys
    do where the notice says it."""
    return [" ".join(text) for k, *text in screen(at)["notices"] if k == kind]


def content_text(at: AppTest) -> str:
    """The item's content as the page shows it (its text nodes joined)."""
    def flat(node) -> str:
        if isinstance(node, str):
            return node
        tag, _attrs, *children = node
        return "".join(flat(c) for c in children) + ("\n" if tag in ("p", "h3", "div") else "")
    return "".join(flat(n) for n in screen(at)["content"])


def content_images(at: AppTest) -> list[dict]:
    """The attributes of the images in the item's content."""
    found = []

    def walk(node):
        if isinstance(node, list):
            if node[0] == "img":
                found.append(node[1])
            for c in node[2:]:
                walk(c)
    for n in screen(at)["content"]:
        walk(n)
    return found


def progress_text(at, with_left: bool = False):
    """"Item 2 of 3" (and " · 2 left" with ``with_left``)."""
    text = screen(at)["progress"]["text"]
    return text if with_left else text.split(" · ")[0]


def test_invite_link_opens_the_instructions(study):
    (invite,) = studies.invite(study, 1)
    at = open_app(token=invite.token)
    assert not at.exception and not at.error
    assert at.title[0].value == "Test study"
    assert any("Rate the pair." in m.value for m in at.markdown)
    assert [b.label for b in at.button] == ["Start"]
    assert any(invite.token in c.value for c in at.code)  # the personal link to come back


def test_wrong_token_is_refused(study):
    at = open_app(token="not-a-real-token")
    assert "This link is not valid" in at.error[0].value
    assert not at.button and not at.title


def test_rating_by_button_is_stored_and_the_next_item_shown(study):
    at = started(study)
    assert progress_text(at) == "Item 1 of 3"
    shown = content_text(at)  # i01: ride bicycle vs push bicycle; a [prolific] study hides synset codes
    assert "sit and travel on the back of animal" in shown and "ride.v.01" not in shown
    rating_button(at, 2).click().run()
    assert ratings_by_item(study) == {"i01": [(0, "2", None)]}
    assert progress_text(at) == "Item 2 of 3"
    shown = content_text(at)
    assert shown.startswith("Ground truth") and shown.count("Ground truth") == 1
    assert "push — move with force" in shown  # i02: push bicycle vs ..., the code hidden ([prolific])
    assert "ride.v.01" not in shown


def test_the_instructions_above_an_item_are_sent_only_while_open(study):
    """The reminder above each item is a collapsed expander whose text is not sent with every
    item: opening it runs the page again with the text, and it stays open for the next item."""
    at = started(study)
    (reminder,) = at.expander
    assert reminder.label == "Instructions" and not reminder.markdown
    assert not any("Rate the pair." in m.value for m in at.markdown)
    at.session_state["instructions-open"] = True   # what opening it in the browser sends
    at.run()
    assert any("Rate the pair" in m.value for m in at.expander[0].markdown)
    assert progress_text(at) == "Item 1 of 3"       # the same item, nothing answered
    rating_button(at, 2).click().run()
    assert progress_text(at) == "Item 2 of 3" and any("Rate the pair" in m.value for m in at.expander[0].markdown)


def test_rating_by_shortcut_is_stored(study):
    at = started(study)
    bar = answer_bar(at)
    assert (bar["values"], bar["current"], bar["revising"]) == ([0, 1, 2, 3, 4], None, False)
    assert progress_text(at, with_left=True) == "Item 1 of 3 · 3 left"
    rating_button(at, 4).click().run()  # what the bar sends for the key "4"
    assert ratings_by_item(study) == {"i01": [(0, "4", None)]}
    assert progress_text(at, with_left=True) == "Item 2 of 3 · 2 left"


def test_the_run_after_a_key_press_is_one_transaction(study):
    """The page's answer handler stores the answer and gets the next screen in one transaction
    (``assignment.answer``); the run that follows draws that screen without asking the
    database again, and a reload reads it back from the database."""
    from sqlalchemy import event

    at = started(study)
    engine, transactions = storage.get_engine(), []

    def begin(conn):
        transactions.append(conn)

    event.listen(engine, "begin", begin)
    try:
        rating_button(at, 3).click().run()
    finally:
        event.remove(engine, "begin", begin)
    assert len(transactions) == 1
    assert progress_text(at, with_left=True) == "Item 2 of 3 · 2 left"
    shown = answer_bar(at)["item_id"]
    at.run()   # a rerun without a press: from the database, the same item
    assert answer_bar(at)["item_id"] == shown and progress_text(at, with_left=True) == "Item 2 of 3 · 2 left"
    assert ratings_by_item(study) == {"i01": [(0, "3", None)]}


def test_a_press_for_an_item_no_longer_on_screen_is_refused(study):
    """The old item's answer arriving after the next item is shown (a late key press, or an
    out-of-date tab) is refused, said so, and never stored as a revision."""
    at = started(study)
    first = answer_bar(at)["item_id"]
    rating_button(at, 2).click().run()
    press(at, "answer", 4, item_id=first)
    assert ratings_by_item(study) == {"i01": [(0, "2", None)]}
    assert "already answered" in notices(at, "error")[0]
    assert progress_text(at) == "Item 2 of 3"
    with storage.read_session() as session:
        (refused,) = session.exec(select(Event).where(Event.kind == "stale_answer_refused")).all()
    assert json.loads(refused.detail)["assignment"] == first


def test_back_and_change_supersedes(study):
    at = started(study)
    rating_button(at, 2).click().run()
    press(at, "back")
    assert progress_text(at, with_left=True) == "Revising item 1 of 3 · 1 answered · 2 left"
    assert "you gave 2 — related but easily distinguishable" in notices(at, "info")[0]
    assert (answer_bar(at)["current"], answer_bar(at)["revising"]) == ("2", True)
    rating_button(at, 3).click().run()
    first = ratings_by_item(study)["i01"]
    assert [(rev, resp) for rev, resp, _ in first] == [(0, "2"), (1, "3")]
    with storage.read_session() as session:
        original = session.exec(select(Rating).where(Rating.revision == 0)).one()
    assert first[1][2] == original.id
    assert progress_text(at) == "Item 2 of 3"  # back where the annotator stopped


def test_last_item_shows_the_completion_page(study):
    at = started(study)
    for value in (1, 2, 3):
        rating_button(at, value).click().run()
    assert at.title[0].value == "Thank you!"
    assert "You rated 3 items" in at.success[0].value
    assert at.code[0].value == "C0MPL3TE"


def test_closed_tab_resumes_at_the_first_unanswered_item(study):
    (invite,) = studies.invite(study, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    rating_button(at, 0).click().run()
    storage.dispose_all()  # and the server restarted
    again = open_app(token=invite.token)  # a new browser session, same link
    assert progress_text(again) == "Item 2 of 3"
    assert "push — move with force" in content_text(again)


def test_access_code_and_pseudonym_join(study):
    at = open_app(study="t")
    at.text_input[0].input("wrong")
    at.text_input[1].input("ann")
    at.button[0].click().run()
    assert "wrong access code" in at.error[0].value
    at.text_input[0].input("open sesame")
    at.button[0].click().run()
    assert not at.exception
    assert at.title[0].value == "Test study" and at.query_params["token"]
    with storage.read_session() as session:
        annotator = session.exec(select(Annotator)).one()
    assert (annotator.pseudonym, annotator.source) == ("ann", "code")
    assert annotator.token_hash == auth.token_hash(at.query_params["token"])


def test_prolific_parameters_are_recorded_and_the_completion_code_shown(study):
    params = {"study": "t", "PROLIFIC_PID": "5f8a1b2c3d4e5f6a7b8c9d01", "STUDY_ID": "64a1b2c3d4e5f6a7b8c9d0e1",
              "SESSION_ID": "65b2c3d4e5f6a7b8c9d0e1f2"}
    at = open_app(**params)
    at.button(key="start").click().run()
    for value in (4, 4, 4):
        rating_button(at, value).click().run()
    assert at.code[0].value == "C0MPL3TE"
    again = open_app(**params)  # same participant later: same annotator, still completed
    assert again.title[0].value == "Thank you!"
    with storage.read_session() as session:
        (annotator,) = session.exec(select(Annotator)).all()
    assert (annotator.prolific_pid, annotator.prolific_study_id, annotator.prolific_session_id) == (
        params["PROLIFIC_PID"], params["STUDY_ID"], params["SESSION_ID"])


def test_the_completion_page_goes_back_to_revise_the_last_answer(study):
    at = started(study)
    for value in (1, 2, 3):
        rating_button(at, value).click().run()
    assert at.title[0].value == "Thank you!"
    at.button(key="back-from-end").click().run()
    assert progress_text(at) == "Revising item 3 of 3" and "you gave 3" in notices(at, "info")[0]
    press(at, "answer", 0)
    assert at.title[0].value == "Thank you!"
    assert [(rev, resp) for rev, resp, _ in ratings_by_item(study)["i03"]] == [(0, "3"), (1, "0")]


def test_paused_study_says_so(study):
    (invite,) = studies.invite(study, 1)
    studies.set_status(study, "paused")
    at = open_app(token=invite.token)
    assert "paused" in at.warning[0].value and not at.button


def prolific_ids(k: int) -> dict:
    """A participant's Prolific URL parameters (24 hexadecimal characters each)."""
    return {"PROLIFIC_PID": f"{k:024x}", "STUDY_ID": "64a1b2c3d4e5f6a7b8c9d0e1", "SESSION_ID": f"{k + 100:024x}"}


def test_every_refused_prolific_arrival_gets_the_same_polite_page(tmp_path):
    """A study without [prolific], a paused or closed one, and a study name that does not exist
    all show one page, word for word the access-code link's refusal: it tells nothing about
    which names exist. Nobody joins."""
    no_prolific = make_study(tmp_path, n_items=2, raters=1, extra='access_code = "secret"\n')
    (tmp_path / "p").mkdir()
    paused = make_study(tmp_path / "p", n_items=2, raters=1, slug="p", extra=PROLIFIC)
    studies.set_status(paused, "paused")
    (tmp_path / "c").mkdir()
    closed = make_study(tmp_path / "c", n_items=2, raters=1, slug="c", extra=PROLIFIC)
    studies.set_status(closed, "closed")
    pages = []
    for k, slug in enumerate(("t", "p", "c", "no-such-study")):
        at = open_app(study=slug, **prolific_ids(k))
        assert not at.button and not at.title
        pages.append([e.value for e in at.error])
    studies.set_status(no_prolific, "paused")
    at = open_app(study="t")                   # the access-code link of a study not open for joining
    assert pages == [[at.error[0].value]] * 4
    with storage.read_session() as session:
        assert session.exec(select(Annotator)).all() == []  # nobody joined


def test_public_page_lists_no_study_and_the_join_page_names_its_study(study):
    at = open_app()
    assert not at.exception and not at.selectbox and not at.text_input
    assert not any("Test study" in e.value for e in (*at.markdown, *at.title, *at.info))
    at = open_app(study="t")
    assert at.title[0].value == "Join “Test study”"
    studies.set_status(study, "paused")
    at = open_app(study="t")
    assert "not open for joining" in at.error[0].value and not at.text_input


def test_console_refuses_a_missing_or_wrong_password(study, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "s3cret-pw")
    at = console_page("")
    assert at.error[0].value == "Enter your password."
    assert not at.tabs and not at.dataframe
    at = console_page("guess")
    assert at.error[0].value == "Wrong account or password."
    assert not at.tabs and not at.dataframe


def test_console_with_the_generated_password_shows_progress(study):
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    with storage.write_session() as session:
        assert auth.ensure_admin_password(session) is None  # generated once only
    at = console_page(password)
    assert not at.exception and not at.error
    assert at.title[0].value == "Researcher console"
    assert [m.value for m in at.metric][:2] == ["0 / 3", "0"]


def test_console_status_applies_on_click_invites_report_duplicates_and_preview_shows_the_bar(
        study, monkeypatch):
    """A status click takes effect at once; a list of pseudonyms with one already used and one
    repeated creates the others and warns for each; the preview mounts the annotators' answer
    bar (for the selected study's scale) and stores nothing."""
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    studies.invite(study, 0, ["ann"])
    at = console_page("pw", tab="Progress")
    (control,) = [c for c in at.get("button_group")]
    control.set_value("paused").run()
    with storage.read_session() as session:
        assert session.get(studies.Study, study).status == "paused"
    open_tab(at, "Invite")
    at.text_area(key="invite-labels").input("bob\nann\ncarl\nbob").run()
    at.button(key="invite").click().run()
    assert [w.value for w in at.warning if w.value.startswith("Not created")] == [
        "Not created: the pseudonym ann is already used in this study.",
        "Not created: the pseudonym bob is already used in this study."]
    with storage.read_session() as session:
        assert sorted(session.exec(select(Annotator.pseudonym))) == ["ann", "bob", "carl"]
    open_tab(at, "Preview")
    (bar,) = screen_components(at)
    data = json.loads(bar.proto.json)
    assert data["values"] == [0, 1, 2, 3, 4] and data["item_id"] == -1
    assert any(c.value == "Preview: answers given here are not stored." for c in at.caption)


def test_an_annotator_whose_remaining_items_were_taken_is_told_why_the_study_ended(tmp_path):
    """When the other annotators fill every remaining slot, the completion page says
    so ("ended after 2 of the 6 items planned"), not only "Thank you"; Backspace goes back."""
    from studyapp.platform import assignment
    study_id = make_study(tmp_path, n_items=6, raters=1, extra='order = "fixed"\n')
    first, other = studies.invite(study_id, 2)
    at = open_app(token=first.token)
    at.button(key="start").click().run()
    for value in (1, 2):
        rating_button(at, value).click().run()
    assert progress_text(at, with_left=True) == "Item 3 of 6 · 4 left"
    other_id = assignment.resolve_token(other.token)
    assignment.accept_instructions(other_id)
    taken = 0
    while (task := assignment.next_item(other_id)) is not None:
        assignment.submit(other_id, task.assignment_id, 3, 1.0)
        taken += 1
    assert taken == 3  # items 4–6: item 3 is the first annotator's, on their screen
    at.run()
    assert progress_text(at, with_left=True) == "Item 3 of 6 · 4 left"
    rating_button(at, 0).click().run()
    assert at.title[0].value == "Thank you!"
    said = " ".join(i.value for i in at.info)
    assert "ended after 3 of the 6 items planned" in said and "none was left for you" in said
    assert at.button(key="back-from-end").proto.shortcut.lower() == "backspace"


def test_no_explanation_when_the_annotator_rated_every_planned_item(study):
    at = started(study)
    for value in (1, 2, 3):
        rating_button(at, value).click().run()
    assert at.title[0].value == "Thank you!"
    assert not any("ended after" in i.value for i in at.info)


def test_progress_says_under_a_minute_without_about(tmp_path):
    """Shows "· under a minute to go", never "about under a minute"."""
    study_id = make_study(tmp_path, n_items=6, raters=1, extra='order = "fixed"\n')
    (invite,) = studies.invite(study_id, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    for value in (1, 2, 3):
        rating_button(at, value).click().run()
    text = progress_text(at, with_left=True)
    assert text == "Item 4 of 6 · 3 left · under a minute to go", text


@pytest.mark.parametrize("seen_ms", [None, 0, 180, 299])
def test_a_press_the_page_reports_under_the_seen_floor_stores_nothing(tmp_path, seen_ms):
    """A press that reaches the server reporting the item drawn for less than the floor (300 ms),
    or not saying, is refused whatever the page let through: nothing stored, the same item
    again with a notice, and the refusal logged."""
    study = make_study(tmp_path, n_items=2, raters=1, extra='order = "fixed"\n')
    at = started(study)
    press(at, "answer", 3, seen_ms=seen_ms)
    assert ratings_by_item(study) == {}
    assert screen(at)["progress"]["text"].startswith("Item 1 of 2")
    assert any("before it could be read" in text for text in notices(at, "error"))
    with storage.read_session() as session:
        logged = session.exec(select(Event).where(Event.kind == "answer_under_floor")).all()
    assert len(logged) == 1
    press(at, "answer", 3, seen_ms=300)
    assert ratings_by_item(study) == {"i01": [(0, "3", None)]}
